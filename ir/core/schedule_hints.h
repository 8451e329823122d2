// Schedule hints: what the schedule directives of a @jit function
// (`schedule.tile((64, 128, 32))`, `schedule.vectorize(4)`, ...;
// docs/language/graph.md, "Schedule directives") become in the IR.
//
// Lowering puts each directive on the graph operations of its function that
// it applies to, as an attribute of the same name; graph-decompose passes
// them to the operations it rewrites an operation into, graph-fusion to the
// schedule.kernel of a strategy that uses them, and generate-kernels builds
// the kernel by them (or warns, ir.schedule-ignored, when it cannot). An
// attribute on an operation, not on its function, so that it stays with the
// operation through inlining and autodiff's cloning.
//
//   tile = [BM, BN] or [BM, BN, BK]   graph.matmul, graph.attention
//   stages = N, async_copy = bool     graph.matmul, graph.attention
//   shared_memory = bool, shared_padding = N   graph.matmul, graph.attention
//   vectorize = N                     graph.elementwise, graph.cast
//   lanes = N                         graph.reduce, graph.softmax, graph.norm
//
// The list is support/schedule_hints.def (ScheduleHint), shared with sema.
#pragma once

#include <span>
#include <string_view>

#include "ir/core/ir.h"
#include "support/schedule_hint.h"

namespace tessera::ir {

// Every schedule hint attribute, in the table's order.
std::span<const std::string_view> schedule_hint_names();
// True when `hint` applies to operations of `kind`.
bool schedule_hint_applies(ScheduleHint hint, OpKind kind);
// The hints of `from` that apply to `to`, set on `to` (those it has are kept).
void copy_schedule_hints(const Operation* from, Operation* to);
// True when `op` carries any schedule hint.
bool has_schedule_hints(const Operation* op);

}  // namespace tessera::ir
