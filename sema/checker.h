// The sema checker's internal interface, shared by its source files
// (checker.cpp: declarations and statements; check_expression.cpp:
// expressions and builtin calls; resolve_type.cpp: annotations;
// lane_divergence.cpp: lane divergence). Not part of sema's public API.
#pragma once

#include <functional>

#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "sema/sema.h"

namespace tessera::sema {

// The result of checking an expression.
struct Value {
  TypeId type;
  std::optional<Constant> constant;
  bool global_id = false;  // derived from tile.linear_id() (for the shared-memory warning)
  bool is_type = false;    // the expression names a type (dtype, Tensor, alias)
};

struct Local {
  TypeId type;
  NodeId def;
  bool is_parameter = false;
  bool global_id = false;
  bool bare_shared = false;  // `tshared.alloc` without type: element type set by first use
  bool written = false;
  std::optional<Constant> constant;
  std::optional<uint32_t> parameter_index;
  bool is_dimension = false;  // a symbolic dimension of a parameter, readable as an integer
  NodeId literal;  // the tuple of integer constants or the string literal it stands for (constant_literal)
  bool exact_constant = false;  // its constant is exact: an instance's parameter given a constant argument, a program name bound once
  int control_depth = 0;      // the loops and branches around its first binding
};

class BuiltinCall;

// Lane divergence (lane_divergence.cpp): how much a value varies. Uniform
// over the group; the same within each warp; varying between lanes.
enum class DivergenceLevel : uint8_t { Uniform, Warp, Lane };

// A collective operation that some lanes may not reach: the operation (or
// the call that reaches it), the control it needs, the condition that
// varies more (invalid after a divergent return or loop exit).
struct DivergenceProblem {
  NodeId op;
  DivergenceLevel need = DivergenceLevel::Uniform;
  NodeId condition;
};

// What a helper does, given its arguments' levels: how much its result
// varies, the strictest control any collective it reaches needs (and that
// collective), and the first collective its own control flow keeps from
// some lanes.
struct DivergenceSummary {
  DivergenceLevel result = DivergenceLevel::Uniform;
  std::optional<DivergenceLevel> need;
  NodeId need_node;
  std::string need_name;
  std::optional<DivergenceProblem> problem;
};

// A .npy file's element type and shape, read when a program is typed.
struct NpyHeader {
  ScalarType dtype;
  std::vector<int64_t> shape;
};
std::optional<NpyHeader> read_npy_header(const std::string& path, std::string& why);

// Whether a value laid out so is something other than one whole value on
// every rank (check_dist.cpp).
bool distributed_layout(const ShardingInfo* sharding);

// What binary_result types: an operator (`a + b`, or augmented `a += b`), a
// comparison, the branches of `a if c else b`, or a builtin of two numbers
// (`min`, `pow`). The spelling is for messages only; the rules look at the
// kind and the operator.
struct BinaryUse {
  enum class Kind : uint8_t { Operator, Compare, Conditional, Builtin };
  Kind kind = Kind::Operator;
  BinaryOperator op = BinaryOperator::Add;  // Operator
  bool augmented = false;                   // Operator: `x op= y`
  std::string spelling;
  // The operands a diagnostic shows when they are not the types checked
  // (tensors, whose element types binary_result checks as two scalars).
  TypeId shown_lhs{}, shown_rhs{};

  static BinaryUse of(BinaryOperator op, bool augmented = false) {
    return {Kind::Operator, op, augmented, std::string(operator_spelling(op)) + (augmented ? "=" : ""), {}, {}};
  }
  static BinaryUse compare(CompareOperator op) {
    return {Kind::Compare, BinaryOperator::Add, false, std::string(operator_spelling(op)), {}, {}};
  }
  static BinaryUse conditional() { return {Kind::Conditional, BinaryOperator::Add, false, "if-else", {}, {}}; }
  static BinaryUse builtin(std::string_view name) {
    return {Kind::Builtin, BinaryOperator::Add, false, std::string(name), {}, {}};
  }
  BinaryUse showing(TypeId lhs, TypeId rhs) const {
    BinaryUse u = *this;
    if (!u.shown_lhs.valid()) u.shown_lhs = lhs, u.shown_rhs = rhs;
    return u;
  }

