// The rules of the scf operations (structured control flow) (verifier_rules.h; docs/ir/core.md).
#include <fmt/format.h>

#include "ir/core/verifier_rules.h"

namespace tessera::ir::verification {

// 'scf.for'
void Verifier::verify_for(Operation* op) {
  if (!min_operands(op, 3) || !regions(op, 1)) return;
  Type iv = op->operand(0)->type();
  if (!iv.is_index() && !iv.is_int()) return void(error(op, "bounds must be index or integer values"));
  if (op->operand(1)->type() != iv || op->operand(2)->type() != iv)
    return void(error(op, "lower bound, upper bound and step must have one type"));
  std::vector<Type> iters;
  for (unsigned i = 3; i < op->num_operands(); ++i) iters.push_back(op->operand(i)->type());
  if (op->result_types() != iters)
    return void(error(op, fmt::format("results {} must match the loop-carried values {}",
                                      types_text(op->result_types()), types_text(iters))));
  std::vector<Type> args{iv};
  args.insert(args.end(), iters.begin(), iters.end());
  if (!block_args(op, op->region(0), args, "the loop body")) return;
  check_yield(op, op->region(0), OpKind::Yield, iters, "the loop body");
}

// 'scf.if'
void Verifier::verify_if(Operation* op) {
  if (!operands(op, 1) || !regions(op, 2)) return;
  if (!op->operand(0)->type().is_bool())
    return void(error(op, fmt::format("condition must be bool, got {}", op->operand(0)->type().str())));
  if (op->region(0).empty()) return void(error(op, "the then-region is empty"));
  if (op->num_results() > 0 && op->region(1).empty())
    return void(error(op, "an 'scf.if' with results needs an else-region"));
  for (unsigned r = 0; r < 2; ++r) {
    if (!op->region(r).empty() && op->region(r).front().num_arguments() > 0)
      return void(error(op, "its regions take no arguments"));
    check_yield(op, op->region(r), OpKind::Yield, op->result_types(), r == 0 ? "the then-region" : "the else-region");
  }
}

// 'scf.while'
void Verifier::verify_while(Operation* op) {
  if (!regions(op, 2)) return;
  std::vector<Type> inits = value_types(op->operands());
  if (!block_args(op, op->region(0), inits, "the condition region")) return;
  if (!block_args(op, op->region(1), op->result_types(), "the body region")) return;
  check_yield(op, op->region(0), OpKind::Condition, op->result_types(), "the condition region");
  check_yield(op, op->region(1), OpKind::Yield, inits, "the body region");
}

// 'scf.yield'
void Verifier::verify_yield(Operation* op) {
  Operation* p = op->parent_op();
  if (!p || !(p->is(OpKind::For) || p->is(OpKind::If) || p->is(OpKind::While)))
    error(op, "must end the region of an 'scf.for', 'scf.if' or 'scf.while'");
}

// 'scf.condition'
void Verifier::verify_condition(Operation* op) {
  Operation* p = op->parent_op();
  if (!p || !p->is(OpKind::While) || &p->region(0) != op->parent_region())
    error(op, "must end the condition region of an 'scf.while'");
}

}  // namespace tessera::ir::verification
