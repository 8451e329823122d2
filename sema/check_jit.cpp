// Sema: calls of @jit functions (with their instances) and kernel launches
// from graph-level code (docs/language/graph.md).
//
// A @jit function whose parameters are all annotated is checked once, like
// any function; a call binds its symbolic dimensions to the arguments' and
// its result type is the declared (or inferred) one with those dimensions
// substituted. A @jit function with an unannotated parameter is generic: each
// call with a new signature instantiates it, checking the body with the
// arguments' types (the C++ template model: every instance is typed and its
// errors reported at compile time). The instance's node types live in its own
// table, so one AST serves every instance.
#include <algorithm>
#include <functional>

#include "sema/builtin_call.h"
#include "sema/checker.h"
#include "sema/definite_assignment.h"

namespace tessera::sema {

TypeId Checker::substitute_dims(TypeId type, const std::unordered_map<uint32_t, DimId>& bound) {
  TypeInfo info = types_.info(type);
  if (info.kind == TypeKind::Tuple) {
    std::vector<TypeId> elements(types_.tuple_elements(type).begin(), types_.tuple_elements(type).end());
    for (TypeId& e : elements) e = substitute_dims(e, bound);
    return types_.tuple(elements);
  }
  if (info.kind != TypeKind::Tensor || bound.empty()) return type;
  std::vector<DimId> dims(types_.dims(type).begin(), types_.dims(type).end());
  // A size computed from the callee's symbols (`N + N` of a concat) is
  // computed from what the call bound them to (8 where N is 4).
  std::function<DimId(DimId)> substitute = [&](DimId d) {
    Dim dim = types_.dim(d);
    if (dim.kind == DimKind::Symbol) {
      auto it = bound.find(dim.symbol.index);
      return it == bound.end() ? d : it->second;
    }
    if (dim.kind == DimKind::Constant || dim.kind == DimKind::Dynamic) return d;
    DimId lhs = substitute(dim.lhs), rhs = substitute(dim.rhs);
    return lhs == dim.lhs && rhs == dim.rhs ? d : types_.binary_dim(dim.kind, lhs, rhs);
  };
  bool changed = false;
  for (DimId& d : dims) {
    DimId substituted = substitute(d);
    changed |= substituted != d;
    d = substituted;
  }
  if (!changed) return type;
  return types_.tensor(info.scalar, info.policy, dims, info.space, false, info.seed_style);
}

Value Checker::check_jit_call(NodeId call, uint32_t index, std::span<const NodeId> arguments, bool direct,
                              bool defaults) {
  const FunctionInfo& generic = out_.functions[index];
  std::string name = name_of(generic.name);
  // (grad/value_and_grad calls bind as a direct call does: `defaults`.)
  if (!direct && !defaults) {
    for (NodeId argument : arguments) {
      if (ast_.kind(argument) != NodeKind::KeywordArgument) continue;
      for (NodeId a : arguments) check_expression(ast_.kind(a) == NodeKind::KeywordArgument ? ast_.child(a, 0) : a);
      diags_.emit<diag::SemaUnsupportedCall>(ast_.range(argument), "keyword arguments to a transformed function");
      return Value{types_.error()};
    }
  }
  // Python's binding: by position, keyword and default (a default is
  // evaluated at the call, in the caller's scope).
  std::optional<BoundArguments> bound_arguments = bind_arguments(call, arguments, generic, name);
  if (!bound_arguments) return Value{types_.error()};
  if (!direct && !defaults && !std::ranges::all_of(bound_arguments->given, [](bool g) { return g; })) {
    size_t expected = generic.parameter_types.size();
    diags_.emit<diag::SemaArgumentCount>(ast_.range(call), name,
                                         std::to_string(expected) + " argument" + (expected == 1 ? "" : "s"),
                                         static_cast<unsigned>(arguments.size()));
    return Value{types_.error()};
  }
  std::vector<NodeId> positional;
  std::vector<TypeId> argument_types;
  std::vector<std::optional<Constant>> argument_constants;
  std::vector<NodeId> argument_literals;
  bool unknown = false;
  for (NodeId argument : bound_arguments->nodes) {
    Value v = check_expression(argument);
    positional.push_back(argument);
    TypeKind given_kind = types_.kind(v.type);
    bool number = given_kind == TypeKind::Scalar || given_kind == TypeKind::UntypedInt ||
                  given_kind == TypeKind::UntypedFloat;
    argument_constants.push_back(number && v.constant && !v.constant->from_local ? v.constant : std::nullopt);
    argument_literals.push_back(constant_literal(argument));
    TypeId t = default_type(v.type);
    if (types_.kind(t) == TypeKind::Tensor) t = types_.with_mut(t, false);
    // A sharded argument of the program: the function sees this rank's
    // shard. (Inside a @jit function, values already are shards.)
    if (types_.sharding(t) && !function_) {
      auto local = shard_view(argument, t, true);
      if (!local) return Value{types_.error()};
      t = *local;
    }
    argument_types.push_back(t);
    TypeKind kind = types_.kind(t);
    if (kind == TypeKind::Dynamic || kind == TypeKind::Error) unknown = true;
  }
  if (direct || defaults) out_.call_arguments[call.index] = positional;
  size_t expected = generic.parameter_types.size();
  // Every sharded argument lies on one mesh: the function's.
  TypeId meshed{};
  for (size_t i = 0; i < expected; ++i) {
    const ShardingInfo* s = types_.sharding(argument_types[i]);
    if (!s) continue;
    if (meshed.valid() && types_.sharding(meshed)->mesh != s->mesh) {
      diags_.emit<diag::SemaDistLayoutMismatch>(ast_.range(call), name, types_.to_string(meshed),
                                                types_.to_string(argument_types[i]));
      return Value{types_.error()};
    }
    meshed = argument_types[i];
    if (types_.kind(generic.parameter_types[i]) != TypeKind::Dynamic) {
      diags_.emit<diag::SemaDistLayoutMismatch>(ast_.range(positional[i]), name,
                                                types_.to_string(generic.parameter_types[i]),
                                                types_.to_string(argument_types[i]));
      return Value{types_.error()};
    }
  }
  // Annotated parameters take what their annotation says.
  for (size_t i = 0; i < expected; ++i) {
    TypeId declared = generic.parameter_types[i];
    // An annotation that names no type was reported where it is written.
    if (types_.is_error(declared)) return Value{types_.error()};
    if (types_.kind(declared) == TypeKind::Dynamic || unknown) continue;
    // A 0-d tensor where the function takes a number (`b = b - lr * gb`
    // carried through a training loop, NumPy's and JAX's 0-d arrays): its
    // value, read back to the host at the call, as a kernel launch reads it.
    TypeId given = argument_types[i];
    if (types_.kind(declared) == TypeKind::Scalar && types_.kind(given) == TypeKind::Tensor &&
        types_.dims(given).empty())
      given = types_.scalar(types_.info(given).scalar);
    TypeKind dk = types_.kind(declared), ak = types_.kind(given);
    bool mismatch = dk != ak && !(dk == TypeKind::Scalar && (ak == TypeKind::UntypedInt || ak == TypeKind::UntypedFloat));
    if (!mismatch && dk == TypeKind::Tensor) {
      // A @precision_policy parameter takes the caller's tensor of values
      // (what graph code holds of one: graph_policy_values).
      ScalarType wanted = types_.info(graph_policy_values(declared, false)).scalar;
      mismatch = wanted != types_.info(argument_types[i]).scalar ||
                 types_.dims(declared).size() != types_.dims(argument_types[i]).size();
    }
    if (!mismatch && dk == TypeKind::Scalar) mismatch = !is_assignable(given, declared);
    if (mismatch) {
      diags_.emit<diag::SemaCallArgumentType>(ast_.range(positional[i]), static_cast<unsigned>(i + 1), name,
                                              types_.to_string(declared), types_.to_string(argument_types[i]));
      return Value{types_.error()};
    }
  }
  std::unordered_map<uint32_t, DimId> bound = bind_call_shapes(generic, positional);
  auto generic_instance = out_.function_instance.find(index);
  if (generic_instance != out_.function_instance.end()) {
    // All parameters annotated: one instance, typed in the module's tables.
    (*call_instances_)[call.index] = generic_instance->second;
    if (out_.custom_vjps.count(index)) instantiate_custom_rule(generic_instance->second, call);
    if (out_.custom_jvps.count(index)) instantiate_custom_jvp(generic_instance->second, call);
    const FunctionInfo& info = out_.instances[generic_instance->second].info;
    raise_effect(info.effect, ast_.range(call));
    TypeId result = info.return_type.valid() ? info.return_type : types_.none();
    return Value{substitute_dims(result, bound)};
  }
  if (unknown) {
    // Types unknown here (a generic caller): the callee's effect is its
    // generic body's.
    raise_effect(generic_effect(index), ast_.range(call));
    return Value{types_.dynamic()};
  }
  std::vector<TypeId> parameter_types = argument_types;
  for (size_t i = 0; i < expected; ++i)
    if (types_.kind(generic.parameter_types[i]) != TypeKind::Dynamic) parameter_types[i] = generic.parameter_types[i];
  // Constant arguments of unannotated parameters the body never rebinds:
  // the instance is made for their values (JitInstance::constant_arguments).
  std::vector<uint32_t> rebound;
  assigned_names(ast_, ast_.child(generic.def, 3), rebound);
  auto parameter_nodes = ast_.children(ast_.child(generic.def, 1)).subspan(generic.first_parameter);
  for (size_t i = 0; i < expected; ++i) {
    uint32_t parameter_name = i < parameter_nodes.size() ? ast_.node(parameter_nodes[i]).payload : UINT32_MAX;
    if (types_.kind(generic.parameter_types[i]) != TypeKind::Dynamic ||
        std::find(rebound.begin(), rebound.end(), parameter_name) != rebound.end()) {
      argument_constants[i].reset();
      argument_literals[i] = NodeId{};
    }
  }
  if (std::none_of(argument_constants.begin(), argument_constants.end(), [](const auto& c) { return c.has_value(); }))
    argument_constants.clear();
  if (std::none_of(argument_literals.begin(), argument_literals.end(), [](NodeId n) { return n.valid(); }))
    argument_literals.clear();
  uint32_t instance = instantiate(index, parameter_types, call, argument_constants, argument_literals);
  if (instance == UINT32_MAX) return Value{types_.error()};
  (*call_instances_)[call.index] = instance;
  if (out_.custom_vjps.count(index)) instantiate_custom_rule(instance, call);
  if (out_.custom_jvps.count(index)) instantiate_custom_jvp(instance, call);
  const FunctionInfo& info = out_.instances[instance].info;
  raise_effect(info.effect, ast_.range(call));
  TypeId result = substitute_dims(info.return_type.valid() ? info.return_type : types_.none(), bound);
  // Sharded results as the program sees them: global dims (a @jit caller
  // keeps this rank's shard).
  auto global = [&](TypeId t) {
    return types_.sharding(t) && !function_ ? shard_view(call, t, false).value_or(t) : t;
  };
  if (types_.kind(result) == TypeKind::Tuple) {
    std::vector<TypeId> elements(types_.tuple_elements(result).begin(), types_.tuple_elements(result).end());
    for (TypeId& e : elements) e = global(e);
    return Value{types_.tuple(elements)};
  }
  return Value{global(result)};
}

Effect Checker::generic_effect(uint32_t index) {
  check_generic(index);
  return out_.functions[index].effect;
}

void Checker::check_generic(uint32_t index) {
  if (!generic_checked_.insert(index).second) return;  // done, or in progress (recursion)
  FunctionInfo copy = out_.functions[index];
  bool saved = check_generic_bodies_;
  check_generic_bodies_ = true;
  // Its node types go to a scratch table: the generic check types nothing an
  // instance or the lowering reads.
  std::vector<TypeId> scratch(out_.node_types.size());
  std::swap(out_.node_types, scratch);
  std::vector<TypeId>* saved_module = module_node_types_;
  if (!saved_module) module_node_types_ = &scratch;
  std::unordered_map<uint32_t, uint32_t>* saved_calls = call_instances_;
  std::unordered_map<uint32_t, uint32_t> ignored_calls;
  call_instances_ = &ignored_calls;
  ElementTablesMap* saved_element_tables = element_tables_;
  ElementTablesMap ignored_element_tables;
  element_tables_ = &ignored_element_tables;
  check_function_body(copy, nullptr, index);
  element_tables_ = saved_element_tables;
  call_instances_ = saved_calls;
  module_node_types_ = saved_module;
  std::swap(out_.node_types, scratch);
  check_generic_bodies_ = saved;
  out_.functions[index].effect = copy.effect;
  out_.functions[index].effect_source = copy.effect_source;
}

uint32_t Checker::instantiate(uint32_t index, const std::vector<TypeId>& parameter_types, NodeId call,
                              const std::vector<std::optional<Constant>>& constant_arguments,
                              const std::vector<NodeId>& literal_arguments) {
  const FunctionInfo& generic = out_.functions[index];
  std::string name = name_of(generic.name);
  if (std::find(instantiating_.begin(), instantiating_.end(), index) != instantiating_.end()) {
    diags_.emit<diag::SemaJitRecursion>(ast_.range(call), name);
    return UINT32_MAX;
  }
  for (uint32_t i = 0; i < out_.instances.size(); ++i) {
    const JitInstance& existing = out_.instances[i];
    if (existing.function == index && existing.info.parameter_types == parameter_types &&
        existing.constant_arguments == constant_arguments &&
        existing.literal_arguments.size() == literal_arguments.size() &&
        std::equal(literal_arguments.begin(), literal_arguments.end(), existing.literal_arguments.begin(),
                   [&](NodeId a, NodeId b) { return same_literals(a, b); }))
      return i;
  }
  size_t earlier = static_cast<size_t>(
      std::count_if(out_.instances.begin(), out_.instances.end(), [&](const JitInstance& i) { return i.function == index; }));
  auto id = static_cast<uint32_t>(out_.instances.size());
  JitInstance instance;
  instance.function = index;
  instance.info = generic;
  // A plain function instantiated from graph code is graph code itself.
  if (instance.info.kind == FunctionKind::Helper) instance.info.kind = FunctionKind::Jit;
  instance.info.effect = Effect::Pure;
  instance.symbol = earlier == 0 ? name : name + "." + std::to_string(earlier);
  instance.node_types.assign(out_.node_types.size(), TypeId{});
  instance.constant_arguments = constant_arguments;
  instance.literal_arguments = literal_arguments;
  out_.instances.push_back(std::move(instance));

  // Check the body with these types, in the instance's tables. The
  // diagnostics of an instance name it in a note at the call that made it
  // (each of them, with the instances around it).
  std::string signature;
  auto parameter_nodes = ast_.children(ast_.child(generic.def, 1)).subspan(generic.first_parameter);
  for (size_t i = 0; i < parameter_types.size(); ++i) {
    signature += (signature.empty() ? "" : ", ") + types_.to_string(parameter_types[i]);
    if (i < constant_arguments.size() && constant_arguments[i] && i < parameter_nodes.size())
      signature += " " + name_of(ast_.node(parameter_nodes[i]).payload) + "=" +
                   to_string(*constant_arguments[i], types_.kind(parameter_types[i]) == TypeKind::Scalar &&
                                                         types_.info(parameter_types[i]).scalar == ScalarType::Bool);
    else if (i < literal_arguments.size() && literal_arguments[i].valid() && i < parameter_nodes.size())
      signature += " " + name_of(ast_.node(parameter_nodes[i]).payload) + "=" + source_text(literal_arguments[i]);
  }
  diags_.push_context<diag::NoteJitInstance>(ast_.range(call), name, signature);
  std::swap(out_.node_types, out_.instances[id].node_types);
  std::vector<TypeId>* saved_module = module_node_types_;
  if (!saved_module) module_node_types_ = &out_.instances[id].node_types;
  std::unordered_map<uint32_t, uint32_t>* saved_calls = call_instances_;
  call_instances_ = &out_.instances[id].call_instances;
  ElementTablesMap* saved_element_tables = element_tables_;
  element_tables_ = &out_.instances[id].element_tables;
  instantiating_.push_back(index);
  uint32_t saved_mesh = current_mesh_;
  current_mesh_ = UINT32_MAX;
  for (TypeId t : parameter_types)
    if (const ShardingInfo* s = types_.sharding(t)) current_mesh_ = s->mesh;
  std::vector<Transfer> saved_transfers;
  std::swap(saved_transfers, open_transfers_);
  auto* saved_constants = instance_constants_;
  auto* saved_arguments = constant_arguments_;
  auto* saved_literals = literal_arguments_;
  instance_constants_ = &out_.instances[id].constants;
  constant_arguments_ = &out_.instances[id].constant_arguments;
  literal_arguments_ = &out_.instances[id].literal_arguments;
  check_function_body(out_.instances[id].info, &parameter_types, index);
  instance_constants_ = saved_constants;
  constant_arguments_ = saved_arguments;
  literal_arguments_ = saved_literals;
  check_unmatched_transfers();
  diags_.pop_context();
  std::swap(saved_transfers, open_transfers_);
  current_mesh_ = saved_mesh;
  instantiating_.pop_back();
  call_instances_ = saved_calls;
  element_tables_ = saved_element_tables;
  module_node_types_ = saved_module;
  std::swap(out_.node_types, out_.instances[id].node_types);
  out_.instances[id].info.parameter_types = parameter_types;
  return id;
}

// `lambda KNOB, ...: AXES` in a launch's grid: the parameters are knobs of
// the kernel's autotune space, bound as i32 values; the body is one axis (or,
// when `whole`, a tuple of 1 to 3) of integer expressions of the knobs and
// the values in scope, with `cdiv(a, b)`, `min(a, b)` and `max(a, b)` as in
// `tesserac run --grid`. Lowering evaluates it once per point.
bool Checker::check_grid_lambda(NodeId lambda, const FunctionInfo& kernel, const std::string& name, bool whole) {
  set_type(lambda, types_.dynamic());
  auto saved = locals_;
  auto reject = [&](NodeId where, std::string why) {
    diags_.emit<diag::SemaLaunchGridLambda>(ast_.range(where), name, std::move(why));
    grid_lambda_reported_ = true;
    locals_ = saved;
    return false;
  };
  if (kernel.autotune.empty())
    return reject(lambda, "'" + name + "' has no autotune space: give its grid as integers");
  for (NodeId parameter : ast_.children(ast_.child(lambda, 0))) {
    IdentifierId knob{ast_.node(parameter).payload};
    bool known = std::any_of(kernel.autotune.begin(), kernel.autotune.end(),
                             [&](const AutotuneParameter& k) { return k.name == knob; });
    if (!known) {
      std::string knobs;
      for (const AutotuneParameter& k : kernel.autotune) knobs += (knobs.empty() ? "" : ", ") + name_of(k.name);
      return reject(parameter, "'" + name_of(knob) + "' is not a knob of '" + name + "' (its knobs: " + knobs + ")");
    }
    Local local;
    local.type = types_.scalar(ScalarType::I32);
    local.def = ast_.child(lambda, 0);
    locals_[knob.index] = local;
  }
  std::vector<NodeId> axes;
  NodeId body = ast_.child(lambda, 1);
  if (whole && (ast_.kind(body) == NodeKind::Tuple || ast_.kind(body) == NodeKind::List)) {
    axes.assign(ast_.children(body).begin(), ast_.children(body).end());
    set_type(body, types_.dynamic());
  } else {
    axes.push_back(body);
  }
  if (axes.empty() || axes.size() > 3) return reject(body, "the grid has 1 to 3 axes");
  for (NodeId axis : axes) {
    std::string why;
    if (!check_grid_axis(axis, why)) return reject(axis, why);
  }
  locals_ = std::move(saved);
  return true;
}

bool Checker::check_grid_axis(NodeId node, std::string& why) {
  const Node& n = ast_.node(node);
  TypeId i64 = types_.scalar(ScalarType::I64);
  if (n.kind == NodeKind::BinaryOp) {
    auto op = static_cast<BinaryOperator>(n.op);
    if (op != BinaryOperator::Add && op != BinaryOperator::Sub && op != BinaryOperator::Mul &&
        op != BinaryOperator::FloorDiv && op != BinaryOperator::Mod) {
      why = "'" + source_text(node) + "': an axis uses + - * // % and cdiv, min, max";
      return false;
    }
    if (!check_grid_axis(ast_.child(node, 0), why) || !check_grid_axis(ast_.child(node, 1), why)) return false;
    set_type(node, i64);
    return true;
  }
  if (n.kind == NodeKind::Call && ast_.kind(ast_.child(node, 0)) == NodeKind::Name) {
    std::string callee = name_of(ast_.node(ast_.child(node, 0)).payload);
    if (callee == "cdiv" || callee == "min" || callee == "max") {
      auto arguments = ast_.children(node).subspan(1);
      if (arguments.size() != 2) {
        why = "'" + callee + "' takes two integers";
        return false;
      }
      for (NodeId a : arguments)
        if (ast_.kind(a) == NodeKind::KeywordArgument || !check_grid_axis(a, why)) {
          if (why.empty()) why = "'" + callee + "' takes two integers";
          return false;
        }
      set_type(ast_.child(node, 0), types_.dynamic());
      set_type(node, i64);
      return true;
    }
  }
  Value v = check_expression(node);
  TypeId t = default_type(v);
  if (types_.is_error(t)) {
    why = "'" + source_text(node) + "' has an error";
    return false;
  }
  if (types_.kind(t) != TypeKind::Scalar || !is_integer(types_.info(t).scalar)) {
    why = "'" + source_text(node) + "' is " + types_.to_string(t) + ", not an integer";
    return false;
  }
  return true;
}

Value Checker::check_kernel_launch(NodeId call, NodeId subscript, uint32_t index, std::span<const NodeId> arguments) {
  const FunctionInfo& kernel = out_.functions[index];
  std::string name = name_of(kernel.name);
  set_type(ast_.child(subscript, 0), types_.function(index));
  set_type(subscript, types_.dynamic());
  // The launch configuration: [grid] or [grid, group], each an integer or a
  // tuple of 1 to 3 integers.
  NodeId configuration = ast_.child(subscript, 1);
  std::vector<NodeId> parts;
  if (ast_.kind(configuration) == NodeKind::Tuple && !(ast_.node(configuration).flags & 1))
    parts.assign(ast_.children(configuration).begin(), ast_.children(configuration).end());
  else
    parts.push_back(configuration);
  bool ok = true;
  if (parts.size() > 2) {
    diags_.emit<diag::SemaKernelLaunchConfig>(ast_.range(configuration), name);
    ok = false;
  }
  auto extents = [&](NodeId shape, bool constant) -> std::optional<std::vector<int64_t>> {
    std::vector<NodeId> nodes;
    // A grid that depends on the knobs of an autotuned kernel
    // (docs/autotuning.md, "Grids that depend on knobs"): `lambda BM: AXIS`,
    // `lambda BM, BN: (AXIS, ...)`, or a tuple whose axes may be lambdas.
    if (!constant && ast_.kind(shape) == NodeKind::Lambda) {
      if (!check_grid_lambda(shape, kernel, name, true)) return std::nullopt;
      return std::vector<int64_t>{};
    }
    if (ast_.kind(shape) == NodeKind::Tuple || ast_.kind(shape) == NodeKind::List) {
      nodes.assign(ast_.children(shape).begin(), ast_.children(shape).end());
      set_type(shape, types_.dynamic());
    } else {
      nodes.push_back(shape);
    }
    std::vector<int64_t> values;
    bool good = !nodes.empty() && nodes.size() <= 3;
    for (NodeId node : nodes) {
      if (!constant && ast_.kind(node) == NodeKind::Lambda) {
        if (!check_grid_lambda(node, kernel, name, false)) return std::nullopt;
        values.push_back(0);
        continue;
      }
      Value v = check_expression(node);
      TypeId t = default_type(v.type);
      if (types_.is_error(t)) {
        good = false;
        continue;
      }
      if (types_.kind(t) != TypeKind::Scalar || !is_integer(types_.info(t).scalar) ||
          (v.constant && v.constant->integer <= 0) || (constant && !v.constant)) {
        good = false;
        continue;
      }
      values.push_back(v.constant ? v.constant->integer : 0);
    }
    if (!good) return std::nullopt;
    return values;
  };
  if (ok && !parts.empty() && !extents(parts[0], false)) {
    if (!grid_lambda_reported_) diags_.emit<diag::SemaKernelLaunchConfig>(ast_.range(parts[0]), name);
    ok = false;
  }
  grid_lambda_reported_ = false;
  if (ok && parts.size() == 2) {
    std::optional<std::vector<int64_t>> group = extents(parts[1], true);
    std::vector<int64_t> declared = kernel.group_shape;
    if (!group) {
      diags_.emit<diag::SemaKernelLaunchConfig>(ast_.range(parts[1]), name);
      ok = false;
    } else {
      std::vector<int64_t> padded = *group;
      while (padded.size() < declared.size()) padded.push_back(1);
      while (declared.size() < padded.size()) declared.push_back(1);
      if (padded != declared) {
        std::string text;
        for (int64_t d : kernel.group_shape) text += (text.empty() ? "" : ", ") + std::to_string(d);
        diags_.emit<diag::SemaKernelLaunchGroup>(ast_.range(parts[1]), name, text);
        ok = false;
      }
    }
  }
  // Arguments: each as the kernel's parameter wants it; a `mut` tensor must
  // be a variable, which the launch updates in place.
  // By position or keyword (a kernel parameter has no default).
  std::optional<BoundArguments> bound_arguments = bind_arguments(call, arguments, kernel, name);
  if (!bound_arguments) return Value{types_.error()};
  std::vector<NodeId> positional = bound_arguments->nodes;
  size_t expected = kernel.parameter_types.size();
  for (size_t i = 0; i < expected; ++i) {
    Value v = check_expression(positional[i]);
    TypeId parameter = kernel.parameter_types[i];
    if (types_.is_error(v.type) || types_.is_error(parameter)) {
      ok = false;
      continue;
    }
    TypeInfo p = types_.info(parameter);
    if (p.kind == TypeKind::Tensor) {
      bool fits = types_.kind(v.type) == TypeKind::Tensor && types_.info(v.type).scalar == p.scalar &&
                  types_.dims(v.type).size() == types_.dims(parameter).size();
      if (!fits) {
        diags_.emit<diag::SemaCallArgumentType>(ast_.range(positional[i]), static_cast<unsigned>(i + 1), name,
                                                types_.to_string(parameter), types_.to_string(v.type));
        ok = false;
        continue;
      }
      if (p.mut && ast_.kind(positional[i]) != NodeKind::Name) {
        diags_.emit<diag::SemaLaunchMutArgument>(ast_.range(positional[i]), static_cast<unsigned>(i + 1), name);
        ok = false;
      }
    } else {
      // A 0-d tensor where the kernel takes a number: its value, read back
      // to the host at the launch (graph.item).
      TypeId given = v.type;
      if (types_.kind(given) == TypeKind::Tensor && types_.dims(given).empty())
        given = types_.scalar(types_.info(given).scalar);
      if (!is_assignable(given, parameter)) {
        diags_.emit<diag::SemaCallArgumentType>(ast_.range(positional[i]), static_cast<unsigned>(i + 1), name,
                                                types_.to_string(parameter), types_.to_string(v.type));
        ok = false;
      }
    }
  }
  if (!ok) return Value{types_.error()};
  bind_call_shapes(kernel, positional);
  out_.call_arguments[call.index] = positional;
  raise_effect(std::max(kernel.effect, Effect::State), ast_.range(call));
  return Value{types_.none()};
}

}  // namespace tessera::sema

