#include "ir/passes/pass_manager.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>

#include "support/diagnostics/internal_error.h"
#include "ir/core/verifier.h"
#include "ir/passes/passes.h"

namespace tessera::ir {

const std::vector<PassInfo>& all_passes() {
  static const std::vector<PassInfo> passes = {
#define TESSERA_IR_PASS(Function, Name, Description) {Name, Description, &Function},
#include "ir/passes/passes.def"
#undef TESSERA_IR_PASS
  };
  return passes;
}

const PassInfo* find_pass(std::string_view name) {
  for (const PassInfo& p : all_passes())
    if (p.name == name) return &p;
  return nullptr;
}

bool PassManager::add(std::string_view name) {
  const PassInfo* p = find_pass(name);
  if (!p) return false;
  pipeline_.push_back(p);
  return true;
}

bool PassManager::run(Operation* module, PassContext& context) {
  struct Timing {
    std::string_view name;
    double seconds;
  };
  std::vector<Timing> timings;
  for (const PassInfo* pass : pipeline_) {
    auto start = std::chrono::steady_clock::now();
    pass->run(module, context);
    double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    timings.push_back({pass->name, seconds});
    if (context.diags.has_errors()) return false;
    if (options_.verify_each) {
      auto errors = verify(module);
      if (!errors.empty())
        internal_error("pass " + std::string(pass->name),
                       fmt::format("the pass left invalid IR: '{}' {}", errors[0].op->name(), errors[0].message));
    }
    bool print = options_.print_after_all || std::find(options_.print_after.begin(), options_.print_after.end(),
                                                       pass->name) != options_.print_after.end();
    if (print) {
      std::string text = fmt::format("// -----// IR after {} //----- //\n", pass->name);
      text += print_operation(module, options_.print);
      std::fputs(text.c_str(), options_.print_stream);
    }
  }
  if (options_.time_passes) {
    double total = 0;
    for (auto& t : timings) total += t.seconds;
    std::string report = "===-------------------------------------------------------------------------===\n";
    report += "                         ... Pass execution timing report ...\n";
    report += "===-------------------------------------------------------------------------===\n";
    report += fmt::format("  Total Execution Time: {:.4f} seconds\n\n   ---Wall Time---  --- Name ---\n", total);
    for (auto& t : timings)
      report += fmt::format("   {:.4f} ({:5.1f}%)  {}\n", t.seconds, total > 0 ? 100.0 * t.seconds / total : 0.0,
                            t.name);
    report += fmt::format("   {:.4f} (100.0%)  Total\n", total);
    std::fputs(report.c_str(), options_.print_stream);
  }
  return true;
}

// --- verify ----------------------------------------------------------------------

void run_verify_pass(Operation* module, PassContext& context) { verify_and_report(module, context.diags); }

}  // namespace tessera::ir
