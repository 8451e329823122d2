// Sema: autodiff (docs/language/autodiff.md). `grad(f, argnums=..., wrt=...)`
// and `value_and_grad(...)` make a transformed function (TypeKind::Transform);
// calling it instantiates `f` for the arguments, as a call of `f` would, and
// types the result: one gradient per differentiated parameter, of that
// parameter's type (a tuple when `argnums`/`wrt` was a tuple), after the
// value for value_and_grad. `f.defvjp(fwd, bwd)` registers a custom rule of a
// @custom_vjp function; each instance of it instantiates `fwd` with its
// parameter types and `bwd` with (what fwd saves, the output's gradient).
#include <algorithm>
#include <functional>
#include <limits>

#include "sema/builtin_call.h"
#include "sema/checker.h"
#include "sema/decorators.h"

namespace tessera::sema {

// A gradient with respect to a @precision_policy tensor is not defined: the
// argument is `storage` codes (with a per-tensor scale), while the body sees
// their dequantized values (docs/language/autodiff.md, "Not yet").
bool Checker::reject_policy_gradient(NodeId where, const std::string& function, const std::string& parameter,
                                     TypeId type) {
  if (types_.kind(type) != TypeKind::Tensor) return false;
  Policy policy = types_.policy(types_.info(type).policy);
  if (!policy.custom.valid() || !out_.policy_class(policy.custom)) return false;
  diags_.emit<diag::IrAutodiffUnsupported>(
      ast_.range(where), "'" + function + "' with respect to parameter '" + parameter + "' of type '" + types_.to_string(type) + "'",
      "a '@" + name_of(policy.custom) + "' tensor holds quantized codes, which have no gradient (differentiate a "
      "function of its dequantized values instead)");
  return true;
}

void Checker::report_non_float_gradient(NodeId where, const std::string& function, const std::string& parameter,
                                        TypeId type) {
  // A tuple of float tensors (JAX's pytree) has a gradient; one holding
  // anything else does not.
  std::string why = types_.kind(type) == TypeKind::Tuple
                        ? "a tuple has a gradient when every element is a float tensor (or such a tuple)"
                        : "only float tensors have gradients";
  diags_.emit<diag::SemaGradNonFloat>(ast_.range(where), function, parameter, types_.to_string(type), why);
}

std::string dotted_path_of(const Ast& ast, const ValueStores& values, NodeId node);

namespace {

bool has_decorator(const Ast& ast, const ValueStores& values, NodeId def, Decorator wanted) {
  for (NodeId decorator : ast.children(ast.child(def, 0))) {
    NodeId head = ast.child(decorator, 0);
    NodeId callee = ast.kind(head) == NodeKind::Call ? ast.child(head, 0) : head;
    if (lookup_decorator(dotted_path_of(ast, values, callee)) == wanted) return true;
  }
  return false;
}

}  // namespace

// The function `fun_node` names, when it is one written in Tessera that
// grad/value_and_grad/vjp can differentiate; else reported.
std::optional<uint32_t> Checker::transformed_function(BuiltinCall& bc, NodeId fun_node,
                                                      std::vector<uint32_t>* inner_argnums) {
  Value fun = bc.value_of(fun_node);
  if (types_.is_error(fun.type)) {
    bc.check_all_arguments();
    return std::nullopt;
  }
  TypeInfo f = types_.info(fun.type);
  if (f.kind == TypeKind::Transform && inner_argnums) {
    // grad(grad(f)): the inner gradient of one parameter is a function of
    // f's parameters whose result is that gradient.
    TransformInfo inner = types_.transform_info(fun.type);
    if (inner.kind == TransformKind::Grad && !inner.tuple && !inner.has_aux && inner.argnums.size() == 1) {
      inner_argnums->assign(inner.inner_argnums.begin(), inner.inner_argnums.end());
      inner_argnums->push_back(inner.argnums[0]);
      return inner.function;
    }
  }
  // Its kind comes from its decorators, read when it is checked. A plain
  // function is graph code unless a kernel calls it (JAX's grad of any
  // Python function): differentiated as a generic @jit function is.
  if (f.kind == TypeKind::Function) check_function(f.payload);
  const bool graph_function =
      f.kind == TypeKind::Function &&
      (out_.functions[f.payload].kind == FunctionKind::Jit ||
       (out_.functions[f.payload].kind == FunctionKind::Helper && !out_.functions[f.payload].device &&
        !out_.functions[f.payload].uses_kernel_builtins));
  if (!graph_function) {
    diags_.emit<diag::SemaGradNotJit>(ast_.range(fun_node), std::string(bc.name), source_text(fun_node));
    bc.check_all_arguments();
    return std::nullopt;
  }
  // Reverse mode would transpose a @custom_jvp rule: not done (check_jvp.cpp).
  if (bc.id != BuiltinId::Jvp && out_.custom_jvps.count(f.payload)) {
    diags_.emit<diag::SemaCustomJvp>(ast_.range(fun_node), "'" + std::string(bc.name) + "' of '" + source_text(fun_node) +
                                                               "': reverse mode does not transpose a @custom_jvp rule; "
                                                               "give the function a @custom_vjp rule instead");
    bc.check_all_arguments();
    return std::nullopt;
  }
  return f.payload;
}

// grad(fun, argnums=0, wrt=None, has_aux=False) / value_and_grad(...).
Value Checker::check_transform_builtin(BuiltinCall& bc) {
  if (bc.id == BuiltinId::Vjp) return check_vjp(bc);
  if (bc.id == BuiltinId::Jvp) return check_jvp(bc);
  TypeId error = types_.error();
  auto bound = bc.bind({"fun", "argnums", "wrt", "has_aux"}, 1);
  if (bound.empty()) return Value{error};
  std::vector<uint32_t> inner_argnums;
  std::optional<uint32_t> differentiated = transformed_function(bc, bound[0], &inner_argnums);
  if (!differentiated) return Value{error};
  uint32_t index = *differentiated;
  const FunctionInfo& function = out_.functions[index];
  std::string function_name = name_of(function.name);
  auto parameters = ast_.children(ast_.child(function.def, 1)).subspan(function.first_parameter);
  auto count = static_cast<unsigned>(parameters.size());
  TransformInfo transform;
  transform.kind = bc.id == BuiltinId::ValueAndGrad ? TransformKind::ValueAndGrad : TransformKind::Grad;
  transform.function = index;
  transform.inner_argnums = inner_argnums;
  bool ok = true;
  if (bound[1].valid() && bound[2].valid()) {
    diags_.emit<diag::SemaArgumentType>(ast_.range(bound[2]), "wrt", std::string(bc.name),
                                        "left out when argnums= is given", source_text(bound[2]));
    bc.check_all_arguments();
    return Value{error};
  }
  if (bound[2].valid()) {
    // wrt="W" or wrt=("W", "b"): parameters by name.
    NodeId wrt = bound[2];
    std::vector<NodeId> names;
    if (ast_.kind(wrt) == NodeKind::Tuple || ast_.kind(wrt) == NodeKind::List) {
      transform.tuple = true;
      names.assign(ast_.children(wrt).begin(), ast_.children(wrt).end());
      set_type(wrt, types_.dynamic());
    } else {
      names.push_back(wrt);
    }
    for (NodeId n : names) {
      if (ast_.kind(n) != NodeKind::StringLiteral) {
        diags_.emit<diag::SemaArgumentType>(ast_.range(n), "wrt", std::string(bc.name),
                                            "a parameter name or a tuple of them", source_text(n));
        ok = false;
        continue;
      }
      set_type(n, types_.string());
      const std::string& wanted = values_.strings[ast_.node(n).payload];
      auto it = std::find_if(parameters.begin(), parameters.end(),
                             [&](NodeId p) { return name_of(ast_.node(p).payload) == wanted; });
      if (it == parameters.end()) {
        diags_.emit<diag::SemaGradWrtUnknown>(ast_.range(n), function_name, wanted);
        ok = false;
        continue;
      }
      transform.argnums.push_back(static_cast<uint32_t>(it - parameters.begin()));
    }
  } else {
    // argnums: an int or a tuple of ints (JAX's convention), default 0.
    std::vector<NodeId> numbers;
    if (bound[1].valid() && (ast_.kind(bound[1]) == NodeKind::Tuple || ast_.kind(bound[1]) == NodeKind::List)) {
      transform.tuple = true;
      numbers.assign(ast_.children(bound[1]).begin(), ast_.children(bound[1]).end());
      set_type(bound[1], types_.dynamic());
    } else if (bound[1].valid()) {
      numbers.push_back(bound[1]);
    }
    for (NodeId n : numbers) {
      std::optional<int64_t> v = bc.require_constant_integer(n, "argnums");
      if (!v) {
        ok = false;
        continue;
      }
      // A negative number counts from the end, as Python's indices (-1: the last parameter).
      int64_t position = *v < 0 ? *v + static_cast<int64_t>(count) : *v;
      if (position < 0 || position >= static_cast<int64_t>(count)) {
        diags_.emit<diag::SemaGradArgnum>(ast_.range(n), *v, function_name, count, count == 1 ? "" : "s");
        ok = false;
        continue;
      }
      transform.argnums.push_back(static_cast<uint32_t>(position));
    }
    if (!bound[1].valid()) {
      if (count == 0) {
        diags_.emit<diag::SemaGradArgnum>(ast_.range(bound[0]), 0, function_name, count, "s");
        ok = false;
      }
      transform.argnums.push_back(0);
    }
  }
  if (bound[3].valid()) {
    std::optional<bool> has_aux = constant_bool(bc, bound[3], "has_aux");
    if (!has_aux) ok = false;
    transform.has_aux = has_aux.value_or(false);
  }
  if (!ok) return Value{error};
  return Value{types_.transform(transform)};
}

// vjp(f, *primals, has_aux=False) -> (out, f_vjp) (with has_aux: f returns
// (out, aux) and vjp (out, f_vjp, aux)): f instantiated for the primals
// (every one a float tensor); f_vjp is a compile-time function bound to them.
Value Checker::check_vjp(BuiltinCall& bc) {
  TypeId error = types_.error();
  bool has_aux = false;
  for (const auto& [keyword, node] : bc.args.keywords) {
    if (keyword == "has_aux") {
      std::optional<bool> value = constant_bool(bc, node, "has_aux");
      if (!value) return Value{error};
      has_aux = *value;
      continue;
    }
    diags_.emit<diag::SemaArgumentType>(ast_.range(node), std::string(keyword), std::string(bc.name),
                                        "left out (vjp takes the function, its arguments and has_aux=)",
                                        source_text(node));
    bc.check_all_arguments();
    return Value{error};
  }
  if (bc.args.positional.empty()) {
    diags_.emit<diag::SemaArgumentCount>(bc.where, std::string(bc.name), "at least 1 argument (the function)", 0u);
    return Value{error};
  }
  std::optional<uint32_t> differentiated = transformed_function(bc, bc.args.positional[0]);
  if (!differentiated) return Value{error};
  uint32_t index = *differentiated;
  std::string function_name = name_of(out_.functions[index].name);
  std::span<const NodeId> primals(bc.args.positional.begin() + 1, bc.args.positional.end());
  Value out = check_jit_call(bc.call, index, primals);
  if (types_.is_error(out.type) || types_.kind(out.type) == TypeKind::Dynamic) return out;
  // has_aux=True: f returns (out, aux); aux is returned as it is, without a
  // cotangent: (out, f_vjp, aux), JAX's convention.
  TypeId aux;
  if (has_aux) {
    if (types_.kind(out.type) != TypeKind::Tuple || types_.tuple_elements(out.type).size() != 2) {
      diags_.emit<diag::SemaGradAuxNotPair>(ast_.range(bc.call), function_name, types_.to_string(out.type));
      return Value{error};
    }
    aux = types_.tuple_elements(out.type)[1];
    out.type = types_.tuple_elements(out.type)[0];
  }
  auto instance = call_instances_->find(bc.call.index);
  if (instance == call_instances_->end()) return Value{error};
  const FunctionInfo& info = out_.instances[instance->second].info;
  auto parameters = ast_.children(ast_.child(out_.functions[index].def, 1)).subspan(out_.functions[index].first_parameter);
  bool ok = true;
  for (size_t i = 0; i < primals.size(); ++i) {
    TypeInfo p = types_.info(info.parameter_types[i]);
    if (reject_policy_gradient(primals[i], function_name, name_of(ast_.node(parameters[i]).payload),
                               info.parameter_types[i])) {
      ok = false;
    } else if (p.kind != TypeKind::Tensor || !is_float(p.scalar)) {
      report_non_float_gradient(primals[i], function_name, name_of(ast_.node(parameters[i]).payload),
                                info.parameter_types[i]);
      ok = false;
    }
  }
  // The result: float tensors (a tuple of them), each with a cotangent.
  std::vector<TypeId> outputs;
  if (types_.kind(out.type) == TypeKind::Tuple)
    outputs.assign(types_.tuple_elements(out.type).begin(), types_.tuple_elements(out.type).end());
  else
    outputs.push_back(out.type);
  for (TypeId o : outputs) {
    TypeInfo r = types_.info(o);
    if (r.kind != TypeKind::Tensor || !is_float(r.scalar)) {
      diags_.emit<diag::SemaVjpResult>(ast_.range(bc.call), function_name, types_.to_string(out.type));
      ok = false;
      break;
    }
  }
  if (!ok) return Value{error};
  TransformInfo transform;
  transform.kind = TransformKind::Vjp;
  transform.function = index;
  transform.instance = instance->second;
  transform.tuple = true;
  transform.has_aux = has_aux;
  for (uint32_t i = 0; i < primals.size(); ++i) transform.argnums.push_back(i);
  if (std::optional<uint32_t> mesh = program_call_mesh(primals)) {
    TypedModule::ProgramVjp& global = out_.program_vjps[instance->second];
    global.mesh = *mesh;
    global.out = out.type;
    global.primals.clear();
    for (NodeId p : primals) global.primals.push_back(types_.with_mut(default_type(out_.node_types[p.index]), false));
  }
  std::vector<TypeId> parts{out.type, types_.transform(transform)};
  if (has_aux) parts.push_back(aux);
  return Value{types_.tuple(parts)};
}

// f_vjp(cotangent): one cotangent of the type of f's result (a tuple for a
// tuple); returns a tuple of gradients, one per primal (JAX's convention).
Value Checker::check_vjp_call(NodeId call, const TransformInfo& transform, std::span<const NodeId> arguments) {
  const FunctionInfo& info = out_.instances[transform.instance].info;
  std::string function_name = name_of(out_.functions[transform.function].name);
  TypeId out = info.return_type;
  if (transform.has_aux) out = types_.tuple_elements(out)[0];  // (out, aux): aux gets no cotangent
  // Made by the program with sharded primals: global cotangents laid out
  // as the result is, global gradients (check_transform_call).
  auto program = function_ ? out_.program_vjps.end() : out_.program_vjps.find(transform.instance);
  const bool global = program != out_.program_vjps.end();
  if (global) out = program->second.out;
  if (arguments.size() != 1) {
    diags_.emit<diag::SemaArgumentCount>(ast_.range(call), "the vjp function of '" + function_name + "'", "1 argument (the cotangent)",
                                         static_cast<unsigned>(arguments.size()));
    for (NodeId a : arguments) check_expression(a);
    return Value{types_.error()};
  }
  Value cotangent = check_expression(arguments[0]);
  if (types_.is_error(cotangent.type)) return Value{types_.error()};
  std::vector<TypeId> want, have;
  auto elements = [&](TypeId t, std::vector<TypeId>& into) {
    if (types_.kind(t) == TypeKind::Tuple) into.assign(types_.tuple_elements(t).begin(), types_.tuple_elements(t).end());
    else into.push_back(t);
  };
  elements(out, want);
  elements(cotangent.type, have);
  bool match = want.size() == have.size();
  for (size_t i = 0; match && i < want.size(); ++i) {
    TypeInfo w = types_.info(want[i]), h = types_.info(have[i]);
    match = h.kind == TypeKind::Tensor && h.scalar == w.scalar && types_.dims(want[i]).size() == types_.dims(have[i]).size();
    for (size_t d = 0; match && d < types_.dims(want[i]).size(); ++d) {
      auto a = types_.constant_value(types_.dims(want[i])[d]), b = types_.constant_value(types_.dims(have[i])[d]);
      match = !(a && b && *a != *b);
    }
    if (match && global) {
      const ShardingInfo *a = types_.sharding(want[i]), *b = types_.sharding(have[i]);
      match = a && b ? *a == *b : a == b;
    }
  }
  if (!match) {
    diags_.emit<diag::SemaVjpCotangent>(ast_.range(arguments[0]), function_name, types_.to_string(out),
                                        types_.to_string(cotangent.type));
    return Value{types_.error()};
  }
  std::vector<TypeId> gradients;
  if (global) {
    TypedModule::ProgramGradient& scaled = out_.program_gradients[call.index];
    scaled.mesh = program->second.mesh;
    for (TypeId w : want) scaled.scales.push_back(global_gradient_scale(program->second.mesh, w));
    for (uint32_t i : transform.argnums) gradients.push_back(program->second.primals[i]);
    return Value{types_.tuple(gradients)};
  }
  for (uint32_t i : transform.argnums) gradients.push_back(types_.with_mut(info.parameter_types[i], false));
  return Value{types_.tuple(gradients)};
}

// The mesh of a call the program makes with sharded arguments (the function
// runs on it); none inside a @jit function, whose values are already a
// rank's, or without sharded arguments.
std::optional<uint32_t> Checker::program_call_mesh(std::span<const NodeId> arguments) {
  if (function_) return std::nullopt;
  for (NodeId argument : arguments) {
    TypeId t = out_.node_types[argument.index];
    if (!t.valid()) continue;
    if (const ShardingInfo* s = types_.sharding(default_type(t))) return s->mesh;
  }
  return std::nullopt;
}

// Each rank differentiates its own copy of the function, seeded with 1: the
// sum over the ranks of their results is what that differentiates
// (docs/language/autodiff.md, "Collectives"). The program's value of the
// result is its global one: the sum of the terms along the axes it is a
// partial sum over, the mean along those it is a partial mean over, the
// ranks' blocks along those that split it, and one rank's copy along those
// it is whole on (the same on each). So each rank's seed is 1 over the
// sizes of the axes it is a partial mean over or whole on. A
// result whose global value is no reduction of the ranks' (a partial max,
// an unknown or varying layout) has no gradient here: NaN.
double Checker::global_gradient_scale(uint32_t mesh, TypeId result) {
  const MeshInfo& m = types_.mesh_info(mesh);
  const ShardingInfo* s = types_.sharding(result);
  if (s && (s->unknown || s->varying_axes ||
            (s->partial_axes && s->partial_op != PartialOp::Sum && s->partial_op != PartialOp::Avg)))
    return std::numeric_limits<double>::quiet_NaN();
  double scale = 1.0;
  for (size_t a = 0; a < m.axes.size(); ++a) {
    bool summed = s && (s->partial_axes & (1u << a)) && s->partial_op == PartialOp::Sum;
    bool splits = s && std::find(s->dim_axes.begin(), s->dim_axes.end(), static_cast<int32_t>(a)) != s->dim_axes.end();
    if (!summed && !splits) scale /= static_cast<double>(m.shape[a]);
  }
  return scale;
}

// grad(f, ...)(args): f instantiated for the arguments; the gradients have
// the types of the differentiated arguments (in the program, with sharded
// arguments, the global gradients: global_gradient_scale, and the lowering
// adds the ranks' terms).
Value Checker::check_transform_call(NodeId call, TypeId transform_type, std::span<const NodeId> arguments) {
  TransformInfo transform = types_.transform_info(transform_type);
  if (transform.kind == TransformKind::Vjp) return check_vjp_call(call, transform, arguments);
  const FunctionInfo& generic = out_.functions[transform.function];
  std::string function_name = name_of(generic.name);
  Value value = check_jit_call(call, transform.function, arguments, false, true);
  // The arguments in parameter order, defaults included (argnums index them).
  if (auto bound = out_.call_arguments.find(call.index); bound != out_.call_arguments.end()) arguments = bound->second;
  TypeKind value_kind = types_.kind(value.type);
  if (value_kind == TypeKind::Error) return value;
  if (value_kind == TypeKind::Dynamic) return value;  // a generic caller: typed per instance
  // has_aux=True: f returns (value, aux); aux passes through untouched.
  TypeId aux;
  if (transform.has_aux) {
    if (value_kind != TypeKind::Tuple || types_.tuple_elements(value.type).size() != 2) {
      diags_.emit<diag::SemaGradAuxNotPair>(ast_.range(call), function_name, types_.to_string(value.type));
      return Value{types_.error()};
    }
    aux = types_.tuple_elements(value.type)[1];
    value.type = types_.tuple_elements(value.type)[0];
  }
  auto instance = call_instances_->find(call.index);
  if (instance == call_instances_->end()) return Value{types_.error()};
  const FunctionInfo& info = out_.instances[instance->second].info;
  auto parameters = ast_.children(ast_.child(generic.def, 1)).subspan(generic.first_parameter);
  // A result that is not one float value: reduce a tensor of more elements;
  // one integer or bool value has no gradient at all.
  auto report_non_scalar = [&](TypeId result) {
    bool one_value = (types_.kind(result) == TypeKind::Scalar ||
                      (types_.kind(result) == TypeKind::Tensor && types_.dims(result).empty())) &&
                     !is_float(types_.info(result).scalar);
    // `return loss, aux` without has_aux=True (JAX's has_aux).
    bool pair = !transform.has_aux && types_.kind(result) == TypeKind::Tuple &&
                types_.tuple_elements(result).size() == 2;
    diags_.emit<diag::SemaGradNonScalar>(ast_.range(call), function_name, types_.to_string(result),
                                         one_value ? "an integer or bool result has no gradient: compute it in floats"
                                         : pair    ? "for a function returning (value, aux), pass has_aux=True"
                                                   : "reduce it first (ts.sum, ts.mean)");
  };
  // grad(grad(f)): each inner gradient's result is the type of the
  // parameter it differentiates (f's result must be a 0-d float first).
  for (uint32_t i : transform.inner_argnums) {
    TypeInfo inner = types_.info(value.type);
    if (inner.kind != TypeKind::Tensor || types_.dims(value.type).size() != 0 || !is_float(inner.scalar)) {
      report_non_scalar(value.type);
      return Value{types_.error()};
    }
    TypeInfo p = types_.info(info.parameter_types[i]);
    if (reject_policy_gradient(arguments[i], function_name, name_of(ast_.node(parameters[i]).payload),
                               info.parameter_types[i]))
      return Value{types_.error()};
    if (p.kind != TypeKind::Tensor || !is_float(p.scalar)) {
      report_non_float_gradient(arguments[i], function_name, name_of(ast_.node(parameters[i]).payload),
                                info.parameter_types[i]);
      return Value{types_.error()};
    }
    value.type = types_.with_mut(info.parameter_types[i], false);
    function_name = "grad(" + function_name + ")";
  }
  // One float value: a 0-d tensor, or a number (`-> f32`: the 0-d tensor
  // read back, which autodiff differentiates through).
  TypeInfo r = types_.info(value.type);
  bool number = r.kind == TypeKind::Scalar && is_float(r.scalar);
  if (!number && (r.kind != TypeKind::Tensor || types_.dims(value.type).size() != 0 || !is_float(r.scalar))) {
    report_non_scalar(value.type);
    return Value{types_.error()};
  }
  std::optional<uint32_t> program_mesh = program_call_mesh(arguments);
  if (program_mesh)
    out_.program_gradients[call.index] = {*program_mesh, {global_gradient_scale(*program_mesh, value.type)}};
  std::vector<TypeId> gradients;
  bool ok = true;
  for (uint32_t i : transform.argnums) {
    TypeId parameter = info.parameter_types[i];
    TypeInfo p = types_.info(parameter);
    if (reject_policy_gradient(arguments[i], function_name, name_of(ast_.node(parameters[i]).payload), parameter)) {
      ok = false;
      continue;
    }
    // A tuple of float tensors (JAX's pytree of parameters: `params = (W1,
    // b1, W2, b2)`, tuples in it too) has a tuple of gradients, one per
    // leaf, of the same structure.
    std::function<std::optional<TypeId>(TypeId)> pytree_gradient = [&](TypeId t) -> std::optional<TypeId> {
      if (types_.kind(t) == TypeKind::Tensor)
        return is_float(types_.info(t).scalar) && !types_.policy(types_.info(t).policy).custom.valid()
                   ? std::optional<TypeId>(types_.with_mut(t, false))
                   : std::nullopt;
      if (types_.kind(t) != TypeKind::Tuple || types_.tuple_elements(t).empty()) return std::nullopt;
      std::vector<TypeId> leaves;
      for (TypeId element : std::vector<TypeId>(types_.tuple_elements(t).begin(), types_.tuple_elements(t).end())) {
        std::optional<TypeId> g = pytree_gradient(element);
        if (!g) return std::nullopt;
        leaves.push_back(*g);
      }
      return types_.tuple(leaves);
    };
    if (p.kind == TypeKind::Tuple) {
      if (std::optional<TypeId> g = pytree_gradient(parameter)) {
        gradients.push_back(*g);
        continue;
      }
    }
    // A float number parameter (`t: f32`) has a gradient too, a number.
    bool number_parameter = p.kind == TypeKind::Scalar && is_float(p.scalar);
    if (!number_parameter && (p.kind != TypeKind::Tensor || !is_float(p.scalar))) {
      report_non_float_gradient(arguments[i], function_name, name_of(ast_.node(parameters[i]).payload), parameter);
      ok = false;
      continue;
    }
    // The argument's own type: the caller's dimensions.
    TypeId argument = default_type(out_.node_types[arguments[i].index]);
    if (types_.kind(argument) != TypeKind::Tensor) argument = parameter;
    gradients.push_back(number_parameter ? parameter : types_.with_mut(argument, false));
  }
  if (!ok) return Value{types_.error()};
  TypeId grads = transform.tuple ? types_.tuple(gradients) : gradients[0];
  if (transform.kind == TransformKind::ValueAndGrad) {
    // JAX's shape: ((value, aux), grads) with has_aux.
    TypeId first = value.type;
    if (transform.has_aux) {
      std::vector<TypeId> value_aux{value.type, aux};
      first = types_.tuple(value_aux);
    }
    std::vector<TypeId> pair{first, grads};
    return Value{types_.tuple(pair)};
  }
  if (transform.has_aux) {
    std::vector<TypeId> pair{grads, aux};
    return Value{types_.tuple(pair)};
  }
  return Value{grads};
}

// Finds `F.defvjp(fwd, bwd)` statements before anything is checked, so that
// the rule functions are @jit functions (instantiated per use) whatever the
// order of the module's statements.
void Checker::collect_custom_vjps(NodeId module) {
  for (NodeId statement : ast_.children(module)) {
    if (ast_.kind(statement) != NodeKind::ExprStmt) continue;
    NodeId call = ast_.child(statement, 0);
    if (ast_.kind(call) != NodeKind::Call) continue;
    std::optional<uint32_t> function = defvjp_function(call);
    if (!function) continue;
    std::vector<uint32_t> rule = rule_functions(call, 2);
    if (rule.empty() || out_.custom_vjps.count(*function)) continue;  // reported by check_defvjp
    out_.custom_vjps[*function] = {rule[0], rule[1]};
    for (uint32_t r : rule) out_.functions[r].kind = FunctionKind::Jit;
  }
}

// The functions of the module (not kernels) that the `count` arguments of a
// rule registration `F.defvjp(fwd, bwd)` / `F.defjvp(rule)` name, or none.
std::vector<uint32_t> Checker::rule_functions(NodeId call, size_t count) {
  auto arguments = ast_.children(call).subspan(1);
  if (arguments.size() != count) return {};
  std::vector<uint32_t> rule;
  for (NodeId a : arguments) {
    if (ast_.kind(a) != NodeKind::Name) return {};
    auto symbol = module_symbols_.find(ast_.node(a).payload);
    if (symbol == module_symbols_.end() || symbol->second.kind != ModuleSymbol::Kind::Function) return {};
    if (out_.functions[symbol->second.function_index].kind == FunctionKind::Kernel) return {};
    rule.push_back(symbol->second.function_index);
  }
  return rule;
}

// A registration `F.<method>(rules...)` is valid when it is at module level,
// names the rule collected for F (`registered`), and is F's first one
// (`calls`: the registrations accepted so far, `find`: their F).
bool Checker::rule_registration_ok(NodeId call, uint32_t function, const std::vector<uint32_t>& registered,
                                   const std::unordered_set<uint32_t>& calls,
                                   std::optional<uint32_t> (Checker::*find)(NodeId)) {
  NodeId callee = ast_.child(call, 0);
  set_type(ast_.child(callee, 0), types_.function(function));
  set_type(callee, types_.dynamic());
  for (NodeId a : ast_.children(call).subspan(1)) check_expression(a);
  return function_ == nullptr && !registered.empty() && rule_functions(call, registered.size()) == registered &&
         !calls.count(call.index) &&
         std::none_of(calls.begin(), calls.end(), [&](uint32_t other) { return *(this->*find)(NodeId{other}) == function; });
}

// The module function F that a call `F.<method>(...)` is a method call of,
// if it is one (`F.defvjp(...)`, `F.defjvp(...)`).
std::optional<uint32_t> Checker::method_call_function(NodeId call, std::string_view method) {
  NodeId callee = ast_.child(call, 0);
  if (ast_.kind(callee) != NodeKind::Attribute || name_of(ast_.node(callee).payload) != method) return std::nullopt;
  NodeId object = ast_.child(callee, 0);
  if (ast_.kind(object) != NodeKind::Name || locals_.count(ast_.node(object).payload)) return std::nullopt;
  auto symbol = module_symbols_.find(ast_.node(object).payload);
  if (symbol == module_symbols_.end() || symbol->second.kind != ModuleSymbol::Kind::Function) return std::nullopt;
  return symbol->second.function_index;
}

// The @custom_vjp function whose `.defvjp` `call` calls, if it is one.
std::optional<uint32_t> Checker::defvjp_function(NodeId call) {
  std::optional<uint32_t> index = method_call_function(call, "defvjp");
  if (!index || !has_decorator(ast_, values_, out_.functions[*index].def, Decorator::CustomVjp)) return std::nullopt;
  return index;
}

// `F.defvjp(fwd, bwd)`: at module level, once per function, naming two
// functions of the module.
Value Checker::check_defvjp(NodeId call) {
  uint32_t index = *defvjp_function(call);
  std::vector<uint32_t> registered;
  if (auto it = out_.custom_vjps.find(index); it != out_.custom_vjps.end())
    registered = {it->second.first, it->second.second};
  if (!rule_registration_ok(call, index, registered, out_.defvjp_calls, &Checker::defvjp_function)) {
    diags_.emit<diag::SemaCustomVjp>(ast_.range(call),
                                     "'" + name_of(out_.functions[index].name) +
                                         ".defvjp(fwd, bwd)' registers a rule once, at module level, naming two "
                                         "functions of the module (the forward and the backward rule)");
    return Value{types_.error()};
  }
  out_.defvjp_calls.insert(call.index);
  return Value{types_.none()};
}

// An instance of a @custom_vjp function with a rule: fwd for the same
// parameter types must return (y, saved) with y of the function's result
// type; bwd takes (saved, gradient of y) and returns one gradient per
// parameter.
void Checker::instantiate_custom_rule(uint32_t instance, NodeId call) {
  uint32_t function = out_.instances[instance].function;
  auto rule = out_.custom_vjps.find(function);
  if (rule == out_.custom_vjps.end() || out_.custom_rule_instances.count(instance)) return;
  // In progress from here (fwd usually calls the function itself).
  out_.custom_rule_instances[instance] = {UINT32_MAX, UINT32_MAX};
  std::vector<TypeId> parameters = out_.instances[instance].info.parameter_types;
  TypeId result = out_.instances[instance].info.return_type;
  std::string name = name_of(out_.functions[function].name);
  auto fail = [&](const std::string& why) {
    out_.custom_rule_instances.erase(instance);
    diags_.emit<diag::SemaCustomVjp>(ast_.range(call), "the rule of '" + name + "' " + why);
  };
  uint32_t fwd = instantiate(rule->second.first, parameters, call);
  if (fwd == UINT32_MAX) return out_.custom_rule_instances.erase(instance), void();
  TypeId fwd_result = out_.instances[fwd].info.return_type;
  if (!fwd_result.valid() || types_.kind(fwd_result) != TypeKind::Tuple || types_.tuple_elements(fwd_result).size() != 2) {
    fail("does not work: its forward function must return (y, saved)");
    return;
  }
  std::vector<TypeId> pair(types_.tuple_elements(fwd_result).begin(), types_.tuple_elements(fwd_result).end());
  if (result.valid() && pair[0] != result) {
    fail("does not work: its forward function returns '" + types_.to_string(pair[0]) + "' where '" + name +
         "' returns '" + types_.to_string(result) + "'");
    return;
  }
  TypeId saved = pair[1];
  if (types_.kind(saved) == TypeKind::Tuple) {
    for (TypeId e : types_.tuple_elements(saved))
      if (types_.kind(e) != TypeKind::Tensor && !types_.is_numeric_scalar(e)) {
        fail("does not work: what its forward function saves must be tensors or a flat tuple of them");
        return;
      }
  }
  uint32_t bwd = instantiate(rule->second.second, {saved, pair[0]}, call);
  if (bwd == UINT32_MAX) return out_.custom_rule_instances.erase(instance), void();
  TypeId bwd_result = out_.instances[bwd].info.return_type;
  std::vector<TypeId> grads;
  if (bwd_result.valid() && types_.kind(bwd_result) == TypeKind::Tuple)
    grads.assign(types_.tuple_elements(bwd_result).begin(), types_.tuple_elements(bwd_result).end());
  else if (bwd_result.valid())
    grads.push_back(bwd_result);
  bool ok = grads.size() == parameters.size();
  for (size_t i = 0; ok && i < grads.size(); ++i) ok = types_.kind(grads[i]) == types_.kind(parameters[i]);
  if (!ok) {
    fail("does not work: its backward function must return one gradient per parameter (" +
         std::to_string(parameters.size()) + ")");
    return;
  }
  out_.custom_rule_instances[instance] = {fwd, bwd};
}

}  // namespace tessera::sema
