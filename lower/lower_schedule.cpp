// Lowering: schedule directives (docs/language/graph.md, "Schedule
// directives"). A directive is no code: it becomes an attribute of each
// graph operation of its @jit function that it applies to
// (ir/core/schedule_hints.h), set when the function's body is lowered, so
// that it holds wherever it stands in the body. A directive that applies to
// no operation of its function is a warning (lower.schedule-unused).
#include "ir/core/schedule_hints.h"
#include "lower/lowering.h"
#include "support/diagnostics/internal_error.h"

namespace tessera::ir {

Bound Lowering::lower_schedule_directive(NodeId call) {
  auto it = typed_.schedule_directives.find(call.index);
  if (it == typed_.schedule_directives.end()) internal_error("lower", "a schedule directive sema did not record");
  schedule_directives_.push_back({call, &it->second});
  return {};
}

void Lowering::apply_schedule_directives(Operation* func) {
  for (const auto& [call, directive] : schedule_directives_) {
    const std::vector<int64_t>& v = directive->values;
    std::vector<NamedAttribute> attributes;
    if (directive->name == "tile") {
      attributes.push_back({"tile", context_.int_array_attr(v)});
    } else if (directive->name == "async_copy") {
      attributes.push_back({"async_copy", context_.bool_attr(v[0] != 0)});
    } else if (directive->name == "shared_memory") {
      attributes.push_back({"shared_memory", context_.bool_attr(v[0] != 0)});
      if (v[1] >= 0) attributes.push_back({"shared_padding", context_.int_attr(v[1])});
    } else {  // vectorize, stages
      attributes.push_back({directive->name, context_.int_attr(v[0])});
    }
    bool applied = false;
    func->walk([&](Operation* op) {
      if (!schedule_hint_applies(directive->name, op->kind())) return;
      for (const NamedAttribute& a : attributes) op->set_attr(a.name, a.value);
      applied = true;
    });
    if (!applied) {
      SourceRange r = ast_.range(call);
      std::string text(diags_.sources().pointer(r.begin), r.end - r.begin);
      diags_.emit<diag::LowerScheduleUnused>(
          r, text, std::string(func->symbol_name()),
          directive->name == "vectorize" ? "elementwise operation" : "matrix product or attention");
    }
  }
  schedule_directives_.clear();
}

}  // namespace tessera::ir