  bool arithmetic() const { return kind != Kind::Compare; }
  bool is(BinaryOperator o) const { return kind == Kind::Operator && op == o; }
  bool bitwise() const {
    return kind == Kind::Operator && (op == BinaryOperator::BitAnd || op == BinaryOperator::BitOr ||
                                      op == BinaryOperator::BitXor || op == BinaryOperator::LShift ||
                                      op == BinaryOperator::RShift);
  }
};

struct ModuleSymbol {
  enum class Kind : uint8_t { Function, Class, TypeAlias, Constant, Import } kind;
  NodeId node;  // the defining statement (TypeAlias: `type X = ...` or the assignment `X = dtype`)
  std::optional<Constant> constant;
  uint32_t function_index = UINT32_MAX;  // into TypedModule::functions
  uint32_t module_id = 0;                // Import: which namespace it names
};

class Checker {
 public:
  Checker(const Ast& ast, ValueStores& values, DiagnosticEngine& diags, TypedModule& out);
  void run(NodeId module);

  // --- shared helpers (checker.cpp) ---
  std::string name_of(IdentifierId id) const { return std::string(values_.identifiers.name(id)); }
  std::string name_of(uint32_t payload) const { return name_of(IdentifierId{payload}); }
  std::string source_text(NodeId node) const;
  TypeId set_type(NodeId node, TypeId type) {
    out_.node_types[node.index] = type;
    return type;
  }
  void raise_effect(Effect effect, SourceRange where);
  std::optional<std::string> closest_name(std::string_view name, const std::vector<std::string>& candidates) const;
  // A call with a required parameter neither passed nor defaulted, though
  // not too many arguments (`f(b=x)` of `f(a, b=1)`): sema.missing-argument
  // naming them, as Python's "missing 1 required positional argument: 'a'".
  void report_missing_arguments(SourceRange call, const std::string& callee, const std::vector<std::string>& names);
  uint32_t module_id(const std::string& path);
  const std::string& module_path(uint32_t id) const { return module_paths_[id]; }
  // Device code: a kernel, or a helper that kernels call (sema.h,
  // FunctionInfo::device); the kernel rules apply to both.
  bool in_device() const { return function_ != nullptr && (function_->kind == FunctionKind::Kernel || function_->device); }
  // Where computed tensor values live: registers in kernels, device memory
  // (global) in graph-level code.
  AddressSpace value_space() const { return in_device() ? AddressSpace::Register : AddressSpace::Global; }
  // The `def NAME` part of a function, for diagnostics about the function.
  SourceRange function_name_range(NodeId def, std::string_view keyword = "def") const;

  // --- types (resolve_type.cpp) ---
  TypeId resolve_type(NodeId annotation);
  std::optional<ScalarType> resolve_dtype_name(NodeId node, bool report);
  std::optional<DimId> resolve_dim(NodeId node);
  // `bare`: the nodes are the policy expressions themselves (`accum(f32)`
  // of a type written as a value, `T = fp8_e4m3 @accum(f32)`), not the
  // policy nodes of a type annotation that wrap them.
  PolicyId resolve_policies(std::span<const NodeId> policies, ScalarType base, PolicyId start, bool bare = false);
  // Type aliases (type_alias.cpp): `type X = ...` and a module-level
  // `NAME = <dtype>` (`T = bf16`, `T = fp8_e4m3 @accum(f32)`).
  bool denotes_dtype(NodeId expression) const;
  bool binds_type_alias(NodeId statement) const;    // an assignment to a name that is a type alias
  bool defines_type_alias(NodeId statement) const;  // the assignment that defines the alias
  NodeId alias_type_node(const ModuleSymbol& alias) const;
  // The type a module-level name aliases, or nullopt for other names.
  std::optional<TypeId> alias_type(NodeId name);

