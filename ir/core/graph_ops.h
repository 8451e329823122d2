// The closed lists of Graph IR attributes that passes dispatch on:
// graph.elementwise's `op` (graph_ops.def) and graph.reduce's `kind`
// (reduce_kinds.def). The IR text keeps the strings; passes switch over the
// enums.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "ir/core/ir.h"

namespace tessera::ir {

enum class ElementwiseOp : uint8_t {
#define TESSERA_ELEMENTWISE(Name, text, arity, result) Name,
#include "ir/core/graph_ops.def"
#undef TESSERA_ELEMENTWISE
};

enum class ElementwiseResult : uint8_t { Same, Bool, Select };

struct ElementwiseInfo {
  std::string_view name;
  unsigned arity;
  ElementwiseResult result;
};

const ElementwiseInfo& elementwise_info(ElementwiseOp op);
std::optional<ElementwiseOp> elementwise_op_by_name(std::string_view name);
std::span<const std::string_view> elementwise_op_names();
// The op of a graph.elementwise (its `op` attribute; the verifier checked it).
ElementwiseOp elementwise_op(const Operation* op);

enum class ReduceKind : uint8_t {
#define TESSERA_REDUCE_KIND(Name, text) Name,
#include "ir/core/reduce_kinds.def"
#undef TESSERA_REDUCE_KIND
};
std::string_view reduce_kind_name(ReduceKind kind);
std::span<const std::string_view> reduce_kind_names();
std::optional<ReduceKind> reduce_kind_by_name(std::string_view name);
ReduceKind reduce_kind(const Operation* op);

}  // namespace tessera::ir
