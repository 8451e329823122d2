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

}  // namespace tessera::ir::verification
