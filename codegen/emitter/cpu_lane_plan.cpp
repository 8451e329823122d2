// The plan of a CPU group function (cpu_lane_loops.h): which operations run
// at group level, which loops are lifted, and where every value lives.
#include <functional>
#include <optional>

#include "codegen/emitter/cpu_lane_loops.h"

namespace tessera::codegen::emitter {

namespace {

// Lane-dependent sources: their values differ between the lanes of a group.
bool lane_id_op(const Operation* op) {
  return op->is(OpKind::LinearId) || op->is(OpKind::LocalId) || op->is(OpKind::LaneId) || op->is(OpKind::WarpId);
}

bool division(const Operation* op) {
  return op->is(OpKind::DivSI) || op->is(OpKind::DivUI) || op->is(OpKind::FloorDivSI) || op->is(OpKind::RemSI) ||
         op->is(OpKind::RemUI);
}

// A constant divisor that cannot trap: neither 0 nor -1 (INT_MIN / -1
// faults on x86).
bool safe_constant_divisor(ir::Value* v) {
  Operation* def = v->defining_op();
  if (!def || !def->is(OpKind::Constant)) return false;
  ir::Attribute a = def->attr("value");
  if (!a || a.is(ir::AttributeKind::Float) || a.is(ir::AttributeKind::Bool)) return false;
  return a.int_value() != 0 && a.int_value() != -1;
}

bool scalar_type(Type t) { return t.is_index() || t.is_scalar(); }

bool integer_like(Type t) {
  if (t.is_index()) return true;
  if (!t.is_scalar()) return false;
  ScalarCategory c = scalar_info(t.scalar()).category;
  return c == ScalarCategory::SignedInt || c == ScalarCategory::UnsignedInt || t.scalar() == ScalarType::Bool;
}

std::optional<int64_t> constant_int(ir::Value* v) {
  Operation* def = v->defining_op();
  if (!def || !def->is(OpKind::Constant)) return std::nullopt;
  ir::Attribute a = def->attr("value");
  if (!a || a.is(ir::AttributeKind::Float) || a.is(ir::AttributeKind::Bool)) return std::nullopt;
  return a.int_value();
}

}  // namespace

LanePlan::LanePlan(Emitter& emitter, Operation* kernel) : e_(emitter), kernel_(kernel), uniformity_(kernel) {
  if (!kernel->has_attr("group_shape")) {
    unsupported("the kernel has no group shape");
    return;
  }
  ir::Block& body = kernel->region(0).front();
  for (ir::Value* a : body.arguments()) set(a, Home::Scalar);
  kernel->walk([&](Operation* op) {
    if (op->is(OpKind::Return) && op->block() != &body) unsupported("a return inside control flow");
  });
  if (!unsupported_.empty()) return;
  classify_block(body);
}

Home LanePlan::home(ir::Value* v) const {
  auto it = homes_.find(v);
  return it == homes_.end() ? Home::Local : it->second;
}

void LanePlan::unsupported(const std::string& why) {
  if (unsupported_.empty()) unsupported_ = why;
}

// Barriers, shuffles and warp reductions, and what contains them. Calls to
// helpers that synchronise (the inline pass leaves only recursive ones) and
// the emulated tensor cores (their warp exchanges are inside one
// operation) are not handled: the kernel keeps the fibers.
bool LanePlan::contains_sync(Operation* op) {
  auto it = sync_.find(op);
  if (it != sync_.end()) return it->second;
  sync_[op] = false;
  bool found = false;
  switch (op->kind()) {
    case OpKind::Barrier:
    case OpKind::Shuffle:
    case OpKind::WarpReduce: found = true; break;
    case OpKind::Mma:
      if (e_.tensor_core_path(op)) {
        unsupported("a tile.mma emulating the tensor cores (--mma=sync|wgmma)");
        found = true;
      }
      break;
    case OpKind::Call:
      if (Operation* callee = ir::lookup_function(e_.ir_module_, op->attr("callee").string_value()))
        for (Operation* inner : callee->region(0).front())
          if (contains_sync(inner)) {
            unsupported("a call to a helper that synchronises");
            found = true;
            break;
          }
      break;
    default: break;
  }
  for (unsigned r = 0; !found && r < op->num_regions(); ++r)
    for (size_t b = 0; !found && b < op->region(r).num_blocks(); ++b)
      for (Operation* inner : op->region(r).block(b))
        if (contains_sync(inner)) {
          found = true;
          break;
        }
  return sync_[op] = found;
}

// An innermost scf.for with memory accesses and scalar loop-carried values,
// whose bound and step are group values: running it at group level puts the
// lane loop inside it, where it vectorises across lanes. Its start may
// differ between lanes (a grid-stride loop: start(lane) + t * step).
bool LanePlan::should_lift(Operation* op) {
  if (!op->is(OpKind::For) || contains_sync(op)) return false;
  bool nested_loop = false, memory = false;
  op->walk([&](Operation* inner) {
    if (inner == op) return;
    if (inner->is(OpKind::For) || inner->is(OpKind::While) || inner->is(OpKind::Call)) nested_loop = true;
    if (inner->is(OpKind::Load) || inner->is(OpKind::Store) || inner->is(OpKind::LoadVector) ||
        inner->is(OpKind::StoreVector))
      memory = true;
  });
  if (nested_loop || !memory) return false;
  for (ir::Value* r : op->results())
    if (!scalar_type(r->type())) return false;
  if (home(op->operand(1)) != Home::Scalar || home(op->operand(2)) != Home::Scalar) return false;
  Home start = home(op->operand(0));
  if (start == Home::Scalar) {
    // A few iterations known at compile time: LLVM unrolls them inside the lane loop.
    auto lb = constant_int(op->operand(0)), ub = constant_int(op->operand(1)), step = constant_int(op->operand(2));
    if (lb && ub && step && *step > 0 && (*ub - *lb + *step - 1) / *step <= 8) return false;
    return true;
  }
  if (start == Home::Remat) {
    lifted_varying_.insert(op);
    return true;
  }
  return false;
}

void LanePlan::classify_block(ir::Block& block) {
  for (Operation* op : block) {
    if (op == block.terminator()) continue;
    if (contains_sync(op)) {
      group_level_.insert(op);
      classify_group_op(op);
    } else if (should_lift(op)) {
      group_level_.insert(op);
      lifted_.insert(op);
      classify_group_op(op);
    } else {
      classify_lane_op(op);
    }
  }
  // A lane's array that outlives its lane loop is one array per lane in the
  // scratch block, its view recomputed from the lane in every loop that uses
  // it: classify again with it (and the views of it) recomputed.
  bool again = false;
  for (Operation* op : block)
    if (op->is(OpKind::AllocLocal) && !group_level(op) && !escaping_locals_.count(op) && escapes(op->result(), block)) {
      escaping_locals_.insert(op);
      again = true;
    }
  if (again) return classify_block(block);
  for (Operation* op : block) {
    if (op == block.terminator() || group_level(op)) continue;
    for (ir::Value* r : op->results())
      if (home(r) == Home::Local && escapes(r, block)) set(r, Home::Storage);
  }
}

// An operation inside a span: a group value when it is pure and computed
// from group values; recomputed per lane when it is cheap integer or view
// arithmetic on group values and lane ids; else kept in the span.
void LanePlan::classify_lane_op(Operation* op) {
  for (ir::Value* r : op->results()) set(r, Home::Local);
  if (op->num_results() == 0) return;
  if (op->num_regions() > 0) return;  // an scf operation inside the lane loop: its results are the span's
  bool tokens = true;
  for (ir::Value* r : op->results()) tokens = tokens && r->type().is(TypeKind::Token);
  if (tokens) {
    for (ir::Value* r : op->results()) set(r, Home::None);
    return;
  }
  if (op->is(OpKind::AllocLocal)) {
    if (escaping_locals_.count(op)) set(op->result(), Home::Remat);
    return;
  }
  bool operands_scalar = true, operands_remat = true;
  for (ir::Value* v : op->operands()) {
    Home h = home(v);
    operands_scalar = operands_scalar && h == Home::Scalar;
    operands_remat = operands_remat && (h == Home::Scalar || h == Home::Remat);
  }
  bool pure = op->has_trait(ir::trait::Pure) && !op->is(OpKind::Shuffle) && !op->is(OpKind::WarpReduce);
  // A division runs at group level only by a constant that cannot trap:
  // there it would run even when no lane does.
  bool traps = division(op) && !safe_constant_divisor(op->operand(1));
  if ((pure || op->is(OpKind::AllocShared)) && !lane_id_op(op) && operands_scalar && !traps) {
    for (ir::Value* r : op->results()) set(r, Home::Scalar);
    return;
  }
  if ((pure || lane_id_op(op)) && operands_remat && op->num_results() == 1 &&
      (integer_like(op->result()->type()) || op->result()->type().is(TypeKind::MemRef)))
    set(op->result(), Home::Remat);
}

// Whether a value computed in a span is needed outside it: by a
// group-level operation, by a later span, or by the block's terminator
// after a group-level operation (a terminator right after the span copies
// its operands at the end of that span's loop).
bool LanePlan::escapes(ir::Value* v, ir::Block& block) {
  Operation* def = v->defining_op();
  auto group_level_between = [&](Operation* from, Operation* to) {
    for (Operation* p = from->next(); p && p != to; p = p->next())
      if (group_level(p)) return true;
    return false;
  };
  for (ir::OpOperand* use : v->uses()) {
    Operation* user = use->owner();
    while (user && user->block() != &block) user = user->parent_op();
    if (!user) return true;
    if (user == block.terminator()) {
      if (user->is(OpKind::Condition) && use->owner() == user && use->index() == 0) return true;
      if (group_level_between(def, user)) return true;
      continue;
    }
    if (group_level(user) || group_level_between(def, user)) return true;
  }
  return false;
}

void LanePlan::classify_group_op(Operation* op) {
  auto terminator_operand = [](ir::Region& r, unsigned i) -> ir::Value* {
    if (r.empty() || !r.front().terminator()) return nullptr;
    Operation* t = r.front().terminator();
    return i < t->num_operands() ? t->operand(i) : nullptr;
  };
  switch (op->kind()) {
    case OpKind::Barrier: return;
    case OpKind::Shuffle: set(op->result(), home(op->operand(0)) == Home::Scalar ? Home::Scalar : Home::Storage); return;
    case OpKind::WarpReduce: set(op->result(), Home::Storage); return;
    case OpKind::If: {
      bool uniform = uniformity_.decision(op) == ir::Uniformity::Uniform;
      if (!uniform) {
        masked_ = true;
        op->walk([&](Operation* inner) {
          if (inner != op && inner->has_trait(ir::trait::Convergent) && !inner->is(OpKind::Shuffle) &&
              !inner->is(OpKind::WarpReduce))
            unsupported("a group-wide synchronisation under a lane-varying condition");
        });
      }
      for (unsigned r = 0; r < 2; ++r)
        if (!op->region(r).empty()) classify_block(op->region(r).front());
      for (unsigned i = 0; i < op->num_results(); ++i) {
        ir::Value* a = terminator_operand(op->region(0), i);
        ir::Value* b = terminator_operand(op->region(1), i);
        bool scalar = uniform && a && b && home(a) == Home::Scalar && home(b) == Home::Scalar;
        set(op->result(i), op->result(i)->type().is(TypeKind::Token) ? Home::None
                           : scalar                                   ? Home::Scalar
                                                                      : Home::Storage);
      }
      return;
    }
    case OpKind::For: {
      ir::Block& body = op->region(0).front();
      bool varying_lift = lifted_varying_.count(op) != 0;
      if (!varying_lift && uniformity_.decision(op) != ir::Uniformity::Uniform)
        return unsupported("a loop whose trip count differs between lanes around a synchronisation");
      set(body.argument(0), varying_lift ? Home::LoopIv : Home::Scalar);
      std::vector<bool> scalar(op->num_results(), false);
      for (unsigned i = 0; i < op->num_results(); ++i)
        scalar[i] = !varying_lift && uniformity_.of(body.argument(i + 1)) == ir::Uniformity::Uniform &&
                    home(op->operand(3 + i)) == Home::Scalar;
      for (bool changed = true; changed;) {
        changed = false;
        for (unsigned i = 0; i < op->num_results(); ++i)
          set(body.argument(i + 1), body.argument(i + 1)->type().is(TypeKind::Token) ? Home::None
                                    : scalar[i]                                       ? Home::Scalar
                                                                                      : Home::Storage);
        classify_block(body);
        for (unsigned i = 0; i < op->num_results(); ++i)
          if (scalar[i] && home(terminator_operand(op->region(0), i)) != Home::Scalar) {
            scalar[i] = false;
            changed = true;
          }
      }
      for (unsigned i = 0; i < op->num_results(); ++i) set(op->result(i), home(body.argument(i + 1)));
      return;
    }
    case OpKind::While: {
      if (uniformity_.decision(op) != ir::Uniformity::Uniform)
        return unsupported("a while loop whose condition differs between lanes around a synchronisation");
      ir::Block& before = op->region(0).front();
      ir::Block& after = op->region(1).front();
      std::vector<bool> scalar(before.num_arguments(), false);
      for (unsigned i = 0; i < before.num_arguments(); ++i)
        scalar[i] = uniformity_.of(before.argument(i)) == ir::Uniformity::Uniform && home(op->operand(i)) == Home::Scalar;
      for (bool changed = true; changed;) {
        changed = false;
        for (unsigned i = 0; i < before.num_arguments(); ++i)
          set(before.argument(i), before.argument(i)->type().is(TypeKind::Token) ? Home::None
                                  : scalar[i]                                     ? Home::Scalar
                                                                                  : Home::Storage);
        classify_block(before);
        Operation* condition = before.terminator();
        for (unsigned i = 0; i < after.num_arguments(); ++i) {
          ir::Value* forwarded = condition ? condition->operand(i + 1) : nullptr;
          set(after.argument(i), after.argument(i)->type().is(TypeKind::Token)      ? Home::None
                                 : forwarded && home(forwarded) == Home::Scalar ? Home::Scalar
                                                                                : Home::Storage);
        }
        classify_block(after);
        for (unsigned i = 0; i < before.num_arguments(); ++i)
          if (scalar[i] && home(terminator_operand(op->region(1), i)) != Home::Scalar) {
            scalar[i] = false;
            changed = true;
          }
      }
      for (unsigned i = 0; i < op->num_results(); ++i) set(op->result(i), home(after.argument(i)));
      return;
    }
    default: return unsupported("'" + std::string(op->name()) + "' around a synchronisation");
  }
}

}  // namespace tessera::codegen::emitter
