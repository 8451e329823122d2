// Lowering of the graph level: @jit instances and the program to Graph IR
// (docs/ir/lowering.md, "The graph level").
//
// A @jit instance becomes a `func.func` with the `jit` attribute whose
// tensor parameters and results are `tensor<...>` values; the module's
// top-level statements become `func.func @__tessera_program` with the
// `program` attribute. Statements and control flow lower as in kernels (the
// same SSA construction); what differs is that a tensor-typed expression is
// a graph operation on whole tensors: arithmetic and comparisons are
// graph.elementwise with NumPy broadcasting, after converting the operands to
// the element type sema computed (narrow floats compute in their
// accumulation type), and subscripts are slices and reshapes.
#include <algorithm>
#include <functional>

#include "ir/core/graph_ops.h"
#include "ir/core/graph_shapes.h"

#include "lower/lowering.h"
#include "support/diagnostics/internal_error.h"

namespace tessera::ir {

using sema::BuiltinId;
using SemaKind = sema::TypeKind;

namespace {

// The type two element types meet in, as sema promotes them.
ScalarType promote(ScalarType a, ScalarType b) {
  if (a == b) return a;
  bool fa = is_float(a), fb = is_float(b);
  if (fa != fb) return fa ? a : b;
  if (a == ScalarType::Bool) return b;
  if (b == ScalarType::Bool) return a;
  return scalar_info(a).bits >= scalar_info(b).bits ? a : b;
}

}  // namespace

bool Lowering::is_tensor_node(NodeId node) const {
  sema::TypeId t = node_type(node);
  if (!t.valid()) return false;
  sema::TypeInfo info = typed_.types.info(t);
  return info.kind == SemaKind::Tensor && info.space == sema::AddressSpace::Global;
}

ScalarType Lowering::element_of(NodeId node) {
  sema::TypeId t = node_type(node);
  if (!t.valid()) return ScalarType::F32;
  sema::TypeInfo info = typed_.types.info(t);
  switch (info.kind) {
    case SemaKind::Tensor:
      // A @loss_scale tensor in graph code holds its decoded values (ir_type).
      if (graph_ && loss_scale_of(t) != 0.0) return ScalarType::F32;
      // A @precision_policy tensor, its dequantized values (ir_type).
      if (const sema::PolicyClass* custom = graph_ ? tensor_policy_class(t) : nullptr) return custom->compute;
      return info.scalar;
    case SemaKind::Scalar: return info.scalar;
    case SemaKind::UntypedInt: return ScalarType::I32;
    default: return ScalarType::F32;
  }
}

// FILE:LINE:COL of `node`, for run-time error messages.
std::string Lowering::source_position(NodeId node) {
  std::string text(location(node).str());
  std::erase(text, '"');
  return text;
}

// `assert cond[, message]` in graph code: a condition known when compiling
// is checked then (false: lower.assertion-failed; true: no code); any other
// (a number, a 0-d tensor read back to the host) is a host.check that stops
// the call or the program with FILE:LINE:COL and the message. The message
// is any string (an f-string, '%' formatting, str(x)), built only when the
// assertion fails, as Python evaluates it: text known when compiling is the
// check's message; text with values formatted when it runs is printed
// (graph.print, standard output) in the branch where the condition is
// false, before the check stops the run.
void Lowering::lower_assert(NodeId statement) {
  NodeId condition = ast_.child(statement, 0), message = ast_.child(statement, 1);
  if (message.valid() && !is_string_node(message)) unsupported(message, "an assert message that is not a string");
  std::optional<int64_t> known = constant_of(condition);
  if (!known) known = constant_condition(condition);
  Value* ok = nullptr;
  if (!known) {
    ok = value(condition, context_.bool_type());
    known = folded_int(ok);
  }
  std::string where = source_position(statement) + ": assertion failed";
  if (known) {
    if (*known) return;
    std::optional<std::string> text = message.valid() ? folded_text(lower_text(message)) : std::string();
    if (!text) {  // its values are known only at run time: the message as written
      SourceRange r = ast_.range(message);
      text = std::string(diags_.sources().pointer(r.begin), r.end - r.begin);
    }
    diags_.emit<diag::LowerAssertionFailed>(ast_.range(statement), text->empty() ? std::string("the condition") : "'" + *text + "'");
    throw LoweringFailed{};
  }
  std::string shown;
  if (message.valid()) {
    // if ok: nothing; else: the message, printed when it has run-time values.
    Operation* branch = builder_.create(OpKind::If, {ok}, {}, {}, 2);
    Block* saved = builder_.insertion_block();
    builder_.set_insertion_point_to_end(branch->region(0).add_block());
    builder_.create(OpKind::Yield, {}, {});
    builder_.set_insertion_point_to_end(branch->region(1).add_block());
    Text text;
    text.append(where + ": ");
    text.append(lower_text(message));
    std::optional<std::string> folded = folded_text(text);
    if (!folded)
      builder_.create(OpKind::GraphPrint, std::span<Value* const>(text.values), std::span<const Type>{},
                      text_attributes(text, "text"));
    builder_.create(OpKind::Yield, {}, {});
    builder_.set_insertion_point_to_end(saved);
    if (folded) {
      branch->erase();  // only the message's pure operations
      shown = ": " + folded->substr(where.size() + 2);
    } else {
      shown = " (its message is printed above)";
    }
  }
  builder_.create(OpKind::HostCheck, std::span<Value* const>(&ok, 1), std::span<const Type>{},
                  {{"message", context_.string_attr(where + shown)}});
}

Type Lowering::graph_type(NodeId node) { return required_type(node_type(node), node, "a value"); }

Operation* Lowering::jit_function_op(uint32_t index) {
  if (auto it = instance_functions_.find(index); it != instance_functions_.end()) return it->second;
  const sema::JitInstance& instance = typed_.instances[index];
  const sema::FunctionInfo& info = instance.info;
  NodeId parameters = ast_.child(info.def, 1);
  bool saved_graph = graph_;
  graph_ = true;
  // A tuple parameter (what a custom rule's forward function saves) is
  // passed as its elements; a tuple in a returned tuple, flattened too.
  std::vector<Type> inputs;
  std::vector<bool> no_argument(info.parameter_types.size());
  for (size_t i = 0; i < info.parameter_types.size(); ++i) {
    no_argument[i] = no_argument_parameter(instance, i);
    if (no_argument[i]) continue;
    NodeId parameter = ast_.children(parameters)[info.first_parameter + i];
    std::string what = "parameter '" + name_of(ast_.node(parameter).payload) + "'";
    // A tuple parameter, tuples in it included, is passed as its leaves.
    for (sema::TypeId leaf : flat_types(info.parameter_types[i])) inputs.push_back(required_type(leaf, parameter, what));
  }
  std::vector<Type> results;
  std::function<void(sema::TypeId)> add_result = [&](sema::TypeId t) {
    sema::TypeInfo r = typed_.types.info(t);
    if (r.kind == SemaKind::Tuple) {
      std::vector<sema::TypeId> elements(typed_.types.tuple_elements(t).begin(), typed_.types.tuple_elements(t).end());
      for (sema::TypeId e : elements) add_result(e);
    } else if (r.kind == SemaKind::Dynamic) {
      // Sema could not type the value (a Python builtin, a method or an
      // attribute it does not know): name the innermost such expression.
      NodeId where = info.def;
      std::function<bool(NodeId)> find = [&](NodeId node) {
        for (NodeId child : ast_.children(node))
          if (child.valid() && find(child)) return true;
        const std::vector<sema::TypeId>& types = instance.node_types.empty() ? typed_.node_types : instance.node_types;
        sema::TypeId nt = node.index < types.size() ? types[node.index] : sema::TypeId{};
        if (!nt.valid() || typed_.types.kind(nt) != SemaKind::Dynamic) return false;
        where = node;
        return true;
      };
      find(ast_.child(info.def, 3));
      std::string what = "a returned value whose type sema does not know";
      if (where != info.def) {
        NodeId callee = ast_.kind(where) == NodeKind::Call ? ast_.child(where, 0) : where;
        if (ast_.kind(callee) == NodeKind::Name) what = "the call of '" + name_of(ast_.node(callee).payload) + "'";
        else if (ast_.kind(callee) == NodeKind::Attribute) what = "'." + name_of(ast_.node(callee).payload) + "'";
        else what = expression_phrase(where);
        what += " in graph code (sema does not know its type)";
      }
      unsupported(where, what);
    } else if (r.kind != SemaKind::None) {
      results.push_back(required_type(t, info.def, "a returned value"));
    }
  };
  if (info.return_type.valid()) add_result(info.return_type);
  // @loss_scale parameters and results (docs/language/graph.md, "Loss
  // scaling"): the body and every call in graph code see their values (f32,
  // ir_type); a @jit entry point passes their storage, through a wrapper
  // (below). Per flat argument and result: its type, for the policy.
  std::vector<sema::TypeId> flat_parameters, flat_results;
  for (size_t i = 0; i < info.parameter_types.size(); ++i)
    if (!no_argument[i])
      for (sema::TypeId leaf : flat_types(info.parameter_types[i])) flat_parameters.push_back(leaf);
  std::function<void(sema::TypeId)> flatten_result = [&](sema::TypeId t) {
    sema::TypeInfo r = typed_.types.info(t);
    if (r.kind == SemaKind::Tuple)
      for (sema::TypeId e : typed_.types.tuple_elements(t)) flatten_result(e);
    else if (r.kind != SemaKind::None)
      flat_results.push_back(t);
  };
  if (info.return_type.valid()) flatten_result(info.return_type);
  bool loss_scaled = std::any_of(flat_parameters.begin(), flat_parameters.end(),
                                 [&](sema::TypeId t) { return loss_scale_of(t) != 0.0; }) ||
                     std::any_of(flat_results.begin(), flat_results.end(),
                                 [&](sema::TypeId t) { return loss_scale_of(t) != 0.0; });
  graph_ = saved_graph;
  // Instances made only as a custom rule are no entry points: inlined where
  // autodiff calls them, then dropped.
  bool rule_only = std::any_of(typed_.custom_rule_instances.begin(), typed_.custom_rule_instances.end(),
                               [&](const auto& rule) { return rule.second.first == index || rule.second.second == index; });
  // A result of a @precision_policy class would need a scale to quantize
  // it with (and the function of values returns values).
  for (sema::TypeId t : flat_results)
    if (const sema::PolicyClass* custom = tensor_policy_class(t))
      unsupported(ast_.child(info.def, 2).valid() ? ast_.child(info.def, 2) : info.def,
                  "returning a '@" + name_of(ast_.node(custom->def).payload) +
                      "' tensor from a @jit function (no per-tensor scale to quantize it with)");
  // A @precision_policy parameter: the entry takes its codes and scale.
  bool policy_classes = std::any_of(flat_parameters.begin(), flat_parameters.end(),
                                    [&](sema::TypeId t) { return tensor_policy_class(t) != nullptr; });
  bool wrapped = (loss_scaled || policy_classes) && !rule_only;
  std::vector<NamedAttribute> attributes{
      {"sym_name", context_.string_attr(wrapped ? instance.symbol + "$values" : instance.symbol)},
      {"function_type", context_.type_attr(context_.function_type(inputs, results))}};
  if (!rule_only && !wrapped) attributes.push_back({"jit", context_.unit_attr()});
  // Parameter names and dimensions, as kernels record them (tesserac run
  // --func and the AOT header check and bind them the same way).
  // (Not for rule instances: no entry points, and a tuple parameter has
  // several arguments.)
  for (NamedAttribute& a : kernel_signature_attributes(info, no_argument))
    if (!rule_only && (a.name == "arg_names" || a.name == "arg_dims" || a.name == "arg_policies")) attributes.push_back(a);
  // An instance made for constant arguments (`s(x, 0)` of `def s(x, axis)`)
  // computes with those values: `tesserac run --func` takes them as the
  // parameters' values and refuses others ("NAME=VALUE", Python's text).
  std::vector<Attribute> constants;
  for (size_t i = 0; i < instance.constant_arguments.size(); ++i) {
    if (!instance.constant_arguments[i]) continue;
    sema::TypeId t = info.parameter_types[i];
    bool boolean = typed_.types.kind(t) == SemaKind::Scalar && typed_.types.info(t).scalar == ScalarType::Bool;
    constants.push_back(context_.string_attr(
        name_of(ast_.node(ast_.children(parameters)[info.first_parameter + i]).payload) + "=" +
        sema::to_string(*instance.constant_arguments[i], boolean)));
  }
  if (!rule_only && !constants.empty()) attributes.push_back({"arg_constants", context_.array_attr(constants)});
  // `entry`: a @jit function of the source whose every parameter is
  // annotated, so its signature is its own (not a call's): AOT exports it,
  // `tesserac run --func` runs it. Generic instances, plain helpers and rule
  // instances are reached only through calls.
  const sema::FunctionInfo& declared = typed_.functions[instance.function];
  bool annotated = declared.kind == sema::FunctionKind::Jit && !rule_only;
  for (sema::TypeId t : declared.parameter_types)
    if (!t.valid() || typed_.types.kind(t) == SemaKind::Dynamic) annotated = false;
  if (annotated && instance.symbol == name_of(declared.name.index)) attributes.push_back({"entry", context_.unit_attr()});
  if (wrapped) {
    // The wrapper takes the attributes of an entry point; the function of
    // values is a helper it calls (inlined, then dropped).
    std::vector<NamedAttribute> entry_attributes;
    std::erase_if(attributes, [&](const NamedAttribute& a) {
      bool moves = a.name == "jit" || a.name == "entry" || a.name == "arg_names" || a.name == "arg_dims" ||
                   a.name == "arg_policies" || a.name == "arg_constants";
      if (moves) entry_attributes.push_back(a);
      return moves;
    });
    entry_attributes.push_back({"jit", context_.unit_attr()});
    Operation* func = Operation::create(OpKind::Func, location(info.def), {}, {}, std::move(attributes), 1);
    func->region(0).add_block();
    for (Type t : inputs) func->region(0).front().add_argument(t);
    module_->region(0).front().push_back(func);
    instance_functions_[index] = func;
    storage_wrapper(index, func, flat_parameters, flat_results, std::move(entry_attributes));
    return func;
  }
  Operation* func = Operation::create(OpKind::Func, location(info.def), {}, {}, std::move(attributes), 1);
  Block* entry = func->region(0).add_block();
  for (Type t : inputs) entry->add_argument(t);
  module_->region(0).front().push_back(func);
  instance_functions_[index] = func;
  return func;
}

// The entry point of a @jit instance with @loss_scale parameters or results
// or @precision_policy parameters (docs/language/graph.md, "Loss scaling",
// "Precision policy classes"): it takes and returns their storage (k times
// the value, in the dtype; a policy class's codes followed by its per-tensor
// scale), decodes the arguments (graph.cast {unscale = k}, graph.cast
// {dequantize = @Class.dequantize}), calls the function of values `inner`
// and encodes the results by their policies (graph.cast {scale = k} with
// the rounding attributes), as a kernel store into such a tensor would.
void Lowering::storage_wrapper(uint32_t index, Operation* inner, const std::vector<sema::TypeId>& parameters,
                               const std::vector<sema::TypeId>& results, std::vector<NamedAttribute> attributes) {
  const sema::JitInstance& instance = typed_.instances[index];
  const sema::FunctionInfo& info = instance.info;
  bool saved_graph = graph_, saved_storage = storage_types_;
  graph_ = storage_types_ = true;
  std::vector<Type> inputs, outputs;
  std::vector<unsigned> argument_of;  // per parameter, its argument of the entry (a scale follows a class's codes)
  for (sema::TypeId t : parameters) {
    argument_of.push_back(static_cast<unsigned>(inputs.size()));
    inputs.push_back(required_type(t, info.def, "a parameter"));
    if (const sema::PolicyClass* custom = tensor_policy_class(t)) inputs.push_back(context_.scalar_type(custom->scale));
  }
  for (sema::TypeId t : results) outputs.push_back(required_type(t, info.def, "a returned value"));  // (no class: jit_function_op)
  storage_types_ = false;
  attributes.push_back({"sym_name", context_.string_attr(instance.symbol)});
  attributes.push_back({"function_type", context_.type_attr(context_.function_type(inputs, outputs))});
  Operation* wrapper = Operation::create(OpKind::Func, location(info.def), {}, {}, std::move(attributes), 1);
  Block* body = wrapper->region(0).add_block();
  for (Type t : inputs) body->add_argument(t);
  module_->region(0).front().push_back(wrapper);

  Block* saved_block = builder_.insertion_block();
  Operation* saved_point = builder_.insertion_point();
  Location saved_location = builder_.location();
  builder_.set_insertion_point_to_end(body);
  builder_.set_location(location(info.def));
  NodeId parameter_list = ast_.child(info.def, 1);
  std::vector<Value*> operands;
  for (size_t i = 0; i < parameters.size(); ++i) {
    Value* argument = body->argument(argument_of[i]);
    if (const sema::PolicyClass* custom = tensor_policy_class(parameters[i])) {
      NodeId where = i < info.parameter_types.size() ? ast_.children(parameter_list)[info.first_parameter + i] : info.def;
      operands.push_back(graph_dequantize(argument, body->argument(argument_of[i] + 1), *custom, where));
      continue;
    }
    double k = loss_scale_of(parameters[i]);
    operands.push_back(k != 0.0 ? decode_loss_scaled(argument, k, info.def) : argument);
  }
  Type fn = inner->attr("function_type").type();
  std::vector<Type> inner_results;
  for (size_t i = 0; i < fn.num_results(); ++i) inner_results.push_back(fn.result(i));
  Operation* call = builder_.create(OpKind::Call, std::span<Value* const>(operands), std::span<const Type>(inner_results),
                                    {{"callee", context_.symbol_attr(inner->symbol_name())}});
  // The seed of a stochastic rounding: a constant, or the integer parameter
  // it names.
  auto seed = [&](const sema::Policy& policy) -> Value* {
    if (!policy.seed_name.valid()) return builder_.constant_int(policy.seed, context_.i64_type());
    for (size_t i = 0; i < info.parameter_types.size() && i < parameters.size(); ++i) {
      NodeId parameter = ast_.children(parameter_list)[info.first_parameter + i];
      Type t = inputs[argument_of[i]];
      if (ast_.node(parameter).payload == policy.seed_name.index && t.is_scalar() && t.is_int())
        return convert(body->argument(argument_of[i]), context_.i64_type());
    }
    unsupported(info.def, "the seed '" + name_of(policy.seed_name.index) +
                              "' of @stochastic_round, which is not an integer parameter of this function,");
  };
  std::vector<Value*> values;
  for (size_t r = 0; r < results.size(); ++r) {
    Value* v = call->result(static_cast<unsigned>(r));
    if (loss_scale_of(results[r]) != 0.0) {
      sema::Policy policy = typed_.types.policy(typed_.types.info(results[r]).policy);
      v = encode_loss_scaled(v, outputs[r].scalar(), policy, info.def, [&] { return seed(policy); });
    }
    values.push_back(v);
  }
  builder_.create(OpKind::Return, std::span<Value* const>(values), std::span<const Type>{});
  if (saved_block) {
    if (saved_point) builder_.set_insertion_point(saved_point);
    else builder_.set_insertion_point_to_end(saved_block);
  }
  builder_.set_location(saved_location);
  graph_ = saved_graph;
  storage_types_ = saved_storage;
}

bool Lowering::known_text_parameter(const sema::JitInstance& instance, size_t parameter) const {
  return parameter < instance.literal_arguments.size() && instance.literal_arguments[parameter].valid() &&
         ast_.kind(instance.literal_arguments[parameter]) == NodeKind::StringLiteral;
}

bool Lowering::no_argument_parameter(const sema::JitInstance& instance, size_t parameter) const {
  return known_text_parameter(instance, parameter) ||
         typed_.types.kind(instance.info.parameter_types[parameter]) == SemaKind::None;
}

bool Lowering::none_argument(NodeId argument) {
  if (ast_.kind(argument) == NodeKind::NoneLiteral) return true;
  sema::TypeId type = node_type(argument);
  return type.valid() && typed_.types.kind(type) == SemaKind::None;
}

void Lowering::lower_jit_instance(uint32_t index) {
  const sema::JitInstance& instance = typed_.instances[index];
  Operation* func = jit_function_op(index);
  const sema::FunctionInfo& info = instance.info;
  // The next instance and the program read the module's tables again, after
  // a lowering error in this one too (they read its own tables otherwise,
  // and reported the program's names as unbound).
  struct LeaveInstance {
    Lowering& lowering;
    ~LeaveInstance() {
      lowering.function_ = nullptr;
      lowering.graph_ = false;
      lowering.node_types_ = &lowering.typed_.node_types;
      lowering.call_instances_ = nullptr;
      lowering.element_tables_ = nullptr;
      lowering.element_tables_in_use_ = nullptr;
      lowering.instance_constants_ = nullptr;
      lowering.constant_parameters_.clear();
      lowering.literal_parameters_.clear();
    }
  } leave{*this};
  graph_ = true;
  node_types_ = instance.node_types.empty() ? &typed_.node_types : &instance.node_types;
  call_instances_ = instance.node_types.empty() ? &typed_.call_instances : &instance.call_instances;
  element_tables_ = instance.node_types.empty() ? &typed_.element_tables : &instance.element_tables;
  instance_constants_ = &instance.constants;
  begin_body(info, func);
  assigned_names(ast_, ast_.child(info.def, 3), locals_);
  constant_parameters_.clear();
  literal_parameters_.clear();
  auto parameter_name = [&](size_t i) {
    return ast_.node(ast_.children(ast_.child(info.def, 1))[info.first_parameter + i]).payload;
  };
  for (size_t i = 0; i < instance.constant_arguments.size(); ++i)
    if (instance.constant_arguments[i]) constant_parameters_.insert(parameter_name(i));
  for (size_t i = 0; i < instance.literal_arguments.size(); ++i)
    if (instance.literal_arguments[i].valid()) literal_parameters_[parameter_name(i)] = instance.literal_arguments[i];
  Type fn = func->attr("function_type").type();
  result_types_.clear();
  for (size_t i = 0; i < fn.num_results(); ++i) result_types_.push_back(fn.result(i));
  NodeId parameters = ast_.child(info.def, 1);
  builder_.set_insertion_point_to_end(entry_);
  builder_.set_location(location(info.def));
  unsigned next_argument = 0;
  for (size_t i = 0; i < info.parameter_types.size(); ++i) {
    NodeId parameter = ast_.children(parameters)[info.first_parameter + i];
    if (known_text_parameter(instance, i)) {  // its text, known: no argument
      // (The literal is the caller's node, typed in its tables, not here.)
      Bound text;
      text.text = std::make_shared<const Text>(lower_text(instance.literal_arguments[i]));
      env_[ast_.node(parameter).payload] = text;
      continue;
    }
    if (no_argument_parameter(instance, i)) continue;  // None: only `is None` reads it (sema decided those)
    if (typed_.types.kind(info.parameter_types[i]) == SemaKind::Tuple) {
      std::vector<Value*> leaves;
      for (size_t e = 0; e < flat_types(info.parameter_types[i]).size(); ++e)
        leaves.push_back(entry_->argument(next_argument++));
      size_t next = 0;
      env_[ast_.node(parameter).payload] = bound_from_flat(info.parameter_types[i], leaves, next);
      continue;
    }
    Value* arg = entry_->argument(next_argument++);
    env_[ast_.node(parameter).payload] = Bound{arg, {}};
    // Symbolic dimensions read as integers: graph.dim of the first tensor
    // that has them.
    if (typed_.types.kind(info.parameter_types[i]) != SemaKind::Tensor) continue;
    auto dims = typed_.types.dims(info.parameter_types[i]);
    for (size_t axis = 0; axis < dims.size(); ++axis) {
      sema::Dim d = typed_.types.dim(dims[axis]);
      if (d.kind == sema::DimKind::Symbol && !dim_values_.count(d.symbol.index))
        dim_values_[d.symbol.index] = convert(graph_dim(arg, static_cast<int64_t>(axis)), context_.i32_type());
    }
  }
  schedule_directives_.clear();
  scopes_.clear();
  prefetches_.clear();
  scoped_hints_.clear();
  lower_rest({Segment{ast_.child(info.def, 3), 0}}, false, nullptr);
  apply_schedule_directives(func);
}

// The module's top-level statements, in order: the program `tesserac run`
// runs. Definitions, imports and type aliases are not statements of it; a
// module with no other statement has no program.
// A value with no effect and no code: a literal of a Python type the
// program cannot compute with (string, dict, lambda, comprehension, a list
// or tuple of those), calling nothing.
bool Lowering::inert_host_value(NodeId e) const {
  // A ShardSpec is a description sema applied: no code.
  if (sema::TypeId t = node_type(e); t.valid() && typed_.types.kind(t) == SemaKind::Layout) return true;
  switch (ast_.kind(e)) {
    case NodeKind::StringLiteral:
    case NodeKind::Lambda: return true;
    case NodeKind::ListComp: {
      // A comprehension of numbers, tensors or tuples is a list the program
      // computes (lower_comprehension); one of strings (`[f"cuda:{i}" for i
      // in range(4)]`) runs no code.
      sema::TypeId t = node_type(e);
      if (t.valid() && typed_.types.kind(t) == SemaKind::List) {
        SemaKind element = typed_.types.kind(sema::TypeId{typed_.types.info(t).payload});
        if (element == SemaKind::Scalar || element == SemaKind::Tensor || element == SemaKind::Tuple ||
            element == SemaKind::List)
          return false;
      }
      break;
    }
    case NodeKind::Dict:
    case NodeKind::GeneratorExp: break;
    case NodeKind::List:
    case NodeKind::Tuple: {
      sema::TypeId t = node_type(e);
      if (t.valid() && typed_.types.kind(t) == SemaKind::Tensor) return false;
      bool any_host = false;
      for (NodeId element : ast_.children(e)) {
        NodeKind k = ast_.kind(element);
        if (k == NodeKind::IntLiteral || k == NodeKind::FloatLiteral || k == NodeKind::BoolLiteral) continue;
        if (k == NodeKind::NoneLiteral || k == NodeKind::EllipsisLiteral) {
          any_host = true;
          continue;
        }
        if (!inert_host_value(element)) return false;
        any_host = true;
      }
      // `l = []`: a list the program appends to (lower_lists.cpp).
      if (ast_.children(e).empty()) return false;
      return any_host;
    }
    default: return false;
  }
  // Nothing in it is called (a comprehension over range(...) or a literal).
  std::vector<NodeId> pending{e};
  while (!pending.empty()) {
    NodeId n = pending.back();
    pending.pop_back();
    if (ast_.kind(n) == NodeKind::Call) {
      NodeId callee = ast_.child(n, 0);
      if (ast_.kind(callee) != NodeKind::Name || name_of(ast_.node(callee).payload) != "range") return false;
    }
    for (NodeId child : ast_.children(n))
      if (child.valid()) pending.push_back(child);
  }
  return true;
}

void Lowering::lower_program() {
  std::vector<NodeId> statements;
  // Constant assignments to names the program assigns again (`i = 0.0`,
  // then `i += 1.0` in a loop): variables whose first value is a constant,
  // so they are statements too.
  std::vector<NodeId> constant_assignments;
  for (NodeId statement : ast_.children(ast_.root())) {
    NodeKind kind = ast_.kind(statement);
    if (kind == NodeKind::FunctionDef || kind == NodeKind::ClassDef || kind == NodeKind::Import ||
        kind == NodeKind::ImportFrom || kind == NodeKind::TypeAlias || kind == NodeKind::Pass)
      continue;
    if (kind == NodeKind::ExprStmt && ast_.kind(ast_.child(statement, 0)) == NodeKind::StringLiteral) continue;
    if (kind == NodeKind::ExprStmt && node_type(ast_.child(statement, 0)).valid() &&
        typed_.types.kind(node_type(ast_.child(statement, 0))) == SemaKind::Layout)
      continue;  // a ShardSpec: a description, no code
    if (typed_.compile_time_statements.count(statement.index)) continue;
    // `f.defvjp(fwd, bwd)`: registers a rule at compile time.
    if (kind == NodeKind::ExprStmt && typed_.defvjp_calls.count(ast_.child(statement, 0).index)) continue;
    if (kind == NodeKind::ExprStmt && typed_.defjvp_calls.count(ast_.child(statement, 0).index)) continue;
    // Module constants and dtype aliases are compile-time names, not code.
    if (kind == NodeKind::Assign && ast_.children(statement).size() == 2 &&
        ast_.kind(ast_.child(statement, 0)) == NodeKind::Name) {
      NodeId value = ast_.child(statement, 1);
      sema::TypeId t = node_type(value);
      // A Python value the program only names (a string, a lambda, a dict,
      // a comprehension): nothing runs for it. A string prints; any other
      // use in code is reported at the use.
      if (inert_host_value(value)) {
        if (ast_.kind(value) == NodeKind::StringLiteral)
          program_strings_[ast_.node(ast_.child(statement, 0)).payload] = values_.strings[ast_.node(value).payload];
        continue;
      }
      // (A dtype alias `T = bf16`: sema typed its value as a type and its
      // target not at all.)
      if (!t.valid() || typed_.types.kind(t) == SemaKind::Dtype || !node_type(ast_.child(statement, 0)).valid())
        continue;
      if (typed_.constants.count(ast_.child(statement, 1).index)) {
        constant_assignments.push_back(statement);
        statements.push_back(statement);  // kept only if its name is assigned again (below)
        continue;
      }
    }
    statements.push_back(statement);
  }
  // A name assigned by a statement that is not a constant assignment, or by
  // two constant assignments.
  std::vector<uint32_t> reassigned, once;
  for (NodeId statement : statements) {
    if (std::find(constant_assignments.begin(), constant_assignments.end(), statement) == constant_assignments.end()) {
      assigned_names(ast_, statement, reassigned);
      continue;
    }
    uint32_t name = ast_.node(ast_.child(statement, 0)).payload;
    if (std::find(once.begin(), once.end(), name) != once.end()) reassigned.push_back(name);
    else once.push_back(name);
  }
  std::erase_if(statements, [&](NodeId statement) {
    if (std::find(constant_assignments.begin(), constant_assignments.end(), statement) == constant_assignments.end())
      return false;
    uint32_t name = ast_.node(ast_.child(statement, 0)).payload;
    return std::find(reassigned.begin(), reassigned.end(), name) == reassigned.end();
  });
  if (statements.empty()) return;
  std::vector<NamedAttribute> attributes{
      {"sym_name", context_.string_attr("__tessera_program")},
      {"function_type", context_.type_attr(context_.function_type({}, {}))},
      {"program", context_.unit_attr()}};
  Operation* func = Operation::create(OpKind::Func, location(ast_.root()), {}, {}, std::move(attributes), 1);
  func->region(0).add_block();
  module_->region(0).front().push_back(func);
  graph_ = true;
  node_types_ = &typed_.node_types;
  call_instances_ = &typed_.call_instances;
  element_tables_ = &typed_.element_tables;
  static const sema::FunctionInfo program_info{};
  begin_body(program_info, func);
  program_ = true;
  for (NodeId statement : statements) assigned_names(ast_, statement, locals_);
  result_types_.clear();
  builder_.set_insertion_point_to_end(entry_);
  for (NodeId statement : statements) {
    builder_.set_location(location(statement));
    lower_statement(statement);
  }
  builder_.set_location(location(ast_.root()));
  builder_.create(OpKind::Return, {}, {});
  function_ = nullptr;
  graph_ = false;
  program_ = false;
  call_instances_ = nullptr;
  element_tables_ = nullptr;
}

Value* Lowering::graph_dim(Value* tensor, int64_t axis) {
  return emit(OpKind::GraphDim, {tensor}, context_.index_type(), {{"axis", context_.int_attr(axis)}});
}

Value* Lowering::graph_op(OpKind kind, std::vector<Value*> operands, Type declared,
                          std::vector<NamedAttribute> attributes, NodeId where) {
  Operation* op = builder_.create(kind, std::span<Value* const>(operands), std::span<const Type>(&declared, 1),
                                  std::move(attributes));
  // The result is what the operands make it (static dims where sema had
  // names); a mismatch is a bug of this lowering.
  std::string why;
  std::optional<GraphResult> inferred = infer_graph_result(op, 0, why);
  if (!inferred) internal_error("lower", "'" + std::string(op->name()) + "' at " + std::string(location(where).str()) + ": " + why);
  op->result()->set_type(inferred->type(context_));
  return op->result();
}

Value* Lowering::graph_elementwise(std::string_view fn, std::vector<Value*> operands, NodeId where) {
  if (program_) cut_whole_operands(operands, where);
  Type declared = context_.tensor_type({}, ScalarType::F32);  // replaced by the inferred type
  return graph_op(OpKind::GraphElementwise, std::move(operands), declared, {{"op", context_.string_attr(fn)}}, where);
}

// In the program a split tensor's value is this rank's block of it and a
// whole tensor's value all of it (its global sizes): an elementwise
// operation of both (`a + bias`, `ts.where(a > 0.0, a, b)` of a split a and
// a whole b) takes the whole operand's block of the result's layout, as
// `dist.tensor(data=...)` cuts it (graph.shard). An operand is whole along
// a dimension the result splits when it has the global size there (a
// block has the global size divided by the axis, a broadcast operand 1).
void Lowering::cut_whole_operands(std::vector<Value*>& operands, NodeId where) {
  if (!where.valid() || where.index >= node_types_->size()) return;
  const sema::TypeId result = node_type(where);
  if (!result.valid() || typed_.types.info(result).kind != sema::TypeKind::Tensor) return;
  const sema::ShardingInfo* s = typed_.types.sharding(result);
  if (!s || s->unknown) return;
  const sema::MeshInfo& mesh = typed_.types.mesh_info(s->mesh);
  std::span<const sema::DimId> global = typed_.types.dims(result);
  const size_t rank = std::min(global.size(), s->dim_axes.size());
  for (Value*& v : operands) {
    const Type t = v->type();
    if (!t.is(TypeKind::Tensor) || t.rank() > rank) continue;
    sema::ShardingInfo cut;
    cut.mesh = s->mesh;
    cut.dim_axes.assign(t.rank(), -1);
    std::vector<int64_t> local(t.shape().begin(), t.shape().end());
    bool whole_somewhere = false;
    for (size_t i = 0; i < t.rank(); ++i) {
      const size_t at = rank - t.rank() + i;
      const int32_t axis = s->dim_axes[at];
      if (axis < 0) continue;
      const std::optional<int64_t> size = typed_.types.constant_value(global[at]);
      const int64_t ranks = mesh.shape[static_cast<size_t>(axis)];
      if (!size || ranks == 1 || *size == 1 || local[i] != *size) continue;
      cut.dim_axes[i] = axis;
      local[i] = *size / ranks;
      whole_somewhere = true;
    }
    if (whole_somewhere)
      v = graph_op(OpKind::GraphShard, {v}, context_.tensor_type(local, t.scalar()), sharding_attributes(cut), where);
  }
}

Value* Lowering::to_element(Value* v, ScalarType element, NodeId where) {
  Type t = v->type();
  if (t.is(TypeKind::Tensor)) {
    if (t.scalar() == element) return v;
    std::vector<int64_t> dims(t.shape().begin(), t.shape().end());
    return graph_op(OpKind::GraphCast, {v}, context_.tensor_type(dims, element), {}, where);
  }
  return convert(v, context_.scalar_type(element));
}

Value* Lowering::scalar_as_tensor(Value* v, ScalarType element, NodeId where) {
  // select(true, v, v): exact (no arithmetic on v), and fused into its users.
  Value* yes = graph_op(OpKind::GraphConstant, {}, context_.tensor_type({}, ScalarType::Bool),
                        {{"value", context_.bool_attr(true)}}, where);
  Value* number = convert(v, context_.scalar_type(element));
  return graph_elementwise("select", {yes, number, number}, where);
}

// `a op b` with a tensor result: both operands in the result's element type
// (`/` of integers computes in f32), then one elementwise operation.
Value* Lowering::graph_binary(NodeId node) {
  auto op = static_cast<BinaryOperator>(ast_.node(node).op);
  NodeId lhs = ast_.child(node, 0), rhs = ast_.child(node, 1);
  if (op == BinaryOperator::MatMul) {
    Type result = graph_type(node);
    Value* a = value(lhs);
    Value* b = value(rhs);
    return lower_matmul(a, b, result, node);
  }
  ScalarType element = graph_type(node).scalar();
  Value* a = to_element(value(lhs, is_tensor_node(lhs) ? Type{} : context_.scalar_type(element)), element, lhs);
  Value* b = to_element(value(rhs, is_tensor_node(rhs) ? Type{} : context_.scalar_type(element)), element, rhs);
  if (op == BinaryOperator::Pow && is_integer(element) && scalar_info(element).category != ScalarCategory::UnsignedInt)
    require_non_negative_exponent(b, node);
  return graph_elementwise(graph_binary_function(op, node), {a, b}, node);
}

// NumPy refuses integers to negative integer powers (ValueError) rather
// than give 0: checked when it runs, unless the exponent is a constant
// that is not negative.
void Lowering::require_non_negative_exponent(Value* exponent, NodeId node) {
  const std::string message =
      source_position(node) + ": integers to negative integer powers are not allowed (NumPy's ValueError; make the "
                              "base a float)";
  if (exponent->type().is(TypeKind::Tensor)) {
    Value* zero = builder_.constant_int(0, context_.scalar_type(exponent->type().scalar()));
    return check_every_element(graph_elementwise("ge", {exponent, zero}, node), node, message);
  }
  if (Operation* def = exponent->defining_op();
      def && def->is(OpKind::Constant) && def->has_attr("value") && def->int_attr("value") >= 0)
    return;
  const Type i64 = context_.i64_type();
  Value* ok = emit(OpKind::CmpI, {convert(exponent, i64), builder_.constant_int(0, i64)}, context_.bool_type(),
                   {{"predicate", context_.string_attr("sge")}});
  builder_.create(OpKind::HostCheck, std::span<Value* const>(&ok, 1), std::span<const Type>{},
                  {{"message", context_.string_attr(message)}});
}

// The graph.elementwise function of a binary operator on tensors.
const char* Lowering::graph_binary_function(BinaryOperator op, NodeId where) {
  switch (op) {
    case BinaryOperator::Add: return "add";
    case BinaryOperator::Sub: return "sub";
    case BinaryOperator::Mul: return "mul";
    case BinaryOperator::Div: return "div";
    case BinaryOperator::FloorDiv: return "floordiv";
    case BinaryOperator::Mod: return "mod";
    case BinaryOperator::Pow: return "pow";
    case BinaryOperator::BitAnd: return "and";
    case BinaryOperator::BitOr: return "or";
    case BinaryOperator::BitXor: return "xor";
    case BinaryOperator::LShift: return "shl";
    case BinaryOperator::RShift: return "shr";
    case BinaryOperator::MatMul: break;
  }
  unsupported(where, "the operator '" + std::string(operator_spelling(op)) + "' on tensors");
}

// `x op= v` on a tensor variable: x = x op v in x's element type (sema
// checked that the result keeps x's type: `b += 1.0` on a bf16 tensor, whose
// sum is f32, is sema.local-type-change).
void Lowering::graph_aug_assign(NodeId statement, Value* current) {
  NodeId target = ast_.child(statement, 0), value_node = ast_.child(statement, 1);
  auto op = static_cast<BinaryOperator>(ast_.node(statement).op);
  ScalarType element = current->type().scalar();
  Value* v = to_element(value(value_node, is_tensor_node(value_node) ? Type{} : context_.scalar_type(element)),
                        element, value_node);
  env_[ast_.node(target).payload] = Bound{graph_elementwise(graph_binary_function(op, statement), {current, v}, statement), {}};
}

Value* Lowering::graph_compare(NodeId node) {
  auto op = static_cast<CompareOperator>(ast_.node(node).op);
  NodeId lhs = ast_.child(node, 0), rhs = ast_.child(node, 1);
  // `a < b < c` is (a < b) & (b < c): the left comparison, then this one
  // with its right operand b (pure graph code: evaluated again, CSE'd).
  Value* chain = nullptr;
  if (ast_.node(node).flags & 1) {
    chain = value(lhs);
    lhs = ast_.child(lhs, 1);
  }
  ScalarType element = promote(element_of(lhs), element_of(rhs));
  if (is_storage_float(element)) element = ScalarType::F32;
  Value* a = to_element(value(lhs, is_tensor_node(lhs) ? Type{} : context_.scalar_type(element)), element, lhs);
  Value* b = to_element(value(rhs, is_tensor_node(rhs) ? Type{} : context_.scalar_type(element)), element, rhs);
  const char* fn = nullptr;
  switch (op) {
    case CompareOperator::Lt: fn = "lt"; break;
    case CompareOperator::Le: fn = "le"; break;
    case CompareOperator::Gt: fn = "gt"; break;
    case CompareOperator::Ge: fn = "ge"; break;
    case CompareOperator::Eq: fn = "eq"; break;
    case CompareOperator::Ne: fn = "ne"; break;
    default: unsupported(node, "the comparison '" + std::string(operator_spelling(op)) + "' on tensors");
  }
  Value* compared = graph_elementwise(fn, {a, b}, node);
  return chain ? graph_elementwise("and", {chain, compared}, node) : compared;
}

Value* Lowering::graph_unary(NodeId node) {
  auto op = static_cast<UnaryOperator>(ast_.node(node).op);
  ScalarType element = graph_type(node).scalar();
  Value* v = to_element(value(ast_.child(node, 0)), element, node);
  switch (op) {
    case UnaryOperator::Pos: return v;
    case UnaryOperator::Neg: return graph_elementwise("neg", {v}, node);
    case UnaryOperator::Not:
    case UnaryOperator::Invert: return graph_elementwise("not", {v}, node);
  }
  unsupported(node, "this unary operator on tensors");
}

std::vector<NodeId> Lowering::subscript_indices(NodeId index) const {
  if (ast_.kind(index) == NodeKind::Tuple && !(ast_.node(index).flags & 1))
    return {ast_.children(index).begin(), ast_.children(index).end()};
  return {index};
}

size_t Lowering::axis_consuming_indices(const std::vector<NodeId>& indices) const {
  size_t consuming = 0;
  for (NodeId i : indices)
    if (ast_.kind(i) != NodeKind::NoneLiteral && ast_.kind(i) != NodeKind::EllipsisLiteral) ++consuming;
  return consuming;
}

// `x[...]` of a tensor: integers, slices with constant bounds, None and
// `...`; a graph.slice of the sliced and indexed dimensions, then a reshape
// that drops the indexed ones and inserts the new axes.
Value* Lowering::graph_subscript(NodeId node) {
  NodeId object = ast_.child(node, 0), index = ast_.child(node, 1);
  Value* x = value(object);
  std::vector<NodeId> indices = subscript_indices(index);
  // A gather beside slices: the slices first (every dimension kept), then
  // the integer tensors and integers select (NumPy's result: the slices do
  // not move the dimensions they keep).
  if (is_gather(indices)) {
    // None beside them: the gather without it, then the new axes.
    std::vector<NodeId> selecting;
    std::ranges::copy_if(indices, std::back_inserter(selecting),
                         [&](NodeId i) { return ast_.kind(i) != NodeKind::NoneLiteral; });
    Value* selected = graph_gather(node, graph_basic_indexing(node, x, selecting, true), selecting);
    return selecting.size() == indices.size() ? selected : gather_new_axes(node, selected, x->type().rank(), indices);
  }
  return graph_basic_indexing(node, x, indices, false);
}

// x[indices] for integers, slices, None and '...'. `keep_indexed`: integers
// and integer tensors keep their dimension whole (a gather selects along it
// next).
Value* Lowering::graph_basic_indexing(NodeId node, Value* x, const std::vector<NodeId>& indices, bool keep_indexed) {
  Type t = x->type();
  size_t consuming = axis_consuming_indices(indices);
  std::vector<int64_t> starts, limits, steps;
  std::vector<Value*> dynamic_bounds;  // graph.slice's operands after x
  std::vector<size_t> dynamic_window_axis;  // per out_dims entry: the axis of x it slices with dynamic bounds, or -1
  std::vector<int64_t> out_dims;  // after indexing, with new axes
  std::vector<Value*> out_extents;  // the sizes of the `?` ones
  // A kept dimension's limit: its size, or -1 (the whole dimension) when
  // that is known only at run time.
  auto whole = [&](size_t a) { return t.shape()[a] == kDynamic ? int64_t{-1} : t.shape()[a]; };
  auto keep = [&](size_t a) {
    out_dims.push_back(t.shape()[a]);
    out_extents.push_back(t.shape()[a] == kDynamic ? graph_dim(x, static_cast<int64_t>(a)) : nullptr);
  };
  bool sliced = false;
  size_t axis = 0;
  auto keep_whole_axis = [&] {  // the current axis, whole
    starts.push_back(0);
    limits.push_back(whole(axis));
    steps.push_back(1);
    keep(axis);
    ++axis;
  };
  auto constant = [&](NodeId n, const char* what) -> int64_t {
    std::optional<int64_t> c = constant_of(n);
    if (!c) unsupported(n, std::string("a tensor ") + what + " that is not a compile-time constant");
    return *c;
  };
  // A slice bound known at run time (or on a size that is): NumPy's wrap
  // once (v < 0: v + size), then clamped into [low, high].
  auto run_time_bound = [&](NodeId n, bool known, int64_t c, Value* size, Value* low, Value* high) {
    Value* v = known ? builder_.constant_index(c) : to_index(value(n, context_.i64_type()));
    Value* zero = builder_.constant_index(0);
    Value* negative = emit(OpKind::CmpI, {v, zero}, context_.bool_type(), {{"predicate", context_.string_attr("slt")}});
    Value* wrapped = emit(OpKind::Select, {negative, emit(OpKind::AddI, {v, size}, context_.index_type()), v},
                          context_.index_type());
    return emit(OpKind::MinSI, {emit(OpKind::MaxSI, {wrapped, low}, context_.index_type()), high}, context_.index_type());
  };
  // The current axis sliced from run-time `start` to `limit` by step `s`
  // (limit on the step's side of start): ceil(|limit - start| / |s|)
  // elements.
  auto run_time_window = [&](Value* start, Value* limit, int64_t s) {
    starts.push_back(kDynamic);
    limits.push_back(kDynamic);
    steps.push_back(s);
    dynamic_bounds.push_back(start);
    dynamic_bounds.push_back(limit);
    dynamic_window_axis.resize(out_dims.size(), SIZE_MAX);
    dynamic_window_axis.push_back(axis);
    out_dims.push_back(kDynamic);
    Value* span = s > 0 ? emit(OpKind::SubI, {limit, start}, context_.index_type())
                        : emit(OpKind::SubI, {start, limit}, context_.index_type());
    int64_t magnitude = s > 0 ? s : -s;
    out_extents.push_back(magnitude == 1 ? span
                                         : emit(OpKind::DivSI,
                                                {emit(OpKind::AddI, {span, builder_.constant_index(magnitude - 1)},
                                                      context_.index_type()),
                                                 builder_.constant_index(magnitude)},
                                                context_.index_type()));
    sliced = true;
    ++axis;
  };
  for (NodeId i : indices) {
    NodeKind k = ast_.kind(i);
    if (k == NodeKind::NoneLiteral) {
      out_dims.push_back(1);
      out_extents.push_back(nullptr);
      continue;
    }
    if (k == NodeKind::EllipsisLiteral) {
      size_t skip = t.rank() - consuming;
      for (size_t s = 0; s < skip; ++s, ++axis) {
        starts.push_back(0);
        limits.push_back(whole(axis));
        steps.push_back(1);
        keep(axis);
      }
      continue;
    }
    int64_t extent = t.shape()[axis];
    if (k == NodeKind::Slice) {
      NodeId lo = ast_.child(i, 0), hi = ast_.child(i, 1), step = ast_.child(i, 2);
      if (!lo.valid() && !hi.valid() && !step.valid()) {
        keep_whole_axis();
        continue;
      }
      int64_t s = step.valid() ? constant(step, "slice step") : 1;
      if (s == 0) unsupported(step, "a slice step of 0");
      if (s < 0) {
        // NumPy's negative step (`x[::-1]`, `x[5:1:-2]`): bounds wrap once
        // and clamp to [-1, size - 1]; the defaults run from the last
        // element through the first.
        std::optional<int64_t> lo_c = lo.valid() ? constant_of(lo) : std::nullopt;
        std::optional<int64_t> hi_c = hi.valid() ? constant_of(hi) : std::nullopt;
        bool lo_given = lo_c.has_value(), hi_given = hi_c.has_value();
        int64_t lo_value = lo_c.value_or(0), hi_value = hi_c.value_or(0);
        if (extent == kDynamic || (lo.valid() && !lo_given) || (hi.valid() && !hi_given)) {
          // The same in host arithmetic: a dynamic start in [-1, size - 1]
          // and limit in [-1, start] (-1: through element 0).
          Value* size = extent == kDynamic ? graph_dim(x, static_cast<int64_t>(axis)) : builder_.constant_index(extent);
          Value* minus_one = builder_.constant_index(-1);
          Value* last = emit(OpKind::SubI, {size, builder_.constant_index(1)}, context_.index_type());
          Value* a = lo.valid() ? run_time_bound(lo, lo_given, lo_value, size, minus_one, last) : last;
          Value* b = hi.valid() ? run_time_bound(hi, hi_given, hi_value, size, minus_one, last) : minus_one;
          run_time_window(a, emit(OpKind::MinSI, {b, a}, context_.index_type()), s);
          continue;
        }
        auto wrap = [&](int64_t v) { return std::clamp<int64_t>(v < 0 ? v + extent : v, -1, extent - 1); };
        int64_t a = lo_given ? wrap(lo_value) : extent - 1;
        int64_t b = hi_given ? wrap(hi_value) : -1;
        if (a <= b) {  // empty
          starts.push_back(0);
          limits.push_back(0);
          steps.push_back(1);
          out_dims.push_back(0);
        } else {
          starts.push_back(a);
          limits.push_back(b);
          steps.push_back(s);
          out_dims.push_back((a - b - 1) / -s + 1);
        }
        out_extents.push_back(nullptr);
        sliced = true;
        ++axis;
        continue;
      }
      // The bounds' values where known at compile time (an absent lower
      // bound is 0; an absent upper bound stays unknown: the end).
      int64_t lo_value = 0, hi_value = 0;
      bool lo_known = true, hi_known = false;
      if (lo.valid()) {
        std::optional<int64_t> c = constant_of(lo);
        lo_known = c.has_value();
        lo_value = c.value_or(0);
      }
      if (hi.valid()) {
        std::optional<int64_t> c = constant_of(hi);
        hi_known = c.has_value();
        hi_value = c.value_or(0);
      }
      if (extent != kDynamic && lo_known && (!hi.valid() || hi_known)) {
        auto clamp = [&](int64_t v) { return std::clamp<int64_t>(v < 0 ? v + extent : v, 0, extent); };
        int64_t a = clamp(lo_value);
        int64_t b = hi_known ? clamp(hi_value) : extent;
        if (b < a) b = a;
        starts.push_back(a);
        limits.push_back(b);
        steps.push_back(s);
        out_dims.push_back((b - a + s - 1) / s);
        out_extents.push_back(nullptr);
        sliced = true;
        ++axis;
        continue;
      }
      // A bound known at run time, or a dimension whose size is: NumPy's
      // clamping in host arithmetic, a dynamic start and limit.
      Value* size = extent == kDynamic ? graph_dim(x, static_cast<int64_t>(axis)) : builder_.constant_index(extent);
      Value* zero = builder_.constant_index(0);
      Value* a = lo.valid() ? run_time_bound(lo, lo_known, lo_value, size, zero, size) : zero;
      Value* b = hi.valid() ? run_time_bound(hi, hi_known, hi_value, size, zero, size) : size;
      run_time_window(a, emit(OpKind::MaxSI, {b, a}, context_.index_type()), s);
      continue;
    }
    if (keep_indexed) {  // the gather's: selected next
      keep_whole_axis();
      continue;
    }
    // An integer: that element of the axis, which the result drops.
    std::optional<int64_t> at = constant_of(i);
    if (extent != kDynamic && at) {
      int64_t element = *at < 0 ? *at + extent : *at;
      if (element < 0 || element >= extent) unsupported(i, "a tensor index out of range");
      starts.push_back(element);
      limits.push_back(element + 1);
      steps.push_back(1);
      sliced = true;
      ++axis;
      continue;
    }
    // Known at run time (the index or the size): checked, then a dynamic
    // start and limit; the reshape below drops the axis.
    Value* element = checked_tensor_index(x, axis, i);
    starts.push_back(kDynamic);
    limits.push_back(kDynamic);
    steps.push_back(1);
    dynamic_bounds.push_back(element);
    dynamic_bounds.push_back(emit(OpKind::AddI, {element, builder_.constant_index(1)}, context_.index_type()));
    sliced = true;
    ++axis;
  }
  for (; axis < t.rank(); ++axis) {
    starts.push_back(0);
    limits.push_back(whole(axis));
    steps.push_back(1);
    keep(axis);
  }
  // A window with bounds known at run time whose length the type fixes
  // (`x[0:4]` of an `M` dimension, `x[t:t + 3]`): the slice has that static
  // size, checked when it runs (NumPy would clamp; the type is a promise).
  std::vector<int64_t> window_sizes(t.rank(), kDynamic);
  bool any_window = false;
  Type declared = graph_type(node);
  dynamic_window_axis.resize(out_dims.size(), SIZE_MAX);
  for (size_t k = 0; k < out_dims.size(); ++k) {
    if (dynamic_window_axis[k] == SIZE_MAX || declared.rank() != out_dims.size() || declared.shape()[k] == kDynamic)
      continue;
    int64_t size = declared.shape()[k];
    Value* fits = emit(OpKind::CmpI, {out_extents[k], builder_.constant_index(size)}, context_.bool_type(),
                       {{"predicate", context_.string_attr("eq")}});
    builder_.create(OpKind::HostCheck, std::span<Value* const>(&fits, 1), std::span<const Type>{},
                    {{"message", context_.string_attr(source_position(node) + ": the slice of axis " +
                                                      std::to_string(dynamic_window_axis[k]) + " has fewer than " +
                                                      std::to_string(size) + " elements (its type says " +
                                                      std::to_string(size) + ")")}});
    window_sizes[dynamic_window_axis[k]] = size;
    out_dims[k] = size;
    out_extents[k] = nullptr;
    any_window = true;
  }
  Value* result = x;
  if (sliced) {
    std::vector<int64_t> dims;
    for (size_t d = 0; d < starts.size(); ++d)
      dims.push_back(window_sizes[d] != kDynamic ? window_sizes[d]
                     : steps[d] < 0 && (starts[d] == kDynamic || limits[d] == kDynamic) ? kDynamic
                     : steps[d] < 0 ? (starts[d] - limits[d] - 1) / -steps[d] + 1
                     : limits[d] == -1 || limits[d] == kDynamic
                         ? kDynamic
                         : (limits[d] - starts[d] + steps[d] - 1) / steps[d]);
    std::vector<Value*> operands{x};
    operands.insert(operands.end(), dynamic_bounds.begin(), dynamic_bounds.end());
    std::vector<NamedAttribute> attributes{{"starts", context_.int_array_attr(starts)},
                                           {"limits", context_.int_array_attr(limits)},
                                           {"steps", context_.int_array_attr(steps)}};
    if (any_window) attributes.push_back({"sizes", context_.int_array_attr(window_sizes)});
    result = graph_op(OpKind::GraphSlice, operands, context_.tensor_type(dims, t.scalar()), std::move(attributes), node);
  }
  Type want = context_.tensor_type(out_dims, t.scalar());
  if (result->type() != want) {
    std::vector<Value*> operands{result};
    for (Value* d : dynamic_dims(want, out_extents)) operands.push_back(d);
    result = graph_op(OpKind::GraphReshape, operands, want, {}, node);
  }
  return result;
}

// `x[i]`'s i along `axis` when the index or the axis' size is known only at
// run time: NumPy's wrap once (i < 0: i + size), checked to be in range when
// it runs (IndexError), as an index value.
Value* Lowering::checked_tensor_index(Value* x, size_t axis, NodeId i) {
  int64_t extent = x->type().shape()[axis];
  std::optional<int64_t> at = constant_of(i);
  Value* size = extent == kDynamic ? graph_dim(x, static_cast<int64_t>(axis)) : builder_.constant_index(extent);
  Value* v = at ? builder_.constant_index(*at) : to_index(value(i, context_.i64_type()));
  Value* zero = builder_.constant_index(0);
  Value* negative = emit(OpKind::CmpI, {v, zero}, context_.bool_type(), {{"predicate", context_.string_attr("slt")}});
  Value* element = emit(OpKind::Select, {negative, emit(OpKind::AddI, {v, size}, context_.index_type()), v},
                        context_.index_type());
  Value* low_ok = emit(OpKind::CmpI, {element, zero}, context_.bool_type(), {{"predicate", context_.string_attr("sge")}});
  Value* high_ok = emit(OpKind::CmpI, {element, size}, context_.bool_type(), {{"predicate", context_.string_attr("slt")}});
  Value* in_range = emit(OpKind::AndI, {low_ok, high_ok}, context_.bool_type());
  builder_.create(OpKind::HostCheck, std::span<Value* const>(&in_range, 1), std::span<const Type>{},
                  {{"message", context_.string_attr(source_position(i) + ": index out of range for axis " +
                                                    std::to_string(axis) + " of the tensor")}});
  return element;
}

// The index values of `result`'s `?` dimensions, in order, from `extents`
// (one per dimension, null where static).
std::vector<Value*> Lowering::dynamic_dims(Type result, const std::vector<Value*>& extents) {
  std::vector<Value*> dims;
  for (size_t d = 0; d < result.rank(); ++d)
    if (result.shape()[d] == kDynamic) {
      if (d >= extents.size() || !extents[d]) internal_error("lower", "a dynamic dimension without its size");
      dims.push_back(to_index(extents[d]));
    }
  return dims;
}

}  // namespace tessera::ir
