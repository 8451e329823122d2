// The rules of the graph operations (Graph IR) (verifier_rules.h; docs/ir/graph.md).
#include <fmt/format.h>

#include "ir/core/graph_ops.h"
#include "ir/core/graph_shapes.h"
#include "ir/core/verifier_rules.h"

namespace tessera::ir::verification {

// Tensor operations: the result's type is what the operands and attributes
// make it (graph_shapes.h), so one rule serves them all.
void Verifier::verify_graph_tensor_op(Operation* op) {
  if (op->num_regions() != 0) return void(error(op, fmt::format("expects 0 regions, got {}", op->num_regions())));
  switch (op->kind()) {
    case OpKind::GraphElementwise:
      if (!string_choice(op, "op", elementwise_op_names())) return;
      break;
    case OpKind::GraphReduce:
      if (!string_choice(op, "kind", reduce_kind_names())) return;
      if (!int_array_attr(op, "axes")) return;
      break;
    case OpKind::GraphSoftmax:
      if (!attr(op, "axis", AttributeKind::Integer)) return;
      break;
    case OpKind::GraphNorm:
      if (!string_choice(op, "kind", {"rms", "layer"})) return;
      if (!attr(op, "eps", AttributeKind::Float)) return;
      break;
    case OpKind::GraphRandom:
      if (!string_choice(op, "distribution", {"normal", "uniform"})) return;
      break;
    case OpKind::GraphConstant: {
      Attribute v = op->attr("value");
      if (!v || !(v.is(AttributeKind::Float) || v.is(AttributeKind::Integer) || v.is(AttributeKind::Bool)))
        return void(error(op, "requires a scalar attribute 'value' (splatted over the tensor)"));
      break;
    }
    case OpKind::GraphLaunch: {
      Attribute kernel = attr(op, "kernel", AttributeKind::Symbol);
      if (!kernel) return;
      Operation* module = op->enclosing(OpKind::Module);
      Operation* callee = module ? lookup_function(module, kernel.string_value()) : nullptr;
      if (module && (!callee || !callee->has_attr("kernel")))
        return void(error(op, fmt::format("launches '@{}', which is not a kernel of the module", kernel.string_value())));
      break;
    }
    case OpKind::GraphCast:
      // `dequantize = @Class.dequantize`: a function (code, scale) -> value
      // of the element types of operand #0, operand #1 and the result.
      if (Attribute method = op->attr("dequantize"); method && method.is(AttributeKind::Symbol) && op->num_operands() == 2 &&
                                                  op->operand(1)->type().is_scalar() && op->num_results() == 1) {
        Operation* module = op->enclosing(OpKind::Module);
        Operation* callee = module ? lookup_function(module, method.string_value()) : nullptr;
        if (!module) break;
        Type fn = callee ? callee->attr("function_type").type() : Type{};
        Type code = op->operand(0)->type(), result = op->result(0)->type();
        auto element = [&](Type t) { return t.is(TypeKind::Tensor) ? t.scalar() : ScalarType::F32; };
        if (!callee || fn.num_inputs() != 2 || fn.num_results() != 1 || !fn.input(0).is_scalar() ||
            fn.input(0).scalar() != element(code) || fn.input(1) != op->operand(1)->type() || !fn.result(0).is_scalar() ||
            fn.result(0).scalar() != element(result))
          return void(error(op, fmt::format("'dequantize' names '@{}', which is not a function (code, scale) -> value of "
                                            "its element types",
                                            method.string_value())));
      }
      break;
    case OpKind::GraphSave:
      if (!verify_save_path(op)) return;
      if (!op->operand(0)->type().is(TypeKind::Tensor)) error(op, "operand 0 must be a tensor");
      return;
    case OpKind::GraphLoad:
      if (!attr(op, "path", AttributeKind::String)) return;
      break;
    default: break;
  }
  if (op->is(OpKind::GraphLaunch)) {
    Attribute mut = op->attr("mut_operands");
    size_t expected = mut ? mut.size() : 0;
    if (op->num_results() != expected)
      return void(error(op, fmt::format("has {} results, one per 'mut_operands' entry ({})", op->num_results(), expected)));
  } else if (!results(op, op->is(OpKind::GraphAttentionGrad) ? 3 : 1)) {
    return;
  }
  for (unsigned i = 0; i < op->num_results(); ++i) {
    std::string why;
    std::optional<GraphResult> expected = infer_graph_result(op, i, why);
    if (!expected) return void(error(op, why));
    Type actual = op->result(i)->type();
    if (!graph_type_matches(*expected, actual))
      return void(error(op, fmt::format("result must be {}, not {}", graph_result_text(*expected), actual.str())));
  }
}

// 'graph.grad': one result per entry of `argnums` (default [0]), after the
// value when `value` is set; operands are the function's arguments.
void Verifier::verify_graph_grad(Operation* op) {
  std::vector<int64_t> argnums{0};
  if (op->has_attr("argnums")) {
    Attribute list = int_array_attr(op, "argnums");
    if (!list) return;
    argnums = list.int_array();
  }
  bool with_value = op->has_attr("value");
  bool with_aux = op->has_attr("aux");
  bool with_cotangents = op->has_attr("cotangents");
  Attribute of = attr(op, "of", AttributeKind::Symbol);
  Operation* module = op->enclosing(OpKind::Module);
  if (!of || !module) return;
  Operation* function = lookup_function(module, of.string_value());
  if (!function) return void(error(op, fmt::format("differentiates unknown function '@{}'", of.string_value())));
  Type fn = function->attr("function_type").type();
  if (with_cotangents && (with_value || with_aux))
    return void(error(op, "takes 'cotangents' without 'value' or 'aux'"));
  // Results: the value (with `value`), one gradient per argnums entry, then
  // the function's results after the first (with `aux`).
  size_t aux_count = with_aux && fn.num_results() > 0 ? fn.num_results() - 1 : 0;
  if (!results(op, static_cast<unsigned>(argnums.size() + (with_value ? 1 : 0) + aux_count))) return;
  // Operands: the function's arguments, then (with `cotangents`) one seed per
  // result of the function.
  size_t operands = fn.num_inputs() + (with_cotangents ? fn.num_results() : 0);
  if (op->num_operands() != operands)
    return void(error(op, fmt::format("passes {} operands to '@{}', which takes {}{}", op->num_operands(),
                                      of.string_value(), fn.num_inputs(),
                                      with_cotangents ? fmt::format(" and {} cotangents", fn.num_results()) : "")));
  if (fn.num_results() == 0 || (!with_aux && !with_cotangents && fn.num_results() != 1))
    return void(error(op, with_aux || with_cotangents ? "differentiates a function without results"
                                                      : "differentiates a function with several results (without 'aux')"));
  if (with_cotangents)
    for (size_t r = 0; r < fn.num_results(); ++r)
      if (op->operand(static_cast<unsigned>(fn.num_inputs() + r))->type() != fn.result(r))
        return void(error(op, fmt::format("cotangent #{} must have the type of the function's result #{}", r, r)));
  // `inner_argnums` (grad(grad(f))): the function differentiated is the
  // gradient of @of for those parameters in turn; its value is the last one.
  Type value_type = fn.result(0);
  if (op->has_attr("inner_argnums")) {
    Attribute inner = int_array_attr(op, "inner_argnums");
    if (!inner) return;
    if (with_aux || with_cotangents) return void(error(op, "takes 'inner_argnums' without 'aux' or 'cotangents'"));
    for (int64_t a : inner.int_array())
      if (a < 0 || static_cast<size_t>(a) >= fn.num_inputs())
        return void(error(op, fmt::format("inner_argnums entry {} is out of range", a)));
    value_type = fn.input(static_cast<size_t>(inner.int_array().back()));
  }
  unsigned first = with_value ? 1 : 0;
  if (with_value && op->result(0)->type() != value_type)
    return void(error(op, "result #0 must be the function's first result"));
  for (size_t g = 0; g < argnums.size(); ++g) {
    if (argnums[g] < 0 || static_cast<size_t>(argnums[g]) >= fn.num_inputs())
      return void(error(op, fmt::format("argnums entry {} is out of range", argnums[g])));
    if (op->result(static_cast<unsigned>(first + g))->type() != fn.input(static_cast<size_t>(argnums[g])))
      return void(error(op, fmt::format("the gradient for argument #{} must have its type", argnums[g])));
  }
  for (size_t a = 0; a < aux_count; ++a)
    if (op->result(static_cast<unsigned>(first + argnums.size() + a))->type() != fn.result(a + 1))
      return void(error(op, fmt::format("auxiliary result #{} must have the type of the function's result #{}", a, a + 1)));
}

// 'graph.jvp' (forward mode): operands are the function's arguments, then
// one tangent per float-tensor argument (of its type); results are the
// function's results, then one tangent per float-tensor result.
void Verifier::verify_graph_jvp(Operation* op) {
  Attribute of = attr(op, "of", AttributeKind::Symbol);
  Operation* module = op->enclosing(OpKind::Module);
  if (!of || !module) return;
  Operation* function = lookup_function(module, of.string_value());
  if (!function) return void(error(op, fmt::format("differentiates unknown function '@{}'", of.string_value())));
  Type fn = function->attr("function_type").type();
  auto float_tensor = [](Type t) { return t.is(TypeKind::Tensor) && is_float(t.scalar()); };
  std::vector<Type> operands, outputs;
  for (size_t i = 0; i < fn.num_inputs(); ++i) operands.push_back(fn.input(i));
  for (size_t i = 0; i < fn.num_inputs(); ++i)
    if (float_tensor(fn.input(i))) operands.push_back(fn.input(i));
  for (size_t i = 0; i < fn.num_results(); ++i) outputs.push_back(fn.result(i));
  for (size_t i = 0; i < fn.num_results(); ++i)
    if (float_tensor(fn.result(i))) outputs.push_back(fn.result(i));
  if (op->num_operands() != operands.size())
    return void(error(op, fmt::format("passes {} operands to '@{}', which takes {} arguments and {} tangents",
                                      op->num_operands(), of.string_value(), fn.num_inputs(),
                                      operands.size() - fn.num_inputs())));
  if (!results(op, static_cast<unsigned>(outputs.size()))) return;
  for (size_t i = 0; i < operands.size(); ++i)
    if (op->operand(static_cast<unsigned>(i))->type() != operands[i])
      return void(error(op, i < fn.num_inputs()
                                ? fmt::format("operand #{} must have the type of the function's argument #{}", i, i)
                                : fmt::format("tangent operand #{} must have the type of its argument", i)));
  for (size_t i = 0; i < outputs.size(); ++i)
    if (op->result(static_cast<unsigned>(i))->type() != outputs[i])
      return void(error(op, i < fn.num_results()
                                ? fmt::format("result #{} must have the type of the function's result #{}", i, i)
                                : fmt::format("tangent result #{} must have the type of its result", i)));
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

// 'graph.shard', 'graph.unshard' (docs/ir/graph.md): this rank's block of
// a whole tensor, and the whole tensor from every rank's block.
void Verifier::verify_graph_shard(Operation* op) {
  if (!shape(op, 1, 1)) return;
  attr(op, "mesh", AttributeKind::Array);
  Attribute spec = attr(op, "spec", AttributeKind::Array);
  if (spec && spec.size() != op->operand(0)->type().rank())
    return void(error(op, fmt::format("the sharding spec names {} dimensions for a rank-{} tensor", spec.size(),
                                      op->operand(0)->type().rank())));
  if (op->attr("mesh") && spec) check_result_type(op);
}

// 'graph.all_reduce', 'graph.reduce_scatter'
void Verifier::verify_graph_reduction_collective(Operation* op) {
  if (!shape(op, 1, 1)) return;
  string_choice(op, "op", {"sum", "max", "min", "mean", "prod"});
  if (attr(op, "axis", AttributeKind::String) && op->attr("mesh")) check_result_type(op);
}

// 'graph.all_gather', 'graph.broadcast'
void Verifier::verify_graph_axis_collective(Operation* op) {
  if (!shape(op, 1, 1)) return;
  if (attr(op, "axis", AttributeKind::String) && op->attr("mesh")) check_result_type(op);
}

// The result type the operands and attributes make (graph_shapes.cpp).
void Verifier::check_result_type(Operation* op) {
  std::string why;
  std::optional<GraphResult> inferred = infer_graph_result(op, 0, why);
  if (!inferred) return void(error(op, why));
  if (!graph_type_matches(*inferred, op->result()->type()))
    error(op, "result must be " + graph_result_text(*inferred));
}

// 'graph.send %x {axis, src, dst, mesh}': index src of the axis sends x to
// index dst; the other ranks do nothing.
void Verifier::verify_graph_send(Operation* op) {
  if (!shape(op, 1, 0)) return;
  attr(op, "axis", AttributeKind::String);
  attr(op, "mesh", AttributeKind::Array);
  attr(op, "src", AttributeKind::Integer);
  attr(op, "dst", AttributeKind::Integer);
}

// 'graph.recv %x {axis, src, dst, mesh}': on index dst what src sent, on the
// other ranks x. 'graph.sendrecv %x {axis, shift, mesh}': x sent to index
// j + shift, the result received from j - shift. Both: the type of x.
void Verifier::verify_graph_recv(Operation* op) {
  if (!shape(op, 1, 1)) return;
  attr(op, "axis", AttributeKind::String);
  attr(op, "mesh", AttributeKind::Array);
  for (const char* name : op->is(OpKind::GraphRecv) ? std::vector<const char*>{"src", "dst"}
                                                    : std::vector<const char*>{"shift"})
    attr(op, name, AttributeKind::Integer);
  if (op->result()->type() != op->operand(0)->type()) error(op, "result must have the type of the operand");
}

// 'graph.print'
void Verifier::verify_graph_print(Operation* op) {
  results(op, 0);
}

// 'graph.item %t : T': the value of a 0-d tensor of T on the host (a
// condition on a tensor, a 0-d tensor passed as a kernel's scalar).
void Verifier::verify_graph_item(Operation* op) {
  if (!shape(op, 1, 1)) return;
  Type t = op->operand(0)->type();
  if (!t.is(TypeKind::Tensor) || t.rank() != 0) return void(error(op, "operand must be a 0-d tensor"));
  Type r = op->result()->type();
  if (!r.is_scalar() || r.scalar() != t.scalar())
    error(op, fmt::format("result must be the tensor's element type {}", scalar_info(t.scalar()).name));
}

}  // namespace tessera::ir::verification