  // --- expressions (check_expression.cpp) ---
  Value check_expression(NodeId node);
  Value check_call(NodeId node);
  // `self`: the tensor of a method call (`x.sum(axis=1)`), argument 0,
  // already checked (`self_value`).
  Value tensor_attribute(NodeId node, TypeId tensor, const std::string& member);
  Value check_builtin_call(NodeId call, BuiltinId builtin, NodeId self = {}, Value self_value = {});
  Value check_builtin_family(BuiltinCall& call);
  // One checker per family of builtins (builtin_call.h).
  Value check_kernel_builtin(BuiltinCall& call);
  Value check_memory_builtin(BuiltinCall& call);
  std::optional<int64_t> positive_extent(BuiltinCall& call, NodeId extent);
  Value check_math_builtin(BuiltinCall& call);
  Value check_graph_builtin(BuiltinCall& call);
  // --- distribution (check_dist.cpp) ---
  Value check_dist_builtin(BuiltinCall& call);
  Value check_dist_mesh(BuiltinCall& call);
  Value check_shard_spec(BuiltinCall& call);
  Value check_dist_tensor(BuiltinCall& call);
  Value check_collective(BuiltinCall& call);
  Value check_point_to_point(BuiltinCall& call);
  Value in_mesh_view(BuiltinCall& call, NodeId x_node, TypeId x, const std::function<Value(TypeId)>& check);
  Value collective_on_mesh(BuiltinCall& call, std::vector<NodeId>& bound, TypeId x);
  Value point_to_point_on_mesh(BuiltinCall& call, std::vector<NodeId>& bound, TypeId x);
  std::string reduce_first(const ShardingInfo& partial);
  TypeId reduce_partial_in_program(NodeId operand, TypeId type);
  // The axis index of a collective's axis= in the instance's mesh, or an error.
  std::optional<int32_t> collective_axis(BuiltinCall& call, NodeId axis);
  // The end of an instance's body: sends and recvs left without their match.
  void check_unmatched_transfers();
  std::optional<std::string> constant_string(NodeId node) const;
  ScalarType range_element_type(NodeId iterable);
  void range_step_not_zero(BuiltinCall& bc, const std::vector<NodeId>& bound);
  std::vector<NodeId> literal_elements(NodeId node);
  std::optional<int64_t> constant_int_of(NodeId node);
  std::optional<std::vector<int64_t>> constant_range(NodeId node);
  std::optional<std::vector<std::string>> mesh_devices(NodeId node);
  std::optional<uint32_t> apply_layout(NodeId where, uint32_t layout, uint32_t mesh, size_t rank);
  // A sharded tensor type as one rank holds it (to_local) or as the program
  // sees it; reports a dimension its axis does not divide.
  std::optional<TypeId> shard_view(NodeId where, TypeId tensor, bool to_local);
  std::optional<uint32_t> elementwise_sharding(NodeId where, std::string_view what, const std::vector<TypeId>& operands,
                                               size_t rank, bool linear_sum);
  std::optional<uint32_t> matmul_sharding(NodeId where, TypeId a, TypeId b, TypeId result);
  std::optional<uint32_t> reduction_sharding(BuiltinCall& call, TypeId x, size_t rank);
  TypeId propagate_builtin_sharding(BuiltinCall& call, TypeId result);
  Value check_helper_call(NodeId call, uint32_t function_index);
  // A call's arguments bound to the parameters of `callee` by Python's
  // rules: by position, then by keyword, then the parameters' defaults (the
  // default's node where none was given). Reports unknown and repeated
  // keywords, too many arguments and missing ones, and returns nullopt
  // then (every argument checked). `given` says which were passed.
  struct BoundArguments {
    std::vector<NodeId> nodes;
    std::vector<bool> given;
  };
  std::optional<BoundArguments> bind_arguments(NodeId call, std::span<const NodeId> arguments,
                                               const FunctionInfo& callee, const std::string& callee_name);
  // The value of `float(argument)` when it is a constant (a string Python's
  // float() reads, a number).
  std::optional<Constant> float_constant(NodeId argument);
  // One argument of a helper call against its parameter's type.
  void check_argument(NodeId argument, const Value& value, TypeId parameter, const std::string& parameter_name,
                      const std::string& callee_name);

