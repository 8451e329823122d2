// The rules of the schedule operations (Schedule IR) (verifier_rules.h; docs/ir/schedule.md).
#include <fmt/format.h>

#include "ir/core/tile_attr_kinds.h"
#include "ir/core/verifier_rules.h"

namespace tessera::ir::verification {

// 'schedule.yield'
void Verifier::verify_schedule_yield(Operation* op) {
  Operation* p = op->parent_op();
  if (!p || !(p->is(OpKind::ScheduleTile) || p->is(OpKind::ScheduleFuse) || p->is(OpKind::SchedulePipeline) ||
              p->is(OpKind::ScheduleKernel)))
    error(op, "must end the region of a schedule operation");
}

// 'schedule.tile', 'schedule.fuse', 'schedule.pipeline'
void Verifier::verify_schedule_region(Operation* op) {
  if (!regions(op, 1)) return;
  if (op->region(0).empty()) return void(error(op, "the region is empty"));
  if (op->is(OpKind::ScheduleTile)) {
    Attribute sizes = int_array_attr(op, "sizes");
    if (sizes)
      for (int64_t s : sizes.int_array())
        if (s <= 0) return void(error(op, "tile sizes must be positive"));
  }
  if (op->is(OpKind::SchedulePipeline)) {
    Attribute stages = attr(op, "stages", AttributeKind::Integer);
    if (stages && stages.int_value() < 1) return void(error(op, "needs at least one stage"));
  }
  check_yield(op, op->region(0), OpKind::ScheduleYield, op->result_types(), "the region");
}

// 'schedule.prefetch'
void Verifier::verify_schedule_prefetch(Operation* op) {
  if (!shape(op, 1, 0)) return;
  Attribute d = attr(op, "distance", AttributeKind::Integer);
  if (d && d.int_value() < 1) error(op, "prefetch distance must be at least 1");
}

// 'schedule.knob'
void Verifier::verify_schedule_knob(Operation* op) {
  if (!shape(op, 0, 1)) return;
  attr(op, "name", AttributeKind::String);
  Attribute c = attr(op, "candidates", AttributeKind::Array);
  if (c && c.size() == 0) error(op, "needs at least one candidate");
  if (!op->result()->type().is_index()) error(op, "result must be index");
}

// 'schedule.kernel': one generated kernel. Its region's block takes one
// argument per operand, of the operand's type (the region sees nothing else),
// and yields the results; `strategy` says how the kernel is generated.
void Verifier::verify_schedule_kernel(Operation* op) {
  if (!regions(op, 1)) return;
  if (op->region(0).empty()) return void(error(op, "the region is empty"));
  if (!string_choice(op, "strategy", kKernelStrategyNames)) return;
  if (!block_args(op, op->region(0), value_types(op->operands()), "the region")) return;
  check_yield(op, op->region(0), OpKind::ScheduleYield, op->result_types(), "the region");
}

// 'schedule.collective_start %x {collective, axis, mesh, ...}': the collective
// `collective` (the graph operation's name without `graph.`, with its
// attributes) started on x; the result is its value in flight, which only
// the one schedule.collective_wait of the same block may use (the
// overlap-collectives pass; docs/ir/schedule.md, "Overlapping collectives").
void Verifier::verify_schedule_collective_start(Operation* op) {
  if (!shape(op, 1, 1)) return;
  if (!string_choice(op, "collective",
                     {"all_reduce", "all_gather", "reduce_scatter", "broadcast", "send", "recv", "sendrecv"}))
    return;
  attr(op, "mesh", AttributeKind::Array);
  if (!op->operand(0)->type().is(TypeKind::Tensor) || !op->result()->type().is(TypeKind::Tensor))
    return void(error(op, "operand and result must be tensors"));
  const auto& uses = op->result()->uses();
  if (uses.size() != 1 || !uses.front()->owner()->is(OpKind::ScheduleCollectiveWait) || uses.front()->index() != 0 ||
      uses.front()->owner()->block() != op->block())
    error(op, "the value in flight must be used once, by a schedule.collective_wait in the same block");
}

// 'schedule.collective_wait %inflight, %x': waits for the collective started
// by %inflight's schedule.collective_start on %x (x named again so that its
// buffer lives until here); the result is the collective's (none for send).
void Verifier::verify_schedule_collective_wait(Operation* op) {
  if (!operands(op, 2)) return;
  Operation* start = op->operand(0)->defining_op();
  if (!start || !start->is(OpKind::ScheduleCollectiveStart))
    return void(error(op, "the first operand must be the result of a schedule.collective_start"));
  if (start->operand(0) != op->operand(1))
    return void(error(op, "the second operand must be the operand of its schedule.collective_start"));
  if (start->block() == op->block() && !start->is_before_in_block(op))
    return void(error(op, "must come after its schedule.collective_start"));
  bool sends = start->attr("collective") && start->attr("collective").string_value() == "send";
  if (!results(op, sends ? 0 : 1)) return;
  if (!sends && op->result()->type() != op->operand(0)->type())
    error(op, "the result must have the type of the value in flight");
}

}  // namespace tessera::ir::verification
