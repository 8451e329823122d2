// The IR verifier (verifier.h): the walk, the structural rules, the helpers
// the operations' rules are written with, and the dispatch to those rules,
// which are defined one file per op set (verifier_rules.h).
#include "ir/core/verifier.h"

#include <fmt/format.h>

#include <algorithm>

#include "ir/core/ir_text.h"
#include "ir/core/verifier_rules.h"

namespace tessera::ir {
namespace verification {

bool one_of(std::string_view value, std::initializer_list<std::string_view> options) {
  return std::find(options.begin(), options.end(), value) != options.end();
}

bool is_int_element(Type t) {
  if (t.is_index()) return true;
  if (t.is_scalar()) return t.is_int() || t.is_bool();
  if (t.is(TypeKind::Vector) || t.is(TypeKind::Tile) || t.is(TypeKind::Tensor))
    return !is_float(t.scalar());
  return false;
}
bool is_float_element(Type t) {
  if (t.is_scalar()) return t.is_float();
  if (t.is(TypeKind::Vector) || t.is(TypeKind::Tile) || t.is(TypeKind::Tensor)) return is_float(t.scalar());
  return false;
}
bool is_value_type(Type t) {
  return t.is_index() || t.is_scalar() || t.is(TypeKind::Vector) || t.is(TypeKind::Tile) || t.is(TypeKind::Tensor);
}
unsigned element_bits(Type t) { return t.is_index() ? 64 : scalar_info(t.scalar()).bits; }
bool same_shape(Type a, Type b) {
  if (a.kind() != b.kind()) return false;
  if (!a.is_shaped()) return true;
  return std::equal(a.shape().begin(), a.shape().end(), b.shape().begin(), b.shape().end());
}
bool dims_compatible(std::span<const int64_t> a, std::span<const int64_t> b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i] != kDynamic && b[i] != kDynamic && a[i] != b[i]) return false;
  return true;
}
std::string types_text(const std::vector<Type>& types) {
  std::string s = "(";
  for (size_t i = 0; i < types.size(); ++i) s += (i ? ", " : "") + std::string(types[i].str());
  return s + ")";
}
std::vector<Type> value_types(const std::vector<Value*>& values) {
  std::vector<Type> types;
  for (Value* v : values) types.push_back(v ? v->type() : Type());
  return types;
}

std::vector<VerifyError> Verifier::run(Operation* root) {
  root->walk([&](Operation* op) { verify_op(op); }, WalkOrder::PreOrder);
  return std::move(errors_);
}

bool Verifier::error(Operation* op, std::string message) {
  errors_.push_back({op, std::move(message)});
  return false;
}

void Verifier::verify_op(Operation* op) {
  size_t before = errors_.size();
  verify_structure(op);
  if (errors_.size() == before) verify_rules(op);
}

// --- structure ----------------------------------------------------------------

void Verifier::verify_structure(Operation* op) {
  for (unsigned i = 0; i < op->num_operands(); ++i) {
    Value* v = op->operand(i);
    if (!v || !v->type()) {
      error(op, fmt::format("operand #{} is null", i));
      continue;
    }
    check_visible(op, i, v);
  }
  for (unsigned r = 0; r < op->num_regions(); ++r) {
    Region& region = op->region(r);
    if (region.num_blocks() > 1)
      error(op, fmt::format("region #{} has {} blocks; regions hold one block (structured control flow)", r,
                            region.num_blocks()));
    for (size_t b = 0; b < region.num_blocks(); ++b) {
      Block& block = region.block(b);
      for (Operation* nested : block) {
        bool last = nested == block.back();
        if (nested->has_trait(trait::Terminator) && !last)
          error(nested, "is a terminator but is not the last operation of its block");
      }
      if (!op->has_trait(trait::NoTerminator) && !block.terminator())
        error(op, fmt::format("region #{} does not end with a terminator", r));
    }
  }
}

