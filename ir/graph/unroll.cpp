// Full unrolling of scf.for loops with a constant trip count (unroll.h).
#include "ir/graph/unroll.h"

#include <vector>

#include "ir/core/builder.h"
#include "ir/passes/fold.h"

namespace tessera::ir {

Operation* fold_constant_operation(Operation* op, Context& context) {
  if (!op->has_trait(trait::Pure) || op->has_trait(trait::ConstantLike) || op->num_regions() != 0 ||
      op->num_results() != 1 || op->num_operands() == 0 || op->result()->type().is(TypeKind::Tensor))
    return nullptr;
  std::vector<Attribute> constants;
  for (Value* v : op->operands()) {
    Attribute c = constant_value(v);
    if (!c) return nullptr;
    constants.push_back(c);
  }
  Attribute folded = fold(context, op, constants);
  if (!folded) return nullptr;
  Type type = op->result()->type();
  Operation* c = Operation::create(OpKind::Constant, op->loc(), {}, std::span<const Type>(&type, 1), {{"value", folded}});
  op->block()->insert_before(op, c);
  op->result()->replace_all_uses_with(c->result());
  op->erase();
  return c;
}

std::string unroll_loop(Operation* loop, Context& context, int64_t& budget) {
  Attribute lb = constant_value(loop->operand(0)), ub = constant_value(loop->operand(1)),
            step = constant_value(loop->operand(2));
  if (!lb || !ub || !step || !lb.is(AttributeKind::Integer) || !ub.is(AttributeKind::Integer) ||
      !step.is(AttributeKind::Integer))
    return "its trip count is not a compile-time constant (only loops over a static range are unrolled)";
  int64_t first = lb.int_value(), last = ub.int_value(), stride = step.int_value();
  if (stride <= 0) return "its step is not a positive constant";
  int64_t trips = last > first ? (last - first + stride - 1) / stride : 0;
  if (trips > kMaxUnrolledIterations)
    return "its trip count " + std::to_string(trips) + " is above the unrolling limit of " +
           std::to_string(kMaxUnrolledIterations);
  Block& body = loop->region(0).front();
  int64_t size = 0;
  loop->walk([&](Operation*) { ++size; });
  if (trips * size > budget)
    return "unrolling it would clone " + std::to_string(trips * size) + " operations, above the limit of " +
           std::to_string(kMaxUnrolledOperations) + " per derived function";
  budget -= trips * size;
  Block* block = loop->block();
  Type iv_type = body.argument(0)->type();
  std::vector<Value*> carried;
  for (unsigned i = 3; i < loop->num_operands(); ++i) carried.push_back(loop->operand(i));
  Builder builder(context);
  builder.set_insertion_point(loop);
  builder.set_location(loop->loc());
  for (int64_t k = 0; k < trips; ++k) {
    IRMapping mapping;
    mapping.map(body.argument(0), builder.constant_int(first + k * stride, iv_type));
    for (unsigned i = 0; i < carried.size(); ++i) mapping.map(body.argument(i + 1), carried[i]);
    for (Operation* op : body) {
      if (op->is(OpKind::Yield)) {
        for (unsigned i = 0; i < carried.size(); ++i) carried[i] = mapping.lookup_or_self(op->operand(i));
        continue;
      }
      Operation* clone = op->clone(mapping);
      block->insert_before(loop, clone);
      if (Operation* folded = fold_constant_operation(clone, context)) mapping.map(op->result(), folded->result());
    }
  }
  for (unsigned i = 0; i < loop->num_results(); ++i) loop->result(i)->replace_all_uses_with(carried[i]);
  loop->erase();
  return "";
}

}  // namespace tessera::ir