  // --- graph level (check_graph_builtins.cpp) ---
  // The element type a tensor's (or scalar's) values compute in; nullopt
  // for non-numbers.
  void check_condition(NodeId node, const Value& condition);
  void check_format_spec(NodeId field, const Value& value);
  Value check_percent_format(NodeId node, const Value& rhs);
  std::optional<ScalarType> graph_element(TypeId type);
  TypeId graph_tensor(ScalarType element, std::span<const DimId> dims);
  // NumPy broadcasting of two shapes (a size-1 dimension stretches);
  // reports a mismatch at `node` naming `what`. Sizes known only at run
  // time (two different names too, as `+` takes them) are checked when the
  // kernels launch, unless `names_must_match`.
  std::optional<std::vector<DimId>> broadcast_dims(NodeId node, std::string_view what, TypeId lhs, TypeId rhs,
                                                   std::span<const DimId> da, std::span<const DimId> db,
                                                   bool names_must_match = false);
  std::optional<size_t> tensor_axis(NodeId where, int64_t axis, size_t rank);
  // `axis=` of a reduction: an int or a tuple of them (normalised, no
  // repeats), or every axis when absent or None; nullopt after a diagnostic.
  std::optional<std::vector<size_t>> tensor_axes(BuiltinCall& call, NodeId axes, size_t rank);
  DimId dim_of_expression(NodeId node);
  std::optional<std::vector<DimId>> shape_argument(BuiltinCall& call, NodeId shape);
  bool axis_argument(BuiltinCall& call, NodeId x, NodeId axis, size_t rank);
  std::optional<TypeId> graph_tensor_argument(BuiltinCall& call, NodeId argument, const char* parameter);
  std::optional<ScalarType> float_element(BuiltinCall& call, NodeId argument, TypeId type, const char* parameter);
  std::optional<bool> constant_bool(BuiltinCall& call, NodeId argument, const char* parameter);
  std::optional<double> constant_number(BuiltinCall& call, NodeId argument, const char* parameter);
  TypeId matmul_result(NodeId call, NodeId a_node, NodeId b_node, TypeId a, TypeId b);
  TypeId attention_result(BuiltinCall& call, const std::vector<NodeId>& bound, TypeId q, TypeId k, TypeId v);
  TypeId reshape_result(BuiltinCall& call, std::span<const NodeId> sizes, TypeId x);
  TypeId checked_reshape(TypeId x, NodeId shape, const std::string& shape_text, std::vector<DimId> dims,
                         std::optional<size_t> inferred);
  TypeId concat_result(BuiltinCall& call, const std::vector<NodeId>& bound);
  std::optional<std::vector<TypeId>> tensor_list_argument(BuiltinCall& call, NodeId list);
  std::optional<ScalarType> joined_element(BuiltinCall& call, NodeId list, const std::vector<TypeId>& parts,
                                           std::optional<size_t> joined, std::vector<DimId>& dims);
  TypeId stack_result(BuiltinCall& call, const std::vector<NodeId>& bound);
  TypeId split_result(BuiltinCall& call, const std::vector<NodeId>& bound, TypeId x);
  TypeId npy_load_result(BuiltinCall& call, const std::vector<NodeId>& bound);
  // Binds the callee's symbolic dimensions to the arguments' (reports
  // mismatches); returns the bindings.
  std::unordered_map<uint32_t, DimId> bind_call_shapes(const FunctionInfo& callee, const std::vector<NodeId>& arguments);
  Value check_subscript(NodeId node);
  void widen_loop_layouts(NodeId body);  // a ring's name enters its loop varying (check_dist.cpp)
  std::optional<std::vector<DimId>> gather_dims(NodeId node, NodeId object, TypeId object_type,
                                                std::span<const std::pair<NodeId, TypeId>> indices);
  // A constant index (or slice bound, `is_end` for a slice's end) into axis
  // `axis` of `object`, whose size is `dim`: in device code it must lie
  // inside the axis (sema.index-out-of-range, sema.negative-index).
  bool check_constant_index(NodeId index, const Value& value, DimId dim, size_t axis, NodeId object,
                            std::string_view what, bool is_end);
  Value check_binary(NodeId node);
  Value resolve_name(NodeId node);
  Value resolve_attribute(NodeId node);
  TypeId binary_result(NodeId node, const BinaryUse& use, TypeId lhs, TypeId rhs);
  TypeId compute_type(TypeId scalar);
  // The value of one element `t[i]`: the element type with the tensor's
  // policy, or a @precision_policy class's `compute` type.
  TypeId element_value_type(TypeId tensor);  // storage floats compute in their accumulation type
  // A parameter's type as graph code sees it: a tensor of a @precision_policy
  // class holds its dequantized `compute` values there (`device`: kernels
  // and helpers read its codes element by element: unchanged).
  TypeId graph_policy_values(TypeId type, bool device);
  // Differentiating with respect to a @precision_policy parameter: its
  // elements are codes (ir.autodiff-unsupported at `where`); true when
  // reported.
  bool reject_policy_gradient(NodeId where, const std::string& function, const std::string& parameter, TypeId type);
  // sema.grad-non-float at `where`: `type` (an integer, bool or scalar
  // parameter, or a tuple) has no gradient, and why.
  void report_non_float_gradient(NodeId where, const std::string& function, const std::string& parameter, TypeId type);
  bool is_assignable(TypeId from, TypeId to) const;
  bool constant_sizes_differ(TypeId a, TypeId b) const;
  // Graph code: the type `value` has where `declared` is wanted, a 0-d
  // tensor where a number is declared (element by element in tuples) being
  // the number read back to the host (the lowering's graph.item).
  TypeId read_back_numbers(TypeId value, TypeId declared);
  // In device code a local names one memory of one shape and layout (the
  // IR has no tensor of several): a tensor local keeps its exact type,
  // writability aside. True for anything that is not two tensors.
  bool same_tensor_kind(TypeId from, TypeId to);
  TypeId default_type(TypeId type);  // untyped literals without context: i32, f32
  TypeId default_type(const Value& value);  // the same, i64 for an integer constant that does not fit i32
  // An untyped integer constant converted to `target` (a scalar, or a tensor
  // filled with it): reports sema.constant-out-of-range at `where` when its
  // exact value is not one of the target's. Values read from locals are not
  // checked (constant.h). False after a report.
  bool check_constant_fits(NodeId where, const Value& value, TypeId target);
  // The same for an untyped float constant rounded to f32: a finite one past
  // its range.
  bool check_float_constant_fits(NodeId where, const Value& value, TypeId target);
  // Both operands of an operation typed `result`.
  void check_operand_constants(const Value& lhs, NodeId lhs_node, const Value& rhs, NodeId rhs_node, TypeId result);
  void finalize_bare_shared(IdentifierId name, TypeId element);

