// Sema: forward mode (docs/language/autodiff.md, "Forward mode").
// `jvp(f, primals, tangents)` (JAX's convention) instantiates `f` for the
// primals, written out as a tuple, and checks one tangent of each primal's
// type; it returns `(out, tangent_out)`, both of the type of f's result.
// `f.defjvp(rule)` registers the forward rule of a @custom_jvp function: each
// instance of `f` instantiates `rule` with `((params), (params))`, which must
// return `(out, tangent_out)` of f's result type.
#include <algorithm>

#include "sema/builtin_call.h"
#include "sema/checker.h"
#include "sema/decorators.h"

namespace tessera::sema {

std::string dotted_path_of(const Ast& ast, const ValueStores& values, NodeId node);

namespace {

bool is_custom_jvp(const Ast& ast, const ValueStores& values, NodeId def) {
  for (NodeId decorator : ast.children(ast.child(def, 0))) {
    NodeId head = ast.child(decorator, 0);
    NodeId callee = ast.kind(head) == NodeKind::Call ? ast.child(head, 0) : head;
    if (lookup_decorator(dotted_path_of(ast, values, callee)) == Decorator::CustomJvp) return true;
  }
  return false;
}

}  // namespace

// jvp(f, primals, tangents) -> (out, tangent_out).
Value Checker::check_jvp(BuiltinCall& bc) {
  TypeId error = types_.error();
  bool has_aux = false;
  for (const auto& [keyword, node] : bc.args.keywords) {
    if (keyword == "has_aux") {
      std::optional<bool> value = constant_bool(bc, node, "has_aux");
      if (!value) {
        bc.check_all_arguments();
        return Value{error};
      }
      has_aux = *value;
      continue;
    }
    diags_.emit<diag::SemaArgumentType>(ast_.range(node), std::string(keyword), std::string(bc.name),
                                        "left out (jvp takes the function, the primals, the tangents and has_aux=)",
                                        source_text(node));
    bc.check_all_arguments();
    return Value{error};
  }
  if (bc.args.positional.size() != 3) {
    diags_.emit<diag::SemaArgumentCount>(bc.where, std::string(bc.name),
                                         "3 arguments (the function, a tuple of primals, a tuple of tangents)",
                                         static_cast<unsigned>(bc.args.positional.size()));
    bc.check_all_arguments();
    return Value{error};
  }
  NodeId primals_node = bc.args.positional[1], tangents_node = bc.args.positional[2];
  std::optional<uint32_t> differentiated = transformed_function(bc, bc.args.positional[0]);
  if (!differentiated) return Value{error};
  uint32_t index = *differentiated;
  std::string function_name = name_of(out_.functions[index].name);
  // The primals: written out, as f's arguments.
  if (ast_.kind(primals_node) != NodeKind::Tuple && ast_.kind(primals_node) != NodeKind::List) {
    diags_.emit<diag::SemaArgumentType>(ast_.range(primals_node), "primals", std::string(bc.name),
                                        "a tuple of arguments written out, such as (x, w)", source_text(primals_node));
    bc.check_all_arguments();
    return Value{error};
  }
  set_type(primals_node, types_.dynamic());
  std::span<const NodeId> primals = ast_.children(primals_node);
  Value out = check_jit_call(bc.call, index, primals);
  Value tangents = bc.value_of(tangents_node);
  if (types_.is_error(out.type) || types_.is_error(tangents.type)) return Value{error};
  if (types_.kind(out.type) == TypeKind::Dynamic) return out;  // a generic caller: typed per instance
  auto instance = call_instances_->find(bc.call.index);
  if (instance == call_instances_->end()) return Value{error};
  const FunctionInfo& info = out_.instances[instance->second].info;
  auto parameters = ast_.children(ast_.child(out_.functions[index].def, 1)).subspan(out_.functions[index].first_parameter);
  bool ok = true;
  // Every primal a float tensor (JAX gives integers a float0 tangent; here
  // a function with integer parameters is differentiated through a wrapper
  // that closes over them).
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
  // has_aux=True: f returns (out, aux); only out is differentiated.
  TypeId aux;
  if (has_aux) {
    if (out_.custom_jvps.count(index)) {
      diags_.emit<diag::SemaCustomJvp>(ast_.range(bc.call), "'jvp' with has_aux=True of the @custom_jvp function '" +
                                                               function_name + "' is not supported");
      return Value{error};
    }
    if (types_.kind(out.type) != TypeKind::Tuple || types_.tuple_elements(out.type).size() != 2) {
      diags_.emit<diag::SemaGradAuxNotPair>(ast_.range(bc.call), function_name, types_.to_string(out.type));
      return Value{error};
    }
    aux = types_.tuple_elements(out.type)[1];
    out.type = types_.tuple_elements(out.type)[0];
  }
  std::vector<TypeId> outputs;
  if (types_.kind(out.type) == TypeKind::Tuple)
    outputs.assign(types_.tuple_elements(out.type).begin(), types_.tuple_elements(out.type).end());
  else
    outputs.push_back(out.type);
  for (TypeId o : outputs) {
    TypeInfo r = types_.info(o);
    if (r.kind != TypeKind::Tensor || !is_float(r.scalar)) {
      diags_.emit<diag::SemaJvpResult>(ast_.range(bc.call), function_name, types_.to_string(out.type));
      ok = false;
      break;
    }
  }
  if (!ok) return Value{error};
  // The tangents: a tuple, one of each primal's type.
  if (types_.kind(tangents.type) != TypeKind::Tuple) {
    diags_.emit<diag::SemaArgumentType>(ast_.range(tangents_node), "tangents", std::string(bc.name),
                                        "a tuple with one tangent per primal", types_.to_string(tangents.type));
    return Value{error};
  }
  std::vector<TypeId> have(types_.tuple_elements(tangents.type).begin(), types_.tuple_elements(tangents.type).end());
  if (have.size() != primals.size()) {
    auto n = static_cast<unsigned>(primals.size()), m = static_cast<unsigned>(have.size());
    diags_.emit<diag::SemaJvpTangentCount>(ast_.range(tangents_node), function_name, n, n == 1 ? "" : "s", m,
                                           m == 1 ? "" : "s");
    return Value{error};
  }
  bool literal = ast_.kind(tangents_node) == NodeKind::Tuple || ast_.kind(tangents_node) == NodeKind::List;
  const bool on_mesh = program_call_mesh(primals).has_value();
  for (size_t i = 0; i < have.size(); ++i) {
    TypeId want = info.parameter_types[i];
    // The program's sharded primal: its tangent is a global value laid out
    // as the primal is (each rank passes its block of both).
    if (on_mesh) want = types_.with_mut(default_type(out_.node_types[primals[i].index]), false);
    TypeInfo w = types_.info(want), h = types_.info(have[i]);
    bool match = h.kind == TypeKind::Tensor && h.scalar == w.scalar && types_.dims(want).size() == types_.dims(have[i]).size();
    if (match && on_mesh) {
      const ShardingInfo *a = types_.sharding(want), *b = types_.sharding(have[i]);
      match = a && b ? *a == *b : a == b;
    }
    for (size_t d = 0; match && d < types_.dims(want).size(); ++d) {
      auto a = types_.constant_value(types_.dims(want)[d]), b = types_.constant_value(types_.dims(have[i])[d]);
      match = !(a && b && *a != *b);
    }
    if (!match) {
      NodeId at = literal ? ast_.children(tangents_node)[i] : tangents_node;
      diags_.emit<diag::SemaJvpTangent>(ast_.range(at), function_name, name_of(ast_.node(parameters[i]).payload),
                                        types_.to_string(want), types_.to_string(have[i]));
      ok = false;
    }
  }
  if (!ok) return Value{error};
  std::vector<TypeId> results{out.type, out.type};
  if (has_aux) results.push_back(aux);  // JAX's (out, tangent_out, aux)
  return Value{types_.tuple(results)};
}

// Finds `F.defjvp(rule)` statements before anything is checked, so that the
// rule is a @jit function (instantiated per use) wherever it is written.
void Checker::collect_custom_jvps(NodeId module) {
  for (NodeId statement : ast_.children(module)) {
    if (ast_.kind(statement) != NodeKind::ExprStmt) continue;
    NodeId call = ast_.child(statement, 0);
    if (ast_.kind(call) != NodeKind::Call) continue;
    std::optional<uint32_t> function = defjvp_function(call);
    if (!function) continue;
    std::vector<uint32_t> rule = rule_functions(call, 1);
    if (rule.empty() || out_.custom_jvps.count(*function)) continue;  // reported by check_defjvp
    out_.custom_jvps[*function] = rule[0];
    out_.functions[rule[0]].kind = FunctionKind::Jit;
  }
}

// The @custom_jvp function whose `.defjvp` `call` calls, if it is one.
std::optional<uint32_t> Checker::defjvp_function(NodeId call) {
  std::optional<uint32_t> index = method_call_function(call, "defjvp");
  if (!index || !is_custom_jvp(ast_, values_, out_.functions[*index].def)) return std::nullopt;
  return index;
}

// `F.defjvp(rule)`: at module level, once per function, naming a function of
// the module.
Value Checker::check_defjvp(NodeId call) {
  uint32_t index = *defjvp_function(call);
  std::vector<uint32_t> registered;
  if (auto it = out_.custom_jvps.find(index); it != out_.custom_jvps.end()) registered = {it->second};
  if (!rule_registration_ok(call, index, registered, out_.defjvp_calls, &Checker::defjvp_function)) {
    diags_.emit<diag::SemaCustomJvp>(ast_.range(call), "'" + name_of(out_.functions[index].name) +
                                                           ".defjvp(rule)' registers a rule once, at module level, "
                                                           "naming one function of the module");
    return Value{types_.error()};
  }
  out_.defjvp_calls.insert(call.index);
  return Value{types_.none()};
}

// An instance of a @custom_jvp function with a rule: the rule for
// ((parameter types), (parameter types)) must return (out, tangent_out), both
// of the function's result type.
void Checker::instantiate_custom_jvp(uint32_t instance, NodeId call) {
  uint32_t function = out_.instances[instance].function;
  auto rule = out_.custom_jvps.find(function);
  if (rule == out_.custom_jvps.end() || out_.custom_jvp_instances.count(instance)) return;
  // In progress from here (the rule usually calls the function itself).
  out_.custom_jvp_instances[instance] = UINT32_MAX;
  std::vector<TypeId> parameters = out_.instances[instance].info.parameter_types;
  TypeId result = out_.instances[instance].info.return_type;
  std::string name = name_of(out_.functions[function].name);
  TypeId tuple = types_.tuple(parameters);
  uint32_t instantiated = instantiate(rule->second, {tuple, tuple}, call);
  if (instantiated == UINT32_MAX) return out_.custom_jvp_instances.erase(instance), void();
  TypeId returned = out_.instances[instantiated].info.return_type;
  bool ok = returned.valid() && types_.kind(returned) == TypeKind::Tuple && types_.tuple_elements(returned).size() == 2;
  if (ok && result.valid())
    ok = types_.tuple_elements(returned)[0] == result && types_.tuple_elements(returned)[1] == result;
  if (!ok) {
    out_.custom_jvp_instances.erase(instance);
    diags_.emit<diag::SemaCustomJvp>(ast_.range(call), "the rule of '" + name + "' must return (out, tangent_out), both '" +
                                                           (result.valid() ? types_.to_string(result) : "?") +
                                                           "'; it returns '" +
                                                           (returned.valid() ? types_.to_string(returned) : "nothing") +
                                                           "'");
    return;
  }
  out_.custom_jvp_instances[instance] = instantiated;
}

}  // namespace tessera::sema
