// Sema: schedule directives (docs/language/graph.md, "Schedule directives").
//
// `schedule.tile((64, 128, 32))`, `schedule.vectorize(4)`, ... are
// statements of a @jit function's body: requests about how the kernels the
// compiler generates from that function are built. Each argument is a
// compile-time constant; sema checks the values the language allows and
// records the directive (TypedModule::schedule_directives) for lowering,
// which puts it on the function's graph operations. Whether a kernel can
// honour it is decided when the kernel is generated (ir.schedule-ignored).
#include <fmt/format.h>

#include "sema/builtin_call.h"
#include "sema/checker.h"
#include "support/diagnostics/internal_error.h"

namespace tessera::sema {

Value Checker::check_schedule_directive(BuiltinCall& bc) {
  TypeId none = types_.none();
  if (!function_ || function_->kind != FunctionKind::Jit) {
    bc.check_all_arguments();
    diags_.emit<diag::SemaScheduleOutsideJit>(ast_.range(bc.children[0]), std::string(bc.name));
    return Value{none};
  }
  auto bad = [&](NodeId where, const char* takes, const std::string& got) {
    diags_.emit<diag::SemaScheduleValue>(ast_.range(where), std::string(bc.name), takes, got);
  };
  ScheduleDirective directive;
  switch (bc.id) {
    case BuiltinId::ScheduleTile: {
      auto bound = bc.bind({"sizes"}, 1);
      if (bound.empty()) return Value{none};
      NodeId sizes = bound[0];
      NodeKind kind = ast_.kind(sizes);
      if (kind != NodeKind::Tuple && kind != NodeKind::List) {
        bc.value_of(sizes);
        bad(sizes, "a tuple of tile sizes (BM, BN) or (BM, BN, BK)", "'" + std::string(source_text(sizes)) + "'");
        return Value{none};
      }
      std::vector<NodeId> extents = bc.shape_extents(sizes);
      if (extents.size() < 2 || extents.size() > 3) {
        for (NodeId e : extents) bc.value_of(e);
        bad(sizes, "a tuple of tile sizes (BM, BN) or (BM, BN, BK)", fmt::format("{} sizes", extents.size()));
        return Value{none};
      }
      directive.hint = ScheduleHint::Tile;
      for (NodeId e : extents) {
        std::optional<int64_t> v = bc.require_constant_integer(e, "sizes");
        if (!v) return Value{none};
        if (*v <= 0) {
          bad(e, "positive tile sizes", std::to_string(*v));
          return Value{none};
        }
        directive.values.push_back(*v);
      }
      break;
    }
    case BuiltinId::ScheduleVectorize: {
      auto bound = bc.bind({"width"}, 1);
      if (bound.empty()) return Value{none};
      std::optional<int64_t> v = bc.require_constant_integer(bound[0], "width");
      if (!v) return Value{none};
      if (*v != 1 && *v != 2 && *v != 4 && *v != 8) {
        bad(bound[0], "1, 2, 4 or 8 elements per lane", std::to_string(*v));
        return Value{none};
      }
      directive = {ScheduleHint::Vectorize, {*v}};
      break;
    }
    case BuiltinId::ScheduleLanes: {
      // The lanes of a group: whole warps, at most a group's 1024.
      auto bound = bc.bind({"lanes"}, 1);
      if (bound.empty()) return Value{none};
      std::optional<int64_t> v = bc.require_constant_integer(bound[0], "lanes");
      if (!v) return Value{none};
      if (*v < 32 || *v > 1024 || (*v & (*v - 1)) != 0) {
        bad(bound[0], "a power of two from 32 to 1024 lanes", std::to_string(*v));
        return Value{none};
      }
      directive = {ScheduleHint::Lanes, {*v}};
      break;
    }
    case BuiltinId::SchedulePipelineStages: {
      auto bound = bc.bind({"stages"}, 1);
      if (bound.empty()) return Value{none};
      std::optional<int64_t> v = bc.require_constant_integer(bound[0], "stages");
      if (!v) return Value{none};
      if (*v < 1) {
        bad(bound[0], "at least 1 stage", std::to_string(*v));
        return Value{none};
      }
      directive = {ScheduleHint::Stages, {*v}};
      break;
    }
    case BuiltinId::ScheduleAsyncCopy: {
      auto bound = bc.bind({"enabled"}, 0);
      if (bound.empty()) return Value{none};
      bool enabled = true;
      if (bound[0].valid()) {
        std::optional<bool> v = constant_bool(bc, bound[0], "enabled");
        if (!v) return Value{none};
        enabled = *v;
      }
      directive = {ScheduleHint::AsyncCopy, {enabled ? 1 : 0}};
      break;
    }
    case BuiltinId::ScheduleUseSharedMemory: {
      auto bound = bc.bind({"enabled", "padding"}, 0);
      if (bound.empty()) return Value{none};
      bool enabled = true;
      int64_t padding = -1;  // not given
      if (bound[0].valid()) {
        std::optional<bool> v = constant_bool(bc, bound[0], "enabled");
        if (!v) return Value{none};
        enabled = *v;
      }
      if (bound[1].valid()) {
        std::optional<int64_t> v = bc.require_constant_integer(bound[1], "padding");
        if (!v) return Value{none};
        if (*v < 0) {
          bad(bound[1], "a padding of 0 or more elements", std::to_string(*v));
          return Value{none};
        }
        padding = *v;
      }
      directive = {ScheduleHint::SharedMemory, {enabled ? 1 : 0, padding}};
      break;
    }
    case BuiltinId::SchedulePipeline: {
      // schedule.pipeline(double_buffer=True, stages=None): as a `with` item
      // the products of its block are pipelined (lowering scopes it); as a
      // statement, those of the whole function. double_buffer: 2 stages.
      auto bound = bc.bind({"double_buffer", "stages"}, 0);
      if (bound.empty()) return Value{none};
      int64_t stages = 2;
      if (bound[0].valid()) {
        std::optional<bool> v = constant_bool(bc, bound[0], "double_buffer");
        if (!v) return Value{none};
        stages = *v ? 2 : 1;
      }
      if (bound[1].valid()) {
        std::optional<int64_t> v = bc.require_constant_integer(bound[1], "stages");
        if (!v) return Value{none};
        if (*v < 1) {
          bad(bound[1], "at least 1 stage", std::to_string(*v));
          return Value{none};
        }
        stages = *v;
      }
      directive = {ScheduleHint::Stages, {stages}};
      break;
    }
    case BuiltinId::SchedulePrefetch: {
      // schedule.prefetch(x, scope="shared"): x itself; the products that
      // read it stage its tiles ahead of use (async copies into shared
      // memory).
      auto bound = bc.bind({"x", "scope"}, 1);
      if (bound.empty()) return Value{none};
      std::optional<TypeId> x = graph_tensor_argument(bc, bound[0], "x");
      if (bound[1].valid()) {
        std::optional<std::string> scope = constant_string(bound[1]);
        if (!scope || *scope != "shared") {
          bc.value_of(bound[1]);
          bad(bound[1], "the scope \"shared\"", "'" + std::string(source_text(bound[1])) + "'");
          return Value{x ? *x : types_.error()};
        }
      }
      if (!x) return Value{types_.error()};
      out_.schedule_directives[bc.call.index] = {ScheduleHint::AsyncCopy, {1}, true};
      return Value{*x};
    }
    default: internal_error("sema", "check_schedule_directive called for another builtin");
  }
  out_.schedule_directives[bc.call.index] = std::move(directive);
  return Value{none};
}

}  // namespace tessera::sema
