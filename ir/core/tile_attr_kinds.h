// The closed lists of string attributes that tile operations take and code
// generation dispatches on: tile.shuffle's `mode` (shuffle_modes.def),
// tile.warp_reduce's `kind` (warp_reduce_kinds.def) and tile.atomic's `kind`
// (atomic_kinds.def). The IR text keeps the strings; the verifier accepts
// exactly the names of the tables, and code generation switches over the
// enums, so that a new entry is a compile error wherever it must be handled.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "support/diagnostics/internal_error.h"
#include "ir/core/ir.h"

namespace tessera::ir {

enum class ShuffleMode : uint8_t {
#define TESSERA_SHUFFLE_MODE(Name, text) Name,
#include "ir/core/shuffle_modes.def"
#undef TESSERA_SHUFFLE_MODE
};
inline constexpr std::string_view kShuffleModeNames[] = {
#define TESSERA_SHUFFLE_MODE(Name, text) text,
#include "ir/core/shuffle_modes.def"
#undef TESSERA_SHUFFLE_MODE
};

enum class WarpReduceKind : uint8_t {
#define TESSERA_WARP_REDUCE_KIND(Name, text) Name,
#include "ir/core/warp_reduce_kinds.def"
#undef TESSERA_WARP_REDUCE_KIND
};
inline constexpr std::string_view kWarpReduceKindNames[] = {
#define TESSERA_WARP_REDUCE_KIND(Name, text) text,
#include "ir/core/warp_reduce_kinds.def"
#undef TESSERA_WARP_REDUCE_KIND
};

enum class AtomicKind : uint8_t {
#define TESSERA_ATOMIC_KIND(Name, text, integers_only) Name,
#include "ir/core/atomic_kinds.def"
#undef TESSERA_ATOMIC_KIND
};
inline constexpr std::string_view kAtomicKindNames[] = {
#define TESSERA_ATOMIC_KIND(Name, text, integers_only) text,
#include "ir/core/atomic_kinds.def"
#undef TESSERA_ATOMIC_KIND
};
// Whether the operation is defined on integer elements only (and, or, xor).
inline bool atomic_integers_only(AtomicKind kind) {
  static constexpr bool kIntegersOnly[] = {
#define TESSERA_ATOMIC_KIND(Name, text, integers_only) integers_only,
#include "ir/core/atomic_kinds.def"
#undef TESSERA_ATOMIC_KIND
  };
  return kIntegersOnly[static_cast<size_t>(kind)];
}

// The entry named `text` of a table, or nullopt.
template <typename Kind, size_t N>
std::optional<Kind> parse_attr_kind(const std::string_view (&names)[N], std::string_view text) {
  for (size_t i = 0; i < N; ++i)
    if (names[i] == text) return static_cast<Kind>(i);
  return std::nullopt;
}

// The attribute of a verified operation; anything else is an internal error
// (the verifier rejects names outside the tables).
template <typename Kind, size_t N>
Kind attr_kind(const Operation& op, std::string_view attribute, const std::string_view (&names)[N]) {
  std::optional<Kind> kind = parse_attr_kind<Kind>(names, op.string_attr(attribute));
  if (!kind)
    internal_error("ir", "'" + std::string(op.name()) + "' with " + std::string(attribute) + " \"" +
                             std::string(op.string_attr(attribute)) + "\"");
  return *kind;
}
inline ShuffleMode shuffle_mode(const Operation& op) { return attr_kind<ShuffleMode>(op, "mode", kShuffleModeNames); }
inline WarpReduceKind warp_reduce_kind(const Operation& op) {
  return attr_kind<WarpReduceKind>(op, "kind", kWarpReduceKindNames);
}
inline AtomicKind atomic_kind(const Operation& op) { return attr_kind<AtomicKind>(op, "kind", kAtomicKindNames); }

}  // namespace tessera::ir