void Verifier::check_visible(Operation* user, unsigned index, Value* v) {
  Block* def_block = v->parent_block();
  if (!def_block || !def_block->parent()) {
    error(user, fmt::format("operand #{} is not defined", index));
    return;
  }
  for (Operation* at = user; at; at = at->parent_op()) {
    if (at->block() == def_block) {
      if (v->is_block_argument()) return;
      Operation* def = v->defining_op();
      if (def != at && def->is_before_in_block(at)) return;
      if (def == at && at != user) {
        error(user, fmt::format("operand #{} is a result of the enclosing '{}'; an operation's regions cannot use "
                                "its results",
                                index, at->name()));
        return;
      }
      error(user, fmt::format("operand #{} is used before it is defined", index));
      return;
    }
    // An isolated operation's regions see nothing outside it; its own
    // operands are read where it stands (a schedule.kernel in a loop body
    // takes values from before the loop).
    if (at != user && at->has_trait(trait::IsolatedFromAbove)) break;
  }
  error(user, fmt::format("operand #{} is defined outside the scope where it is used", index));
}

// --- helpers of the per-operation rules ----------------------------------------

bool Verifier::operands(Operation* op, unsigned n) {
  if (op->num_operands() != n)
    return error(op, fmt::format("expects {} operand{}, got {}", n, n == 1 ? "" : "s", op->num_operands()));
  return true;
}

bool Verifier::min_operands(Operation* op, unsigned n) {
  if (op->num_operands() < n) return error(op, fmt::format("expects at least {} operands, got {}", n, op->num_operands()));
  return true;
}

bool Verifier::results(Operation* op, unsigned n) {
  if (op->num_results() != n)
    return error(op, fmt::format("expects {} result{}, got {}", n, n == 1 ? "" : "s", op->num_results()));
  return true;
}

bool Verifier::regions(Operation* op, unsigned n) {
  if (op->num_regions() != n)
    return error(op, fmt::format("expects {} region{}, got {}", n, n == 1 ? "" : "s", op->num_regions()));
  return true;
}

bool Verifier::shape(Operation* op, unsigned n_operands, unsigned n_results, unsigned n_regions) {
  return operands(op, n_operands) && results(op, n_results) && regions(op, n_regions);
}

Attribute Verifier::attr(Operation* op, std::string_view name, AttributeKind kind, bool required) {
  Attribute a = op->attr(name);
  if (!a) {
    if (required) error(op, fmt::format("requires attribute '{}'", name));
    return a;
  }
  if (!a.is(kind)) {
    error(op, fmt::format("attribute '{}' has the wrong kind", name));
    return Attribute();
  }
  return a;
}

Attribute Verifier::int_array_attr(Operation* op, std::string_view name) {
  Attribute a = attr(op, name, AttributeKind::Array);
  if (!a) return a;
  for (size_t i = 0; i < a.size(); ++i)
    if (!a[i].is(AttributeKind::Integer)) {
      error(op, fmt::format("attribute '{}' must be an array of integers", name));
      return Attribute();
    }
  return a;
}

bool Verifier::string_choice(Operation* op, std::string_view name, std::initializer_list<std::string_view> options,
                             bool required) {
  return string_choice(op, name, std::span<const std::string_view>(options.begin(), options.size()), required);
}

bool Verifier::string_choice(Operation* op, std::string_view name, std::span<const std::string_view> options,
                             bool required) {
  Attribute a = attr(op, name, AttributeKind::String, required);
  if (!a) return !required && !op->attr(name);
  if (std::find(options.begin(), options.end(), a.string_value()) == options.end()) {
    std::string list;
    for (auto o : options) list += (list.empty() ? "" : ", ") + std::string(o);
    return error(op, fmt::format("attribute '{}' is \"{}\"; expected one of {}", name, a.string_value(), list));
  }
  return true;
}

bool Verifier::axis_attr(Operation* op, int64_t limit) {
  Attribute a = attr(op, "axis", AttributeKind::Integer);
  if (!a) return false;
  if (a.int_value() < 0 || a.int_value() >= limit)
    return error(op, fmt::format("axis {} is out of range [0, {})", a.int_value(), limit));
  return true;
}

bool Verifier::same_type_elementwise(Operation* op, unsigned n, bool (*element_ok)(Type), std::string_view what) {
  if (!shape(op, n, 1)) return false;
  Type t = op->result()->type();
  for (unsigned i = 0; i < n; ++i)
    if (op->operand(i)->type() != t)
      return error(op, fmt::format("operand #{} has type {} but the result has type {}; operands and result "
                                   "must have one type",
                                   i, op->operand(i)->type().str(), t.str()));
  if (!is_value_type(t) || !element_ok(t)) return error(op, fmt::format("expects {} values, got {}", what, t.str()));
  return true;
}

