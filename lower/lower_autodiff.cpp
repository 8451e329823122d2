// Lowering of autodiff (docs/language/autodiff.md): a call of
// `grad(f, ...)` / `value_and_grad(f, ...)` becomes graph.grad naming the
// instance of `f` for the arguments; the autodiff pass (ir/graph/autodiff.cpp)
// replaces it with a call of the derived function. A call of a @custom_vjp
// function with a registered rule carries the rule's instances in its
// `custom_vjp` attribute, so that autodiff uses them instead of
// differentiating the body.
#include <algorithm>
#include <cmath>
#include <functional>

#include "lower/lowering.h"

namespace tessera::ir {

using SemaKind = sema::TypeKind;

bool Lowering::is_transform_node(NodeId node) const {
  sema::TypeId t = node_type(node);
  return t.valid() && typed_.types.kind(t) == SemaKind::Transform;
}

// argnums count parameters, and the instance's function takes a tuple
// parameter as its elements: the input of parameter `parameter`. A gradient
// for a tuple parameter is a tuple of gradients (JAX's pytrees): see
// differentiated_inputs.
unsigned Lowering::differentiated_input(NodeId call, uint32_t instance, uint32_t parameter) {
  const std::vector<sema::TypeId>& parameters = typed_.instances[instance].info.parameter_types;
  unsigned input = 0;
  for (uint32_t i = 0; i < parameter && i < parameters.size(); ++i)
    input += static_cast<unsigned>(flat_types(parameters[i]).size());
  if (parameter < parameters.size() && typed_.types.kind(parameters[parameter]) == SemaKind::Tuple)
    unsupported(call, "a gradient with respect to a tuple parameter here");
  return input;
}

// The inputs of parameter `parameter`: one, or a tuple parameter's leaves.
std::vector<unsigned> Lowering::differentiated_inputs(uint32_t instance, uint32_t parameter) {
  const std::vector<sema::TypeId>& parameters = typed_.instances[instance].info.parameter_types;
  unsigned input = 0;
  for (uint32_t i = 0; i < parameter && i < parameters.size(); ++i)
    input += static_cast<unsigned>(flat_types(parameters[i]).size());
  std::vector<unsigned> inputs;
  const size_t leaves = parameter < parameters.size() ? flat_types(parameters[parameter]).size() : 1;
  for (size_t leaf = 0; leaf < leaves; ++leaf) inputs.push_back(input + static_cast<unsigned>(leaf));
  return inputs;
}

// `vjp(f, *primals)`: a call of f's instance for the primals, and the vjp
// function, a compile-time value bound to the primals (their IR values; its
// sema type names the instance). (out, f_vjp).
Bound Lowering::lower_vjp(NodeId call) {
  uint32_t instance = *call_instance(call);
  Operation* callee = jit_function_op(instance);
  Type fn = callee->attr("function_type").type();
  std::vector<NodeId> primals;  // the arguments after f, has_aux= left out
  for (NodeId argument : ast_.children(call).subspan(2))
    if (ast_.kind(argument) != NodeKind::KeywordArgument) primals.push_back(argument);
  std::vector<Value*> operands = jit_call_operands(primals, fn);
  std::vector<Type> results;
  for (size_t i = 0; i < fn.num_results(); ++i) results.push_back(fn.result(i));
  Operation* op = builder_.create(OpKind::Call, std::span<Value* const>(operands), std::span<const Type>(results),
                                  {{"callee", context_.symbol_attr(callee->symbol_name())}});
  attach_custom_rule(op, instance);
  size_t next = 0;
  Bound out = bound_from_flat(typed_.instances[instance].info.return_type, op->results(), next);
  sema::TransformInfo transform = typed_.types.transform_info(
      typed_.types.tuple_elements(node_type(call))[1]);
  Bound pair;
  if (transform.has_aux) {  // f returns (out, aux): (out, f_vjp, aux)
    auto part = [&](size_t i) { return out.nested.empty() ? Bound{out.elements.at(i), {}} : out.nested.at(i); };
    pair.nested.push_back(part(0));
    pair.nested.push_back(Bound{nullptr, operands});
    pair.nested.push_back(part(1));
    return pair;
  }
  pair.nested.push_back(std::move(out));
  pair.nested.push_back(Bound{nullptr, operands});
  return pair;
}

// f_vjp(cotangent): graph.grad of f's instance at the primals f_vjp is bound
// to, seeded with the cotangent (`cotangents`: one operand per result of f,
// after the arguments); a tuple of gradients, one per primal.
Bound Lowering::lower_vjp_call(NodeId call, const sema::TransformInfo& transform) {
  NodeId callee_node = ast_.child(call, 0);
  auto bound = ast_.kind(callee_node) == NodeKind::Name ? env_.find(ast_.node(callee_node).payload) : env_.end();
  if (bound == env_.end() || bound->second.is_value())
    unsupported(call, "a call of a vjp function that is not a name bound by 'out, f_vjp = vjp(f, ...)'");
  std::vector<Value*> operands = bound->second.elements;
  Operation* callee = jit_function_op(transform.instance);
  Type fn = callee->attr("function_type").type();
  Bound cotangent = lower(ast_.child(call, 1), Type{});
  std::vector<Value*> seeds;
  std::function<void(const Bound&)> flatten = [&](const Bound& b) {
    if (b.is_value()) return seeds.push_back(b.value);
    for (const Bound& part : b.nested) flatten(part);
    seeds.insert(seeds.end(), b.elements.begin(), b.elements.end());
  };
  flatten(cotangent);
  // has_aux: the results after out's are aux, seeded with zeros (no
  // gradient flows from them).
  for (size_t i = seeds.size(); transform.has_aux && i < fn.num_results(); ++i) {
    Type t = fn.result(i);
    std::vector<Value*> sizes;
    for (size_t d = 0; d < t.rank(); ++d)
      if (t.shape()[d] == kDynamic) unsupported(call, "has_aux with an aux tensor whose size is known only at run time");
    seeds.push_back(builder_.create(OpKind::GraphConstant, std::span<Value* const>(sizes), std::span<const Type>(&t, 1),
                                    {{"value", zero_attribute(t.scalar())}})
                        ->result());
  }
  if (seeds.size() != fn.num_results()) unsupported(call, "a cotangent of another structure than the function's result");
  // Made by the program on a mesh: each cotangent scaled as grad's seed is
  // (lower_transform_call), so that the ranks' gradients sum to the global ones.
  auto global = typed_.program_gradients.find(call.index);
  const bool on_mesh = global != typed_.program_gradients.end();
  for (size_t i = 0; on_mesh && i < global->second.scales.size(); ++i) {
    double scale = global->second.scales[i];
    if (std::isnan(scale))
      unsupported(call, "the vjp, in the program, of a function whose result is no sum, mean or copy of the ranks' "
                        "values (a partial max or min, or a layout the compiler does not know)");
    if (scale != 1.0)
      seeds[i] = graph_elementwise("mul", {seeds[i], builder_.constant_float(scale, context_.scalar_type(
                                                                                      seeds[i]->type().scalar()))},
                                   call);
  }
  for (size_t i = 0; i < seeds.size(); ++i) {
    Type want = fn.result(i);
    Value*& v = seeds[i];
    // The caller's static dimensions where the instance has `?`.
    if (v->type() != want) v = reshape_as(v, want, v);
  }
  operands.insert(operands.end(), seeds.begin(), seeds.end());
  std::vector<Type> results;
  std::vector<int64_t> argnums;
  for (uint32_t i : transform.argnums) {
    unsigned input = differentiated_input(call, transform.instance, i);
    results.push_back(fn.input(input));
    argnums.push_back(input);
  }
  std::vector<NamedAttribute> attributes{{"of", context_.symbol_attr(callee->symbol_name())},
                                         {"argnums", context_.int_array_attr(argnums)},
                                         {"cotangents", context_.unit_attr()}};
  Operation* op = builder_.create(OpKind::GraphGrad, std::span<Value* const>(operands), std::span<const Type>(results),
                                  std::move(attributes));
  std::vector<Value*> gradients = op->results();
  if (on_mesh) {
    const std::vector<sema::TypeId>& primals = typed_.program_vjps.at(transform.instance).primals;
    for (size_t g = 0; g < gradients.size(); ++g)
      gradients[g] = sum_gradient_terms(gradients[g], global->second.mesh, primals[transform.argnums[g]], call);
  }
  return Bound{nullptr, gradients};
}

Bound Lowering::lower_transform_call(NodeId call) {
  sema::TransformInfo transform = typed_.types.transform_info(node_type(ast_.child(call, 0)));
  if (transform.kind == sema::TransformKind::Vjp) return lower_vjp_call(call, transform);
  if (!call_instance(call)) unsupported(call, "this call of a gradient function");
  uint32_t instance = *call_instance(call);
  Operation* callee = jit_function_op(instance);
  Type fn = callee->attr("function_type").type();
  // With has_aux, results 1.. of f are aux (a tuple in it flattened).
  if (fn.num_results() != 1 && !transform.has_aux) unsupported(call, "a gradient of a function with several results");
  std::vector<Value*> operands = jit_call_operands(call_arguments_in_order(call), fn);  // defaults included
  bool with_value = transform.kind == sema::TransformKind::ValueAndGrad;
  std::vector<Type> results;
  // grad(grad(f)): the differentiated value is the last inner gradient, of
  // its parameter's type.
  if (with_value)
    results.push_back(transform.inner_argnums.empty()
                          ? fn.result(0)
                          : fn.input(differentiated_input(call, instance, transform.inner_argnums.back())));
  std::vector<int64_t> argnums;
  for (uint32_t i : transform.argnums)
    for (unsigned input : differentiated_inputs(instance, i)) {
      results.push_back(fn.input(input));
      argnums.push_back(input);
    }
  size_t first_aux = results.size();
  if (transform.has_aux)
    for (size_t i = 1; i < fn.num_results(); ++i) results.push_back(fn.result(i));
  std::vector<NamedAttribute> attributes{{"of", context_.symbol_attr(callee->symbol_name())},
                                         {"argnums", context_.int_array_attr(argnums)}};
  if (with_value) attributes.push_back({"value", context_.unit_attr()});
  if (transform.has_aux) attributes.push_back({"aux", context_.unit_attr()});
  if (!transform.inner_argnums.empty()) {
    std::vector<int64_t> inner;
    for (uint32_t i : transform.inner_argnums) inner.push_back(differentiated_input(call, instance, i));
    attributes.push_back({"inner_argnums", context_.int_array_attr(inner)});
  }
  Operation* op = builder_.create(OpKind::GraphGrad, std::span<Value* const>(operands), std::span<const Type>(results),
                                  std::move(attributes));
  std::vector<Value*> values = op->results();
  // The program differentiating a function run on a mesh: each rank's
  // gradients scaled so that their sum is the global result's gradient
  // (sema's global_gradient_scale), then summed.
  auto global = typed_.program_gradients.find(call.index);
  const bool on_mesh = global != typed_.program_gradients.end();
  const double scale = on_mesh ? global->second.scales.at(0) : 1.0;
  if (std::isnan(scale))
    unsupported(call, "the gradient, in the program, of a function whose result is no sum, mean or copy of the "
                      "ranks' values (a partial max or min, or a layout the compiler does not know); reduce it with "
                      "all_reduce in the function");
  // A gradient of the caller's static shape where the callee has `?`.
  std::span<const NodeId> arguments = call_arguments_in_order(call);
  const sema::FunctionInfo& instance_info = typed_.instances[instance].info;
  size_t next_gradient = with_value ? 1 : 0;
  for (uint32_t parameter : transform.argnums) {
    NodeId node = arguments[parameter];
    const bool pytree = typed_.types.kind(instance_info.parameter_types[parameter]) == SemaKind::Tuple;
    for (unsigned input : differentiated_inputs(instance, parameter)) {
      Value*& v = values[next_gradient++];
      Value* argument = operands[input];
      if (scale != 1.0)
        v = graph_elementwise("mul", {v, builder_.constant_float(scale, context_.scalar_type(v->type().scalar()))},
                              call);
      if (on_mesh) {
        if (pytree) unsupported(call, "the gradient, in the program on a mesh, with respect to a tuple parameter");
        v = sum_gradient_terms(v, global->second.mesh, node_type(node), call);
      }
      // A sharded argument of the program is its rank's block already.
      if (pytree || (program_ && typed_.types.sharding(node_type(node)))) continue;
      std::optional<Type> want = typed_type(node);
      if (!want || *want == v->type() || !want->is(TypeKind::Tensor)) continue;
      v = reshape_as(v, *want, argument);
    }
  }
  // Per differentiated parameter, its gradient: a value, or a tuple
  // parameter's tuple of them (its structure over the flat results).
  size_t next_leaf = with_value ? 1 : 0;
  std::vector<Bound> per_parameter;
  for (uint32_t parameter : transform.argnums)
    per_parameter.push_back(bound_from_flat(instance_info.parameter_types[parameter], values, next_leaf));
  Bound gradients;
  if (!transform.tuple) {
    gradients = std::move(per_parameter.front());
  } else if (std::ranges::all_of(per_parameter, [](const Bound& b) { return b.is_value(); })) {
    for (const Bound& b : per_parameter) gradients.elements.push_back(b.value);
  } else {
    gradients.nested = std::move(per_parameter);
  }
  Bound aux;
  if (transform.has_aux) {
    // f's instance returns (value, aux): aux's structure, over the flat results.
    sema::TypeId returned = typed_.instances[instance].info.return_type;
    size_t next = first_aux;
    aux = bound_from_flat(typed_.types.tuple_elements(returned)[1], values, next);
  }
  auto pair = [](Bound a, Bound b) {
    if (a.is_value() && b.is_value()) return Bound{nullptr, {a.value, b.value}};
    Bound out;
    out.nested.push_back(std::move(a));
    out.nested.push_back(std::move(b));
    return out;
  };
  if (!with_value) return transform.has_aux ? pair(std::move(gradients), std::move(aux)) : gradients;
  Bound value{values[0], {}};
  if (transform.has_aux) value = pair(std::move(value), std::move(aux));
  return pair(std::move(value), std::move(gradients));
}

// The Bound of a value of sema type `type` whose IR values are the flat
// `values` from `next` on (a tuple in a tuple was flattened).
std::vector<sema::TypeId> Lowering::flat_types(sema::TypeId type) const {
  if (typed_.types.kind(type) != SemaKind::Tuple) return {type};
  std::vector<sema::TypeId> leaves;
  for (sema::TypeId element : typed_.types.tuple_elements(type))
    for (sema::TypeId leaf : flat_types(element)) leaves.push_back(leaf);
  return leaves;
}

Bound Lowering::bound_from_flat(sema::TypeId type, const std::vector<Value*>& values, size_t& next) {
  if (typed_.types.kind(type) != SemaKind::Tuple) return Bound{values.at(next++), {}};
  std::vector<Bound> parts;
  for (sema::TypeId element : typed_.types.tuple_elements(type)) parts.push_back(bound_from_flat(element, values, next));
  bool flat = std::all_of(parts.begin(), parts.end(), [](const Bound& b) { return b.is_value(); });
  Bound out;
  for (Bound& part : parts) {
    if (flat) out.elements.push_back(part.value);
    else out.nested.push_back(std::move(part));
  }
  return out;
}

void Lowering::attach_custom_rule(Operation* call_op, uint32_t instance) {
  auto rule = typed_.custom_rule_instances.find(instance);
  if (rule == typed_.custom_rule_instances.end() || rule->second.first == UINT32_MAX) return;
  Operation* fwd = jit_function_op(rule->second.first);
  Operation* bwd = jit_function_op(rule->second.second);
  Attribute symbols[] = {context_.symbol_attr(fwd->symbol_name()), context_.symbol_attr(bwd->symbol_name())};
  call_op->set_attr("custom_vjp", context_.array_attr(symbols));
}

}  // namespace tessera::ir