  // --- statements and declarations (checker.cpp) ---
  void collect_module_symbols(NodeId module);
  // Marks the helpers that kernels call, directly or through other helpers,
  // as device functions (FunctionInfo::device), before any body is checked.
  void mark_device_functions();
  // Decorators on classes: only @precision_policy (sema.decorator-on-class).
  void check_class_decorators(NodeId def);
  std::optional<Constant> evaluate_constant(NodeId node) const;
  void check_function(uint32_t function_index);
  void check_function_body(FunctionInfo& info, const std::vector<TypeId>* given, uint32_t function_index);

  // --- @jit functions and kernel launches (check_jit.cpp) ---
  // `direct`: `f(...)` itself, whose arguments may be passed by keyword or
  // left to defaults (recorded in call_arguments for lowering); the calls
  // that transformations make (grad(f)(...), vjp, jvp) pass them by position.
  // `direct`: a call as written (`f(x, axis=0)`); else a transform's
  // (`vjp(f, x)`, `grad(f)(x)` with `defaults`: positional arguments, the
  // parameters' defaults filling the rest).
  Value check_jit_call(NodeId call, uint32_t function_index, std::span<const NodeId> arguments, bool direct = false,
                       bool defaults = false);
  // --- schedule directives (check_schedule.cpp) ---
  Value check_schedule_directive(BuiltinCall& call);
  // --- autodiff (check_autodiff.cpp) ---
  Value check_transform_builtin(BuiltinCall& call);
  Value check_vjp(BuiltinCall& call);
  // `inner_argnums`, when given, accepts a gradient function of one
  // parameter (grad(grad(f))): its argnums are appended there.
  std::optional<uint32_t> transformed_function(BuiltinCall& call, NodeId fun_node,
                                               std::vector<uint32_t>* inner_argnums = nullptr);
  Value check_vjp_call(NodeId call, const TransformInfo& transform, std::span<const NodeId> arguments);
  Value check_transform_call(NodeId call, TypeId transform, std::span<const NodeId> arguments);
  std::optional<uint32_t> program_call_mesh(std::span<const NodeId> arguments);
  double global_gradient_scale(uint32_t mesh, TypeId result);
  void collect_custom_vjps(NodeId module);
  std::optional<uint32_t> defvjp_function(NodeId call);
  std::optional<uint32_t> method_call_function(NodeId call, std::string_view method);
  std::vector<uint32_t> rule_functions(NodeId call, size_t count);
  bool rule_registration_ok(NodeId call, uint32_t function, const std::vector<uint32_t>& registered,
                            const std::unordered_set<uint32_t>& calls, std::optional<uint32_t> (Checker::*find)(NodeId));
  Value check_defvjp(NodeId call);
  void instantiate_custom_rule(uint32_t instance, NodeId call);
  // --- forward mode (check_jvp.cpp) ---
  Value check_jvp(BuiltinCall& call);
  void collect_custom_jvps(NodeId module);
  std::optional<uint32_t> defjvp_function(NodeId call);
  Value check_defjvp(NodeId call);
  void instantiate_custom_jvp(uint32_t instance, NodeId call);
  Value check_kernel_launch(NodeId call, NodeId kernel, uint32_t function_index, std::span<const NodeId> arguments);
  bool check_grid_lambda(NodeId lambda, const FunctionInfo& kernel, const std::string& name, bool whole);
  bool check_grid_axis(NodeId node, std::string& why);
  bool grid_lambda_reported_ = false;  // check_grid_lambda emitted its own error for this launch
  uint32_t instantiate(uint32_t function_index, const std::vector<TypeId>& parameter_types, NodeId call,
                       const std::vector<std::optional<Constant>>& constant_arguments = {},
                       const std::vector<NodeId>& literal_arguments = {});
  // The tuple (or list) literal of integer constants or the string literal
  // an expression is, or a name stands for (a program name bound once to
  // one, a module constant, an instance's parameter given one); invalid
  // otherwise.
  NodeId constant_literal(NodeId node) const;
  bool same_literals(NodeId a, NodeId b) const;
  // A generic @jit function's body checked once with its unannotated
  // parameters unknown (names, arity, effects), and the effect it has.
  void check_generic(uint32_t function_index);
  Effect generic_effect(uint32_t function_index);
  // Symbols of `type`'s dimensions replaced by what a call bound them to.
  TypeId substitute_dims(TypeId type, const std::unordered_map<uint32_t, DimId>& bound);
  std::unordered_map<uint32_t, DimId>& current_call_bindings() { return call_bindings_; }
  void read_decorators(FunctionInfo& info, NodeId decorators);
  void read_jit_mesh(FunctionInfo& info, NodeId expression);
  TypeId each_tensor(TypeId type, const std::function<TypeId(TypeId)>& f);
  void collect_policy_class(NodeId def);
  void check_policy_class(IdentifierId class_name, PolicyClass& policy);
  // Whether the method (a function index) takes `parameters` (after `self`)
  // and declares `result`; checks the method first.
  bool method_signature_matches(uint32_t index, std::span<const TypeId> parameters, TypeId result);
  bool has_element_quantize(const PolicyClass& policy);
  void read_kernel_decorator(FunctionInfo& info, NodeId decorator);
  // --- autotune spaces (check_autotune.cpp) ---
  void set_autotune_pin(const AutotunePin* pin) { pin_ = pin; }
  // Locals of graph code first given a Python number and later a 0-d tensor
  // (docs/language/graph.md, "Numbers that become tensors"): the Name node of
  // the first assignment -> the element type of the 0-d tensor the local is
  // from there on. Read by this check and extended by it; check_module checks
  // the module again while a check finds a new one.
  void set_promoted_locals(std::unordered_map<uint32_t, ScalarType>* promoted) { promoted_locals_ = promoted; }
  bool found_new_promotion() const { return new_promotion_; }
  void read_autotune_key(FunctionInfo& info, NodeId value);
  // Every point of the space, with `where=` evaluated at each.
  void enumerate_autotune_points(FunctionInfo& info);
  std::optional<bool> constant_condition(NodeId node);
  std::optional<int64_t> constant_integer(NodeId node);
  // Graph code's `if` conditions fixed when compiling (check_jit.cpp).
  std::optional<bool> exact_condition(NodeId node) const;
  // sema.not-constant's subject for a builtin's argument: "argument 'axis'
  // of 'sum'", and why a parameter named there is not constant.
  std::string not_constant_subject(NodeId argument, std::string_view parameter, std::string_view builtin) const;
  const Constant* recorded_constant(NodeId node) const;
  std::optional<bool> decide_condition(NodeId condition, const Value& value);
  const AutotunePin* pin_ = nullptr;
  void check_statements(NodeId suite);
  void check_statement(NodeId statement);
  void assign_to(NodeId target, const Value& value, NodeId value_node);
  bool reject_uncalled_builtin(NodeId expression, const Value& value);
  // What `for TARGET in ITERABLE` binds: the element of a range or a list
  // (graph code), dynamic for what lowering iterates over no other way.
  Value iteration_element(NodeId iterable);
  TypeId first_axis_element(TypeId tensor);
  // `[e for x in l if c]`, `(e for ...)` in graph code: a list of e's type
  // (checker.cpp).
  TypeId check_comprehension(NodeId node);
  bool parts_known(NodeId list) const;
  TypeId without_rule_sharding(TypeId result, std::span<const TypeId> operands);
  // The elements of a tuple a loop or comprehension unrolls whose elements
  // differ in type (zip() of such tuples made one): empty for anything else.
  std::vector<TypeId> mixed_elements(TypeId iterable) const;
  // Checks what `roots` hold once per element (`check_element(i)`, which
  // binds the target), recording each check's tables in element_tables_ at
  // `loop` (sema.h, ElementTables); stops after an element with errors.
  void check_per_element(NodeId loop, size_t count, std::span<const NodeId> roots,
                         const std::function<void(size_t)>& check_element);
  // A local bound again to a value of another layout (check_dist.cpp).
  void rebind_layout(Local& local, IdentifierId name, TypeId value, NodeId value_node);
  void write_tensor_element(NodeId target, TypeId tensor, NodeId root_name);
  // `value` stored at `target`, whose type is `slot` (an element's value
  // type, or a tensor for a slice store): no silent narrowing, constants
  // that fit, shapes that match.
  void check_store(NodeId target, TypeId slot, const Value& value, NodeId value_node);

