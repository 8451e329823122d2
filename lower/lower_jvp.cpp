// Lowering of forward mode (docs/language/autodiff.md, "Forward mode"):
// `jvp(f, primals, tangents)` becomes graph.jvp naming the instance of `f`
// for the primals; the jvp pass (ir/graph/jvp.cpp) replaces it with a call of
// the derived function @f.jvp. When `f` itself is a @custom_jvp function, the
// rule is called directly. A call of a @custom_jvp function carries its
// rule's instance in its `custom_jvp` attribute, so that the jvp pass uses it
// instead of differentiating the body.
#include <functional>

#include "lower/lowering.h"

namespace tessera::ir {

using SemaKind = sema::TypeKind;

Bound Lowering::lower_jvp(NodeId call) {
  uint32_t instance = *call_instance(call);
  Operation* callee = jit_function_op(instance);
  Type fn = callee->attr("function_type").type();
  // (callee, f, primals, tangents): sema checked the primals are a tuple
  // written out and the tangents a tuple of their types.
  std::vector<Value*> operands = jit_call_operands(ast_.children(ast_.child(call, 2)), fn);
  Bound tangent = lower(ast_.child(call, 3), Type{});
  std::vector<Value*> tangents;
  std::function<void(const Bound&)> flatten = [&](const Bound& b) {
    if (b.is_value()) return tangents.push_back(b.value);
    for (const Bound& part : b.nested) flatten(part);
    tangents.insert(tangents.end(), b.elements.begin(), b.elements.end());
  };
  flatten(tangent);
  if (tangents.size() != fn.num_inputs()) unsupported(call, "tangents of another structure than the primals");
  for (size_t i = 0; i < tangents.size(); ++i) {
    Type want = fn.input(i);
    // The callee's view where the caller has static dimensions.
    if (tangents[i]->type() != want) tangents[i] = reshape_as(tangents[i], want, operands[i]);
  }
  operands.insert(operands.end(), tangents.begin(), tangents.end());
  // f's results, then a tangent per float-tensor result (all of them but
  // has_aux's integer aux values).
  std::vector<Type> results;
  for (size_t i = 0; i < fn.num_results(); ++i) results.push_back(fn.result(i));
  for (size_t i = 0; i < fn.num_results(); ++i)
    if (fn.result(i).is(TypeKind::Tensor) && is_float(fn.result(i).scalar())) results.push_back(fn.result(i));
  Operation* op;
  auto rule = typed_.custom_jvp_instances.find(instance);
  if (rule != typed_.custom_jvp_instances.end() && rule->second != UINT32_MAX) {
    // jvp of a @custom_jvp function: its rule, (primals, tangents) -> (out, tangent_out).
    op = builder_.create(OpKind::Call, std::span<Value* const>(operands), std::span<const Type>(results),
                         {{"callee", context_.symbol_attr(jit_function_op(rule->second)->symbol_name())}});
  } else {
    op = builder_.create(OpKind::GraphJvp, std::span<Value* const>(operands), std::span<const Type>(results),
                         {{"of", context_.symbol_attr(callee->symbol_name())}});
  }
  std::vector<Value*> values = op->results();
  sema::TypeId returned = typed_.instances[instance].info.return_type;
  // has_aux=True (sema typed the call (out, tangent_out, aux)): f returns
  // (out, aux); the results are f's, then a tangent per float result, those
  // of out's (float) leaves first.
  sema::TypeId call_type = node_type(call);
  if (typed_.types.kind(call_type) == SemaKind::Tuple && typed_.types.tuple_elements(call_type).size() == 3) {
    sema::TypeId out_type = typed_.types.tuple_elements(returned)[0];
    size_t n_out = 0;
    std::function<void(sema::TypeId)> count = [&](sema::TypeId t) {
      if (typed_.types.kind(t) != SemaKind::Tuple) return void(++n_out);
      for (sema::TypeId e : typed_.types.tuple_elements(t)) count(e);
    };
    count(out_type);
    size_t n = fn.num_results();
    std::vector<Value*> flat(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(n_out));
    flat.insert(flat.end(), values.begin() + static_cast<std::ptrdiff_t>(n),
                values.begin() + static_cast<std::ptrdiff_t>(n + n_out));
    flat.insert(flat.end(), values.begin() + static_cast<std::ptrdiff_t>(n_out),
                values.begin() + static_cast<std::ptrdiff_t>(n));
    values = flat;
    returned = out_type;
  }
  // The caller's static dimensions where the instance has `?` (sema typed
  // the call with them): each flat result reshaped to its sema type.
  std::vector<sema::TypeId> leaves;
  std::function<void(sema::TypeId)> collect = [&](sema::TypeId t) {
    if (typed_.types.kind(t) != SemaKind::Tuple) return leaves.push_back(t);
    for (sema::TypeId e : typed_.types.tuple_elements(t)) collect(e);
  };
  collect(node_type(call));
  for (size_t i = 0; i < values.size() && leaves.size() == values.size(); ++i) {
    if (typed_.types.kind(leaves[i]) != SemaKind::Tensor) continue;
    if (program_ && typed_.types.sharding(leaves[i])) continue;  // the rank's block
    std::optional<Type> want = ir_type(leaves[i]);
    if (want && *want != values[i]->type() && want->is(TypeKind::Tensor))
      values[i] = reshape_as(values[i], *want, values[i]);
  }
  size_t next = 0;
  Bound pair;
  pair.nested.push_back(bound_from_flat(returned, values, next));
  pair.nested.push_back(bound_from_flat(returned, values, next));
  if (typed_.types.kind(call_type) == SemaKind::Tuple && typed_.types.tuple_elements(call_type).size() == 3)
    pair.nested.push_back(bound_from_flat(typed_.types.tuple_elements(call_type)[2], values, next));
  // Plain values: a flat tuple, as a tuple of tensors is elsewhere.
  bool flat = true;
  for (const Bound& b : pair.nested) flat = flat && b.is_value();
  if (flat) {
    std::vector<Value*> elements;
    for (const Bound& b : pair.nested) elements.push_back(b.value);
    return Bound{nullptr, elements};
  }
  return pair;
}

void Lowering::attach_custom_jvp(Operation* call_op, uint32_t instance) {
  auto rule = typed_.custom_jvp_instances.find(instance);
  if (rule == typed_.custom_jvp_instances.end() || rule->second == UINT32_MAX) return;
  call_op->set_attr("custom_jvp", context_.symbol_attr(jit_function_op(rule->second)->symbol_name()));
}

}  // namespace tessera::ir
