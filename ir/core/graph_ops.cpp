#include "ir/core/graph_ops.h"

#include "support/diagnostics/internal_error.h"

namespace tessera::ir {

namespace {

constexpr ElementwiseInfo kElementwise[] = {
#define TESSERA_ELEMENTWISE(Name, text, arity, result) {text, arity, ElementwiseResult::result},
#include "ir/core/graph_ops.def"
#undef TESSERA_ELEMENTWISE
};

constexpr std::string_view kElementwiseNames[] = {
#define TESSERA_ELEMENTWISE(Name, text, arity, result) text,
#include "ir/core/graph_ops.def"
#undef TESSERA_ELEMENTWISE
};

constexpr std::string_view kReduceKinds[] = {
#define TESSERA_REDUCE_KIND(Name, text) text,
#include "ir/core/reduce_kinds.def"
#undef TESSERA_REDUCE_KIND
};

}  // namespace

const ElementwiseInfo& elementwise_info(ElementwiseOp op) { return kElementwise[static_cast<size_t>(op)]; }

std::optional<ElementwiseOp> elementwise_op_by_name(std::string_view name) {
  for (size_t i = 0; i < std::size(kElementwise); ++i)
    if (kElementwise[i].name == name) return static_cast<ElementwiseOp>(i);
  return std::nullopt;
}

std::span<const std::string_view> elementwise_op_names() { return kElementwiseNames; }

ElementwiseOp elementwise_op(const Operation* op) {
  std::optional<ElementwiseOp> e = elementwise_op_by_name(op->string_attr("op"));
  internal_check(e.has_value(), "ir", "graph.elementwise with an unknown op");
  return *e;
}

std::string_view reduce_kind_name(ReduceKind kind) { return kReduceKinds[static_cast<size_t>(kind)]; }

std::span<const std::string_view> reduce_kind_names() { return kReduceKinds; }

std::optional<ReduceKind> reduce_kind_by_name(std::string_view name) {
  for (size_t i = 0; i < std::size(kReduceKinds); ++i)
    if (kReduceKinds[i] == name) return static_cast<ReduceKind>(i);
  return std::nullopt;
}

ReduceKind reduce_kind(const Operation* op) {
  std::optional<ReduceKind> k = reduce_kind_by_name(op->string_attr("kind"));
  internal_check(k.has_value(), "ir", "graph.reduce with an unknown kind");
  return *k;
}

}  // namespace tessera::ir
