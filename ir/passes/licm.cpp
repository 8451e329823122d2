// licm: loop-invariant code motion out of `scf.for` and `scf.while`
// (docs/ir/passes.md).
//
// An operation directly in a loop's region is hoisted before the loop when
// every operand is defined outside the loop (or by an operation already
// hoisted), it has no regions, and it is one of:
//   - Pure and not Convergent. Integer division and remainder are hoisted only
//     where they would run anyway (the loop surely runs, or the operation is
//     in the condition region of an scf.while, which always runs) or when the
//     divisor is a constant that cannot make them trap on a CPU (not 0, not -1):
//     the IR says they never trap, but the CPU target must then guard them,
//     and executing one the program never asked for is not worth the guard.
//   - A load (`tile.load`, `tile.load_vector`) in a loop that surely runs and
//     contains nothing that may write memory or synchronise (stores, atomics,
//     calls, barriers, async copies): it would read the same value on every
//     iteration, and a loop that does not run must not access memory.
// Convergent operations never move (ir/core/ir.h). Inner loops are visited
// first, so an invariant climbs as far as it can.
#include "ir/passes/fold.h"
#include "ir/passes/passes.h"

namespace tessera::ir {
namespace {

bool defined_outside(Value* v, Operation* loop) {
  if (Operation* def = v->defining_op()) return def != loop && !loop->is_proper_ancestor_of(def);
  Operation* owner = v->owner_block()->parent_op();
  return owner != loop && !loop->is_proper_ancestor_of(owner);
}

bool is_integer_division(Operation* op) {
  switch (op->kind()) {
    case OpKind::DivSI:
    case OpKind::DivUI:
    case OpKind::FloorDivSI:
    case OpKind::RemSI:
    case OpKind::RemUI: return true;
    default: return false;
  }
}

// A constant divisor other than 0 and -1 (all ones, for the unsigned ones too).
bool safe_divisor(Value* v) {
  Attribute c = constant_value(v);
  if (!c || !c.is(AttributeKind::Integer)) return false;
  Type t = v->type();
  if (c.int_value() == 0) return false;
  // -1 canonically for signed types; all ones for unsigned ones of 64 bits.
  bool all_ones = c.int_value() == -1 ||
                  (!t.is_index() && t.bit_width() < 64 && c.int_value() == (int64_t{1} << t.bit_width()) - 1);
  return !all_ones;
}

// True when the scf.for runs at least once: constant bounds with lb < ub.
bool surely_runs(Operation* loop) {
  if (!loop->is(OpKind::For)) return false;
  auto runs = constant_less_than(constant_value(loop->operand(0)), constant_value(loop->operand(1)),
                                 loop->operand(0)->type());
  return runs && *runs;
}

// True when something in the loop may write memory or order memory between
// lanes.
bool loop_may_write(Operation* loop) {
  bool writes = false;
  for (unsigned r = 0; r < loop->num_regions(); ++r)
    for (size_t b = 0; b < loop->region(r).num_blocks(); ++b)
      for (Operation* op : loop->region(r).block(b))
        op->walk([&](Operation* nested) {
          bool effect_free = nested->has_trait(trait::Pure) || nested->has_trait(trait::ReadOnly) ||
                             nested->is(OpKind::For) || nested->is(OpKind::If) || nested->is(OpKind::While);
          if (!effect_free || (nested->has_trait(trait::Convergent) && !nested->has_trait(trait::Pure)))
            writes = true;
        });
  return writes;
}

bool hoistable(Operation* op, Operation* loop, bool always_runs, bool memory_stable) {
  if (op->has_trait(trait::Convergent) || op->has_trait(trait::Terminator) || op->num_regions() != 0) return false;
  for (Value* v : op->operands())
    if (!defined_outside(v, loop)) return false;
  if (op->is(OpKind::Load) || op->is(OpKind::LoadVector)) return always_runs && memory_stable;
  if (!op->has_trait(trait::Pure)) return false;
  if (is_integer_division(op)) return always_runs || safe_divisor(op->operand(1));
  return true;
}

void hoist_from(Operation* loop) {
  bool memory_stable = !loop_may_write(loop);
  for (unsigned r = 0; r < loop->num_regions(); ++r) {
    Region& region = loop->region(r);
    if (region.empty()) continue;
    // The condition region of an scf.while runs whenever the loop is reached.
    bool always_runs = surely_runs(loop) || (loop->is(OpKind::While) && r == 0);
    // In order: an operation whose operands were just hoisted is hoistable too.
    for (Operation* op : region.front())
      if (hoistable(op, loop, always_runs, memory_stable)) op->move_before(loop);
  }
}

}  // namespace

void run_licm_pass(Operation* module, PassContext&) {
  module->walk(
      [](Operation* op) {
        if (op->is(OpKind::For) || op->is(OpKind::While)) hoist_from(op);
      },
      WalkOrder::PostOrder);
}

}  // namespace tessera::ir
