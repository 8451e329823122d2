// The dtype table (scalar_type.h).
#include "support/scalar_type.h"

#include <string_view>
#include <unordered_map>

namespace tessera {

namespace {

constexpr ScalarInfo kScalars[] = {
#define TESSERA_SCALAR(Name, Spelling, Bits, Kind, Runtime, StorageBits) {Spelling, Bits, ScalarCategory::Kind, StorageBits},
#include "support/scalar_type.def"
};

}  // namespace

const ScalarInfo& scalar_info(ScalarType type) {
  return kScalars[static_cast<size_t>(type)];
}

bool is_storage_float(ScalarType t) {
  return is_float(t) && scalar_info(t).bits < 32;
}

std::optional<DtypeLookup> lookup_dtype(std::string_view name) {
  static const std::unordered_map<std::string_view, DtypeLookup> table = [] {
    std::unordered_map<std::string_view, DtypeLookup> t;
#define TESSERA_SCALAR(Name, Spelling, Bits, Kind, Runtime, StorageBits) t.emplace(Spelling, DtypeLookup{ScalarType::Name});
#include "support/scalar_type.def"
    // Aliases from the language brief.
    t.emplace("int8", DtypeLookup{ScalarType::I8});
    t.emplace("int16", DtypeLookup{ScalarType::I16});
    t.emplace("int32", DtypeLookup{ScalarType::I32});
    t.emplace("int64", DtypeLookup{ScalarType::I64});
    t.emplace("uint8", DtypeLookup{ScalarType::U8});
    t.emplace("uint16", DtypeLookup{ScalarType::U16});
    t.emplace("uint32", DtypeLookup{ScalarType::U32});
    t.emplace("uint64", DtypeLookup{ScalarType::U64});
    t.emplace("fp16", DtypeLookup{ScalarType::F16});
    t.emplace("float16", DtypeLookup{ScalarType::F16});
    t.emplace("bfloat16", DtypeLookup{ScalarType::BF16});
    t.emplace("fp32", DtypeLookup{ScalarType::F32});
    t.emplace("float32", DtypeLookup{ScalarType::F32});
    t.emplace("fp64", DtypeLookup{ScalarType::F64});
    t.emplace("float64", DtypeLookup{ScalarType::F64});
    t.emplace("fp8_e4m3fn", DtypeLookup{ScalarType::FP8E4M3});
    t.emplace("fp8", DtypeLookup{ScalarType::FP8E4M3, true});
    t.emplace("fp6", DtypeLookup{ScalarType::FP6E3M2, true});
    t.emplace("fp4", DtypeLookup{ScalarType::FP4E2M1, true});
    return t;
  }();
  auto it = table.find(name);
  if (it == table.end()) return std::nullopt;
  return it->second;
}

}  // namespace tessera
