// The closed lists of string attributes that operations take and passes or
// code generation dispatch on: tile.shuffle's `mode` (shuffle_modes.def),
// tile.warp_reduce's `kind` (warp_reduce_kinds.def), tile.atomic's `kind`
// (atomic_kinds.def), the `rounding` of arith.truncf and graph.cast
// (rounding_modes.def) and schedule.kernel's `strategy`
// (kernel_strategies.def). (graph.reduce's `kind` and graph.elementwise's
// `op` are in graph_ops.h.) The IR text keeps the strings; the verifier
// accepts exactly the names of the tables, and the passes and code
// generation switch over the enums, so that a new entry is a compile error
// wherever it must be handled.
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
inline std::string_view shuffle_mode_name(ShuffleMode mode) { return kShuffleModeNames[static_cast<size_t>(mode)]; }

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
inline std::string_view warp_reduce_kind_name(WarpReduceKind kind) {
  return kWarpReduceKindNames[static_cast<size_t>(kind)];
}

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
inline std::string_view atomic_kind_name(AtomicKind kind) { return kAtomicKindNames[static_cast<size_t>(kind)]; }
// Whether the operation is defined on integer elements only (and, or, xor).
inline bool atomic_integers_only(AtomicKind kind) {
  static constexpr bool kIntegersOnly[] = {
#define TESSERA_ATOMIC_KIND(Name, text, integers_only) integers_only,
#include "ir/core/atomic_kinds.def"
#undef TESSERA_ATOMIC_KIND
  };
  return kIntegersOnly[static_cast<size_t>(kind)];
}

enum class RoundingMode : uint8_t {
#define TESSERA_ROUNDING_MODE(Name, text) Name,
#include "ir/core/rounding_modes.def"
#undef TESSERA_ROUNDING_MODE
};
inline constexpr std::string_view kRoundingModeNames[] = {
#define TESSERA_ROUNDING_MODE(Name, text) text,
#include "ir/core/rounding_modes.def"
#undef TESSERA_ROUNDING_MODE
};
inline std::string_view rounding_mode_name(RoundingMode mode) { return kRoundingModeNames[static_cast<size_t>(mode)]; }

enum class KernelStrategy : uint8_t {
#define TESSERA_KERNEL_STRATEGY(Name, text) Name,
#include "ir/core/kernel_strategies.def"
#undef TESSERA_KERNEL_STRATEGY
};
inline constexpr std::string_view kKernelStrategyNames[] = {
#define TESSERA_KERNEL_STRATEGY(Name, text) text,
#include "ir/core/kernel_strategies.def"
#undef TESSERA_KERNEL_STRATEGY
};
inline std::string_view kernel_strategy_name(KernelStrategy strategy) {
  return kKernelStrategyNames[static_cast<size_t>(strategy)];
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
inline KernelStrategy kernel_strategy(const Operation& op) {
  return attr_kind<KernelStrategy>(op, "strategy", kKernelStrategyNames);
}
// The rounding of arith.truncf or graph.cast: nearest_even when the
// attribute is absent; nullopt for a name outside the table (before
// verification).
inline std::optional<RoundingMode> parse_rounding_mode(const Operation& op) {
  if (!op.has_attr("rounding")) return RoundingMode::NearestEven;
  return parse_attr_kind<RoundingMode>(kRoundingModeNames, op.string_attr("rounding"));
}
// The same for a verified operation.
inline RoundingMode rounding_mode(const Operation& op) {
  if (!op.has_attr("rounding")) return RoundingMode::NearestEven;
  return attr_kind<RoundingMode>(op, "rounding", kRoundingModeNames);
}

}  // namespace tessera::ir
