// The lowering's internal interface, shared by its source files
// (lower.cpp: module, functions, statements and control flow;
// lower_expression.cpp: expressions, builtin calls, memory accesses).
// Not part of the public API (lower.h).
#pragma once

#include <algorithm>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "ir/core/builder.h"
#include "ir/core/rounding_conversion.h"
#include "lower/lower.h"
#include "sema/definite_assignment.h"

namespace tessera::ir {

// Element type tests of scalars and shaped types.
inline bool is_unsigned(Type t) {
  return (t.is_scalar() || t.is_shaped()) && scalar_info(t.scalar()).category == ScalarCategory::UnsignedInt;
}
inline bool float_element(Type t) { return (t.is_scalar() || t.is_shaped()) && is_float(t.scalar()); }

// A string of graph code or a program (docs/language/graph.md, "Strings"):
// text known when compiling, with values in between that are formatted when
// the program runs, as print shows them (an f-string's fields, str(x)).
// `pieces` has one more entry than `values`; `formats[i]` is value i's
// format spec, or "".
struct Text {
  std::vector<std::string> pieces{""};
  std::vector<Value*> values;
  std::vector<std::string> formats;

  void append(std::string_view more) { pieces.back() += more; }
  void append(const Text& more);
  void put(Value* v, std::string_view format) {
    values.push_back(v);
    formats.emplace_back(format);
    pieces.emplace_back();
  }
  bool known() const { return values.empty(); }  // all text: pieces[0]
};

// What a source name stands for: one IR value, or a list/tuple of values
// (`smem = [alloc(...), alloc(...)]`), indexed at compile time or by select,
// or a string.
struct Bound {
  Value* value = nullptr;
  std::vector<Value*> elements;
  // A tuple with a tuple inside (value_and_grad's (value, (grads...))): one
  // Bound per element, `elements` empty. Only unpacking reads it.
  std::vector<Bound> nested;
  // A list of graph code (`l = []`): the block it was made in. Appending
  // is only compiled there (or in a loop unrolled into it), so that its
  // length is known when compiling (docs/language/graph.md, "Lists").
  Block* list_block = nullptr;
  std::shared_ptr<const Text> text;  // a string
  bool is_value() const { return value != nullptr; }
  size_t size() const { return nested.empty() ? elements.size() : nested.size(); }
  Bound element(size_t i) const { return nested.empty() ? Bound{elements[i], {}, {}} : nested[i]; }
};

// A memory location named by a subscript: the memref, one index per
// dimension (index type; the start of a slice), and per dimension the extent
// (1 for an indexed dimension, the slice length otherwise, kDynamic when not
// known at compile time) and whether an integer indexed it (such a dimension
// is dropped from a view, as in Python: `t[g, 0:32, 0:8]` is 32x8).
struct Place {
  Value* memref = nullptr;
  std::vector<Value*> indices;
  std::vector<int64_t> extents;
  std::vector<bool> indexed;
  bool has_slice = false;
};

// Thrown after a lowering error was reported: abandons the function.
struct LoweringFailed {};

class Lowering {
 public:
  Lowering(Context& context, const Ast& ast, const ValueStores& values, const sema::TypedModule& typed,
           DiagnosticEngine& diags);
  OwningModule run(const std::string& only_kernel, bool skip_autotuned = false);

