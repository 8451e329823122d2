// The scalar element types (dtypes) of Tessera, shared by every phase and by
// the runtime: one table, scalar_type.def.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace tessera {

enum class ScalarType : uint8_t {
#define TESSERA_SCALAR(Name, Spelling, Bits, Kind, Runtime, StorageBits) Name,
#include "support/scalar_type.def"
};

inline constexpr int kScalarTypeCount = 0
#define TESSERA_SCALAR(Name, Spelling, Bits, Kind, Runtime, StorageBits) +1
#include "support/scalar_type.def"
    ;

enum class ScalarCategory : uint8_t { Bool, SignedInt, UnsignedInt, Float };

struct ScalarInfo {
  std::string_view name;  // the canonical spelling: "f32", "fp8_e4m3"
  uint8_t bits;           // the value's width (1 for bool)
  ScalarCategory category;
  uint8_t storage_bits;   // what an element takes in memory (8 for bool; fp6/fp4 packed)
};

const ScalarInfo& scalar_info(ScalarType type);
inline bool is_float(ScalarType t) { return scalar_info(t).category == ScalarCategory::Float; }
inline bool is_integer(ScalarType t) {
  auto c = scalar_info(t).category;
  return c == ScalarCategory::SignedInt || c == ScalarCategory::UnsignedInt;
}
// Float types narrower than f32, which compute in their accumulation type.
bool is_storage_float(ScalarType t);

// A dtype spelling: canonical names, the aliases of the language brief
// (int8.., fp16/fp32/fp64, fp8[e4m3] handled by the resolver), and whether
// the spelling is a bare `fp8`/`fp6`/`fp4` that picks a default format.
struct DtypeLookup {
  ScalarType type;
  bool defaulted_format = false;  // bare fp8 / fp6 / fp4
};
std::optional<DtypeLookup> lookup_dtype(std::string_view name);

}  // namespace tessera
