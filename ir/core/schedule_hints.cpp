#include "ir/core/schedule_hints.h"

#include <array>

namespace tessera::ir {

namespace {

constexpr std::array<std::string_view, 6> kHints = {"tile", "stages", "async_copy", "shared_memory", "shared_padding",
                                                     "vectorize"};

}  // namespace

std::span<const std::string_view> schedule_hint_names() { return kHints; }

bool schedule_hint_applies(std::string_view name, OpKind kind) {
  if (name == "vectorize") return kind == OpKind::GraphElementwise || kind == OpKind::GraphCast;
  return kind == OpKind::GraphMatmul || kind == OpKind::GraphAttention;
}

void copy_schedule_hints(const Operation* from, Operation* to) {
  for (std::string_view name : kHints) {
    Attribute value = from->attr(name);
    if (value && !to->has_attr(name) && schedule_hint_applies(name, to->kind())) to->set_attr(name, value);
  }
}

bool has_schedule_hints(const Operation* op) {
  for (std::string_view name : kHints)
    if (op->has_attr(name)) return true;
  return false;
}

}  // namespace tessera::ir
