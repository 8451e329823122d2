#include "ir/core/schedule_hints.h"

namespace tessera::ir {

std::span<const std::string_view> schedule_hint_names() { return kScheduleHintNames; }

bool schedule_hint_applies(ScheduleHint hint, OpKind kind) {
  switch (hint) {
    case ScheduleHint::Vectorize: return kind == OpKind::GraphElementwise || kind == OpKind::GraphCast;
    case ScheduleHint::Lanes:
      return kind == OpKind::GraphReduce || kind == OpKind::GraphSoftmax || kind == OpKind::GraphNorm;
    case ScheduleHint::Tile:
    case ScheduleHint::Stages:
    case ScheduleHint::AsyncCopy:
    case ScheduleHint::SharedMemory:
    case ScheduleHint::SharedPadding: return kind == OpKind::GraphMatmul || kind == OpKind::GraphAttention;
  }
  return false;
}

void copy_schedule_hints(const Operation* from, Operation* to) {
  for (ScheduleHint hint : kScheduleHints) {
    std::string_view name = schedule_hint_name(hint);
    Attribute value = from->attr(name);
    if (value && !to->has_attr(name) && schedule_hint_applies(hint, to->kind())) to->set_attr(name, value);
  }
}

bool has_schedule_hints(const Operation* op) {
  for (std::string_view name : kScheduleHintNames)
    if (op->has_attr(name)) return true;
  return false;
}

}  // namespace tessera::ir
