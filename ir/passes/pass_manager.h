// Runs named passes over a module, QBE style: the pipeline is a plain list of
// names, each pass a free function over the module.
//
// Around every pass the manager can print the IR (--print-after-all,
// --print-after=NAME), time it (--time-passes) and verify the result (on by
// default in debug builds; a pass that leaves invalid IR is a compiler bug
// and reported as an internal error naming the pass).
#pragma once

#include <cstdio>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "support/diagnostics/diagnostics.h"
#include "ir/core/ir.h"
#include "ir/core/ir_text.h"

namespace tessera::ir {

// What a pass may use besides the module.
class KernelLibrary;

// The tuning space of a kernel generate-kernels made for graph code (its
// knobs: an elementwise kernel's elements per lane and groups, a rows or
// reduce kernel's lanes) or of the stdlib GEMM it launches, as
// --emit=tuning prints it (docs/autotuning.md, "Generated kernels").
struct GeneratedTuning {
  std::string kernel;    // the tuner's name: the launch's tune_of
  std::string strategy;  // elementwise, rows, reduce, matmul
  std::vector<std::string> knobs;
  std::vector<std::vector<int64_t>> points;  // in the space's order, the first knob varying slowest
  std::vector<std::string> variants;         // each point's function
  std::vector<std::string> pruned;           // each point's reason, empty when kept
  size_t default_point = 0;
  std::string fixed;  // why a knob has one value: "VEC=4 by schedule.vectorize(4)"; "TESSERA_AUTOTUNE=0"
};

struct PassContext {
  Context& context;
  DiagnosticEngine& diags;  // user-facing problems found by a pass (rare)
  // Where generate-kernels finds the stdlib kernels graph operations lower
  // to (kernel_library.h); null: none (a graph.matmul is then an error).
  KernelLibrary* library = nullptr;
  // The module runs on the CPU target alone (`tesserac run` on the CPU
  // device, --target=cpu, an object without GPU code): generate-kernels
  // launches the stdlib's CPU forms (stdlib/gemm_cpu.tsr) where it has them.
  bool cpu_only = false;
  // generate-kernels launches the stdlib GEMM through the tuner, every point
  // of its space compiled, when no schedule.tile pins one
  // (docs/autotuning.md, "Stdlib kernels"); false: its default point alone.
  // The same for the kernels it generates: every point of their spaces
  // (GeneratedTuning); false: each its default point.
  bool tune_stdlib = false;
  // Where generate-kernels records the spaces it made; null: nowhere.
  std::vector<GeneratedTuning>* generated_tuning = nullptr;
  // Points of those spaces not to compile, by kernel and point text
  // ("VEC=4, GROUPS=64"), with the reason (their registers spill: the
  // driver found out by assembling them; docs/autotuning.md, "Spills").
  const std::map<std::string, std::map<std::string, std::string>>* pruned_points = nullptr;
};

// Reports a diagnostic of kind K at `op`: at its source position when its
// location names a loaded file, else as a global diagnostic naming the
// location (IR built by the compiler without positions).
template <DiagnosticKind K, typename... Args>
DiagnosticBuilder report_at(PassContext& context, const Operation* op, Args&&... args) {
  SourceRange range = location_range(context.diags.sources(), op->loc());
  if (range.begin != 0) return context.diags.emit<K>(range, std::forward<Args>(args)...);
  return context.diags.emit_global<K>(std::forward<Args>(args)...);
}

using PassFunction = void (*)(Operation* module, PassContext& context);

struct PassInfo {
  std::string_view name;
  std::string_view description;
  PassFunction run;
};

const std::vector<PassInfo>& all_passes();
const PassInfo* find_pass(std::string_view name);

struct PassManagerOptions {
  bool print_after_all = false;
  std::vector<std::string> print_after;  // pass names
  bool time_passes = false;
  bool verify_each = true;
  PrintOptions print;
  std::FILE* print_stream = stderr;  // IR dumps and the timing report
};

class PassManager {
 public:
  explicit PassManager(PassManagerOptions options = {}) : options_(std::move(options)) {}

  // Appends a pass by name; false when there is no such pass.
  bool add(std::string_view name);
  const std::vector<const PassInfo*>& pipeline() const { return pipeline_; }

  // Runs the pipeline. Returns false when a pass reported a user error.
  bool run(Operation* module, PassContext& context);

 private:
  PassManagerOptions options_;
  std::vector<const PassInfo*> pipeline_;
};

}  // namespace tessera::ir