bool Verifier::memref_indices(Operation* op, unsigned memref_index, unsigned first_index, unsigned count_after) {
  if (op->num_operands() <= memref_index) return error(op, "expects a memref operand");
  Type m = op->operand(memref_index)->type();
  if (!m.is(TypeKind::MemRef))
    return error(op, fmt::format("operand #{} must be a memref, got {}", memref_index, m.str()));
  unsigned indices = op->num_operands() - first_index - count_after;
  if (op->num_operands() < first_index + count_after || indices != m.rank())
    return error(op, fmt::format("expects {} index operand{} for {}, got {}", m.rank(), m.rank() == 1 ? "" : "s",
                                 m.str(), op->num_operands() < first_index + count_after ? 0 : indices));
  for (unsigned i = first_index; i < first_index + indices; ++i)
    if (!op->operand(i)->type().is_index())
      return error(op, fmt::format("index operand #{} must be index, got {}", i, op->operand(i)->type().str()));
  return true;
}

bool Verifier::writable_memref(Operation* op, unsigned memref_index) {
  if (op->operand(memref_index)->type().space() != MemorySpace::Constant) return true;
  return error(op, "writes to constant memory, which is read-only for kernels");
}

bool Verifier::check_yield(Operation* parent, Region& region, OpKind terminator,
                           const std::vector<Type>& expected, std::string_view what) {
  if (region.empty()) return true;
  Operation* t = region.front().terminator();
  if (!t) return true;  // reported structurally
  if (!t->is(terminator))
    return error(parent, fmt::format("{} must end with '{}', not '{}'", what, op_kind_name(terminator), t->name()));
  std::vector<Type> got = value_types(t->operands());
  if (terminator == OpKind::Condition) {
    if (got.empty() || !got[0].is_bool()) return error(t, "first operand must be the bool loop condition");
    got.erase(got.begin());
  }
  if (got != expected)
    return error(t, fmt::format("yields {} but {} expects {}", types_text(got), parent->name(), types_text(expected)));
  return true;
}

bool Verifier::block_args(Operation* op, Region& region, const std::vector<Type>& expected, std::string_view what) {
  if (region.empty()) return error(op, fmt::format("{} is empty", what));
  std::vector<Type> got = value_types(region.front().arguments());
  if (got != expected)
    return error(op, fmt::format("{} takes arguments {}, expected {}", what, types_text(got), types_text(expected)));
  return true;
}

bool Verifier::verify_cast(Operation* op, bool (*from_ok)(Type), bool (*to_ok)(Type), int width_rule,
                           std::string_view what, unsigned n_operands) {
  if (!shape(op, n_operands, 1)) return false;
  Type from = op->operand(0)->type(), to = op->result()->type();
  if (!is_value_type(from) || !is_value_type(to) || !same_shape(from, to) || !from_ok(from) || !to_ok(to))
    return error(op, fmt::format("cannot convert {} to {}; {}", from.str(), to.str(), what));
  if (width_rule > 0 && element_bits(to) <= element_bits(from))
    return error(op, fmt::format("result {} must be wider than the operand {}", to.str(), from.str()));
  if (width_rule < 0 && element_bits(to) >= element_bits(from))
    return error(op, fmt::format("result {} must be narrower than the operand {}", to.str(), from.str()));
  return true;
}

bool Verifier::holds_regions(OpKind kind) {
  return kind == OpKind::Module || kind == OpKind::Func || kind == OpKind::For || kind == OpKind::If ||
         kind == OpKind::While || kind == OpKind::ScheduleTile || kind == OpKind::ScheduleFuse ||
         kind == OpKind::SchedulePipeline || kind == OpKind::ScheduleKernel;
}