  // --- module and functions (lower.cpp) ---
  // The func.func of a function, declared on first use (its body is lowered
  // later). A helper is specialised by the types of the memory it is given
  // (docs/ir/lowering.md, "Helpers"): `argument_types` gives, per
  // parameter, the type of the argument where it differs from the
  // parameter's own (a shared buffer for an `f32[32]` parameter), else null.
  Operation* function_op(uint32_t function_index, const std::vector<Type>& argument_types = {});
  // `no_argument`: per parameter, whether it is no argument
  // (no_argument_parameter); empty for none.
  std::vector<NamedAttribute> kernel_signature_attributes(const sema::FunctionInfo& function,
                                                          const std::vector<bool>& no_argument = {});
  // Whether a @jit instance's parameter is a string given a literal
  // (sema::JitInstance::literal_arguments): no argument of its function.
  bool known_text_parameter(const sema::JitInstance& instance, size_t parameter) const;
  // Whether a @jit instance's parameter is no argument of its function: a
  // known string, or None (`scale=None`, whose `is None` tests sema decided).
  bool no_argument_parameter(const sema::JitInstance& instance, size_t parameter) const;
  // An argument given to such a None parameter.
  bool none_argument(NodeId argument);
  std::optional<Type> ir_type(sema::TypeId type);
  Type required_type(sema::TypeId type, NodeId where, std::string_view what);
  std::string name_of(uint32_t identifier) const {
    return std::string(values_.identifiers.name(IdentifierId{identifier}));
  }
  Location location(NodeId node);
  [[noreturn]] void unsupported(NodeId node, std::string what);
  // What an expression of `e`'s kind is called in a message ("an f-string",
  // "a list comprehension"), as a user would write it, not the AST's name.
  std::string expression_phrase(NodeId e) const;

  // --- statements (lower.cpp) ---
  struct Segment {
    NodeId node;  // a Suite, or a single statement (an `elif`)
    size_t next = 0;
    // An iteration of a loop unrolled in the continuation (a `return` in
    // graph code's loop over a list or a constant range): the loop's target
    // is bound to `item` when the segment starts.
    NodeId target = {};
    std::optional<Bound> item = {};
  };
  void lower_function(uint32_t function_index, Operation* func);
  // How each path of a loop body ends: the values the loop carries, in order
  // (the next induction variable of a `for` lowered as scf.while, the
  // running flag of a loop with `break`, then the carried names).
  struct LoopExit {
    Value* iv = nullptr;
    Value* step = nullptr;
    bool flag = false;
    std::vector<uint32_t> carried;
    std::vector<Type> types;
  };
  void lower_rest(std::vector<Segment> continuation, bool in_branch, const LoopExit* loop);
  void emit_loop_exit(const LoopExit& loop, bool keep_running);
  void lower_suite(NodeId suite);
  void lower_statement(NodeId statement);
  void lower_if(NodeId statement);
  // The branch an `if` takes when its condition is known when compiling
  // (constants; in graph code also what the IR folds, as an unrolled loop's
  // variable): the suite or `elif`, or an invalid node for a missing else.
  // Otherwise nullopt, and `*condition` the lowered condition.
  std::optional<NodeId> known_branch(NodeId statement, Value** condition);
  std::optional<bool> sema_decision(NodeId node) const;
  // Graph code: a loop with a `return` in its body over a list or a
  // constant range, unrolled into the continuation; false otherwise.
  bool unroll_returning_loop(NodeId statement, std::vector<Segment>& continuation);
  void lower_assert(NodeId statement);
  void lower_for(NodeId statement);
  // Graph-code lists (lower_lists.cpp): loops unrolled so that appends and
  // indices are known when compiling, `l.append(x)`, `l[i]`, `len(l)`.
  bool is_list_node(NodeId node) const;
  bool mentions_list(NodeId node) const;
  bool lower_list_loop(NodeId statement);
  Bound lower_list_append(NodeId call);
  Bound lower_list_subscript(NodeId node);
  Bound lower_list_tuples(NodeId call);
  Bound lower_list_reduction(NodeId call, sema::BuiltinId builtin);
  Bound lower_comprehension(NodeId node);
  bool is_row_sequence_node(NodeId node) const;
  std::optional<Bound> unrolled_sequence(NodeId iterable);
  Bound tensor_rows(Value* x, NodeId where);
  std::optional<std::vector<int64_t>> unrolled_range(NodeId iterable, NodeId where, std::string_view what);
  std::optional<int64_t> folded_int(Value* v) const;
  void lower_while(NodeId statement);
  void lower_exiting_if(NodeId statement, Value* condition, const std::vector<Segment>& continuation, bool in_branch,
                        const LoopExit* loop);
  void emit_return(NodeId value, NodeId where, bool in_branch);
  void assign(NodeId target, Bound value, NodeId where);
  void lower_assign(NodeId statement);
  void lower_aug_assign(NodeId statement);
  std::vector<uint32_t> carried_names(std::span<const NodeId> bodies, std::string_view construct, NodeId where);
  void restore_env(std::unordered_map<uint32_t, Bound> saved);