  // --- lane divergence (lane_divergence.cpp) ---
  void check_uniformity(const FunctionInfo& info);
  // --- definite assignment (definite_assignment.cpp) ---
  void check_definite_assignment(const FunctionInfo& info);
  // A helper's summary for arguments of these levels (cached).
  DivergenceSummary helper_divergence(uint32_t function_index, const std::vector<DivergenceLevel>& arguments);
  std::unordered_map<std::string, DivergenceSummary> divergence_summaries_;

  const Ast& ast_;
  ValueStores& values_;
  DiagnosticEngine& diags_;
  TypedModule& out_;
  TypeStore& types_;

  std::unordered_map<uint32_t, ModuleSymbol> module_symbols_;
  // The type of each module-level assignment's value (by the value's node),
  // kept apart from the node-type table: a @jit instance is checked with its
  // own table swapped in and still reads module constants (`x * SCALE`).
  std::unordered_map<uint32_t, TypeId> module_value_types_;
  // Where each module-level name is first bound (def, class, import, type
  // alias, assignment), as a source offset: module-level code runs in order,
  // as in Python, so it may only use a name bound by an earlier statement.
  std::unordered_map<uint32_t, SourceOffset> module_binding_begin_;
  // While module-level code is checked: where its current statement begins.
  std::optional<SourceOffset> module_statement_begin_;
  // False for a module symbol that module-level code reaches before its binding.
  bool module_symbol_bound(uint32_t name) const;
  std::vector<std::string> module_paths_{""};  // module id -> dotted path ("" is `tessera` itself)
  std::unordered_map<std::string, uint32_t> module_ids_{{"", 0}};

