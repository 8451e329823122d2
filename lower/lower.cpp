// Lowering: the module, functions, statements and structured control flow.
//
// Locals become SSA values directly (no memory slots and no mem2reg later):
// the lowering keeps an environment from names to values, and control flow
// merges by construction. An `if` yields the names either branch assigns
// that were defined before it; a loop carries the names its body assigns.
// An early `return` is made structured by moving the rest of the function
// into the branches of the `if` that returns (docs/ir/lowering.md).
#include <algorithm>
#include <functional>

#include "support/diagnostics/internal_error.h"
#include "ir/core/verifier.h"
#include "lower/lowering.h"

namespace tessera::ir {

using sema::FunctionKind;
using SemaKind = sema::TypeKind;

bool contains_loop_exit(const Ast& ast, NodeId node) {
  if (!node.valid()) return false;
  NodeKind k = ast.kind(node);
  if (k == NodeKind::Break || k == NodeKind::Continue) return true;
  // A nested loop's break is its own; functions have none.
  if (k == NodeKind::For || k == NodeKind::While || k == NodeKind::FunctionDef || k == NodeKind::Lambda) return false;
  for (NodeId child : ast.children(node))
    if (contains_loop_exit(ast, child)) return true;
  return false;
}

bool contains_break(const Ast& ast, NodeId node) {
  if (!node.valid()) return false;
  NodeKind k = ast.kind(node);
  if (k == NodeKind::Break) return true;
  if (k == NodeKind::For || k == NodeKind::While || k == NodeKind::FunctionDef || k == NodeKind::Lambda) return false;
  for (NodeId child : ast.children(node))
    if (contains_break(ast, child)) return true;
  return false;
}

bool contains_kind(const Ast& ast, NodeId node, NodeKind kind) {
  if (!node.valid()) return false;
  if (ast.kind(node) == kind) return true;
  if (ast.kind(node) == NodeKind::FunctionDef || ast.kind(node) == NodeKind::Lambda) return false;
  for (NodeId child : ast.children(node))
    if (contains_kind(ast, child, kind)) return true;
  return false;
}

Lowering::Lowering(Context& context, const Ast& ast, const ValueStores& values, const sema::TypedModule& typed,
                   DiagnosticEngine& diags)
    : context_(context), ast_(ast), values_(values), typed_(typed), diags_(diags), builder_(context),
      node_types_(&typed.node_types) {}

Location Lowering::location(NodeId node) {
  PresumedLocation p = diags_.sources().presumed(ast_.range(node).begin);
  return context_.file_location(p.file_name, p.line, p.column);
}

void Lowering::unsupported(NodeId node, std::string what) {
  diags_.emit<diag::LowerUnsupported>(ast_.range(node), std::move(what));
  throw LoweringFailed{};
}

std::optional<Type> Lowering::ir_type(sema::TypeId type) {
  if (!type.valid()) return std::nullopt;
  sema::TypeInfo info = typed_.types.info(type);
  switch (info.kind) {
    case SemaKind::Scalar: return context_.scalar_type(info.scalar);
    case SemaKind::UntypedInt: return context_.i32_type();
    case SemaKind::UntypedFloat: return context_.f32_type();
    case SemaKind::Tensor: {
      std::vector<int64_t> shape;
      for (sema::DimId d : typed_.types.dims(type)) shape.push_back(typed_.types.constant_value(d).value_or(kDynamic));
      // Graph code: a tensor is a value (its kernels' parameters are memrefs).
      // One whose type carries @loss_scale holds its values, decoded to f32
      // (docs/language/graph.md, "Loss scaling"); its storage (k times the
      // value in its dtype) is what a @jit entry's signature passes.
      // One of a @precision_policy class holds its dequantized `compute`
      // values; its codes (`storage`) are what the entry's signature passes.
      if (graph_ && info.space == sema::AddressSpace::Global) {
        if (storage_types_) return context_.tensor_type(shape, info.scalar);
        if (const sema::PolicyClass* custom = tensor_policy_class(type)) return context_.tensor_type(shape, custom->compute);
        return context_.tensor_type(shape, loss_scale_of(type) != 0.0 ? ScalarType::F32 : info.scalar);
      }
      switch (info.space) {
        case sema::AddressSpace::Global: return context_.memref_type(shape, info.scalar, MemorySpace::Global);
        case sema::AddressSpace::Shared: return context_.memref_type(shape, info.scalar, MemorySpace::Shared);
        case sema::AddressSpace::Local:
          for (int64_t d : shape)
            if (d == kDynamic) return std::nullopt;
          return context_.memref_type(shape, info.scalar, MemorySpace::Local);
        case sema::AddressSpace::Register:
          for (int64_t d : shape)
            if (d == kDynamic) return std::nullopt;
          return context_.tile_type(shape, info.scalar);
      }
      return std::nullopt;
    }
    default: return std::nullopt;
  }
}

Type Lowering::required_type(sema::TypeId type, NodeId where, std::string_view what) {
  if (auto t = ir_type(type)) return *t;
  unsupported(where, std::string(what) + " of type '" + typed_.types.to_string(type) + "'");
}

// The kernel's source-level signature, kept on its func.func so that every
// consumer of the IR (the AOT header, `tesserac run`'s argument checks, the
// runtime's launch checks) reads it from the IR, even IR that tesserac-opt
// wrote (docs/ir/tile.md, "Kernel signatures"):
//   arg_names = one name per IR argument; a @precision_policy tensor's scale
//               follows it as "NAME.scale"
//   arg_dims  = per argument, its dimensions: an integer (static), a string
//               (a symbolic dimension, shared by name), "?" (unknown or
//               derived from others); [] for scalars
//   mut_args  = the indices of the mut tensor arguments
//   arg_policies = per argument, its @precision_policy class or "" (only
//               when some argument has one)
//   shared_bytes = the static shared memory of its allocations
std::vector<NamedAttribute> Lowering::kernel_signature_attributes(const sema::FunctionInfo& info,
                                                                 const std::vector<bool>& no_argument) {
  NodeId parameters = ast_.child(info.def, 1);
  std::vector<Attribute> names, dims, policies;
  std::vector<int64_t> mut;
  bool any_policy = false;
  for (size_t i = 0; i < info.parameter_types.size(); ++i) {
    if (i < no_argument.size() && no_argument[i]) continue;
    NodeId parameter = ast_.children(parameters)[info.first_parameter + i];
    std::string name = name_of(ast_.node(parameter).payload);
    sema::TypeInfo type = typed_.types.info(info.parameter_types[i]);
    std::vector<Attribute> extents;
    if (type.kind == SemaKind::Tensor) {
      if (type.mut) mut.push_back(static_cast<int64_t>(names.size()));
      for (sema::DimId d : typed_.types.dims(info.parameter_types[i])) {
        sema::Dim dim = typed_.types.dim(d);
        extents.push_back(dim.kind == sema::DimKind::Constant ? context_.int_attr(dim.value)
                          : dim.kind == sema::DimKind::Symbol ? context_.string_attr(name_of(dim.symbol.index))
                                                              : context_.string_attr("?"));
      }
    }
    const sema::PolicyClass* custom = signature_policy_class(info, i);
    names.push_back(context_.string_attr(name));
    dims.push_back(context_.array_attr(extents));
    policies.push_back(context_.string_attr(custom ? name_of(typed_.types.policy(type.policy).custom.index) : ""));
    if (custom) {
      any_policy = true;
      names.push_back(context_.string_attr(name + ".scale"));
      dims.push_back(context_.array_attr({}));
      policies.push_back(context_.string_attr(""));
    }
  }
  std::vector<NamedAttribute> attributes{{"arg_names", context_.array_attr(names)},
                                         {"arg_dims", context_.array_attr(dims)}};
  if (!mut.empty()) attributes.push_back({"mut_args", context_.int_array_attr(mut)});
  // The static shared memory sema counted; the shared-layout pass replaces it
  // with the laid-out total.
  if (info.shared_bytes) attributes.push_back({"shared_bytes", context_.int_attr(static_cast<int64_t>(info.shared_bytes))});
  if (any_policy) attributes.push_back({"arg_policies", context_.array_attr(policies)});
  return attributes;
}

Operation* Lowering::function_op(uint32_t index, const std::vector<Type>& argument_types) {
  std::string key = std::to_string(index);
  for (Type t : argument_types) key += "|" + std::string(t ? t.str() : "");
  bool specialized = std::any_of(argument_types.begin(), argument_types.end(), [](Type t) { return bool(t); });
  if (!specialized) {
    if (auto it = functions_.find(index); it != functions_.end()) return it->second;
  } else if (auto it = specializations_.find(key); it != specializations_.end()) {
    return it->second;
  }
  const sema::FunctionInfo& info = typed_.functions[index];
  NodeId parameters = ast_.child(info.def, 1);
  std::vector<Type> inputs;
  for (size_t i = 0; i < info.parameter_types.size(); ++i) {
    NodeId parameter = ast_.children(parameters)[info.first_parameter + i];
    if (i < argument_types.size() && argument_types[i]) {
      inputs.push_back(argument_types[i]);
      continue;
    }
    inputs.push_back(required_type(info.parameter_types[i], parameter,
                                   "parameter '" + name_of(ast_.node(parameter).payload) + "'"));
    // A kernel tensor of a @precision_policy class: its per-tensor scale
    // follows it as a scalar parameter (docs/numerics.md, docs/abi.md).
    if (const sema::PolicyClass* custom = kernel_policy_class(info, i))
      inputs.push_back(context_.scalar_type(custom->scale));
  }
  std::vector<Type> results;
  if (info.return_type.valid()) {
    sema::TypeInfo r = typed_.types.info(info.return_type);
    if (r.kind == SemaKind::Tuple) {
      std::vector<sema::TypeId> elements(typed_.types.tuple_elements(info.return_type).begin(),
                                         typed_.types.tuple_elements(info.return_type).end());
      for (sema::TypeId e : elements) results.push_back(required_type(e, info.def, "a returned value"));
    } else if (r.kind != SemaKind::None) {
      results.push_back(required_type(info.return_type, info.def, "a returned value"));
    }
  }
  // The function as declared is `h`; its specialisations for other memory
  // `h.1`, `h.2`, ... in the order they are first called.
  std::string symbol = name_of(info.name.index);
  if (specialized) symbol += "." + std::to_string(++specialization_count_[index]);
  std::vector<NamedAttribute> attributes{{"sym_name", context_.string_attr(symbol)},
                                         {"function_type", context_.type_attr(context_.function_type(inputs, results))}};
  if (info.kind == FunctionKind::Kernel) {
    for (NamedAttribute& a : kernel_signature_attributes(info)) attributes.push_back(std::move(a));
    attributes.push_back({"kernel", context_.unit_attr()});
    attributes.push_back({"group_shape", context_.int_array_attr(info.group_shape)});
    if (info.grid_rank != 3) attributes.push_back({"grid_rank", context_.int_attr(info.grid_rank)});
    if (info.shared_budget)
      attributes.push_back({"shared_budget", context_.int_attr(static_cast<int64_t>(*info.shared_budget))});
  }
  Operation* func = Operation::create(OpKind::Func, location(info.def), {}, {}, std::move(attributes), 1);
  Block* entry = func->region(0).add_block();
  for (Type t : inputs) entry->add_argument(t);
  module_->region(0).front().push_back(func);
  if (specialized)
    specializations_[key] = func;
  else
    functions_[index] = func;
  pending_bodies_.push_back({index, func});
  return func;
}

OwningModule Lowering::run(const std::string& only_kernel, bool skip_autotuned) {
  module_ = create_module(location(ast_.root()));
  // Kernels in source order; the helpers they call are lowered as they are reached.
  for (uint32_t i = 0; i < typed_.functions.size(); ++i) {
    if (typed_.functions[i].kind != FunctionKind::Kernel) continue;
    if (!only_kernel.empty() && name_of(typed_.functions[i].name.index) != only_kernel) continue;
    if (skip_autotuned && !typed_.functions[i].autotune.empty() && !typed_.functions[i].autotune_pinned) continue;
    try {
      function_op(i);
    } catch (LoweringFailed&) {
      failed_ = true;
    }
  }
  size_t next_body = 0;
  auto lower_pending_bodies = [&] {
    for (; next_body < pending_bodies_.size(); ++next_body) {
      try {
        lower_function(pending_bodies_[next_body].first, pending_bodies_[next_body].second);
      } catch (LoweringFailed&) {
        failed_ = true;
      }
    }
  };
  lower_pending_bodies();
  // The graph level: every @jit instance sema made, then the program (not
  // when one kernel is asked for: `tesserac run --kernel` runs that alone).
  bool only_kernels = !only_kernel.empty();
  for (uint32_t i = 0; !only_kernels && i < typed_.instances.size(); ++i) {
    try {
      lower_jit_instance(i);
    } catch (LoweringFailed&) {
      failed_ = true;
    }
  }
  try {
    if (!only_kernels) lower_program();
  } catch (LoweringFailed&) {
    failed_ = true;
  }
  // Kernels first reached by a launch in graph code (an autotuned kernel
  // the loop above skipped: the driver replaces it by its default variant).
  lower_pending_bodies();
  if (failed_) return nullptr;
  // Helpers follow the kernels in the order they were first called.
  // Lowering must produce valid IR: anything else is a bug in tesserac.
  std::vector<VerifyError> errors = verify(module_.get());
  if (!errors.empty())
    internal_error("lower", "the lowered IR does not verify: '" + std::string(errors.front().op->name()) + "' " +
                                errors.front().message);
  return std::move(module_);
}

void Lowering::begin_body(const sema::FunctionInfo& info, Operation* func) {
  function_ = &info;
  entry_ = &func->region(0).front();
  prologue_end_ = nullptr;
  env_.clear();
  dim_sources_.clear();
  dim_values_.clear();
  locals_.clear();
}

void Lowering::lower_function(uint32_t index, Operation* func) {
  const sema::FunctionInfo& info = typed_.functions[index];
  begin_body(info, func);
  assigned_names(ast_, ast_.child(info.def, 3), locals_);
  pending_tokens_.clear();
  vector_buffers_.clear();
  Type fn = func->attr("function_type").type();
  result_types_.clear();
  for (size_t i = 0; i < fn.num_results(); ++i) result_types_.push_back(fn.result(i));

  // Parameters, and the symbolic dimensions their shapes bind (`x: f32[n]`
  // makes `n` readable as tile.dim of x).
  NodeId parameters = ast_.child(info.def, 1);
  policy_scales_.clear();
  unsigned next_argument = 0;
  for (size_t i = 0; i < info.parameter_types.size(); ++i) {
    NodeId parameter = ast_.children(parameters)[info.first_parameter + i];
    Value* arg = entry_->argument(next_argument++);
    env_[ast_.node(parameter).payload] = Bound{arg, {}};
    if (kernel_policy_class(info, i)) policy_scales_[ast_.node(parameter).payload] = entry_->argument(next_argument++);
    if (typed_.types.kind(info.parameter_types[i]) != SemaKind::Tensor) continue;
    auto dims = typed_.types.dims(info.parameter_types[i]);
    for (size_t axis = 0; axis < dims.size(); ++axis) {
      sema::Dim d = typed_.types.dim(dims[axis]);
      if (d.kind == sema::DimKind::Symbol && !dim_sources_.count(d.symbol.index))
        dim_sources_[d.symbol.index] = DimSource{arg, static_cast<int64_t>(axis)};
    }
  }
  builder_.set_insertion_point_to_end(entry_);
  builder_.set_location(location(info.def));
  lower_rest({Segment{ast_.child(info.def, 3), 0}}, false, nullptr);
  function_ = nullptr;
}

// Lowers the rest of the function, or of a loop body: the statements left in
// each segment of the continuation, innermost last. Every path ends with an
// exit: for a function a return (func.return at the top level, a yield of the
// returned values inside a branch of an `if` that returns); for a loop body
// (`loop` given) a yield of the loop's next values, after the body's last
// statement, a `continue` or a `break`.
void Lowering::lower_rest(std::vector<Segment> continuation, bool in_branch, const LoopExit* loop) {
  while (!continuation.empty()) {
    Segment& segment = continuation.back();
    bool is_suite = ast_.kind(segment.node) == NodeKind::Suite;
    size_t count = is_suite ? ast_.children(segment.node).size() : 1;
    if (segment.next >= count) {
      continuation.pop_back();
      continue;
    }
    if (segment.next == 0 && segment.item) {
      if (ast_.kind(segment.target) == NodeKind::Name) env_[ast_.node(segment.target).payload] = *segment.item;
      else assign(segment.target, *segment.item, segment.target);
    }
    NodeId statement = is_suite ? ast_.children(segment.node)[segment.next] : segment.node;
    ++segment.next;
    builder_.set_location(location(statement));
    NodeKind kind = ast_.kind(statement);
    if (!loop && kind == NodeKind::Return) return emit_return(ast_.child(statement, 0), statement, in_branch);
    if (loop && (kind == NodeKind::Break || kind == NodeKind::Continue))
      return emit_loop_exit(*loop, kind == NodeKind::Continue);
    if (kind == NodeKind::With) {  // its block runs next, in this continuation (a `return` in it included)
      continuation.push_back(Segment{open_schedule_scope(statement), 0});
      continue;
    }
    if (kind == NodeKind::If &&
        (loop ? contains_loop_exit(ast_, statement) : contains_kind(ast_, statement, NodeKind::Return))) {
      // A condition known when compiling: the branch taken runs next, in
      // this continuation (a `return` in it ends the path).
      Value* condition = nullptr;
      if (std::optional<NodeId> taken = known_branch(statement, &condition)) {
        if (taken->valid()) continuation.push_back(Segment{*taken, 0});
        continue;
      }
      lower_exiting_if(statement, condition, continuation, in_branch, loop);
      return;
    }
    if (kind == NodeKind::For && !loop && graph_ && contains_kind(ast_, ast_.child(statement, 2), NodeKind::Return)) {
      if (!unroll_returning_loop(statement, continuation))
        unsupported(statement, "'return' inside a loop whose trip count is known only at run time");
      continue;
    }
    lower_statement(statement);
  }
  if (loop) return emit_loop_exit(*loop, true);
  emit_return(NodeId{}, function_->def, in_branch);
}

void Lowering::emit_loop_exit(const LoopExit& loop, bool keep_running) {
  std::vector<Value*> values;
  if (loop.iv) values.push_back(emit(OpKind::AddI, {loop.iv, loop.step}, loop.iv->type()));
  if (loop.flag) values.push_back(builder_.constant_bool(keep_running));
  for (uint32_t name : loop.carried) values.push_back(convert(env_.at(name).value, loop.types[values.size()]));
  builder_.create(OpKind::Yield, std::span<Value* const>(values), std::span<const Type>{});
}

void Lowering::emit_return(NodeId value, NodeId where, bool in_branch) {
  std::vector<Value*> values;
  if (value.valid()) {
    bool tuple_typed = graph_ && node_type(value).valid() && typed_.types.kind(node_type(value)) == sema::TypeKind::Tuple;
    // A 1-tuple (`return (y,)`, grad(f, argnums=(1,))(...)) is one result too.
    bool one_tuple = tuple_typed ? typed_.types.tuple_elements(node_type(value)).size() == 1
                                 : ast_.kind(value) == NodeKind::Tuple && ast_.children(value).size() == 1;
    if ((ast_.kind(value) == NodeKind::Tuple || tuple_typed) && (result_types_.size() != 1 || one_tuple)) {
      // A tuple inside the tuple (a custom rule's `return y, (x, y)`) or a
      // value that is a tuple (a name bound to one, grad(f, argnums=(0, 1))(...)):
      // its elements, flattened.
      std::function<void(const Bound&)> flatten_bound = [&](const Bound& b) {
        if (b.is_value()) return values.push_back(b.value);
        if (!b.nested.empty()) {
          for (const Bound& part : b.nested) flatten_bound(part);
          return;
        }
        values.insert(values.end(), b.elements.begin(), b.elements.end());
      };
      std::function<void(NodeId)> flatten = [&](NodeId element) {
        if (ast_.kind(element) == NodeKind::Tuple) {
          for (NodeId e : ast_.children(element)) flatten(e);
          return;
        }
        if (graph_ && node_type(element).valid() && typed_.types.kind(node_type(element)) == sema::TypeKind::Tuple)
          return flatten_bound(lower(element));
        values.push_back(this->value(element));
      };
      flatten(value);
    } else {
      values.push_back(this->value(value, result_types_.empty() ? Type{} : result_types_[0]));
    }
  }
  if (values.size() != result_types_.size()) {
    if (result_types_.empty()) unsupported(where, "returning a value from a function without a result type");
    unsupported(where, "a path that ends without returning a value");
  }
  for (size_t i = 0; i < values.size(); ++i) {
    Type have = values[i]->type(), want = result_types_[i];
    // A result annotation with a symbolic size the value knows
    // (`-> Tensor["N", f32]` of an `f32[3]`): the declared view of it. A
    // constant size in the annotation where the value's is known only at
    // run time would need a check of its own.
    if (graph_ && have != want && same_tensor_shape(have, want)) {
      for (size_t d = 0; d < want.rank(); ++d)
        if (want.shape()[d] != kDynamic && have.shape()[d] == kDynamic)
          unsupported(value.valid() ? value : where,
                      "a result annotation with a constant size where the value's size is known only at run time");
      values[i] = reshape_as(values[i], want, values[i]);
    }
    values[i] = convert(values[i], want);
  }
  builder_.create(in_branch ? OpKind::Yield : OpKind::Return, std::span<Value* const>(values), std::span<const Type>{});
}

// `if c: ...return...` (or `break`/`continue` in a loop body) followed by
// more statements: both branches get the rest of the function (or body), so
// that the `if` itself ends it; its results are what every path exits with.
void Lowering::lower_exiting_if(NodeId statement, Value* condition, const std::vector<Segment>& continuation,
                                bool in_branch, const LoopExit* loop) {
  NodeId then_suite = ast_.child(statement, 1), else_node = ast_.child(statement, 2);
  Operation* op = builder_.create(OpKind::If, {condition}, {}, {}, 2);
  for (Type t : loop ? loop->types : result_types_) op->append_result(t);
  auto saved_env = env_;
  auto saved_tokens = pending_tokens_;
  for (unsigned r = 0; r < 2; ++r) {
    env_ = saved_env;
    pending_tokens_.clear();
    Block* block = op->region(r).add_block();
    builder_.set_insertion_point_to_end(block);
    std::vector<Segment> branch = continuation;
    NodeId body = r == 0 ? then_suite : else_node;
    if (body.valid()) branch.push_back(Segment{body, 0});
    lower_rest(std::move(branch), true, loop);
  }
  env_ = saved_env;
  pending_tokens_ = saved_tokens;
  builder_.set_insertion_point_to_end(op->block());
  builder_.set_location(location(statement));
  std::vector<Value*> results = op->results();
  builder_.create(in_branch || loop ? OpKind::Yield : OpKind::Return, std::span<Value* const>(results),
                  std::span<const Type>{});
}

void Lowering::lower_suite(NodeId suite) {
  for (NodeId statement : ast_.children(suite)) {
    builder_.set_location(location(statement));
    lower_statement(statement);
  }
}

void Lowering::lower_statement(NodeId statement) {
  auto children = ast_.children(statement);
  switch (ast_.kind(statement)) {
    case NodeKind::Pass: return;
    case NodeKind::ExprStmt: {
      NodeId e = children[0];
      if (ast_.kind(e) == NodeKind::StringLiteral) return;  // a docstring
      lower(e);
      return;
    }
    case NodeKind::Assign: lower_assign(statement); return;
    case NodeKind::AugAssign: lower_aug_assign(statement); return;
    case NodeKind::AnnAssign: {
      if (!children[2].valid()) return;  // a declaration only
      Type t = required_type(node_type(children[0]), children[0], "a variable");
      assign(children[0], Bound{value(children[2], t), {}}, statement);
      return;
    }
    case NodeKind::If: lower_if(statement); return;
    case NodeKind::For: lower_for(statement); return;
    case NodeKind::While: lower_while(statement); return;
    case NodeKind::Return: unsupported(statement, "'return' inside a loop");
    case NodeKind::Break: unsupported(statement, "'break'");
    case NodeKind::Continue: unsupported(statement, "'continue'");
    case NodeKind::With: lower_suite(open_schedule_scope(statement)); return;
    case NodeKind::Assert:
      if (!graph_) unsupported(statement, "'assert' in a kernel");
      lower_assert(statement);
      return;
    case NodeKind::FunctionDef: unsupported(statement, "a nested function");
    case NodeKind::ClassDef: unsupported(statement, "a class definition");
    case NodeKind::Import:
    case NodeKind::ImportFrom: unsupported(statement, "an import");
    default: unsupported(statement, "the statement '" + std::string(node_kind_name(ast_.kind(statement))) + "'");
  }
}

// Two tensor types of one element type and rank whose sizes may be the
// same: each pair equal or one of them known only at run time.
bool Lowering::same_tensor_shape(Type a, Type b) {
  if (!a.is(TypeKind::Tensor) || !b.is(TypeKind::Tensor) || a.scalar() != b.scalar() || a.rank() != b.rank())
    return false;
  for (size_t d = 0; d < a.rank(); ++d)
    if (a.shape()[d] != b.shape()[d] && a.shape()[d] != kDynamic && b.shape()[d] != kDynamic) return false;
  return true;
}

void Lowering::assign(NodeId target, Bound bound, NodeId where) {
  switch (ast_.kind(target)) {
    case NodeKind::Name: {
      uint32_t name = ast_.node(target).payload;
      require_policy(target, PolicyUse::Other);  // a local declared with a policy
      if (bound.is_value()) {
        // A local keeps the type sema gave it: later values convert to it.
        if (auto it = env_.find(name); it != env_.end() && it->second.is_value()) {
          Type held = it->second.value->type();
          // A tensor whose sizes sema knows as the held ones (a static size
          // where the value has `?`, as a @jit result of symbolic shape):
          // the held view of it.
          if (held != bound.value->type() && same_tensor_shape(held, bound.value->type()))
            bound.value = reshape_as(bound.value, held, bound.value);
          // A 0-d tensor local sema widened (`s = 0.0`, then an f64 sum):
          // narrower 0-d values convert to it.
          if (graph_ && held.is(TypeKind::Tensor) && held.rank() == 0 && bound.value->type().is(TypeKind::Tensor) &&
              bound.value->type().rank() == 0 && held.scalar() != bound.value->type().scalar())
            bound.value = to_element(bound.value, held.scalar(), where);
          // A sharded program value bound again in straight-line code
          // (`x = dist.tensor(data=x, ...)`): sema gave the name the new
          // value's layout (it refuses a change of layout in a loop or
          // branch), so the name now holds this rank's block of it.
          bool relaid = held != bound.value->type() && held.is(TypeKind::Tensor) &&
                        bound.value->type().is(TypeKind::Tensor) && typed_.types.sharding(node_type(target));
          // A graph-code name sema bound anew with the value's type (Python
          // rebinding in straight-line code: `x = x.reshape(-1)`, `h = h @
          // W` to another width): the new value.
          if (!relaid && graph_ && held != bound.value->type()) {
            std::optional<Type> now = ir_type(node_type(target));
            relaid = now && now->is(TypeKind::Tensor) && bound.value->type().is(TypeKind::Tensor) &&
                     (*now == bound.value->type() || same_tensor_shape(*now, bound.value->type()));
          }
          if (!relaid) {
            if (held != bound.value->type() && !(held.is_scalar() && bound.value->type().is_scalar()) &&
                !(held.is(TypeKind::Tile) && bound.value->type().is_scalar()))
              unsupported(where, "giving '" + name_of(name) + "' (of type '" +
                                     typed_.types.to_string(node_type(target)) +
                                     "') a value of another shape, memory or layout than the one it holds");
            bound.value = convert(bound.value, held);
          }
        }
        else if (auto t = ir_type(node_type(target)); t && t->is_scalar())
          bound.value = convert(bound.value, *t);
        else if (t && graph_ && t->is(TypeKind::Tensor) && t->rank() == 0 && bound.value->type().is_scalar())
          bound.value = scalar_as_tensor(bound.value, t->scalar(), where);  // `s = 0.0` made a 0-d tensor by sema
      }
      env_[name] = std::move(bound);
      return;
    }
    case NodeKind::Tuple:
    case NodeKind::List: {
      auto targets = ast_.children(target);
      if (!bound.nested.empty() && bound.nested.size() == targets.size()) {
        for (size_t i = 0; i < targets.size(); ++i) assign(targets[i], bound.nested[i], where);
        return;
      }
      // `a, b, c = x` of a tensor: its rows (sema checked their count).
      if (bound.is_value() && graph_ && bound.value->type().is(TypeKind::Tensor) && bound.value->type().rank() > 0)
        bound = tensor_rows(bound.value, where);
      if (bound.is_value() || bound.elements.size() != targets.size())
        unsupported(where, "unpacking a value that is not a tuple of the same length");
      for (size_t i = 0; i < targets.size(); ++i) assign(targets[i], Bound{bound.elements[i], {}}, where);
      return;
    }
    case NodeKind::Subscript:
      if (!bound.is_value()) unsupported(where, "storing a list into a tensor");
      if (is_graph_tensor_store(target)) return graph_store(target, bound.value, where);  // a functional update
      emit_store(target, bound.value);
      return;
    default: unsupported(target, "assigning to this expression");
  }
}

void Lowering::lower_assign(NodeId statement) {
  auto children = ast_.children(statement);
  NodeId value_node = children.back();
  Bound bound;
  sema::TypeId value_type = node_type(value_node);
  if (value_type.valid() && typed_.types.kind(value_type) == SemaKind::Builtin &&
      static_cast<sema::BuiltinId>(typed_.types.info(value_type).payload) == sema::BuiltinId::TileAllocShared) {
    // `smem = tshared.alloc`: the whole budget, typed by its first use (sema
    // gave the target its final type).
    std::optional<Type> t = typed_type(children[0]);
    if (!t || !t->is(TypeKind::MemRef) || !t->has_static_shape())
      unsupported(value_node, "a bare 'tshared.alloc' that no use gives a type");
    Value* m = builder_.create(OpKind::AllocShared, {}, {*t}, {{"alignment", context_.int_attr(16)}})->result();
    for (size_t i = 0; i + 1 < children.size(); ++i) assign(children[i], Bound{m, {}}, statement);
    return;
  }
  // `t[a:b] = tensor`: copied element by element (lower_slices.cpp); a
  // register tile is stored by tile.store_tile below.
  if (children.size() == 2 && ast_.kind(children[0]) == NodeKind::Subscript && !is_graph_tensor_store(children[0])) {
    sema::TypeId target_type = typed_.node_types[children[0].index];
    sema::TypeId source_type = typed_.node_types[value_node.index];
    if (target_type.valid() && typed_.types.kind(target_type) == SemaKind::Tensor && source_type.valid() &&
        typed_.types.kind(source_type) == SemaKind::Tensor &&
        !(typed_.types.info(source_type).space == sema::AddressSpace::Register &&
          typed_.types.dims(source_type).size() == 2)) {
      store_slice(children[0], value_node, nullptr);
      return;
    }
  }
  // `grad_fn = ts.grad(f)`: a function made at compile time, only called.
  if (is_transform_node(value_node)) return;
  if (ast_.kind(value_node) == NodeKind::Tuple) {
    // All values first: `a, b = b, a` swaps. With a tuple inside (`q =
    // ((3.0, 1.0), x)`), every element in `nested`, as lower() makes it.
    std::vector<Bound> parts;
    for (NodeId element : ast_.children(value_node)) parts.push_back(lower(element));
    if (std::ranges::all_of(parts, [](const Bound& b) { return b.is_value(); }))
      for (const Bound& b : parts) bound.elements.push_back(b.value);
    else
      bound.nested = std::move(parts);
  } else {
    std::optional<Type> want;
    if (children.size() == 2 && ast_.kind(children[0]) == NodeKind::Name)
      if (auto it = env_.find(ast_.node(children[0]).payload); it != env_.end() && it->second.is_value())
        want = it->second.value->type();
    if (!want && children.size() == 2) want = typed_type(children[0]);
    bound = lower(value_node, want && want->is_scalar() ? *want : Type{});
  }
  for (size_t i = 0; i + 1 < children.size(); ++i) assign(children[i], bound, statement);
}

void Lowering::lower_aug_assign(NodeId statement) {
  NodeId target = ast_.child(statement, 0), value_node = ast_.child(statement, 1);
  auto op = static_cast<BinaryOperator>(ast_.node(statement).op);
  if (ast_.kind(target) == NodeKind::Name && graph_ && is_string_node(target)) {
    // `s += "x"`, `s *= 2`: the string built again (lower_strings.cpp).
    Text text = lower_text(target);
    if (op == BinaryOperator::Add) {
      text.append(lower_text(value_node));
    } else {
      std::optional<int64_t> count = constant_of(value_node);
      if (!count) count = folded_int(value(value_node));
      if (op != BinaryOperator::Mul || !count) unsupported(statement, "this augmented assignment to a string");
      Text once = text;
      text = Text{};
      for (int64_t i = 0; i < *count; ++i) text.append(once);
    }
    env_[ast_.node(target).payload] = Bound{nullptr, {}, {}, nullptr, std::make_shared<const Text>(std::move(text))};
    return;
  }
  if (ast_.kind(target) == NodeKind::Name) {
    Value* current = lower_name(target, {});
    if (graph_ && current->type().is(TypeKind::Tensor)) {
      graph_aug_assign(statement, current);
      return;
    }
    // `acc += tile.mma(a, b)`: accumulate in the MMA itself.
    if (op == BinaryOperator::Add && current->type().is(TypeKind::Tile) && ast_.kind(value_node) == NodeKind::Call) {
      Bound rhs = lower(value_node);
      Operation* mma = rhs.is_value() ? rhs.value->defining_op() : nullptr;
      if (mma && mma->is(OpKind::Mma) && mma->num_operands() == 2 && mma->result()->type() == current->type() &&
          !rhs.value->has_uses()) {
        mma->append_operand(current);
        env_[ast_.node(target).payload] = Bound{mma->result(), {}};
        return;
      }
      Value* sum = emit_binary(op, current, convert(rhs.value, current->type()), statement);
      env_[ast_.node(target).payload] = Bound{sum, {}};
      return;
    }
    Type t = current->type();
    Value* rhs = value(value_node, t);
    Value* result = emit_binary(op, current, rhs, statement);
    env_[ast_.node(target).payload] = Bound{convert(result, t), {}};
    return;
  }
  if (is_graph_tensor_store(target)) {
    // x[i] += v in graph code: x[i] + v (in x's element type, as `x += v`)
    // assigned into x[i].
    Value* current = graph_subscript(target);
    ScalarType element = current->type().scalar();
    Value* v = to_element(value(value_node, is_tensor_node(value_node) ? Type{} : context_.scalar_type(element)),
                          element, value_node);
    graph_store(target, graph_elementwise(graph_binary_function(op, statement), {current, v}, statement), statement);
    return;
  }
  if (ast_.kind(target) == NodeKind::Subscript) {
    // t[i] += v: the place is evaluated once.
    Place place = place_of(target, true);
    if (place.has_slice) unsupported(target, "augmented assignment to a tensor slice");
    require_policy(target, PolicyUse::ElementStore);
    std::vector<Value*> operands{place.memref};
    operands.insert(operands.end(), place.indices.begin(), place.indices.end());
    Type element = context_.scalar_type(place.memref->type().scalar());
    Value* loaded =
        builder_.create(OpKind::Load, std::span<Value* const>(operands), std::span<const Type>(&element, 1))->result();
    const sema::PolicyClass* custom = element_policy_class(target);
    Value* current = custom ? dequantize_element(loaded, target, *custom) : apply_load_policy(loaded, target);
    std::optional<Type> compute = typed_type(target);
    Type work = compute ? *compute : element;
    // A storage float computes in its accumulation type (sema's compute_type).
    if (work.is_scalar() && sema::is_storage_float(work.scalar())) {
      std::optional<sema::Policy> policy = policy_of(target);
      work = context_.scalar_type(policy && policy->accum ? *policy->accum : sema::ScalarType::F32);
    }
    Value* rhs = value(value_node, work);
    Value* result = emit_binary(op, convert(current, work), convert(rhs, work), statement);
    std::vector<Value*> store{custom ? quantize_element(result, target, *custom) : convert_for_store(result, target, place),
                              place.memref};
    store.insert(store.end(), place.indices.begin(), place.indices.end());
    builder_.create(OpKind::Store, std::span<Value* const>(store), std::span<const Type>{});
    return;
  }
  unsupported(target, "augmented assignment to this expression");
}

// The names a construct's bodies assign that hold a value before it: they
// become results (if) or loop-carried values (for, while).
std::vector<uint32_t> Lowering::carried_names(std::span<const NodeId> bodies, std::string_view construct,
                                              NodeId where) {
  std::vector<uint32_t> assigned, carried;
  for (NodeId body : bodies) assigned_names(ast_, body, assigned);
  // Graph code: `x[i] = v` binds x to the updated tensor (lower_graph_update.cpp).
  std::function<void(NodeId)> updated = [&](NodeId n) {
    if (!n.valid() || ast_.kind(n) == NodeKind::FunctionDef || ast_.kind(n) == NodeKind::ClassDef) return;
    if (ast_.kind(n) == NodeKind::Assign || ast_.kind(n) == NodeKind::AugAssign) {
      auto children = ast_.children(n);
      for (size_t i = 0; i < (ast_.kind(n) == NodeKind::Assign ? children.size() - 1 : 1); ++i) {
        NodeId object = is_graph_tensor_store(children[i]) ? ast_.child(children[i], 0) : NodeId{};
        if (object.valid() && ast_.kind(object) == NodeKind::Name &&
            std::find(assigned.begin(), assigned.end(), ast_.node(object).payload) == assigned.end())
          assigned.push_back(ast_.node(object).payload);
      }
      return;
    }
    for (NodeId child : ast_.children(n)) updated(child);
  };
  if (graph_)
    for (NodeId body : bodies) updated(body);
  for (uint32_t name : assigned) {
    auto it = env_.find(name);
    if (it == env_.end()) continue;
    if (!it->second.is_value())
      unsupported(where, std::string(it->second.text ? "reassigning the string '" : "reassigning the list '") +
                             name_of(name) + "' inside " + std::string(construct));
    carried.push_back(name);
  }
  return carried;
}

// Python keeps the names a loop's body binds after the loop, when it ran.
// A loop of graph code whose trip count is known to be at least one when
// compiling, with no break, continue or return in its body: a name its first
// iteration binds for certain (on every path), not bound before the loop,
// and read after it, starts as a placeholder of its type (zeros) that the
// first iteration replaces, so that it is carried out. Names with shapes
// known only at run time stay refused where they are read.
void Lowering::bind_names_of_first_iteration(NodeId body, NodeId loop, uint32_t induction_variable) {
  if (contains_break(ast_, body) || contains_kind(ast_, body, NodeKind::Continue) ||
      contains_kind(ast_, body, NodeKind::Return))
    return;
  std::vector<uint32_t> bound;
  if (!sema::definitely_assigned_names(ast_, body, bound)) return;
  // The candidates: each read after the loop (any later use of the name: an
  // over-approximation that costs one carried value), and its type where
  // the body binds it; one pass over the names of the tree.
  struct Candidate {
    bool read_after = false;
    std::optional<Type> type;
  };
  std::unordered_map<uint32_t, Candidate> candidates;
  for (uint32_t name : bound)
    if (name != induction_variable && !env_.count(name)) candidates[name];
  if (candidates.empty()) return;
  const SourceRange inside = ast_.range(body);
  const auto after = ast_.range(loop).end;
  for (uint32_t n = 0; n < ast_.size(); ++n) {
    NodeId node{n};
    if (ast_.kind(node) != NodeKind::Name) continue;
    auto it = candidates.find(ast_.node(node).payload);
    if (it == candidates.end()) continue;
    SourceRange r = ast_.range(node);
    if (r.begin >= after) it->second.read_after = true;
    else if (!it->second.type && r.begin >= inside.begin && r.end <= inside.end) it->second.type = typed_type(node);
  }
  for (uint32_t name : bound) {  // in order of binding: the placeholders' order is deterministic
    auto it = candidates.find(name);
    if (it == candidates.end() || !it->second.read_after || !it->second.type || !*it->second.type) continue;
    const Type type = *it->second.type;
    Value* placeholder = nullptr;
    if (type.is(TypeKind::Tensor)) {
      if (std::ranges::any_of(type.shape(), [](int64_t d) { return d == kDynamic; })) continue;
      placeholder = graph_op(OpKind::GraphConstant, {}, type, {{"value", zero_attribute(type.scalar())}}, loop);
    } else if (type.is_scalar()) {
      placeholder = is_float(type.scalar()) ? builder_.constant_float(0.0, type)
                    : type.scalar() == ScalarType::Bool ? builder_.constant_bool(false)
                                                        : builder_.constant_int(0, type);
    } else {
      continue;
    }
    env_[name] = Bound{placeholder, {}};
  }
}

// Leaves a branch or loop body: names it defined that did not exist before
// are out of scope now (sema's definite assignment rejects reading one).
void Lowering::restore_env(std::unordered_map<uint32_t, Bound> saved) { env_ = std::move(saved); }

// An `if` condition of constants: constant_of, or one comparison of two
// (`SAVE == 1`, which sema types but does not compute; `MODE == "train"`).
std::optional<int64_t> Lowering::constant_condition(NodeId condition) {
  if (ast_.kind(condition) != NodeKind::Compare) return constant_of(condition);
  if (graph_ && is_string_node(ast_.child(condition, 0))) {
    std::optional<bool> equal = compare_texts(condition);
    if (equal) return *equal ? 1 : 0;
  }
  if (ast_.node(condition).flags & 1) return std::nullopt;  // a chain
  std::optional<int64_t> a = constant_of(ast_.child(condition, 0)), b = constant_of(ast_.child(condition, 1));
  if (!a || !b) return std::nullopt;
  switch (static_cast<CompareOperator>(ast_.node(condition).op)) {
    case CompareOperator::Lt: return *a < *b;
    case CompareOperator::Gt: return *a > *b;
    case CompareOperator::Le: return *a <= *b;
    case CompareOperator::Ge: return *a >= *b;
    case CompareOperator::Eq: return *a == *b;
    case CompareOperator::Ne: return *a != *b;
    case CompareOperator::In:
    case CompareOperator::NotIn:
    case CompareOperator::Is:
    case CompareOperator::IsNot: return std::nullopt;
  }
  return std::nullopt;
}

// A condition of graph code sema fixed when compiling (the branch taken,
// the only one it checked; `x is None`; an `and`/`or` it short-circuited):
// the truth of its exact constant, read from this instance's own table (the
// module's holds the last instance's values).
std::optional<bool> Lowering::sema_decision(NodeId condition) const {
  const sema::Constant* decision = nullptr;
  if (element_tables_in_use_ && element_tables_in_use_->node_types.count(condition.index)) {
    auto it = element_tables_in_use_->constants.find(condition.index);
    if (it != element_tables_in_use_->constants.end()) decision = &it->second;
  } else {
    const auto& table = instance_constants_ ? *instance_constants_ : typed_.constants;
    auto it = table.find(condition.index);
    if (it != table.end()) decision = &it->second;
  }
  if (!decision || decision->from_local) return std::nullopt;
  return decision->as_double() != 0.0;
}

std::optional<NodeId> Lowering::known_branch(NodeId statement, Value** condition) {
  NodeId then_suite = ast_.child(statement, 1), else_node = ast_.child(statement, 2);
  // Graph code's condition fixed when compiling: sema checked only the
  // branch it took (sema_decision).
  if (graph_)
    if (std::optional<bool> decided = sema_decision(ast_.child(statement, 0))) return *decided ? then_suite : else_node;
  // A condition computed from constants (literals, module constants, -D):
  // only the branch taken becomes code, so the other may hold what this
  // configuration does not compile (examples/transformer_block.tsr saves y
  // only with -D SAVE=1, where its layout is known).
  if (std::optional<int64_t> known = constant_condition(ast_.child(statement, 0))) return *known ? then_suite : else_node;
  *condition = value(ast_.child(statement, 0), context_.bool_type());
  // A condition the IR computes from constants (`if i % 2 == 0:` in a loop
  // unrolled for a list, lower_lists.cpp): only the branch taken, so that
  // an append in it keeps the list's length known.
  if (graph_)
    if (std::optional<int64_t> known = folded_int(*condition)) return *known ? then_suite : else_node;
  return std::nullopt;
}

void Lowering::lower_if(NodeId statement) {
  NodeId then_suite = ast_.child(statement, 1), else_node = ast_.child(statement, 2);
  Value* condition = nullptr;
  if (std::optional<NodeId> taken = known_branch(statement, &condition)) {
    if (taken->valid()) {
      if (ast_.kind(*taken) == NodeKind::Suite) lower_suite(*taken);
      else lower_statement(*taken);
    }
    return;
  }
  NodeId bodies[] = {then_suite, else_node};
  std::vector<uint32_t> carried = carried_names(bodies, "an 'if'", statement);
  // Names both branches assign on every path (and none before): defined
  // after the `if` too, as sema's definite assignment has it.
  std::vector<uint32_t> in_then, in_else;
  sema::definitely_assigned_names(ast_, then_suite, in_then);
  if (else_node.valid()) sema::definitely_assigned_names(ast_, else_node, in_else);
  for (uint32_t name : in_then)
    if (!env_.count(name) && std::find(in_else.begin(), in_else.end(), name) != in_else.end()) carried.push_back(name);

  Operation* op = builder_.create(OpKind::If, {condition}, {}, {}, 2);
  auto saved_env = env_;
  auto saved_tokens = pending_tokens_;
  std::vector<std::vector<Value*>> yielded(2);
  std::vector<Block*> blocks;
  for (unsigned r = 0; r < 2; ++r) {
    if (r == 1) restore_env(saved_env);
    pending_tokens_.clear();
    // No else and nothing to yield: the else-region stays empty.
    if (r == 1 && !else_node.valid() && carried.empty()) break;
    Block* block = op->region(r).add_block();
    blocks.push_back(block);
    builder_.set_insertion_point_to_end(block);
    NodeId body = bodies[r];
    if (body.valid()) {
      if (ast_.kind(body) == NodeKind::Suite)
        lower_suite(body);
      else
        lower_statement(body);  // elif
    }
    for (uint32_t name : carried) yielded[r].push_back(env_.at(name).value);
  }
  restore_env(saved_env);
  pending_tokens_ = saved_tokens;
  // Result types: the type the name had before, else the then-branch's.
  for (size_t i = 0; i < carried.size(); ++i) {
    Type t = env_.count(carried[i]) ? env_[carried[i]].value->type() : yielded[0][i]->type();
    op->append_result(t);
  }
  for (unsigned r = 0; r < blocks.size(); ++r) {
    builder_.set_insertion_point_to_end(blocks[r]);
    builder_.set_location(location(statement));
    std::vector<Value*> values;
    for (size_t i = 0; i < carried.size(); ++i) values.push_back(convert(yielded[r][i], op->result(i)->type()));
    builder_.create(OpKind::Yield, std::span<Value* const>(values), std::span<const Type>{});
  }
  builder_.set_insertion_point_to_end(op->block());
  for (size_t i = 0; i < carried.size(); ++i) env_[carried[i]] = Bound{op->result(i), {}};
}

// True when `v` is positive on every run: a positive constant, a group size,
// a number of groups, or a product, sum or integer cast of such values.
bool Lowering::known_positive(Value* v) const {
  Operation* op = v->defining_op();
  if (!op) return false;
  switch (op->kind()) {
    case OpKind::GroupSize:
    case OpKind::NumGroups: return true;
    case OpKind::MulI:
    case OpKind::AddI: return known_positive(op->operand(0)) && known_positive(op->operand(1));
    case OpKind::IndexCast:  // group sizes and counts are far below 2^31
    case OpKind::ExtSI:
    case OpKind::ExtUI:
    case OpKind::TruncI: return known_positive(op->operand(0));
    case OpKind::Constant: return op->attr("value").is(AttributeKind::Integer) && op->attr("value").int_value() > 0;
    default: return false;
  }
}

// `for x in l:` or `for i in range(a, b, s):` with constant bounds whose
// body returns (graph code): one segment per iteration, pushed so that the
// first runs next; each binds the target when it starts. A `return` taken
// when compiling ends the path there; one under a run-time `if` makes that
// `if` take the rest of the iterations into its other branch
// (lower_exiting_if), as after any early return.
bool Lowering::unroll_returning_loop(NodeId statement, std::vector<Segment>& continuation) {
  NodeId target = ast_.child(statement, 0), iterable = ast_.child(statement, 1), body = ast_.child(statement, 2);
  std::vector<Bound> items;
  if (std::optional<Bound> sequence = unrolled_sequence(iterable)) {
    for (size_t i = 0; i < sequence->size(); ++i) items.push_back(sequence->element(i));
  } else if (ast_.kind(target) != NodeKind::Name) {
    return false;
  } else if (auto range = unrolled_range(iterable, statement, "a loop with a 'return' in it")) {
    Type iv_type = typed_type(target).value_or(context_.i32_type());
    if (!iv_type.is_int()) iv_type = context_.i32_type();
    for (int64_t v : *range) items.push_back(Bound{builder_.constant_int(v, iv_type), {}, {}});
  } else {
    return false;
  }
  if (contains_break(ast_, body) || contains_kind(ast_, body, NodeKind::Continue))
    unsupported(statement, "'break' or 'continue' in a loop with a 'return' in it (such a loop is unrolled)");
  for (size_t i = items.size(); i-- > 0;) {
    Segment iteration{body, 0};
    iteration.target = target;
    iteration.item = items[i];
    continuation.push_back(std::move(iteration));
  }
  return true;
}

void Lowering::lower_for(NodeId statement) {
  NodeId target = ast_.child(statement, 0), iterable = ast_.child(statement, 1), body = ast_.child(statement, 2);
  if (contains_kind(ast_, body, NodeKind::Return)) unsupported(statement, "'return' inside a loop");
  if (lower_list_loop(statement)) return;  // over a list, or building one: unrolled
  if (ast_.kind(target) != NodeKind::Name) unsupported(target, "a loop target that is not a name");
  sema::TypeId callee_type =
      ast_.kind(iterable) == NodeKind::Call ? node_type(ast_.child(iterable, 0)) : sema::TypeId{};
  bool is_range = false;
  if (callee_type.valid() && typed_.types.kind(callee_type) == SemaKind::Builtin) {
    auto b = static_cast<sema::BuiltinId>(typed_.types.info(callee_type).payload);
    is_range = b == sema::BuiltinId::Range || b == sema::BuiltinId::TileRange;
  }
  auto bound_args = typed_.call_arguments.find(iterable.index);
  if (!is_range || bound_args == typed_.call_arguments.end())
    unsupported(iterable, "iterating over something other than range() or tile.range()");
  const std::vector<NodeId>& args = bound_args->second;
  Type iv_type = typed_type(target).value_or(context_.i32_type());
  if (!iv_type.is_int()) iv_type = context_.i32_type();
  NodeId start = args[0], stop = args.size() > 1 ? args[1] : NodeId{}, step = args.size() > 2 ? args[2] : NodeId{};
  if (!stop.valid()) std::swap(start, stop);  // range(n)
  std::optional<int64_t> constant_step = step.valid() ? constant_of(step) : std::optional<int64_t>(1);
  if (constant_step && *constant_step == 0) unsupported(step, "a range with a step of zero");
  Value* lower_bound = start.valid() ? value(start, iv_type) : builder_.constant_int(0, iv_type);
  Value* upper_bound = value(stop, iv_type);
  Value* step_value = step.valid() ? value(step, iv_type) : builder_.constant_int(1, iv_type);
  lower_bound = convert(lower_bound, iv_type);
  upper_bound = convert(upper_bound, iv_type);
  step_value = convert(step_value, iv_type);
  // Python's range: a positive step counts up while i < stop, a negative one
  // down while i > stop. A step whose sign is known (a constant, an unsigned
  // type, a group size) keeps the loop an scf.for (which counts up) or a
  // while with one comparison; a step known only at run time tests its sign
  // in the loop condition (a zero step runs no iteration: a kernel cannot
  // raise Python's ValueError).
  enum class Direction { Up, Down, RunTime };
  Direction direction = Direction::RunTime;
  if (constant_step) direction = *constant_step > 0 ? Direction::Up : Direction::Down;
  else if (sema::scalar_info(iv_type.scalar()).category == sema::ScalarCategory::UnsignedInt || known_positive(step_value))
    direction = Direction::Up;

  // A trip count known when compiling, at least one: names the body binds
  // stay bound after the loop, the loop variable holding its last value
  // (Python's), unless a break may end the loop early or the body rebinds it.
  std::optional<int64_t> final_induction;
  if (graph_) {
    std::optional<int64_t> first = start.valid() ? constant_of(start) : std::optional<int64_t>(0);
    std::optional<int64_t> last = constant_of(stop);
    if (first && last && constant_step && (*constant_step > 0 ? *first < *last : *first > *last)) {
      bind_names_of_first_iteration(body, statement, ast_.node(target).payload);
      std::vector<uint32_t> rebound;
      assigned_names(ast_, body, rebound);
      const int64_t s = *constant_step, span = s > 0 ? *last - *first : *first - *last, magnitude = s > 0 ? s : -s;
      if (!contains_break(ast_, body) &&
          std::find(rebound.begin(), rebound.end(), ast_.node(target).payload) == rebound.end())
        final_induction = *first + s * ((span + magnitude - 1) / magnitude - 1);
    }
  }
  NodeId bodies[] = {body};
  std::vector<uint32_t> carried = carried_names(bodies, "a loop", statement);
  carried.erase(std::remove(carried.begin(), carried.end(), ast_.node(target).payload), carried.end());
  std::vector<Value*> operands{lower_bound, upper_bound, step_value};
  std::vector<Type> types;
  for (uint32_t name : carried) {
    operands.push_back(env_[name].value);
    types.push_back(env_[name].value->type());
  }
  builder_.set_location(location(statement));
  auto saved_env = env_;
  auto saved_tokens = pending_tokens_;
  pending_tokens_.clear();
  uint32_t target_name = ast_.node(target).payload;
  std::vector<Value*> results;
  if (contains_break(ast_, body) || direction != Direction::Up) {
    // `break` cannot leave an scf.for, which also only counts up: an
    // scf.while carries the induction variable and a running flag, and the
    // condition checks both.
    std::vector<Value*> inits{lower_bound, builder_.constant_bool(true)};
    inits.insert(inits.end(), operands.begin() + 3, operands.end());
    LoopExit exit{nullptr, step_value, true, carried, {iv_type, context_.bool_type()}};
    exit.types.insert(exit.types.end(), types.begin(), types.end());
    Operation* op = builder_.create(OpKind::While, std::span<Value* const>(inits), std::span<const Type>(exit.types), {}, 2);
    Block* before = op->region(0).add_block();
    for (Type t : exit.types) before->add_argument(t);
    builder_.set_insertion_point_to_end(before);
    auto compare = [&](const char* predicate, Value* a, Value* b) {
      return emit(OpKind::CmpI, {a, b}, context_.bool_type(), {{"predicate", context_.string_attr(predicate)}});
    };
    Value* in_range = compare(direction == Direction::Down ? "sgt" : "slt", before->argument(0), upper_bound);
    if (direction == Direction::RunTime) {
      Value* zero = builder_.constant_int(0, iv_type);
      Value* up = emit(OpKind::AndI, {compare("sgt", step_value, zero), in_range}, context_.bool_type());
      Value* down = emit(OpKind::AndI, {compare("slt", step_value, zero), compare("sgt", before->argument(0), upper_bound)},
                         context_.bool_type());
      in_range = emit(OpKind::OrI, {up, down}, context_.bool_type());
    }
    Value* go = emit(OpKind::AndI, {before->argument(1), in_range}, context_.bool_type());
    std::vector<Value*> forwarded{go};
    for (Value* a : before->arguments()) forwarded.push_back(a);
    builder_.create(OpKind::Condition, std::span<Value* const>(forwarded), std::span<const Type>{});
    Block* after = op->region(1).add_block();
    for (Type t : exit.types) after->add_argument(t);
    exit.iv = after->argument(0);
    env_[target_name] = Bound{exit.iv, {}};
    for (size_t i = 0; i < carried.size(); ++i) env_[carried[i]] = Bound{after->argument(static_cast<unsigned>(i + 2)), {}};
    builder_.set_insertion_point_to_end(after);
    lower_rest({Segment{body, 0}}, true, &exit);
    for (size_t i = 0; i < carried.size(); ++i) results.push_back(op->result(static_cast<unsigned>(i + 2)));
    builder_.set_insertion_point_to_end(op->block());
  } else {
    std::vector<NamedAttribute> attributes;
    if (args.size() > 3 && args[3].valid())
      if (auto prefetch = constant_of(args[3])) attributes.push_back({"prefetch", context_.int_attr(*prefetch)});
    Operation* op = builder_.create(OpKind::For, std::span<Value* const>(operands), std::span<const Type>(types),
                                    std::move(attributes), 1);
    Block* block = op->region(0).add_block();
    env_[target_name] = Bound{block->add_argument(iv_type), {}};
    for (size_t i = 0; i < carried.size(); ++i) env_[carried[i]] = Bound{block->add_argument(types[i]), {}};
    builder_.set_insertion_point_to_end(block);
    LoopExit exit{nullptr, nullptr, false, carried, types};
    lower_rest({Segment{body, 0}}, true, &exit);  // `continue` ends a path early
    results = op->results();
    builder_.set_insertion_point_to_end(op->block());
  }
  restore_env(saved_env);
  pending_tokens_ = saved_tokens;
  for (size_t i = 0; i < carried.size(); ++i) env_[carried[i]] = Bound{results[i], {}};
  if (final_induction) env_[target_name] = Bound{builder_.constant_int(*final_induction, iv_type), {}};
}

void Lowering::lower_while(NodeId statement) {
  NodeId condition = ast_.child(statement, 0), body = ast_.child(statement, 1);
  if (contains_kind(ast_, body, NodeKind::Return)) unsupported(statement, "'return' inside a loop");
  NodeId bodies[] = {body};
  std::vector<uint32_t> carried = carried_names(bodies, "a loop", statement);
  // With `break`, a running flag comes first: the condition is evaluated only
  // while it is set (it may read memory that the break protects).
  LoopExit exit{nullptr, nullptr, contains_break(ast_, body), carried, {}};
  std::vector<Value*> inits;
  if (exit.flag) {
    inits.push_back(builder_.constant_bool(true));
    exit.types.push_back(context_.bool_type());
  }
  for (uint32_t name : carried) {
    inits.push_back(env_[name].value);
    exit.types.push_back(env_[name].value->type());
  }
  size_t first = exit.flag ? 1 : 0;
  Operation* op = builder_.create(OpKind::While, std::span<Value* const>(inits), std::span<const Type>(exit.types), {}, 2);
  auto saved_env = env_;
  auto saved_tokens = pending_tokens_;
  pending_tokens_.clear();

  // The condition region: the carried values in, the condition and the values out.
  Block* before = op->region(0).add_block();
  for (Type t : exit.types) before->add_argument(t);
  for (size_t i = 0; i < carried.size(); ++i) env_[carried[i]] = Bound{before->argument(static_cast<unsigned>(i + first)), {}};
  builder_.set_insertion_point_to_end(before);
  Value* c;
  if (exit.flag) {
    Operation* guard = builder_.create(OpKind::If, {before->argument(0)}, {context_.bool_type()}, {}, 2);
    builder_.set_insertion_point_to_end(guard->region(0).add_block());
    Value* user = value(condition, context_.bool_type());
    builder_.create(OpKind::Yield, {user}, {});
    builder_.set_insertion_point_to_end(guard->region(1).add_block());
    builder_.create(OpKind::Yield, {builder_.constant_bool(false)}, {});
    builder_.set_insertion_point_to_end(before);
    c = guard->result();
  } else {
    c = value(condition, context_.bool_type());
  }
  std::vector<Value*> forwarded{c};
  for (Value* a : before->arguments()) forwarded.push_back(a);
  builder_.set_location(location(condition));
  builder_.create(OpKind::Condition, std::span<Value* const>(forwarded), std::span<const Type>{});

  Block* after = op->region(1).add_block();
  for (Type t : exit.types) after->add_argument(t);
  for (size_t i = 0; i < carried.size(); ++i) env_[carried[i]] = Bound{after->argument(static_cast<unsigned>(i + first)), {}};
  builder_.set_insertion_point_to_end(after);
  lower_rest({Segment{body, 0}}, true, &exit);

  restore_env(saved_env);
  pending_tokens_ = saved_tokens;
  builder_.set_insertion_point_to_end(op->block());
  for (size_t i = 0; i < carried.size(); ++i) env_[carried[i]] = Bound{op->result(static_cast<unsigned>(i + first)), {}};
}

OwningModule lower_to_tile_ir(Context& context, const Ast& ast, const ValueStores& values,
                              const sema::TypedModule& typed, DiagnosticEngine& diags, const std::string& only_kernel,
                              bool skip_autotuned) {
  return Lowering(context, ast, values, typed, diags).run(only_kernel, skip_autotuned);
}

}  // namespace tessera::ir