  // --- expressions (lower_expression.cpp) ---
  Bound lower(NodeId expression, Type want = {});
  Value* value(NodeId expression, Type want = {});
  Value* convert(Value* v, Type to);
  Value* convert_vector(Value* v, Type to, NodeId where);
  std::optional<Type> typed_type(NodeId expression);  // null for untyped literals and non-values
  Type common_type(NodeId a, NodeId b);
  Value* lower_name(NodeId name, Type want);
  Value* lower_literal(NodeId literal, Type want);
  // A constant in `want` (a scalar type), or without one in f32, i32 or i64.
  Value* constant_value(const sema::Constant& c, Type want);
  Value* lower_binary(NodeId node);
  Value* emit_binary(BinaryOperator op, Value* a, Value* b, NodeId where);
  Value* integer_power(Value* a, Value* b);
  Value* shift(BinaryOperator op, Value* a, Value* b);
  Value* lower_compare(NodeId node, Value** rhs_out);
  Value* lower_bool_op(NodeId node);
  Value* lower_unary(NodeId node, Type want = Type{});
  Value* lower_if_expression(NodeId node);
  Bound lower_call(NodeId call);
  bool is_builtin_call(NodeId node, sema::BuiltinId builtin) const;
  Bound lower_builtin_call(NodeId call, sema::BuiltinId builtin);
  Bound lower_math_builtin(NodeId call, sema::BuiltinId builtin);
  Bound lower_memory_builtin(NodeId call, sema::BuiltinId builtin);
  Bound lower_sync_builtin(NodeId call, sema::BuiltinId builtin);
  NodeId call_argument(NodeId call, size_t i) const;
  std::vector<Value*> lower_user_call(NodeId call, uint32_t function_index);
  Bound lower_subscript(NodeId node);
  // `element_access`: the caller reads or writes one element through the
  // place and applies the tensor's numeric policy (lower_policy.cpp); any
  // other use of a tensor that carries a policy is reported as unsupported.
  Place place_of(NodeId subscript, bool element_access = false);
  Value* memref_of(NodeId expression, bool element_access = false);  // a tensor name, subscripted list element or slice, as a memref
  Value* view_of(const Place& place, NodeId where);
  Value* select_element(const std::vector<Value*>& elements, Value* index, NodeId where);
  Value* symbol_dim(uint32_t identifier);
  Value* to_index(Value* v) { return convert(v, context_.index_type()); }
  std::optional<int64_t> constant_of(NodeId node) const;
  // The value sema computed for an expression (this instance's, in a @jit
  // instance), or null.
  const sema::Constant* known_constant(NodeId node) const;
  bool known_positive(Value* v) const;
  bool is_local(uint32_t name) const {
    return env_.count(name) || std::find(locals_.begin(), locals_.end(), name) != locals_.end();
  }
  std::optional<int64_t> constant_int_value(Value* v) const;
  std::optional<int64_t> constant_condition(NodeId condition);
  Value* emit(OpKind kind, std::initializer_list<Value*> operands, Type result, std::vector<NamedAttribute> attributes = {});
  void emit_store(NodeId target, Value* v);

  // --- slice assignments and vector elements (lower_slices.cpp) ---
  // `target` (a subscript with slices) = the value of `value_node`, or the
  // already lowered `lowered` (a scalar, a vector or a memref) when given.
  void store_slice(NodeId target, NodeId value_node, Value* lowered);
  // Per axis of the slice (the axes not indexed by an integer), its length.
  std::vector<Value*> slice_extents(NodeId subscript, const Place& place);
  bool is_list_element(NodeId subscript) const;  // `bufs[stage]` of a list of buffers
  Value* vector_buffer(Type vector);             // the local buffer a vector of this type is read through
  Value* spill_vector(Value* vector);            // stores it into that buffer
  Value* vector_element(Value* vector, Value* index);

