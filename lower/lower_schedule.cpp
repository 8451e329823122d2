// Lowering: schedule directives (docs/language/graph.md, "Schedule
// directives"). A directive is no code: it becomes an attribute of each
// graph operation of its @jit function that it applies to
// (ir/core/schedule_hints.h), set when the function's body is lowered, so
// that it holds wherever it stands in the body. A directive that applies to
// no operation of its function is a warning (lower.schedule-unused).
// `with schedule.pipeline(...):` scopes its stages to the operations of its
// block; `schedule.prefetch(x)` is x, and asks the products that read it to
// stage it ahead of use (async copies into shared memory).
#include "ir/core/schedule_hints.h"
#include "lower/lowering.h"
#include "support/diagnostics/internal_error.h"

namespace tessera::ir {

Bound Lowering::lower_schedule_directive(NodeId call) {
  auto it = typed_.schedule_directives.find(call.index);
  if (it == typed_.schedule_directives.end()) internal_error("lower", "a schedule directive sema did not record");
  if (it->second.prefetch) {
    Value* x = value(call_argument(call, 0));
    prefetches_.push_back({call, x});
    return Bound{x, {}};
  }
  schedule_directives_.push_back({call, &it->second});
  return {};
}

NodeId Lowering::open_schedule_scope(NodeId statement) {
  auto children = ast_.children(statement);
  for (NodeId item : children.first(children.size() - 1)) {
    NodeId context = ast_.child(item, 0);
    auto directive = ast_.kind(context) == NodeKind::Call ? typed_.schedule_directives.find(context.index)
                                                          : typed_.schedule_directives.end();
    if (!graph_ || directive == typed_.schedule_directives.end() || !is_builtin_call(context, sema::BuiltinId::SchedulePipeline))
      unsupported(context, "'with' other than 'with schedule.pipeline(...)' in a @jit function");
    if (ast_.child(item, 1).valid()) unsupported(item, "'with schedule.pipeline(...) as NAME'");
    // The operations lowered from the block's statements: those whose
    // location is in its source range (applied with the function's
    // directives, whatever path the lowering of the block takes).
    SourceRange body = ast_.range(children.back());
    PresumedLocation first = diags_.sources().presumed(body.begin), last = diags_.sources().presumed(body.end);
    scopes_.push_back(ScheduleScope{context, &directive->second, {first.line, first.column}, {last.line, last.column}});
  }
  return children.back();
}

void Lowering::apply_schedule_directives(Operation* func) {
  // `with schedule.pipeline(...)` blocks first: their hints are not
  // overridden by the function's own directives.
  for (const ScheduleScope& scope : scopes_) {
    bool applied = false;
    func->walk([&](Operation* op) {
      if (!schedule_hint_applies(scope.directive->hint, op->kind()) || !op->loc().known()) return;
      std::pair<uint32_t, uint32_t> at{op->loc().line(), op->loc().column()};
      if (at < scope.begin || at >= scope.end) return;
      std::string_view name = schedule_hint_name(scope.directive->hint);  // stages
      op->set_attr(name, context_.int_attr(scope.directive->values[0]));
      scoped_hints_.insert({op, std::string(name)});
      applied = true;
    });
    if (!applied) {
      SourceRange r = ast_.range(scope.call);
      std::string text(diags_.sources().pointer(r.begin), r.end - r.begin);
      diags_.emit<diag::LowerScheduleUnused>(r, text, std::string(func->symbol_name()),
                                             "matrix product or attention in its 'with' block");
    }
  }
  scopes_.clear();
  for (const auto& [call, directive] : schedule_directives_) {
    const std::vector<int64_t>& v = directive->values;
    ScheduleHint hint = directive->hint;
    std::vector<NamedAttribute> attributes;
    switch (hint) {
      case ScheduleHint::Tile:
        attributes.push_back({std::string(schedule_hint_name(hint)), context_.int_array_attr(v)});
        break;
      case ScheduleHint::AsyncCopy:
        attributes.push_back({std::string(schedule_hint_name(hint)), context_.bool_attr(v[0] != 0)});
        break;
      case ScheduleHint::SharedMemory:
        attributes.push_back({std::string(schedule_hint_name(hint)), context_.bool_attr(v[0] != 0)});
        if (v[1] >= 0)
          attributes.push_back({std::string(schedule_hint_name(ScheduleHint::SharedPadding)), context_.int_attr(v[1])});
        break;
      case ScheduleHint::Stages:
      case ScheduleHint::Vectorize:
      case ScheduleHint::Lanes:
      case ScheduleHint::SharedPadding:  // set with shared_memory
        attributes.push_back({std::string(schedule_hint_name(hint)), context_.int_attr(v[0])});
        break;
    }
    bool applied = false;
    func->walk([&](Operation* op) {
      if (!schedule_hint_applies(hint, op->kind())) return;
      for (const NamedAttribute& a : attributes)
        if (!scoped_hints_.count({op, std::string(a.name)})) op->set_attr(a.name, a.value);
      applied = true;
    });
    if (!applied) {
      SourceRange r = ast_.range(call);
      std::string text(diags_.sources().pointer(r.begin), r.end - r.begin);
      diags_.emit<diag::LowerScheduleUnused>(
          r, text, std::string(func->symbol_name()),
          hint == ScheduleHint::Vectorize ? "elementwise operation"
          : hint == ScheduleHint::Lanes   ? "reduction, softmax or norm"
                                          : "matrix product or attention");
    }
  }
  schedule_directives_.clear();
  // Prefetched tensors: each product that reads one copies its tiles ahead
  // of use (async copies into double-buffered shared tiles).
  for (const auto& [call, x] : prefetches_) {
    bool applied = false;
    for (OpOperand* use : x->uses()) {
      Operation* op = use->owner();
      if (!schedule_hint_applies(ScheduleHint::AsyncCopy, op->kind())) continue;
      op->set_attr(schedule_hint_name(ScheduleHint::AsyncCopy), context_.bool_attr(true));
      applied = true;
    }
    if (!applied) {
      SourceRange r = ast_.range(call);
      std::string text(diags_.sources().pointer(r.begin), r.end - r.begin);
      diags_.emit<diag::LowerScheduleUnused>(r, text, std::string(func->symbol_name()),
                                             "matrix product or attention that reads the prefetched tensor");
    }
  }
  prefetches_.clear();
  scoped_hints_.clear();
}

}  // namespace tessera::ir
