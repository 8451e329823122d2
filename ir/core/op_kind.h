// Operation kinds: the closed set of operations in op_kinds.def, their names
// and traits.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace tessera::ir {

enum class OpKind : uint16_t {
#define TESSERA_IR_OP(Name, Spelling, Traits) Name,
#include "ir/core/op_kinds.def"
#undef TESSERA_IR_OP
};

namespace trait {
enum : uint32_t {
  None = 0,
  Pure = 1u << 0,
  ReadOnly = 1u << 1,
  Terminator = 1u << 2,
  Commutative = 1u << 3,
  ConstantLike = 1u << 4,
  Convergent = 1u << 5,
  IsolatedFromAbove = 1u << 6,
  Symbol = 1u << 7,
  NoTerminator = 1u << 8,
};
}  // namespace trait

std::string_view op_kind_name(OpKind kind);
uint32_t op_kind_traits(OpKind kind);
inline bool has_trait(OpKind kind, uint32_t t) { return (op_kind_traits(kind) & t) == t; }
std::optional<OpKind> op_kind_by_name(std::string_view name);
size_t op_kind_count();

}  // namespace tessera::ir