namespace tessera::sema {

NodeId Checker::constant_literal(NodeId node) const {
  if (!node.valid()) return NodeId{};
  NodeKind kind = ast_.kind(node);
  if (kind == NodeKind::StringLiteral) return node;
  if (kind == NodeKind::Tuple || kind == NodeKind::List) {
    for (NodeId element : ast_.children(node)) {
      auto c = constants_.find(element.index);
      if (c == constants_.end() || c->second.is_float || c->second.from_local) return NodeId{};
    }
    return node;
  }
  if (kind != NodeKind::Name) return NodeId{};
  uint32_t id = ast_.node(node).payload;
  if (auto local = locals_.find(id); local != locals_.end()) return local->second.literal;
  // A module constant read in a function: bound once, to a tuple literal.
  auto symbol = module_symbols_.find(id);
  auto bindings = program_bindings_.find(id);
  if (symbol == module_symbols_.end() || symbol->second.kind != ModuleSymbol::Kind::Constant ||
      bindings == program_bindings_.end() || bindings->second != 1)
    return NodeId{};
  return constant_literal(ast_.child(symbol->second.node, 1));
}

bool Checker::same_literals(NodeId a, NodeId b) const {
  if (!a.valid() || !b.valid()) return a.valid() == b.valid();
  if (ast_.kind(a) == NodeKind::StringLiteral || ast_.kind(b) == NodeKind::StringLiteral)
    return ast_.kind(a) == ast_.kind(b) && values_.strings[ast_.node(a).payload] == values_.strings[ast_.node(b).payload];
  auto as = ast_.children(a), bs = ast_.children(b);
  if (as.size() != bs.size()) return false;
  for (size_t i = 0; i < as.size(); ++i) {
    auto ca = constants_.find(as[i].index), cb = constants_.find(bs[i].index);
    if (ca == constants_.end() || cb == constants_.end() || ca->second.integer != cb->second.integer) return false;
  }
  return true;
}

// What check_expression recorded for a node of the function being checked:
// an instance's own table (the module's holds the last instance's values).
const Constant* Checker::recorded_constant(NodeId node) const {
  const auto& table = instance_constants_ ? *instance_constants_ : constants_;
  auto it = table.find(node.index);
  return it == table.end() ? nullptr : &it->second;
}

// The branch an `if` or a conditional expression of graph code takes, when
// its checked condition is fixed when compiling (exact_condition): recorded
// at the condition as a constant whose truth is the decision (the
// condition's own value where check_expression computed it), for the
// lowering (Lowering::sema_decision). Nullopt in kernels and at run time.
std::optional<bool> Checker::decide_condition(NodeId condition, const Value& value) {
  if (in_device() || types_.is_error(value.type)) return std::nullopt;
  std::optional<bool> taken = exact_condition(condition);
  if (!taken) return std::nullopt;
  if (const Constant* known = recorded_constant(condition); known && !known->from_local) return taken;
  Constant decision{false, *taken ? 1 : 0};
  constants_[condition.index] = decision;
  if (instance_constants_) (*instance_constants_)[condition.index] = decision;
  return taken;
}

// A condition of graph code fixed when compiling, after check_expression
// checked it: an exact constant (a literal, a module constant, -D, an
// instance's constant parameter, arithmetic on them; never a local a loop
// may change), a comparison of two, `==`/`!=` of two strings known when
// compiling (`kind == "relu"`), `is None`/`is not None` (false for a value
// of any other type: a parameter given None or a tensor), and `not`, `and`,
// `or` of those, short-circuiting as Python does.
std::optional<bool> Checker::exact_condition(NodeId node) const {
  const Node& n = ast_.node(node);
  auto exact = [&](NodeId operand) -> const Constant* {
    const Constant* c = recorded_constant(operand);
    return c && !c->from_local ? c : nullptr;
  };
  switch (n.kind) {
    case NodeKind::UnaryOp:
      if (static_cast<UnaryOperator>(n.op) == UnaryOperator::Not) {
        std::optional<bool> operand = exact_condition(ast_.child(node, 0));
        if (!operand) return std::nullopt;
        return !*operand;
      }
      break;
    case NodeKind::BoolOp: {
      bool is_and = static_cast<BoolOperator>(n.op) == BoolOperator::And;
      std::optional<bool> first = exact_condition(ast_.child(node, 0));
      if (!first) return std::nullopt;
      if (*first != is_and) return first;  // `False and ...`, `True or ...`
      return exact_condition(ast_.child(node, 1));
    }
    case NodeKind::Compare: {
      if (n.flags & 1) return std::nullopt;  // a chain
      NodeId lhs = ast_.child(node, 0), rhs = ast_.child(node, 1);
      auto op = static_cast<CompareOperator>(n.op);
      if (op == CompareOperator::Is || op == CompareOperator::IsNot) {
        bool none_lhs = ast_.kind(lhs) == NodeKind::NoneLiteral, none_rhs = ast_.kind(rhs) == NodeKind::NoneLiteral;
        if (none_lhs == none_rhs) return std::nullopt;
        TypeId other = out_.node_types[(none_lhs ? rhs : lhs).index];
        if (!other.valid() || types_.is_error(other) || types_.kind(other) == TypeKind::Dynamic) return std::nullopt;
        return (types_.kind(other) == TypeKind::None) == (op == CompareOperator::Is);
      }
      if (op == CompareOperator::Eq || op == CompareOperator::Ne) {
        std::optional<std::string> a = constant_string(constant_literal(lhs)), b = constant_string(constant_literal(rhs));
        if (a && b) return (*a == *b) == (op == CompareOperator::Eq);
      }
      const Constant *a = exact(lhs), *b = exact(rhs);
      if (!a || !b) return std::nullopt;
      auto compare = [op](auto x, auto y) -> std::optional<bool> {
        switch (op) {
          case CompareOperator::Lt: return x < y;
          case CompareOperator::Gt: return x > y;
          case CompareOperator::Le: return x <= y;
          case CompareOperator::Ge: return x >= y;
          case CompareOperator::Eq: return x == y;
          case CompareOperator::Ne: return x != y;
          default: return std::nullopt;
        }
      };
      if (!a->is_float && !b->is_float) return compare(a->integer, b->integer);
      return compare(a->as_double(), b->as_double());
    }
    default:
      break;
  }
  const Constant* c = exact(node);
  if (!c) return std::nullopt;
  return c->as_double() != 0.0;
}

std::string Checker::not_constant_subject(NodeId argument, std::string_view parameter,
                                          std::string_view builtin) const {
  std::string subject = "argument '" + std::string(parameter) + "' of '" + std::string(builtin) + "'";
  if (!instance_constants_ || ast_.kind(argument) != NodeKind::Name) return subject;
  auto local = locals_.find(ast_.node(argument).payload);
  if (local == locals_.end() || !local->second.is_parameter) return subject;
  // An instance's parameter is a constant only when its call passes one and
  // the body never assigns it (docs/language/graph.md, "Constant arguments").
  std::string name = name_of(ast_.node(argument).payload);
  return subject + " (parameter '" + name + "' is a run-time value here: its call passes no constant, such as " +
         "a loop variable, or the function assigns it)";
}

}  // namespace tessera::sema
