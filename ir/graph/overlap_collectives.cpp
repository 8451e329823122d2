// overlap-collectives: a collective of a host-level function split into a
// start and a wait, with the independent work that follows it between them
// (docs/ir/schedule.md, "Overlapping collectives"). Schedule IR, after
// graph-fusion: the work is schedule.kernel groups (and, in hand-written IR,
// graph.launch), so while the network moves the collective's data the
// kernels that do not need it run.
//
//   %y = graph.all_reduce %x {...}            %r = schedule.collective_start %x {collective = "all_reduce", ...}
//   %a = schedule.kernel %w (...)      ==>    %a = schedule.kernel %w (...)
//   %b = schedule.kernel %y, %a (...)         %y = schedule.collective_wait %r, %x
//                                             %b = schedule.kernel %y, %a (...)
//
// Rules, per block (loop bodies and branches on their own):
//   - the wait goes right before the first operation of the block that uses
//     the collective's result (in its regions too) or that the wait may not
//     pass: a convergent operation other than a collective (an unshard),
//     I/O and host reads (print, save, load, item), calls, a mesh, the
//     terminator;
//   - it passes kernels, launches, empties, pure operations (views, dims,
//     constants, arith), other collectives (blocking, started or waited for:
//     several are in flight at once) and loops and branches made only of
//     those;
//   - a collective with no kernel or launch to pass stays as it is.
// Every rank runs the same host code, so every rank starts the collectives
// in program order and waits for them in the same order: MPI matches started
// collectives on a group by the order they were started (and sends with
// recvs by the order posted), whatever the order of the waits.
// The wait names the operand again so that bufferize keeps its buffer alive
// and unwritten until the wait; the result exists only after it.
#include <algorithm>

#include "ir/core/builder.h"
#include "ir/passes/passes.h"

namespace tessera::ir {

namespace {

// The collective's name without "graph.", or empty for an operation the pass does not split.
std::string_view split_collective(const Operation* op) {
  switch (op->kind()) {
    case OpKind::GraphAllReduce:
      return "all_reduce";
    case OpKind::GraphAllGather:
      return "all_gather";
    case OpKind::GraphReduceScatter:
      return "reduce_scatter";
    case OpKind::GraphBroadcast:
      return "broadcast";
    case OpKind::GraphSend:
      return "send";
    case OpKind::GraphRecv:
      return "recv";
    case OpKind::GraphSendRecv:
      return "sendrecv";
    default:
      return {};
  }
}

// A collective of the runtime, split or not: a wait may pass it.
bool is_collective(const Operation* op) {
  return !split_collective(op).empty() || op->is(OpKind::ScheduleCollectiveStart) ||
         op->is(OpKind::ScheduleCollectiveWait);
}

bool uses_value(Operation* op, Value* v) {
  if (!v) return false;
  bool found = false;
  op->walk([&](Operation* inner) {
    for (Value* operand : inner->operands())
      if (operand == v) found = true;
  });
  return found;
}

// Whether a wait may move past `op` (itself and every operation in its
// regions): computation, pure bookkeeping or collectives; nothing else
// convergent, no I/O.
bool passable(Operation* op) {
  bool ok = true;
  op->walk([&](Operation* inner) {
    if (inner == op && op->has_trait(trait::Terminator)) ok = false;
    if (is_collective(inner)) return;
    if (inner->has_trait(trait::Convergent)) ok = false;
    switch (inner->kind()) {
      case OpKind::ScheduleKernel:
      case OpKind::GraphLaunch:
      case OpKind::GraphEmpty:
      case OpKind::For:
      case OpKind::If:
      case OpKind::While:
        return;
      default:
        break;
    }
    if (inner != op && (inner->parent_op() && inner->parent_op()->is(OpKind::ScheduleKernel)))
      return;  // the kernel's own graph ops
    if (!inner->has_trait(trait::Pure) && !inner->has_trait(trait::Terminator)) ok = false;
  });
  return ok;
}

// Whether `op` is work worth overlapping: a kernel or a launch, or holds one.
bool does_work(Operation* op) {
  bool work = false;
  op->walk([&](Operation* inner) {
    if (inner->is(OpKind::ScheduleKernel) || inner->is(OpKind::GraphLaunch)) work = true;
  });
  return work;
}

void overlap_block(Block& block, Context& context) {
  for (Operation* op : block) {
    for (unsigned r = 0; r < op->num_regions(); ++r)
      for (size_t b = 0; b < op->region(r).num_blocks(); ++b) overlap_block(op->region(r).block(b), context);
  }
  std::vector<Operation*> collectives;
  for (Operation* op : block)
    if (!split_collective(op).empty()) collectives.push_back(op);
  for (Operation* collective : collectives) {
    Value* result = collective->num_results() ? collective->result() : nullptr;
    Operation* stop = collective->next();
    bool work = false;
    while (stop && !uses_value(stop, result) && passable(stop)) {
      work = work || does_work(stop);
      stop = stop->next();
    }
    if (!work) continue;
    Builder b(context);
    b.set_location(collective->loc());
    b.set_insertion_point(collective);
    std::vector<NamedAttribute> attributes = collective->attributes();
    attributes.push_back({"collective", context.string_attr(split_collective(collective))});
    Value* operand = collective->operand(0);
    // The value in flight: the result's type (a send's operand's).
    Type in_flight = result ? result->type() : operand->type();
    Operation* start = b.create(OpKind::ScheduleCollectiveStart, std::span<Value* const>(&operand, 1),
                                std::span<const Type>(&in_flight, 1), std::move(attributes));
    if (stop)
      b.set_insertion_point(stop);
    else
      b.set_insertion_point_to_end(&block);
    Value* waited[] = {start->result(), operand};
    std::vector<Type> types;
    if (result) types.push_back(result->type());
    Operation* wait =
        b.create(OpKind::ScheduleCollectiveWait, std::span<Value* const>(waited), std::span<const Type>(types));
    if (result) result->replace_all_uses_with(wait->result());
    collective->erase();
  }
}

}  // namespace

void run_overlap_collectives_pass(Operation* module, PassContext& context) {
  for (Operation* func : module_functions(module)) {
    if (!is_host_level_function(func) || func->region(0).empty()) continue;
    for (size_t b = 0; b < func->region(0).num_blocks(); ++b) overlap_block(func->region(0).block(b), context.context);
  }
}

}  // namespace tessera::ir