// Each operation's rule, in the file of its op set. No default: a new
// OpKind does not compile until it has a rule.
void Verifier::verify_rules(Operation* op) {
  if (!holds_regions(op->kind()) && op->num_regions() > 0)
    return void(error(op, fmt::format("expects 0 regions, got {}", op->num_regions())));
  switch (op->kind()) {
    // --- verifier_func.cpp ---
    case OpKind::Module: return verify_module(op);
    case OpKind::Func: return verify_func(op);
    case OpKind::Return: return verify_return(op);
    case OpKind::Call: return verify_call(op);
    // --- verifier_arith.cpp ---
    case OpKind::Constant: return verify_constant(op);
    case OpKind::AddI:
    case OpKind::SubI:
    case OpKind::MulI:
    case OpKind::DivSI:
    case OpKind::DivUI:
    case OpKind::FloorDivSI:
    case OpKind::RemSI:
    case OpKind::RemUI:
    case OpKind::MinSI:
    case OpKind::MaxSI:
    case OpKind::MinUI:
    case OpKind::MaxUI:
    case OpKind::AndI:
    case OpKind::OrI:
    case OpKind::XOrI:
    case OpKind::ShLI:
    case OpKind::ShRSI:
    case OpKind::ShRUI: return verify_int_elementwise(op);
    case OpKind::AddF:
    case OpKind::SubF:
    case OpKind::MulF:
    case OpKind::DivF:
    case OpKind::RemF:
    case OpKind::MinF:
    case OpKind::MaxF:
    case OpKind::PowF: return verify_float_binary(op);
    case OpKind::NegF:
    case OpKind::Exp:
    case OpKind::Log:
    case OpKind::Sqrt:
    case OpKind::Rsqrt:
    case OpKind::Tanh:
    case OpKind::Sin:
    case OpKind::Cos:
    case OpKind::Floor:
    case OpKind::Ceil:
    case OpKind::Round:
    case OpKind::AbsF: return verify_float_unary(op);
    case OpKind::AbsI: return verify_abs_int(op);
    case OpKind::Fma: return verify_fma(op);
    case OpKind::CmpI:
    case OpKind::CmpF: return verify_compare(op);
    case OpKind::Select: return verify_select(op);
    case OpKind::ExtSI:
    case OpKind::ExtUI: return verify_int_extension(op);
    case OpKind::TruncI: return verify_int_truncation(op);
    case OpKind::SIToFP:
    case OpKind::UIToFP: return verify_int_to_float(op);
    case OpKind::FPToSI:
    case OpKind::FPToUI: return verify_float_to_int(op);
    case OpKind::ExtF: return verify_float_extension(op);
    case OpKind::TruncF: return verify_float_truncation(op);
    case OpKind::IndexCast: return verify_index_cast(op);
    case OpKind::Bitcast: return verify_bitcast(op);
    // --- verifier_scf.cpp ---
    case OpKind::For: return verify_for(op);
    case OpKind::If: return verify_if(op);
    case OpKind::While: return verify_while(op);
    case OpKind::Yield: return verify_yield(op);
    case OpKind::Condition: return verify_condition(op);
    // --- verifier_graph.cpp ---
    case OpKind::GraphConstant:
    case OpKind::GraphElementwise:
    case OpKind::GraphMatmul:
    case OpKind::GraphReduce:
    case OpKind::GraphSoftmax:
    case OpKind::GraphNorm:
    case OpKind::GraphAttention:
    case OpKind::GraphAttentionGrad:
    case OpKind::GraphSort:
    case OpKind::GraphCast:
    case OpKind::GraphRandom:
    case OpKind::GraphDim:
    case OpKind::GraphReshape:
    case OpKind::GraphTranspose:
    case OpKind::GraphSlice:
    case OpKind::GraphConcat:
    case OpKind::GraphLaunch:
    case OpKind::GraphLoad:
    case OpKind::GraphSave:
    case OpKind::GraphEmpty:
    case OpKind::GraphIota: return verify_graph_tensor_op(op);
    case OpKind::GraphGrad: return verify_graph_grad(op);
    case OpKind::GraphJvp: return verify_graph_jvp(op);
    case OpKind::GraphMesh: return verify_graph_mesh(op);
    case OpKind::GraphShard:
    case OpKind::GraphUnshard: return verify_graph_shard(op);
    case OpKind::GraphAllReduce:
    case OpKind::GraphReduceScatter: return verify_graph_reduction_collective(op);
    case OpKind::GraphAllGather:
    case OpKind::GraphBroadcast: return verify_graph_axis_collective(op);
    case OpKind::GraphSend: return verify_graph_send(op);
    case OpKind::GraphRecv:
    case OpKind::GraphSendRecv: return verify_graph_recv(op);
    case OpKind::GraphPrint: return verify_graph_print(op);
    case OpKind::GraphItem: return verify_graph_item(op);
    // --- verifier_schedule.cpp ---
    case OpKind::ScheduleYield: return verify_schedule_yield(op);
    case OpKind::ScheduleTile:
    case OpKind::ScheduleFuse:
    case OpKind::SchedulePipeline: return verify_schedule_region(op);
    case OpKind::SchedulePrefetch: return verify_schedule_prefetch(op);
    case OpKind::ScheduleKnob: return verify_schedule_knob(op);
    case OpKind::ScheduleKernel: return verify_schedule_kernel(op);
    case OpKind::ScheduleCollectiveStart: return verify_schedule_collective_start(op);
    case OpKind::ScheduleCollectiveWait: return verify_schedule_collective_wait(op);
    case OpKind::HostAlloc: return verify_host_alloc(op);
    case OpKind::HostFree: return verify_host_free(op);
    case OpKind::HostView: return verify_host_view(op);
    case OpKind::HostArenaBuffer: return verify_host_arena_buffer(op);
    case OpKind::HostStride: return verify_host_stride(op);
    case OpKind::HostLaunch: return verify_host_launch(op);
    case OpKind::HostPrint: return verify_host_print(op);
    case OpKind::HostSave: return verify_host_save(op);
    case OpKind::HostMesh: return verify_host_mesh(op);
    case OpKind::HostCollective: return verify_host_collective(op);
    case OpKind::HostCollectiveStart: return verify_host_collective_start(op);
    case OpKind::HostCollectiveWait: return verify_host_collective_wait(op);
    case OpKind::HostLoad: return verify_host_load(op);
    case OpKind::HostCheck: return verify_host_check(op);
    case OpKind::HostRead: return verify_host_read(op);
    // --- verifier_tile.cpp ---
    case OpKind::LinearId:
    case OpKind::LaneId:
    case OpKind::WarpId: return verify_index_id(op);
    case OpKind::LocalId:
    case OpKind::GroupId:
    case OpKind::GroupSize:
    case OpKind::NumGroups: return verify_axis_id(op);
    case OpKind::Dim: return verify_dim(op);
    case OpKind::AllocShared:
    case OpKind::AllocLocal: return verify_alloc(op);
    case OpKind::Subview: return verify_subview(op);
    case OpKind::Barrier: return verify_barrier(op);
    case OpKind::Load: return verify_load(op);
    case OpKind::Store: return verify_store(op);
    case OpKind::LoadVector: return verify_load_vector(op);
    case OpKind::StoreVector: return verify_store_vector(op);
    case OpKind::CpAsync: return verify_cp_async(op);
    case OpKind::CpCommitGroup: return verify_cp_commit_group(op);
    case OpKind::CpWaitGroup: return verify_cp_wait_group(op);
    case OpKind::Atomic: return verify_atomic(op);
    case OpKind::AtomicCas: return verify_atomic_cas(op);
    case OpKind::Shuffle: return verify_shuffle(op);
    case OpKind::WarpReduce: return verify_warp_reduce(op);
    case OpKind::RandomBits: return verify_random_bits(op);
    case OpKind::Splat: return verify_splat(op);
    case OpKind::Mma: return verify_mma(op);
    case OpKind::StoreTile: return verify_store_tile(op);
  }
}

}  // namespace verification

std::vector<VerifyError> verify(Operation* root) { return verification::Verifier().run(root); }

bool verify_and_report(Operation* root, DiagnosticEngine& diags) {
  auto errors = verify(root);
  for (auto& e : errors) {
    SourceRange range = location_range(diags.sources(), e.op->loc());
    if (range.begin != 0)
      diags.emit<diag::IrVerifyError>(range, std::string(e.op->name()), e.message);
    else
      diags.emit_global<diag::IrVerifyError>(std::string(e.op->name()), e.message + " (at " +
                                                                            std::string(e.op->loc().str()) + ")");
  }
  return errors.empty();
}

}  // namespace tessera::ir