  std::unordered_map<uint32_t, ScalarType>* promoted_locals_ = nullptr;
  bool new_promotion_ = false;
  // `s = 0.0` then `s = s + ts.sum(x)`: makes the local a 0-d tensor (and
  // records it for the next check); false where the rule does not apply.
  bool promote_local_to_tensor(Local& local, TypeId value);
  bool rebinds_with_new_type(const Local& local, TypeId value) const;
  std::optional<std::vector<int64_t>> range_indexing_mixed_tuple(NodeId target, NodeId iterable, NodeId body);
  // The type a local first bound at `target` has when it was promoted.
  std::optional<TypeId> promoted_local_type(NodeId target, TypeId first);

  // The function being checked.
  FunctionInfo* function_ = nullptr;
  std::unordered_map<uint32_t, Local> locals_;
  int loop_depth_ = 0;
  int control_depth_ = 0;                 // loops and if branches around the statement being checked
  bool assigning_ = false;                // checking the target of an assignment
  // Subscripts in device code that may be slices of a length known only at
  // run time: a slice assignment's target and value (an element loop) and a
  // vector's source or destination (it starts there). Anywhere else a slice
  // is a view, whose size must be known at compile time.
  std::unordered_set<uint32_t> runtime_length_slices_;
  // What a slice checked now is used for, named when its size is not static.
  const char* slice_use_ = "a view of memory (a helper's argument, a name bound to the slice, indexing it again)";
  // Marks the slices that may have a run-time size (see above).
  void allow_runtime_length(NodeId subscript) { runtime_length_slices_.insert(subscript.index); }
  void check_vector_span(NodeId slice, TypeId type, int64_t width, std::string_view builtin, const char* parameter);
  // Names the use of the slices checked while it lives.
  struct SliceUse {
    SliceUse(Checker& checker, const char* use) : checker(checker), saved(checker.slice_use_) { checker.slice_use_ = use; }
    ~SliceUse() { checker.slice_use_ = saved; }
    SliceUse(const SliceUse&) = delete;
    SliceUse& operator=(const SliceUse&) = delete;
    Checker& checker;
    const char* saved;
  };
  std::vector<uint32_t> checking_stack_;  // function indices, for recursion
  std::vector<uint8_t> checked_;          // per function: 0 not yet, 1 in progress, 2 done
  std::unordered_map<uint32_t, bool> reported_inferred_write_;
  std::unordered_map<uint32_t, bool> missing_return_checked_;
  // The statement just checked ended its path (a `return`); an `if` whose
  // branch taken when compiling returned ends the enclosing block too.
  bool path_ended_ = false;  // per function index: sema.missing-return reported
  std::unordered_map<uint32_t, Constant>& constants_;
  // While a @jit instance is checked: its own table of constants (written
  // beside constants_), and the constant arguments its parameters take.
  std::unordered_map<uint32_t, Constant>* instance_constants_ = nullptr;
  const std::vector<std::optional<Constant>>* constant_arguments_ = nullptr;
  const std::vector<NodeId>* literal_arguments_ = nullptr;
  // The program: how many times each name is bound at the top level (a
  // `NAME = value` counts 1, any other binding 2).
  std::unordered_map<uint32_t, int> program_bindings_;
  // @jit: generic functions whose bodies wait for instances; set once every
  // call has been seen, to check the rest generically.
  std::vector<uint32_t> generic_functions_;
  bool check_generic_bodies_ = false;
  std::vector<uint32_t> instantiating_;
  // The mesh of the @jit instance being checked (its sharded arguments'), or UINT32_MAX.
  uint32_t current_mesh_ = UINT32_MAX;
  // The sends and recvs of the instance being checked not yet matched by the
  // other side (the same axis, src and dst), in program order.
  struct Transfer {
    bool is_send = false;
    bool in_program = false;  // written in the program (else in a @jit instance)
    uint32_t mesh = 0;
    int32_t axis = 0;
    int64_t src = 0, dst = 0;
    TypeId type;
    NodeId where;
  };
  std::vector<Transfer> open_transfers_;
  std::unordered_set<uint32_t> generic_checked_;  // functions whose instance is being checked (recursion)
  // Where calls of @jit functions record their instance: the module's map,
  // or the map of the instance being checked.
  std::unordered_map<uint32_t, uint32_t>* call_instances_ = nullptr;
  ElementTablesMap* element_tables_ = nullptr;  // beside call_instances_: the same table's loops over mixed tuples
  // Where the module's node types are while a @jit instance or a generic
  // body is being checked with its own table swapped into out_.node_types
  // (null when out_.node_types is the module's): a function first reached
  // from such a check is checked in the module's tables (check_function).
  std::vector<TypeId>* module_node_types_ = nullptr;
  std::unordered_map<uint32_t, DimId> call_bindings_;  // out_.constants: NodeId -> value of constant expressions
};

}  // namespace tessera::sema
