// Sema: turns the AST into a typed, checked program.
//
// `check_module` resolves names (locals, parameters, symbolic dimensions,
// module-level functions and constants, imports, the builtin table),
// computes a type for every expression (side table `node_types`, indexed by
// NodeId), infers each function's effect, and enforces the kernel rules
// (kernel-only builtins, no return values, barriers reachable by every lane,
// shared-memory budgets). Errors are diagnostics; the result is always
// complete, with the error type where something was wrong.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "frontend/ast/ast.h"
#include "support/diagnostics/diagnostics.h"
#include "support/schedule_hint.h"
#include "sema/builtins.h"
#include "sema/constant.h"
#include "sema/types.h"

namespace tessera::sema {

enum class FunctionKind : uint8_t { Kernel, Jit, Helper };
std::string_view function_kind_name(FunctionKind kind);

struct AutotuneParameter {
  IdentifierId name;
  std::vector<int64_t> candidates;
};

// One point of an autotune space (docs/autotuning.md): a value for each
// knob, in the order the space names them. `pruned` says why the point is
// out ("" while it is kept); sema fills it for a `where=` constraint that
// is false, the driver for a point that does not compile.
struct AutotunePoint {
  std::vector<int64_t> values;
  std::string pruned;
};

// Checking one point of a kernel's space: the kernel's knobs are exact
// constants with these values (check_module's `pin`).
struct AutotunePin {
  std::string kernel;
  std::vector<int64_t> values;
};

struct FunctionInfo {
  NodeId def;
  IdentifierId name;
  FunctionKind kind = FunctionKind::Helper;
  Effect effect = Effect::Pure;
  SourceRange effect_source;         // what raised the effect to its level
  std::vector<int64_t> group_shape;  // kernels: 1 to 3 axes; default {128}
  int grid_rank = 3;                 // kernels: axes of the grids it is launched on (grid_rank=N)
  std::optional<uint64_t> shared_budget;
  uint64_t shared_bytes = 0;  // static shared memory allocated by the body
  std::vector<AutotuneParameter> autotune;
  // Every point of the space, the cartesian product of the knobs' lists in
  // the order written (the first knob varies slowest); `where=` prunes some.
  std::vector<AutotunePoint> autotune_points;
  NodeId autotune_where;        // the `where=lambda ...: ...` constraint, if any
  std::vector<std::string> autotune_key;  // `key=("n", ...)`: what the tuner's key holds (empty: every tensor extent)
  bool autotune_pinned = false;
  SourceRange name_range;        // the kernel's name in `def NAME` (diagnostics about the whole kernel)  // checked at one point (AutotunePin): budgets are exact
  bool deterministic = false;
  bool autodiff = false;
  // `@jit(mesh=M)`: the mesh (TypeTable::mesh_info index) a function with
  // annotated parameters runs on, for its collectives; UINT32_MAX: none (an
  // instance then runs on its sharded arguments' mesh).
  uint32_t mesh = UINT32_MAX;
  std::vector<TypeId> parameter_types;
  TypeId return_type;
  // A method of a @precision_policy class (`quantize`, `dequantize`): checked
  // and lowered as a helper whose first source parameter, `self`, is not a
  // parameter (first_parameter = 1; parameter_types start after it).
  IdentifierId policy_class;
  uint32_t first_parameter = 0;
  // A helper that a kernel calls, directly or through other helpers: a
  // device function, checked under the kernel rules and compiled with the
  // kernel (docs/language/kernels.md, "Helper functions").
  bool device = false;
  // It (or a helper it calls) calls a kernel-only builtin: only device code
  // may call it. Where it first does, for a note.
  bool uses_kernel_builtins = false;
  SourceRange kernel_builtin;
};

// A `@precision_policy` class (docs/numerics.md, "Precision policy
// classes"): its dtypes and methods. A kernel tensor whose element type is
// the class stores `storage` codes; an element load is `dequantize(code,
// scale)` in `compute`, an element store `quantize(x, scale)`, with the
// tensor's per-tensor scale passed as a hidden scalar parameter after it.
struct PolicyClass {
  NodeId def;
  ScalarType storage = ScalarType::F32;
  ScalarType scale = ScalarType::F32;
  ScalarType compute = ScalarType::F32;
  ScalarType accumulate = ScalarType::F32;
  uint32_t quantize = UINT32_MAX;    // function index of the method, UINT32_MAX when absent
  uint32_t dequantize = UINT32_MAX;
  // quantize(self, x: compute, scale: scale) -> storage: the per-element form
  // that kernel stores use (the seed's quantize(self, x) -> (storage, scale)
  // computes its own scale: graph-level only).
  bool element_quantize = false;
};

// One specialisation of a @jit function: its parameters' types at a call
// (unannotated parameters take their types from each call, one instance per
// distinct signature; docs/language/graph.md). A function whose parameters
// are all annotated has one instance, checked with its declared types in the
// module's own tables. Each instance keeps its own typing of the function's
// nodes and which instance each of its calls of @jit functions reaches.
// A schedule directive (`schedule.tile((64, 128, 32))`, docs/language/graph.md,
// "Schedule directives"): a request about how the kernels generated from
// its @jit function are built. `hint` is the IR attribute it becomes on the
// function's graph operations (support/schedule_hints.def;
// schedule.use_shared_memory sets shared_memory and, with a padding,
// shared_padding); `values` its constant arguments. schedule.prefetch(x)
// is `prefetch`: the products that read x get async_copy (lowering).
struct ScheduleDirective {
  ScheduleHint hint = ScheduleHint::Tile;
  std::vector<int64_t> values;
  bool prefetch = false;
};

// A loop or a comprehension over a tuple whose elements differ in type
// (`for p, g in zip(params, grads)` of weights of several shapes) is
// unrolled, so sema checks its body once per element, with the target of
// that element's type (docs/language/graph.md, "Lists"). What the check of
// element i recorded for the body's nodes (every node of the body in
// `node_types`; the calls of @jit functions and the constants it found):
// the lowering reads these tables while it lowers element i.
struct ElementTables {
  std::unordered_map<uint32_t, TypeId> node_types;
  std::unordered_map<uint32_t, uint32_t> call_instances;
  std::unordered_map<uint32_t, Constant> constants;
};
// By the For statement's (a comprehension generator's) NodeId index: one
// ElementTables per element, in order.
using ElementTablesMap = std::unordered_map<uint32_t, std::vector<ElementTables>>;

struct JitInstance {
  uint32_t function = 0;         // index into TypedModule::functions
  FunctionInfo info;             // the function's info with this instance's types
  std::string symbol;            // its IR name: the function's name, or NAME.N for a second instance
  std::vector<TypeId> node_types;  // like TypedModule::node_types, for the function's nodes
  std::unordered_map<uint32_t, uint32_t> call_instances;  // Call NodeId index -> instance
  ElementTablesMap element_tables;                         // loops over tuples of mixed types (ElementTables)
  // Per parameter: the compile-time constant its argument was, for an
  // unannotated parameter given one (a literal, a module constant, a default
  // such as `axis=-1`) that the body never rebinds; nullopt elsewhere. The
  // instance is made for that value (one per distinct value, as for a type)
  // and its body reads the parameter as that constant, so `ts.sum(x,
  // axis=axis)` works (docs/language/graph.md, "Constant arguments").
  std::vector<std::optional<Constant>> constant_arguments;
  // Per parameter: the literal its argument stood for, on the same terms: a
  // tuple of integer constants (`axis=(0, 1)`) or a string (`kind="relu"`,
  // a name bound once to one); invalid elsewhere. A string parameter so
  // given is no argument of the instance's function: its text is known.
  std::vector<NodeId> literal_arguments;
  // The constants sema computed while checking this instance, by NodeId
  // index (TypedModule::constants holds the last instance's value of a node
  // whose value depends on a constant argument).
  std::unordered_map<uint32_t, Constant> constants;
};

struct TypedModule {
  explicit TypedModule(const IdentifierTable& identifiers) : types(identifiers) {}
  TypeStore types;
  std::vector<TypeId> node_types;  // indexed by NodeId; invalid for nodes without a type
  std::vector<FunctionInfo> functions;
  // all_gather and reduce_scatter calls: the tensor dimension they gather
  // or scatter along (by call NodeId index).
  std::unordered_map<uint32_t, size_t> collective_dims;
  // send/recv/sendrecv call -> the mesh of the instance it runs in.
  std::unordered_map<uint32_t, uint32_t> collective_meshes;
  // Program expressions whose partial value an operation needs reduced
  // (`ts.sum(x) + 1.0` of a sharded x): the expression's NodeId index -> its
  // partial sharding (a TypeStore sharding id); lowering all_reduces the
  // value over the partial axes right after computing it.
  std::unordered_map<uint32_t, uint32_t> program_reductions;
  // The value of every expression sema evaluated at compile time (module
  // constants, literals, arithmetic on them), by NodeId index. Expressions
  // that read locals may hold a value the local had before a later
  // reassignment (a loop condition read before the body): trust it only for
  // literals and names of module constants. The condition of an `if` or a
  // conditional expression of graph code fixed when compiling has one (its
  // value, or 1 or 0), whose truth says the branch taken: only that branch
  // was checked (docs/language/graph.md, "Conditions fixed when compiling").
  std::unordered_map<uint32_t, Constant> constants;
  // Module-level statements that only name something at compile time (a
  // dtype alias `T = bf16`): no code, so the program leaves them out.
  std::unordered_set<uint32_t> compile_time_statements;
  // Builtin calls (by the Call's NodeId index): the argument nodes bound to
  // the signature's parameters in order (positional, then by keyword), an
  // invalid id for an omitted optional one. Absent when the call had errors.
  std::unordered_map<uint32_t, std::vector<NodeId>> call_arguments;
  // Calls written as a tensor's method (`x.max(0)`, `x.sum(axis=1)`): the
  // tensor is argument 0 and a positional argument after it is the axis
  // (check_call.cpp).
  std::unordered_set<uint32_t> method_calls;
  // Schedule directives of @jit functions (by the Call's NodeId index).
  std::unordered_map<uint32_t, ScheduleDirective> schedule_directives;
  // @jit instances, in the order they were created; and for calls outside
  // any instance (the program, annotated functions), which instance each
  // call of a @jit function reaches.
  std::deque<JitInstance> instances;  // stable: an instance is checked while others are created
  std::unordered_map<uint32_t, uint32_t> call_instances;
  ElementTablesMap element_tables;  // the program's loops over tuples of mixed types (ElementTables)
  // Annotated @jit functions: their instance.
  std::unordered_map<uint32_t, uint32_t> function_instance;
  // Autodiff (docs/language/autodiff.md). @custom_vjp functions registered
  // with `f.defvjp(fwd, bwd)`: function index -> (fwd, bwd) function indices;
  // the registering calls (Call NodeId indices), which are no code; and for
  // each instance of a registered function, the instances of its rule
  // (fwd with the same parameter types, bwd with (saved, output gradient)).
  std::unordered_map<uint32_t, std::pair<uint32_t, uint32_t>> custom_vjps;
  std::unordered_set<uint32_t> defvjp_calls;
  std::unordered_map<uint32_t, std::pair<uint32_t, uint32_t>> custom_rule_instances;
  // @custom_jvp functions registered with `f.defjvp(rule)`: function index ->
  // the rule's function index; the registering calls; for each instance of a
  // registered function, the instance of its rule for ((params), (params)).
  std::unordered_map<uint32_t, uint32_t> custom_jvps;
  std::unordered_set<uint32_t> defjvp_calls;
  std::unordered_map<uint32_t, uint32_t> custom_jvp_instances;
  // grad / value_and_grad called by the program with sharded arguments (the
  // function runs on their mesh, each rank differentiating its copy), by
  // Call NodeId index: the mesh, and the factor of each rank's seed so that
  // the ranks' gradients, summed over the axes that do not split their
  // argument, are the gradients of the result's global value (NaN: a
  // result whose global value no layout describes). For a call of a vjp
  // function, one factor per cotangent.
  struct ProgramGradient {
    uint32_t mesh = 0;
    std::vector<double> scales;
  };
  std::unordered_map<uint32_t, ProgramGradient> program_gradients;
  // vjp(f, ...) made by the program with sharded primals, by f's instance:
  // the mesh, the program's (global) types of f's result and of the
  // primals.
  struct ProgramVjp {
    uint32_t mesh = 0;
    TypeId out;
    std::vector<TypeId> primals;
  };
  std::unordered_map<uint32_t, ProgramVjp> program_vjps;
  // @precision_policy classes, by the index of the class's name.
  std::unordered_map<uint32_t, PolicyClass> policy_classes;
  const PolicyClass* policy_class(IdentifierId name) const {
    auto it = policy_classes.find(name.index);
    return it == policy_classes.end() ? nullptr : &it->second;
  }
};

// The most lanes a group may have, and the most along its third axis
// (CUDA's limits; the CPU target keeps them so that a program runs on both).
inline constexpr uint64_t kMaxGroupLanes = 1024;
inline constexpr int64_t kMaxGroupAxis2 = 64;
// Default shared-memory limit of one group (the portable static limit).
inline constexpr uint64_t kDefaultSharedLimitBytes = 48 * 1024;
// Shared memory a bare `tshared.alloc` may use when the kernel names no budget.
inline constexpr uint64_t kDefaultSharedBudgetBytes = 48 * 1024;

// With `pin`, the named kernel's autotune knobs are the pin's values
// (exact constants: its budgets are checked), one point of its space.
std::unique_ptr<TypedModule> check_module(const Ast& ast, ValueStores& values, DiagnosticEngine& diags,
                                          const AutotunePin* pin = nullptr);

// `--emit=typed-ast`: the AST dump with every expression's type and every
// function's kind and effect.
std::string dump_typed_ast(const TypedModule& module, const Ast& ast, const SourceManager& sources,
                           const ValueStores& values);

// ts.split(x, [i0, i1, ...]) along an axis of `extent` (NumPy's indices):
// [start, stop) of each part, x[0:i0], x[i0:i1], ..., x[ik:] as Python
// slices (negative indices from the end, clamped; a part that would end
// before its start is empty). Sema types the parts, lowering slices them.
std::vector<std::pair<int64_t, int64_t>> split_bounds(const std::vector<int64_t>& indices, int64_t extent);

// What a call of a graph-code function with a `*args` or `**kwargs`
// parameter is, in a lower.unsupported message (sema reports it where it
// binds the call's arguments, lowering where sema binds none).
std::string variadic_call_phrase(std::string_view callee, std::string_view parameter, bool keywords);

}  // namespace tessera::sema
