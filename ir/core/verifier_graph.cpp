// The rules of the graph operations (Graph IR) (verifier_rules.h; docs/ir/graph.md).
#include <fmt/format.h>

#include "ir/core/verifier_rules.h"

namespace tessera::ir::verification {

// 'graph.constant'
void Verifier::verify_graph_constant(Operation* op) {
  if (!shape(op, 0, 1)) return;
  Attribute v = op->attr("value");
  if (!v || !(v.is(AttributeKind::Float) || v.is(AttributeKind::Integer) || v.is(AttributeKind::Bool)))
    return void(error(op, "requires a scalar attribute 'value' (splatted over the tensor)"));
  if (!op->result()->type().is(TypeKind::Tensor)) error(op, "result must be a tensor");
}

// 'graph.elementwise'
void Verifier::verify_graph_elementwise(Operation* op) {
  if (!min_operands(op, 1) || !results(op, 1)) return;
  if (!string_choice(op, "op",
                     {"add", "sub", "mul", "div", "max", "min", "pow", "neg", "exp", "log", "sqrt", "rsqrt",
                      "tanh", "relu", "gelu", "sigmoid", "abs"}))
    return;
  std::string_view fn = op->string_attr("op");
  unsigned arity = one_of(fn, {"add", "sub", "mul", "div", "max", "min", "pow"}) ? 2 : 1;
  if (op->num_operands() != arity)
    return void(error(op, fmt::format("'{}' takes {} operand{}, got {}", fn, arity, arity == 1 ? "" : "s",
                                      op->num_operands())));
  for (Value* v : op->operands())
    if (!v->type().is(TypeKind::Tensor) && !v->type().is_scalar())
      return void(error(op, fmt::format("operands must be tensors or scalars, got {}", v->type().str())));
  if (!op->result()->type().is(TypeKind::Tensor)) error(op, "result must be a tensor");
}

// 'graph.matmul'
void Verifier::verify_graph_matmul(Operation* op) {
  if (!shape(op, 2, 1)) return;
  Type a = op->operand(0)->type(), b = op->operand(1)->type(), r = op->result()->type();
  if (!a.is(TypeKind::Tensor) || !b.is(TypeKind::Tensor) || !r.is(TypeKind::Tensor))
    return void(error(op, "operands and result must be tensors"));
  if (a.rank() < 2 || b.rank() < 2) return void(error(op, "operands must have rank 2 or more"));
  int64_t k1 = a.shape()[a.rank() - 1], k2 = b.shape()[b.rank() - 2];
  if (k1 != kDynamic && k2 != kDynamic && k1 != k2)
    error(op, fmt::format("inner dimensions differ: {} and {}", k1, k2));
}

// 'graph.reduce'
void Verifier::verify_graph_reduce(Operation* op) {
  if (!shape(op, 1, 1)) return;
  if (!string_choice(op, "kind", {"sum", "mean", "max", "min"})) return;
  if (Attribute axes = int_array_attr(op, "axes")) {
    for (int64_t axis : axes.int_array())
      if (axis < 0 || static_cast<size_t>(axis) >= op->operand(0)->type().rank())
        return void(error(op, fmt::format("axis {} is out of range", axis)));
  }
}

// 'graph.softmax'
void Verifier::verify_graph_softmax(Operation* op) {
  if (!shape(op, 1, 1)) return;
  Type t = op->operand(0)->type();
  if (!t.is(TypeKind::Tensor)) return void(error(op, "operand must be a tensor"));
  axis_attr(op, static_cast<int64_t>(t.rank()));
}

// 'graph.norm'
void Verifier::verify_graph_norm(Operation* op) {
  if (!min_operands(op, 1) || !results(op, 1)) return;
  string_choice(op, "kind", {"rms", "layer"});
  attr(op, "eps", AttributeKind::Float);
}

// 'graph.attention'
void Verifier::verify_graph_attention(Operation* op) {
  shape(op, 3, 1);
}

// 'graph.cast'
void Verifier::verify_graph_cast(Operation* op) {
  if (!shape(op, 1, 1)) return;
  Type a = op->operand(0)->type(), r = op->result()->type();
  if (!a.is(TypeKind::Tensor) || !r.is(TypeKind::Tensor) || !dims_compatible(a.shape(), r.shape()))
    error(op, "converts a tensor to a tensor of the same shape");
}

// 'graph.random'
void Verifier::verify_graph_random(Operation* op) {
  if (!shape(op, 0, 1)) return;
  string_choice(op, "distribution", {"normal", "uniform"});
}

// 'graph.grad'
void Verifier::verify_graph_grad(Operation* op) {
  if (!results(op, 1)) return;
  Attribute of = attr(op, "of", AttributeKind::Symbol);
  Operation* module = op->enclosing(OpKind::Module);
  if (of && module && !lookup_function(module, of.string_value()))
    error(op, fmt::format("differentiates unknown function '@{}'", of.string_value()));
}

// 'graph.mesh'
void Verifier::verify_graph_mesh(Operation* op) {
  if (!shape(op, 0, 1)) return;
  Attribute dims = int_array_attr(op, "shape");
  Attribute axes = attr(op, "axes", AttributeKind::Array);
  if (dims && axes && dims.size() != axes.size())
    error(op, "needs one axis name per mesh dimension");
  if (!op->result()->type().is(TypeKind::Opaque) || op->result()->type().opaque_name() != "mesh")
    error(op, "result must be opaque<\"mesh\">");
}

// 'graph.shard'
void Verifier::verify_graph_shard(Operation* op) {
  if (!shape(op, 2, 1)) return;
  if (!op->operand(1)->type().is(TypeKind::Opaque)) return void(error(op, "operand #1 must be a mesh"));
  Attribute spec = attr(op, "spec", AttributeKind::Array);
  if (spec && spec.size() != op->operand(0)->type().rank())
    error(op, fmt::format("the sharding spec names {} dimensions for a rank-{} tensor", spec.size(),
                          op->operand(0)->type().rank()));
}

// 'graph.all_reduce', 'graph.reduce_scatter'
void Verifier::verify_graph_reduction_collective(Operation* op) {
  if (!shape(op, 1, 1)) return;
  string_choice(op, "op", {"sum", "max", "min", "mean"});
  attr(op, "axis", AttributeKind::String);
}

// 'graph.all_gather', 'graph.broadcast'
void Verifier::verify_graph_axis_collective(Operation* op) {
  if (!shape(op, 1, 1)) return;
  attr(op, "axis", AttributeKind::String);
}

// 'graph.send'
void Verifier::verify_graph_send(Operation* op) {
  if (!shape(op, 1, 0)) return;
  attr(op, "peer", AttributeKind::Integer);
}

// 'graph.recv'
void Verifier::verify_graph_recv(Operation* op) {
  if (!shape(op, 0, 1)) return;
  attr(op, "peer", AttributeKind::Integer);
}

// 'graph.print'
void Verifier::verify_graph_print(Operation* op) {
  results(op, 0);
}

}  // namespace tessera::ir::verification