  // --- numeric policies (lower_policy.cpp) ---
  enum class PolicyUse : uint8_t {
    ElementLoad,   // t[i] read: the tensor's policy applies to the value read
    ElementStore,  // t[i] = v, t[i] op= v: the policy applies to the value stored
    AccumOnly,     // tile.mma operands: only @accum matters (sema chose the accumulation type from it)
    Other,         // anything else: a tensor passed to a builtin or a helper, a scalar with a policy
  };
  std::optional<sema::Policy> policy_of(NodeId node) const;  // of the node's sema type; none for the default
  double loss_scale_of(sema::TypeId type) const;              // k of a tensor type's @loss_scale(k), else 0
  // Reports (lower.unsupported, at `where`) every part of the policy of
  // `where`'s type that the lowering does not implement for `use`: a policy
  // is applied or rejected, never silently dropped.
  void require_policy(NodeId where, PolicyUse use);
  // `v` converted to the element type of the place stored into at `target`
  // by the tensor's policy: @loss_scale multiplies, @rounding/@saturate/
  // @stochastic_round become the attributes (and random bits) of arith.truncf.
  Value* convert_for_store(Value* v, NodeId target, const Place& place);
  // An element read at `node`: the value as the policy gives it (@loss_scale
  // divides; the result is then f32 rather than the storage type).
  Value* apply_load_policy(Value* loaded, NodeId node);
  Value* random_bits_for(const sema::Policy& policy, const Place& place, NodeId where);
  // The seed of @stochastic_round as i64: its constant or the integer
  // parameter it names (lower.unsupported at `where` otherwise).
  Value* stochastic_seed(const sema::Policy& policy, NodeId where);
  // The truncf rounding mode and saturation of a policy.
  static RoundingPolicy rounding_policy(const sema::Policy& policy);
  // Rejects (lower.unsupported) a directed or stochastic rounding of a
  // value that cannot become f32 exactly first (f64, integers wider than
  // 16 bits): it would be rounded twice. `verb` says what the code does
  // ("storing", "casting"), `type_text` the policy's type.
  void check_rounding_source(ScalarType from, ScalarType to, const sema::Policy& policy, NodeId where,
                             std::string_view verb, const std::string& type_text);
  // The policy of a dtype argument (`ts.cast(x, fp8_e4m3 @saturate)`,
  // `dtype=RZ`) when it changes values (@rounding other than nearest even,
  // @saturate, @stochastic_round); @loss_scale, @precision_policy classes
  // and policies on f64 are lower.unsupported there.
  std::optional<sema::Policy> dtype_policy(NodeId dtype);
  std::string dtype_text(NodeId dtype) const;  // the dtype a dtype argument names, policies included
  // graph.cast of tensor `x` to `element` rounding by `policy` (the
  // attributes of arith.truncf; a stochastic rounding's seed as operand #1).
  Value* graph_cast_by_policy(Value* x, ScalarType element, const sema::Policy& policy, NodeId where, NodeId dtype);
  // @loss_scale in graph code (docs/language/graph.md, "Loss scaling"): a
  // tensor whose type carries it holds its values decoded to f32.
  // `ts.cast(x, T @loss_scale(k))`: encoded into T, then decoded.
  Value* graph_cast_to_loss_scale(Value* x, ScalarType element, NodeId where, NodeId dtype);
  // The storage of values `x`: f32, times k, rounded into `element` by the
  // policy's rounding (graph.cast {scale = k}); `seed` makes the seed of a
  // stochastic rounding.
  Value* encode_loss_scaled(Value* x, ScalarType element, const sema::Policy& policy, NodeId where,
                            const std::function<Value*()>& seed);
  // The values of storage `stored`: f32, divided by k (graph.cast {unscale = k}).
  Value* decode_loss_scaled(Value* stored, double k, NodeId where);
  // @precision_policy classes (docs/numerics.md, "Precision policy classes").
  // The class of parameter `i` of a kernel, when it is a tensor of one (its
  // scale is then the next argument of the func.func); else null.
  const sema::PolicyClass* kernel_policy_class(const sema::FunctionInfo& function, size_t i) const;
  // The class of a tensor type whose element type is a @precision_policy
  // class, else null.
  const sema::PolicyClass* tensor_policy_class(sema::TypeId type) const;
  // The class of parameter `i` of a kernel or a @jit entry point (the
  // signature's `NAME.scale` follows it), else null.
  const sema::PolicyClass* signature_policy_class(const sema::FunctionInfo& function, size_t i) const;
  // The values of a @precision_policy tensor in graph code (docs/language/
  // graph.md, "Precision policy classes"): its `storage` codes dequantized
  // with the per-tensor `scale` by the class's `dequantize`, element by
  // element (graph.cast %codes, %scale {dequantize = @Class.dequantize}).
  Value* graph_dequantize(Value* codes, Value* scale, const sema::PolicyClass& custom, NodeId where);
  // The class of the tensor that the element access `subscript` reads or writes.
  const sema::PolicyClass* element_policy_class(NodeId subscript);
  // The scale of the '@Class' kernel parameter that `subscript` indexes (its
  // hidden argument); `access` names the access for the message otherwise.
  Value* policy_scale(NodeId subscript, const sema::PolicyClass& custom, std::string_view access);
  // `code` (the storage value read at `subscript`) dequantized: a call of the
  // class's `dequantize` with the tensor's scale.
  Value* dequantize_element(Value* code, NodeId subscript, const sema::PolicyClass& custom);
  // `v` quantized for a store at `target`: a call of `quantize` with the scale.
  Value* quantize_element(Value* v, NodeId target, const sema::PolicyClass& custom);

