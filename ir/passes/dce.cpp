// dce: dead-code elimination (docs/ir/passes.md).
//
// Removes operations whose results are unused and that have no effect: Pure
// and ReadOnly operations and the allocations `tile.alloc_shared` /
// `tile.alloc_local`; unused results of `scf.for`, `scf.if` and `scf.while`
// together with the loop-carried values and the computations that only feed
// them; and `scf.for` / `scf.if` left with no results and nothing in their
// regions but the terminator. Repeats until nothing changes.
//
// Never removes an operation with effects (stores, barriers, atomics, async
// copies, calls) or a terminator, and never an `scf.while` (it may not end,
// and its condition region always runs).
#include <optional>
#include <set>
#include <vector>

#include "ir/passes/passes.h"

namespace tessera::ir {
namespace {

bool has_uses(Operation* op) {
  for (Value* r : op->results())
    if (r->has_uses()) return true;
  return false;
}

// Effect-free when its results are unused.
bool effect_free(Operation* op) {
  if (op->has_trait(trait::Terminator) || op->num_regions() != 0) return false;
  return op->has_trait(trait::Pure) || op->has_trait(trait::ReadOnly) || op->is(OpKind::AllocShared) ||
         op->is(OpKind::AllocLocal);
}

bool removable(Operation* op) { return effect_free(op) && !has_uses(op); }

// Regions that hold nothing but their terminator (or nothing).
bool regions_empty(Operation* op) {
  for (unsigned r = 0; r < op->num_regions(); ++r) {
    Region& region = op->region(r);
    if (!region.empty() && region.front().front() != region.front().terminator()) return false;
  }
  return true;
}

// The loop-carried value `arg` (a block argument of `body`) is dead when it
// and everything computed from it feed nothing but the yield's slot `slot`:
// `acc = acc + x` in a loop whose result nobody reads. Returns the operations
// computed from it (in block order) so they can be erased with it, or nullopt
// when the value is live.
std::optional<std::vector<Operation*>> dead_carried_value(Value* arg, Block& body, Operation* yield, unsigned slot) {
  std::set<Operation*> chain;
  std::vector<Value*> work{arg};
  while (!work.empty()) {
    Value* v = work.back();
    work.pop_back();
    for (OpOperand* use : v->uses()) {
      Operation* user = use->owner();
      if (user == yield) {
        if (use->index() != slot) return std::nullopt;
        continue;
      }
      // Only effect-free operations directly in the body: a use in a nested
      // region or by an effect keeps the value alive.
      if (user->block() != &body || !effect_free(user)) return std::nullopt;
      if (chain.insert(user).second)
        for (Value* r : user->results()) work.push_back(r);
    }
  }
  std::vector<Operation*> ordered;
  for (Operation* op : body)
    if (chain.count(op)) ordered.push_back(op);
  return ordered;
}

// Erases the yield's operand `slot` and then `chain` (last first, so every
// operation is unused when erased).
void erase_chain(Operation* yield, unsigned slot, const std::vector<Operation*>& chain) {
  yield->erase_operand(slot);
  for (auto it = chain.rbegin(); it != chain.rend(); ++it) (*it)->erase();
}

bool prune_for(Operation* op) {
  bool changed = false;
  Block& body = op->region(0).front();
  Operation* yield = body.terminator();
  for (unsigned i = op->num_results(); i-- > 0;) {
    if (op->result(i)->has_uses()) continue;
    auto chain = dead_carried_value(body.argument(i + 1), body, yield, i);
    if (!chain) continue;
    erase_chain(yield, i, *chain);
    body.erase_argument(i + 1);
    op->erase_operand(3 + i);
    op->erase_result(i);
    changed = true;
  }
  return changed;
}

bool prune_if(Operation* op) {
  bool changed = false;
  for (unsigned i = op->num_results(); i-- > 0;) {
    if (op->result(i)->has_uses()) continue;
    for (unsigned r = 0; r < 2; ++r) op->region(r).front().terminator()->erase_operand(i);
    op->erase_result(i);
    changed = true;
  }
  return changed;
}

// scf.while carries values around a cycle: condition-region argument k ->
// `scf.condition` operand j+1 -> result j and body argument j -> `scf.yield`
// operand k -> condition-region argument k. A slot on that cycle is dead when
// nothing but the cycle uses it (and, for results, nobody after the loop):
// assume every slot dead, then mark live what has another use until nothing
// changes (the greatest fixpoint, so that cycles of dead values go too).
bool prune_while(Operation* op) {
  Block& before = op->region(0).front();
  Block& after = op->region(1).front();
  Operation* condition = before.terminator();
  Operation* yield = after.terminator();
  std::vector<bool> dead_before(before.num_arguments(), true), dead_after(after.num_arguments(), true);
  for (bool changed = true; changed;) {
    changed = false;
    for (unsigned k = 0; k < before.num_arguments(); ++k) {
      if (!dead_before[k]) continue;
      for (OpOperand* use : before.argument(k)->uses())
        if (use->owner() != condition || use->index() == 0 || !dead_after[use->index() - 1]) {
          dead_before[k] = false;
          changed = true;
          break;
        }
    }
    for (unsigned j = 0; j < after.num_arguments(); ++j) {
      if (!dead_after[j]) continue;
      bool live = op->result(j)->has_uses();
      for (OpOperand* use : after.argument(j)->uses())
        if (use->owner() != yield || !dead_before[use->index()]) live = true;
      if (live) {
        dead_after[j] = false;
        changed = true;
      }
    }
  }
  bool changed = false;
  for (unsigned j = after.num_arguments(); j-- > 0;)
    if (dead_after[j]) condition->erase_operand(j + 1);
  for (unsigned k = before.num_arguments(); k-- > 0;)
    if (dead_before[k]) yield->erase_operand(k);
  for (unsigned j = after.num_arguments(); j-- > 0;)
    if (dead_after[j]) {
      after.erase_argument(j);
      op->erase_result(j);
      changed = true;
    }
  for (unsigned k = before.num_arguments(); k-- > 0;)
    if (dead_before[k]) {
      before.erase_argument(k);
      op->erase_operand(k);
      changed = true;
    }
  return changed;
}

bool simplify(Operation* op) {
  if (removable(op)) {
    op->erase();
    return true;
  }
  bool changed = false;
  if (op->is(OpKind::For)) changed = prune_for(op);
  if (op->is(OpKind::If)) changed = prune_if(op);
  if (op->is(OpKind::While)) changed = prune_while(op);
  if ((op->is(OpKind::For) || op->is(OpKind::If)) && op->num_results() == 0 && regions_empty(op)) {
    op->erase();
    return true;
  }
  return changed;
}

}  // namespace

void run_dce_pass(Operation* module, PassContext&) {
  bool changed = true;
  while (changed) {
    changed = false;
    for (Operation* func : module_functions(module))
      func->walk([&](Operation* op) { changed |= simplify(op); }, WalkOrder::PostOrder);
  }
}

}  // namespace tessera::ir
