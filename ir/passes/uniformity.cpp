// uniformity: runs UniformityAnalysis (uniformity.h) on every function,
// records the result on the operations and checks convergent operations
// (docs/ir/passes.md).
//
// Annotation: an operation whose results are all uniform across the group
// gets the unit attribute `uniform`; one whose results are the same within
// each warp gets `warp_uniform`; varying ones get neither. Stale attributes
// from an earlier run are removed first, so the pass can run again after
// other passes changed the IR. Operations without results get nothing.
//
// Check (kernels only; a helper's arguments are unknown, so it is checked
// once inlined): a group-convergent operation (`tile.barrier`, async copies,
// `tile.mma`, `tile.store_tile`) under control flow that varies within the
// group, or a warp operation (`tile.shuffle`, `tile.warp_reduce`) under
// control flow that varies within a warp, is an error (ir.divergent-
// convergent): the lanes that do not take the branch never arrive, which
// deadlocks a barrier and leaves the others undefined.
#include "ir/passes/uniformity.h"

#include <algorithm>
#include <optional>
#include <string>

#include "ir/passes/passes.h"

namespace tessera::ir {

std::string_view uniformity_name(Uniformity u) {
  switch (u) {
    case Uniformity::Uniform: return "uniform";
    case Uniformity::WarpUniform: return "warp-uniform";
    case Uniformity::Varying: return "varying";
  }
  return "varying";
}

namespace {

Uniformity join(Uniformity a, Uniformity b) { return std::max(a, b); }

// The uniformity an operation introduces by itself, whatever its operands.
Uniformity source_uniformity(Operation* op) {
  switch (op->kind()) {
    case OpKind::LinearId:
    case OpKind::LocalId:
    case OpKind::LaneId:
    case OpKind::Shuffle:
    case OpKind::Atomic:
    case OpKind::AtomicCas:
    case OpKind::AllocLocal:
    case OpKind::Call: return Uniformity::Varying;
    case OpKind::WarpId: return Uniformity::WarpUniform;
    default: return Uniformity::Uniform;
  }
}

// How far an operation's own semantics caps the uniformity of its operands:
// a warp reduction combines the value of every lane of the warp, so its
// result is the same within the warp however much the operand varies (and
// uniform when the operand is). Other operations pass their operands on.
Uniformity cap_operands(Operation* op, Uniformity operands) {
  if (op->is(OpKind::WarpReduce)) return std::min(operands, Uniformity::WarpUniform);
  return operands;
}

}  // namespace

UniformityAnalysis::UniformityAnalysis(Operation* func) : func_(func) {
  if (func->region(0).empty()) return;
  Block& entry = func->region(0).front();
  // A kernel's arguments are the same for the whole launch; a helper's come
  // from callers we do not see.
  Uniformity args = func->has_attr("kernel") ? Uniformity::Uniform : Uniformity::Varying;
  for (Value* a : entry.arguments()) values_[a] = args;
  for (bool changed = true; changed;) {
    changed = false;
    visit_block(entry, Uniformity::Uniform, changed);
  }
}

Uniformity UniformityAnalysis::of(Value* v) const {
  auto it = values_.find(v);
  return it == values_.end() ? Uniformity::Uniform : it->second;
}

Uniformity UniformityAnalysis::control(Operation* op) const {
  auto it = control_.find(op);
  return it == control_.end() ? Uniformity::Uniform : it->second;
}

Uniformity UniformityAnalysis::decision(Operation* op) const {
  auto it = decisions_.find(op);
  return it == decisions_.end() ? Uniformity::Uniform : it->second;
}

Operation* UniformityAnalysis::divergent_parent(Operation* op, Uniformity allowed) const {
  for (Operation* p = op->parent_op(); p && p != func_; p = p->parent_op())
    if (decision(p) > allowed) return p;
  return nullptr;
}

bool UniformityAnalysis::raise(Value* v, Uniformity u) {
  Uniformity& slot = values_.try_emplace(v, Uniformity::Uniform).first->second;
  if (u <= slot) return false;
  slot = u;
  return true;
}

void UniformityAnalysis::visit_block(Block& block, Uniformity control, bool& changed) {
  for (Operation* op : block) visit(op, control, changed);
}

void UniformityAnalysis::visit(Operation* op, Uniformity control, bool& changed) {
  control_[op] = join(control_[op], control);
  auto operands_join = [&](unsigned from, unsigned to) {
    Uniformity u = Uniformity::Uniform;
    for (unsigned i = from; i < to; ++i) u = join(u, of(op->operand(i)));
    return u;
  };
  auto set_decision = [&](Uniformity d) {
    Uniformity& slot = decisions_[op];
    if (d > slot) {
      slot = d;
      changed = true;
    }
    return join(control, slot);
  };
  auto terminator = [](Region& r) { return r.empty() ? nullptr : r.front().terminator(); };

  switch (op->kind()) {
    case OpKind::If: {
      Uniformity inner = set_decision(of(op->operand(0)));
      for (unsigned r = 0; r < 2; ++r)
        if (!op->region(r).empty()) visit_block(op->region(r).front(), inner, changed);
      // A result is the yield of whichever branch ran: varying when the
      // choice is, or when either yielded value is.
      for (unsigned i = 0; i < op->num_results(); ++i) {
        Uniformity u = inner;
        for (unsigned r = 0; r < 2; ++r)
          if (Operation* y = terminator(op->region(r))) u = join(u, of(y->operand(i)));
        changed |= raise(op->result(i), u);
      }
      return;
    }
    case OpKind::For: {
      // A varying bound or step makes lanes run different iteration counts.
      Uniformity inner = set_decision(operands_join(0, 3));
      Block& body = op->region(0).front();
      changed |= raise(body.argument(0), join(inner, operands_join(0, 3)));
      Operation* yield = body.terminator();
      for (unsigned i = 0; i < op->num_results(); ++i) {
        Uniformity u = join(inner, of(op->operand(3 + i)));
        if (yield) u = join(u, of(yield->operand(i)));
        changed |= raise(body.argument(i + 1), u);
        changed |= raise(op->result(i), u);
      }
      visit_block(body, inner, changed);
      return;
    }
    case OpKind::While: {
      Block& before = op->region(0).front();
      Block& after = op->region(1).front();
      Operation* condition = before.terminator();
      Operation* yield = after.terminator();
      // Lanes leave the loop at different iterations when the condition
      // varies: everything in it, and its results, vary then.
      Uniformity inner = set_decision(condition ? of(condition->operand(0)) : Uniformity::Uniform);
      for (unsigned i = 0; i < before.num_arguments(); ++i) {
        Uniformity u = join(inner, of(op->operand(i)));
        if (yield) u = join(u, of(yield->operand(i)));
        changed |= raise(before.argument(i), u);
      }
      visit_block(before, inner, changed);
      for (unsigned i = 0; i < after.num_arguments(); ++i) {
        Uniformity u = join(inner, condition ? of(condition->operand(i + 1)) : Uniformity::Uniform);
        changed |= raise(after.argument(i), u);
        changed |= raise(op->result(i), u);
      }
      visit_block(after, inner, changed);
      return;
    }
    default: break;
  }
  // Any other operation: its results are as varying as its operands, the
  // control it runs under and what it introduces itself. Nested regions (Graph
  // and Schedule IR) see the same control; their block arguments and the
  // results take the worst of everything involved, which is conservative.
  Uniformity u =
      join(join(control, cap_operands(op, operands_join(0, op->num_operands()))), source_uniformity(op));
  for (unsigned r = 0; r < op->num_regions(); ++r)
    for (size_t b = 0; b < op->region(r).num_blocks(); ++b) {
      Block& block = op->region(r).block(b);
      for (Value* a : block.arguments()) changed |= raise(a, u);
      visit_block(block, control, changed);
      if (Operation* t = block.terminator())
        for (Value* v : t->operands()) u = join(u, of(v));
    }
  for (Value* r : op->results()) changed |= raise(r, u);
}

namespace {

// The level of control a convergent operation needs, or nullopt for one that
// is not convergent.
std::optional<Uniformity> required_control(Operation* op) {
  if (!op->has_trait(trait::Convergent)) return std::nullopt;
  if (op->is(OpKind::Shuffle) || op->is(OpKind::WarpReduce)) return Uniformity::WarpUniform;
  return Uniformity::Uniform;
}

std::string_view decision_text(Operation* op) {
  if (op->is(OpKind::If)) return "condition of this scf.if";
  if (op->is(OpKind::For)) return "trip count of this scf.for";
  if (op->is(OpKind::While)) return "exit condition of this scf.while";
  return "control flow";
}

}  // namespace

void run_uniformity_pass(Operation* module, PassContext& context) {
  Context& ctx = context.context;
  for (Operation* func : module_functions(module)) {
    if (is_host_level_function(func)) continue;
    UniformityAnalysis analysis(func);
    func->walk([&](Operation* op) {
      if (op == func) return;
      op->remove_attr("uniform");
      op->remove_attr("warp_uniform");
      if (op->num_results() == 0) return;
      Uniformity u = Uniformity::Uniform;
      for (Value* r : op->results()) u = join(u, analysis.of(r));
      if (u == Uniformity::Uniform) op->set_attr("uniform", ctx.unit_attr());
      if (u == Uniformity::WarpUniform) op->set_attr("warp_uniform", ctx.unit_attr());
    });
    if (!func->has_attr("kernel")) continue;
    func->walk(
        [&](Operation* op) {
          std::optional<Uniformity> needed = required_control(op);
          if (!needed || analysis.control(op) <= *needed) return;
          Operation* parent = analysis.divergent_parent(op, *needed);
          std::string scope = *needed == Uniformity::WarpUniform ? "warp" : "group";
          auto diagnostic = report_at<diag::IrDivergentConvergent>(context, op, std::string(op->name()), scope);
          if (parent) {
            SourceRange range = location_range(context.diags.sources(), parent->loc());
            if (range.begin != 0)
              diagnostic.note<diag::IrDivergentConditionNote>(
                  range, std::string(decision_text(parent)),
                  std::string(analysis.decision(parent) == Uniformity::WarpUniform ? "warp" : "lane"));
          }
        },
        WalkOrder::PreOrder);
  }
}

}  // namespace tessera::ir