  // The sema type of a node of the function being lowered (a @jit instance
  // has its own table).
  sema::TypeId node_type(NodeId node) const {
    if (element_tables_in_use_) {
      if (auto it = element_tables_in_use_->node_types.find(node.index); it != element_tables_in_use_->node_types.end())
        return it->second;
    }
    return (*node_types_)[node.index];
  }
  // The instance sema chose for a call of a @jit function; nullopt for any other call.
  std::optional<uint32_t> call_instance(NodeId call) const;
  // `lower_element(i)` for each of `count` elements that a loop or a
  // generator (`loop`) unrolls, with the tables sema recorded for element i
  // when it checked the body once per element (sema::ElementTables: a
  // tuple whose elements differ in type).
  // Each element binds `target` and the names its body binds first anew
  // (their types differ from element to element).
  void for_each_element(NodeId loop, NodeId target, size_t count, const std::function<void(size_t)>& lower_element);

  // --- the graph level (lower_graph.cpp, lower_graph_builtins.cpp) ---
  void lower_jit_instance(uint32_t instance);
  void lower_program();
  // Starts lowering `info`'s body into `func`'s entry block: no values,
  // dimensions or locals from the function before.
  void begin_body(const sema::FunctionInfo& info, Operation* func);
  bool inert_host_value(NodeId e) const;
  std::string source_position(NodeId node);
  Operation* jit_function_op(uint32_t instance);
  // The storage-passing entry point of a @jit instance with @loss_scale
  // parameters or results or @precision_policy parameters, calling `inner`
  // (lower_graph.cpp).
  void storage_wrapper(uint32_t index, Operation* inner, const std::vector<sema::TypeId>& parameters,
                          const std::vector<sema::TypeId>& results, std::vector<NamedAttribute> attributes);
  bool is_tensor_node(NodeId node) const;  // sema typed it as a whole tensor (graph code)
  // `v` with element type `element`: graph.cast for a tensor (a @loss_scale
  // tensor already holds its values, ir_type), a conversion for a scalar.
  Value* to_element(Value* v, ScalarType element, NodeId where);
  // A number as a 0-d tensor of `element` (a local sema promoted to one).
  Value* scalar_as_tensor(Value* v, ScalarType element, NodeId where);
  // The `value` of a graph.constant of zeros of `element` (false for bool).
  Attribute zero_attribute(ScalarType element) {
    return is_float(element) ? context_.float_attr(0.0)
           : element == ScalarType::Bool ? context_.bool_attr(false)
                                         : context_.int_attr(0);
  }
  Value* graph_op(OpKind kind, std::vector<Value*> operands, Type declared, std::vector<NamedAttribute> attributes,
                  NodeId where);
  Value* graph_elementwise(std::string_view op, std::vector<Value*> operands, NodeId where);
  void cut_whole_operands(std::vector<Value*>& operands, NodeId where);  // the program's whole operands of split results
  const char* graph_binary_function(BinaryOperator op, NodeId where);
  void require_non_negative_exponent(Value* exponent, NodeId node);
  void graph_aug_assign(NodeId statement, Value* current);
  Value* graph_binary(NodeId node);
  Value* graph_compare(NodeId node);
  Value* graph_unary(NodeId node);
  Value* graph_subscript(NodeId node);
  void bind_names_of_first_iteration(NodeId body, NodeId loop, uint32_t induction_variable);
  Value* graph_basic_indexing(NodeId node, Value* x, const std::vector<NodeId>& indices, bool keep_indexed);
  bool is_gather(const std::vector<NodeId>& indices);  // an integer tensor among a subscript's indices
  Value* graph_gather(NodeId node, Value* x, const std::vector<NodeId>& indices);
  // A gather's result with the new axes of the None among its indices.
  Value* gather_new_axes(NodeId node, Value* selected, size_t rank, const std::vector<NodeId>& indices);
  // `x[indices] = v` with an integer tensor among the indices (NumPy's
  // scatter): the updated x.
  Value* graph_scatter(NodeId target, Value* x, const std::vector<NodeId>& indices, Value* v, NodeId where);
  // What `x[indices]` selects (lower_gather.cpp): x's dimensions by role,
  // each index element's flat position F over the indexed dimensions but
  // the batch one (shape P; checked in range when it runs).
  struct GatherPlan {
    std::vector<int64_t> indexed, kept;  // x's dimensions with an index, kept whole
    int64_t batch = -1;                  // an indexed dimension selected by ts.arange over all of it
    Value* flat = nullptr;               // F; null when the batch is the only index (x itself)
    int64_t positions = 1;               // M, the positions F counts (kDynamic: positions_value)
    Value* positions_value = nullptr;
    std::vector<int64_t> order;  // x's dimensions: [batch], kept..., the other indexed
    size_t before = 0;           // kept dimensions before P in the result (NumPy's adjacent rule)
  };
  GatherPlan plan_gather(NodeId node, Value* x, const std::vector<NodeId>& indices);
  void check_every_element(Value* ok, NodeId node, const std::string& message);
  // The indices of `x[index]`: the elements of an unparenthesised tuple
  // (`x[i, j]`), else the index alone; and how many of them consume an
  // axis (all but `None` and `...`).
  std::vector<NodeId> subscript_indices(NodeId index) const;
  size_t axis_consuming_indices(const std::vector<NodeId>& indices) const;
  Value* checked_tensor_index(Value* x, size_t axis, NodeId i);
  NodeId module_constant_tuple(NodeId name) const;
  NodeId constant_tuple_of(NodeId name) const;
  NodeId constant_literal_of(NodeId name) const;
  std::string string_of(NodeId node) const;  // a string literal's text, or of the literal a name stands for
  NodeId literal_assigned_once(uint32_t identifier) const;
  // `x[...] = v` in graph code (lower_graph_update.cpp): x bound to the
  // updated tensor.
  bool is_graph_tensor_store(NodeId target) const;
  void graph_store(NodeId target, Value* v, NodeId where);
  Value* without_leading_ones(Value* v, size_t rank, NodeId where);
  Value* graph_dim(Value* tensor, int64_t axis);
  Value* tensor_size(Value* x, int64_t axis);  // the size of an axis as i32 (a constant where static)
  Bound lower_tensor_attribute(NodeId node);
  std::vector<Value*> dynamic_dims(Type result, const std::vector<Value*>& extents);
  Bound lower_graph_builtin(NodeId call, sema::BuiltinId builtin);
  // --- schedule directives (lower_schedule.cpp) ---
  Bound lower_schedule_directive(NodeId call);
  void apply_schedule_directives(Operation* func);
  // `with schedule.pipeline(...):` in a @jit function: records the block's
  // scope (applied with the function's directives); returns the block.
  NodeId open_schedule_scope(NodeId statement);
  // --- distribution (lower_dist.cpp) ---
  Bound lower_dist_builtin(NodeId call, sema::BuiltinId builtin);
  Attribute mesh_attribute(uint32_t mesh);
  Value* sum_gradient_terms(Value* gradient, uint32_t mesh, sema::TypeId argument, NodeId where);
  Attribute spec_attribute(const sema::ShardingInfo& sharding);
  std::vector<NamedAttribute> sharding_attributes(const sema::ShardingInfo& sharding);
  static std::string_view collective_op_name(sema::PartialOp op);
  Value* global_view(Value* v, NodeId node);
  Value* all_reduce_over(Value* v, uint32_t mesh, uint32_t axes, std::string_view op, NodeId where);
  Bound lower_jit_call(NodeId call);
  std::span<const NodeId> call_arguments_in_order(NodeId call) const;
  std::vector<Value*> jit_call_operands(NodeId call, Type function_type, size_t first_argument = 1);
  unsigned differentiated_input(NodeId call, uint32_t instance, uint32_t parameter);
  std::vector<unsigned> differentiated_inputs(uint32_t instance, uint32_t parameter);
  std::vector<Value*> jit_call_operands(std::span<const NodeId> arguments, Type function_type);
  // Autodiff (lower_autodiff.cpp): grad(f)(args) is graph.grad; a call of a
  // @custom_vjp function carries its rule.
  bool is_transform_node(NodeId node) const;
  Value* reshape_as(Value* v, Type want, Value* dims_of);
  static bool same_tensor_shape(Type a, Type b);
  Bound bound_from_flat(sema::TypeId type, const std::vector<Value*>& values, size_t& next);
  // The leaves of a tuple type, depth first (a type that is no tuple: itself).
  std::vector<sema::TypeId> flat_types(sema::TypeId type) const;
  Bound lower_transform_call(NodeId call);
  Bound lower_vjp(NodeId call);
  Bound lower_vjp_call(NodeId call, const sema::TransformInfo& transform);
  void attach_custom_rule(Operation* call_op, uint32_t instance);
  // Forward mode (lower_jvp.cpp): jvp(f, primals, tangents) is graph.jvp; a
  // call of a @custom_jvp function carries its rule.
  Bound lower_jvp(NodeId call);
  void attach_custom_jvp(Operation* call_op, uint32_t instance);
  Bound lower_kernel_launch(NodeId call);
  Value* grid_axis(NodeId node);
  // --- strings (lower_strings.cpp) ---
  bool is_string_node(NodeId node) const;  // sema typed it `str`
  // The text of a string expression: a literal, an f-string, a '%' format,
  // str(x), `+` and `*` of strings, a name bound to one.
  Text lower_text(NodeId e);
  // `a` as print shows it, added to `text`: `spec` is an f-string's format
  // spec or a '%' conversion's; `conversion` the '%' conversion ('s' for %s
  // and %r, `repr` for %r) or 0.
  void append_shown(Text& text, NodeId a, std::string_view spec = {}, char conversion = 0, bool repr = false);
  Value* formatted_number(Value* v, char conversion);
  // The text, where its values are integers the IR computes from constants
  // (an unrolled loop's variable): `f"step_{i}.npy"` in such a loop.
  std::optional<std::string> folded_text(const Text& text) const;
  // `{name = [pieces], formats = [specs]}` of graph.print and graph.save
  // (formats only where one is not "").
  std::vector<NamedAttribute> text_attributes(const Text& text, std::string_view name);
  // `a == b`, `a != b` of two strings: the result, which needs both texts
  // known when compiling (lower.unsupported otherwise); nullopt when the
  // comparison is not of strings.
  std::optional<bool> compare_texts(NodeId compare);
  Value* lower_print(NodeId call);
  Value* flatten(Value* x, NodeId where);
  std::vector<Value*> joined_parts(NodeId list);
  Value* lower_matmul(Value* a, Value* b, Type result, NodeId where);
  bool is_builtin_keyword_axis(NodeId call) const;
  ScalarType element_of(NodeId node);  // the element (or scalar) type sema gave a node's value
  Type graph_type(NodeId node);        // the IR type of a graph value at `node`

