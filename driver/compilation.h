// Compilation as a library: a .tsr source through lexing, parsing, sema,
// lowering and the IR pipeline (ir/pipeline.h), one phase at a time so that a
// tool can stop after any of them and print what it has (docs/driver.md).
// Code generation from the resulting module is in gpu_code.h, cpu_code.h and
// aot_object.h; loading it into the runtime in loader.h.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "frontend/ast/ast.h"
#include "frontend/lex/lexer.h"
#include "ir/core/ir.h"
#include "ir/passes/pass_manager.h"
#include "ir/pipeline.h"
#include "driver/autotune.h"
#include "driver/options.h"
#include "driver/overrides.h"
#include "ir/schedule_to_tile/kernel_library.h"
#include "sema/sema.h"
#include "support/diagnostics/diagnostics.h"

namespace tessera::driver {

class Compilation {
 public:
  // Called as each phase starts ("lex", "parse", "sema", "lower", "ir
  // passes"): tools use it to name the phase in crash reports.
  using PhaseHook = std::function<void(const char* phase)>;

  Compilation(SourceManager& sources, DiagnosticEngine& diags, PhaseHook on_phase = {});
  ~Compilation();
  Compilation(const Compilation&) = delete;
  Compilation& operator=(const Compilation&) = delete;

  // Loads the input ("-" reads standard input); nullopt with `error` set
  // when it cannot be read (the tool words the diagnostic).
  std::optional<FileId> load(const std::string& path, std::string& error);
  // As load, with -D overrides applied to the text (driver/overrides.h).
  std::optional<FileId> load(const std::string& path, const std::vector<Override>& overrides, std::string& error);
  // Or the input's text itself, named `name` in diagnostics (the fuzzers).
  FileId load_text(std::string name, std::string text);

  // Each phase runs once, on the loaded file, after the one before it.
  const TokenizedBuffer& lex();
  const Ast& parse();
  // Sema; only on a file that parsed without errors (a recovered parse
  // leaves holes that would give misleading follow-on errors): null otherwise.
  // Then every point of each autotuned kernel's space (driver/autotune.h).
  const sema::TypedModule* check();
  // Lowering and the IR pipeline at `opt_level` (ir::compile_pipeline), on
  // a module sema accepted; null after an error. Without `run_pipeline` the
  // IR exactly as lowering makes it (for printing only: code generation
  // needs the pipeline's layouts).
  // `stage` stops the pipeline early (--emit=graph-ir, schedule-ir).
  // With `only_kernel`, that kernel and the helpers it calls alone (what
  // `tesserac run --kernel` runs: another kernel of the file that cannot
  // be lowered does not stop it).
  ir::Operation* lower(int opt_level, bool run_pipeline = true, ir::PipelineStage stage = ir::PipelineStage::Tile,
                       const std::string& only_kernel = {});

  // The loaded file as IR text (what tesserac --emit=tile-ir or tesserac-opt
  // print), verified, with the pipeline at `opt_level` run on it: IR from
  // anywhere compiles like IR from lowering. Null after an error.
  ir::Operation* parse_ir(int opt_level, ir::PipelineStage stage = ir::PipelineStage::Tile);

  // tesserac -c --tune-cache: the points to keep of each autotuned kernel
  // the cache names (driver/autotune.h); before lower().
  void set_tuned_points(std::map<std::string, std::set<std::string>> points) { tuned_points_ = std::move(points); }

  // Where generate-kernels finds the stdlib's kernels; the default is
  // ir::default_stdlib_directory().
  void set_stdlib_directory(std::string directory);
  // The module will run on the CPU target alone: graph code takes the
  // stdlib's CPU forms (ir::PassContext::cpu_only); before lower().
  void set_cpu_only(bool cpu_only) { cpu_only_ = cpu_only; }
  // Whether the pipeline overlaps collectives with independent work (the
  // pass overlap-collectives; --no-overlap-collectives turns it off); before lower().
  void set_overlap_collectives(bool overlap) { overlap_collectives_ = overlap; }
  // The module will run this @jit function alone (`tesserac run --func`):
  // lower() keeps of the lowered module only what it reaches (the kernels
  // it launches, the functions it calls, their rules and variants), so the
  // rest of the file is not compiled; before lower().
  void set_entry_function(std::string name) { entry_function_ = std::move(name); }

  // The autotuned kernels: their points, kept or pruned (after check(); the
  // lowering prunes more), for --emit=tuning and the tuner.
  const std::vector<AutotunedKernel>& autotuned() const { return autotuned_; }
  // Registers spilling as a prune reason (docs/autotuning.md, "Spills"):
  // when the lowered module has tuned variants and a PTX assembler is
  // found, assembles it for the first architecture of `options` with -v and
  // prunes every variant that spills, unless every point of its kernel
  // does (then the least-spilling one is kept, with a warning); lowers
  // again (at `opt_level`, to `stage`) when it pruned one. The module.
  ir::Operation* prune_spilling_points(int opt_level, ir::PipelineStage stage, const CodegenOptions& options,
                                       const std::string& only_kernel = {});

  // The tuning spaces generate-kernels made for graph code (its generated
  // kernels' and the stdlib GEMM's), after the pipeline ran.
  const std::vector<ir::GeneratedTuning>& generated_tuning() const { return generated_tuning_; }

  FileId file() const { return file_; }
  ValueStores& values() { return values_; }
  const TokenizedBuffer& tokens() const { return *tokens_; }
  const Ast& ast() const { return ast_; }
  const sema::TypedModule* typed() const { return typed_.get(); }
  ir::Context& context() { return context_; }
  ir::Operation* module() const { return module_.get(); }
  DiagnosticEngine& diags() { return diags_; }

 private:
  ir::Operation* run_pipeline(int opt_level, ir::PipelineStage stage);
  void enter(const char* phase) {
    if (on_phase_) on_phase_(phase);
  }

  SourceManager& sources_;
  DiagnosticEngine& diags_;
  PhaseHook on_phase_;
  FileId file_;
  ValueStores values_;
  std::optional<TokenizedBuffer> tokens_;
  Ast ast_;
  std::unique_ptr<sema::TypedModule> typed_;
  std::vector<AutotunedKernel> autotuned_;
  std::vector<ir::GeneratedTuning> generated_tuning_;
  std::map<std::string, std::map<std::string, std::string>> spilling_generated_;  // kernel -> point -> reason
  std::optional<std::map<std::string, std::set<std::string>>> tuned_points_;
  ir::Context context_;
  ir::OwningModule module_;
  std::unique_ptr<ir::KernelLibrary> library_;
  bool cpu_only_ = false;
  bool overlap_collectives_ = true;
  std::string entry_function_;
};

}  // namespace tessera::driver
