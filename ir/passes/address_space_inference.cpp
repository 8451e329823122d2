// address-space-inference: follows every memref from the allocation or
// argument it views (MemoryRootAnalysis, address_space_inference.h) and checks
// what the address spaces allow (docs/ir/passes.md).
//
// Today every memref type names a concrete space (global, shared, local,
// constant): there is no generic space and no cast between spaces, and
// `tile.subview`, scf results and calls keep the exact type, so the verifier
// already guarantees that a value's space is its roots' space (and rejects
// writes into constant memory, which the destination's type shows). The pass
// therefore rewrites nothing yet; it checks that guarantee (a mismatch is a
// compiler bug) and the rule that needs to know which functions the host
// calls: a kernel's memref arguments come from the host, which can only pass
// global or constant memory (ir.kernel-argument-space).
// When a generic space arrives (helpers taking any memory, as CUDA's generic
// pointers), this pass is where a generic value with roots in one space gets
// that space, using `inferred_space`, and where a write through a generic
// value whose roots are constant memory is reported.
#include "ir/passes/address_space_inference.h"

#include "support/diagnostics/internal_error.h"
#include "ir/passes/passes.h"

namespace tessera::ir {

MemoryRootAnalysis::MemoryRootAnalysis(Operation* module) {
  while (propagate(module)) {
  }
}

const std::vector<Value*>& MemoryRootAnalysis::roots(Value* v) const {
  static const std::vector<Value*> none;
  auto it = roots_.find(v);
  return it == roots_.end() ? none : it->second;
}

std::optional<MemorySpace> MemoryRootAnalysis::inferred_space(Value* v) const {
  const std::vector<Value*>& r = roots(v);
  if (r.empty()) return std::nullopt;
  MemorySpace space = r.front()->type().space();
  for (Value* root : r)
    if (root->type().space() != space) return std::nullopt;
  return space;
}

bool MemoryRootAnalysis::add_root(Value* to, Value* root) {
  if (!seen_[to].insert(root).second) return false;
  roots_[to].push_back(root);
  return true;
}

bool MemoryRootAnalysis::add_roots(Value* to, Value* from) {
  if (!to->type().is(TypeKind::MemRef) || to == from) return false;
  bool changed = false;
  // Copy: adding to `to` may grow the vector `from` refers to when they alias.
  std::vector<Value*> incoming = roots(from);
  for (Value* root : incoming) changed |= add_root(to, root);
  return changed;
}

// One pass over the module; true when any value learned a root.
bool MemoryRootAnalysis::propagate(Operation* module) {
  bool changed = false;
  for (Operation* func : module_functions(module)) {
    if (func->region(0).empty()) continue;
    // Arguments of functions called from outside the module are roots.
    if (func->has_attr("kernel") || func->has_attr("public"))
      for (Value* a : func->region(0).front().arguments())
        if (a->type().is(TypeKind::MemRef)) changed |= add_root(a, a);
    func->walk([&](Operation* op) {
      switch (op->kind()) {
        case OpKind::AllocShared:
        case OpKind::AllocLocal: changed |= add_root(op->result(), op->result()); return;
        case OpKind::Subview: changed |= add_roots(op->result(), op->operand(0)); return;
        case OpKind::If:
          for (unsigned r = 0; r < 2; ++r) {
            if (op->region(r).empty()) continue;
            Operation* yield = op->region(r).front().terminator();
            for (unsigned i = 0; i < op->num_results(); ++i) changed |= add_roots(op->result(i), yield->operand(i));
          }
          return;
        case OpKind::For: {
          Block& body = op->region(0).front();
          Operation* yield = body.terminator();
          for (unsigned i = 0; i < op->num_results(); ++i) {
            changed |= add_roots(body.argument(i + 1), op->operand(3 + i));
            changed |= add_roots(body.argument(i + 1), yield->operand(i));
            changed |= add_roots(op->result(i), body.argument(i + 1));
          }
          return;
        }
        case OpKind::While: {
          Block& before = op->region(0).front();
          Block& after = op->region(1).front();
          Operation* condition = before.terminator();
          Operation* yield = after.terminator();
          for (unsigned i = 0; i < before.num_arguments(); ++i) {
            changed |= add_roots(before.argument(i), op->operand(i));
            changed |= add_roots(before.argument(i), yield->operand(i));
          }
          for (unsigned i = 0; i < after.num_arguments(); ++i) {
            changed |= add_roots(after.argument(i), condition->operand(i + 1));
            changed |= add_roots(op->result(i), condition->operand(i + 1));
          }
          return;
        }
        case OpKind::Call: {
          Operation* callee = lookup_function(module, op->attr("callee").string_value());
          if (!callee || callee->region(0).empty()) return;
          Block& entry = callee->region(0).front();
          for (unsigned i = 0; i < op->num_operands(); ++i) changed |= add_roots(entry.argument(i), op->operand(i));
          if (Operation* ret = entry.terminator())
            for (unsigned i = 0; i < op->num_results(); ++i) changed |= add_roots(op->result(i), ret->operand(i));
          return;
        }
        default: return;
      }
    });
  }
  return changed;
}

void run_address_space_inference_pass(Operation* module, PassContext& context) {
  MemoryRootAnalysis analysis(module);
  for (Operation* func : module_functions(module)) {
    if (func->region(0).empty()) continue;
    if (func->has_attr("kernel")) {
      Block& entry = func->region(0).front();
      for (Value* a : entry.arguments()) {
        Type t = a->type();
        if (t.is(TypeKind::MemRef) && (t.space() == MemorySpace::Shared || t.space() == MemorySpace::Local))
          report_at<diag::IrKernelArgumentSpace>(context, func, std::string(func->symbol_name()),
                                                 static_cast<int64_t>(a->index()),
                                                 std::string(memory_space_name(t.space())));
      }
    }
    auto check_agrees = [&](Value* v) {
      if (!v->type().is(TypeKind::MemRef)) return;
      std::optional<MemorySpace> space = analysis.inferred_space(v);
      internal_check(!space || *space == v->type().space(), "address-space-inference",
                     "a memref's type disagrees with the memory it views");
    };
    func->walk([&](Operation* op) {
      for (Value* r : op->results()) check_agrees(r);
      for (unsigned r = 0; r < op->num_regions(); ++r)
        for (size_t b = 0; b < op->region(r).num_blocks(); ++b)
          for (Value* a : op->region(r).block(b).arguments()) check_agrees(a);
    });
  }
}

}  // namespace tessera::ir