  Context& context_;
  const Ast& ast_;
  const ValueStores& values_;
  const sema::TypedModule& typed_;
  DiagnosticEngine& diags_;
  Builder builder_;
  OwningModule module_;
  std::unordered_map<uint32_t, Operation*> functions_;  // function index -> func.func
  std::unordered_map<std::string, Operation*> specializations_;  // function index + argument types -> func.func
  std::unordered_map<uint32_t, unsigned> specialization_count_;  // function index -> specialisations made
  // The program's top-level string variables (printed by print(name)).
  std::unordered_map<uint32_t, std::string> program_strings_;
  std::vector<std::pair<uint32_t, Operation*>> pending_bodies_;
  bool failed_ = false;
  const std::vector<sema::TypeId>* node_types_ = nullptr;
  // Lowering a @jit instance: the constants sema computed for it, which
  // known_constant reads before the module's; and its parameters that take a
  // constant argument (sema::JitInstance::constant_arguments).
  const std::unordered_map<uint32_t, sema::Constant>* instance_constants_ = nullptr;
  std::unordered_set<uint32_t> constant_parameters_;
  std::unordered_map<uint32_t, NodeId> literal_parameters_;  // parameter -> the tuple or string literal it was given
  // Lowering a @jit instance or the program: tensors are values (Graph IR),
  // not memrefs; calls of @jit functions reach the instance sema chose.
  bool graph_ = false;
  // Lowering the program: a sharded value's sema type has its global dims,
  // its IR value this rank's block.
  bool program_ = false;
  // ir_type of a @loss_scale tensor in graph code: its storage type (a @jit
  // entry's signature) rather than the f32 of its decoded values.
  bool storage_types_ = false;
  const std::unordered_map<uint32_t, uint32_t>* call_instances_ = nullptr;
  // Beside call_instances_: the same table's loops over tuples of mixed
  // types, and the element's tables read while one element is lowered.
  const sema::ElementTablesMap* element_tables_ = nullptr;
  const sema::ElementTables* element_tables_in_use_ = nullptr;
  std::unordered_map<uint32_t, Operation*> instance_functions_;  // instance -> func.func

  // The function being lowered.
  const sema::FunctionInfo* function_ = nullptr;
  Block* entry_ = nullptr;
  Operation* prologue_end_ = nullptr;  // the last operation of the entry prologue (dimension reads)
  std::unordered_map<uint32_t, Bound> env_;
  std::vector<uint32_t> locals_;  // every name the function assigns: never a module constant
  struct DimSource {
    Value* memref;
    int64_t axis;
  };
  // The schedule directives of the @jit instance being lowered, applied
  // when its body is done.
  std::vector<std::pair<NodeId, const sema::ScheduleDirective*>> schedule_directives_;
  // schedule.prefetch(x) calls and the value they return (x's).
  std::vector<std::pair<NodeId, Value*>> prefetches_;
  struct ScheduleScope {
    NodeId call;
    const sema::ScheduleDirective* directive;
    std::pair<uint32_t, uint32_t> begin, end;  // the block's source range (line, column)
  };
  std::vector<ScheduleScope> scopes_;
  // Hints a `with schedule.pipeline(...)` block set on its operations, which
  // the function's own directives do not override.
  std::set<std::pair<Operation*, std::string>> scoped_hints_;
  std::unordered_map<uint32_t, DimSource> dim_sources_;  // symbolic dimension -> where to read it
  std::unordered_map<uint32_t, Value*> dim_values_;
  std::unordered_map<uint32_t, Value*> policy_scales_;  // kernel tensor parameter -> its @precision_policy scale
  std::vector<Type> result_types_;
  std::vector<Value*> pending_tokens_;  // async copies since the last commit, in this block
  std::unordered_map<std::string, Value*> vector_buffers_;  // vector type -> its local buffer (per function)
};

using sema::assigned_names;
bool contains_kind(const Ast& ast, NodeId node, NodeKind kind);
// A `break` or `continue` of this loop level (not of a nested loop).
bool contains_loop_exit(const Ast& ast, NodeId node);
bool contains_break(const Ast& ast, NodeId node);

}  // namespace tessera::ir
