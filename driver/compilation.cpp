#include "driver/compilation.h"

#include <cstdlib>
#include <string_view>

#include "driver/gpu_code.h"
#include "frontend/parse/parse.h"
#include "ir/core/ir_text.h"
#include "ir/core/verifier.h"
#include "ir/pipeline.h"
#include "lower/lower.h"
#include "support/diagnostics/internal_error.h"

namespace tessera::driver {

Compilation::Compilation(SourceManager& sources, DiagnosticEngine& diags, PhaseHook on_phase)
    : sources_(sources), diags_(diags), on_phase_(std::move(on_phase)) {}

Compilation::~Compilation() = default;

std::optional<FileId> Compilation::load(const std::string& path, std::string& error) {
  return load(path, {}, error);
}

std::optional<FileId> Compilation::load(const std::string& path, const std::vector<Override>& overrides,
                                        std::string& error) {
  std::optional<FileId> file = sources_.load_file(path, error);
  if (!file || overrides.empty()) {
    if (file) file_ = *file;
    return file;
  }
  std::optional<std::string> text = apply_overrides(sources_.contents(*file), sources_.file_name(*file), overrides, error);
  if (!text) return std::nullopt;
  file_ = sources_.add_file(std::string(sources_.file_name(*file)), std::move(*text));
  return file_;
}

FileId Compilation::load_text(std::string name, std::string text) {
  file_ = sources_.add_file(std::move(name), std::move(text));
  return file_;
}

const TokenizedBuffer& Compilation::lex() {
  internal_check(file_.valid() && !tokens_, "driver", "lex() without a loaded file, or twice");
  enter("lex");
  tokens_.emplace(lex_file(file_, sources_, values_, diags_));
  return *tokens_;
}

const Ast& Compilation::parse() {
  internal_check(tokens_.has_value(), "driver", "parse() before lex()");
  enter("parse");
  parse_file(*tokens_, ast_, values_, diags_);
  return ast_;
}

const sema::TypedModule* Compilation::check() {
  if (diags_.has_errors()) return nullptr;
  enter("sema");
  typed_ = sema::check_module(ast_, values_, diags_);
  if (!diags_.has_errors()) autotuned_ = check_autotune_points(ast_, values_, *typed_, diags_);
  return diags_.has_errors() ? nullptr : typed_.get();
}

ir::Operation* Compilation::lower(int opt_level, bool run_passes, ir::PipelineStage stage,
                                  const std::string& only_kernel) {
  if (!typed_ || diags_.has_errors()) return nullptr;
  enter("lower");
  module_ = ir::lower_to_tile_ir(context_, ast_, values_, *typed_, diags_, only_kernel, true);
  if (!module_) return nullptr;
  bool variants_ok = true;
  for (AutotunedKernel& kernel : autotuned_)
    if (only_kernel.empty() || only_kernel == kernel.name)
      variants_ok = lower_autotune_points(kernel, context_, module_.get(), ast_, values_, diags_,
                                          tuned_points_ ? &*tuned_points_ : nullptr) &&
                    variants_ok;
  if (!variants_ok) return nullptr;
  bind_tuned_launches(module_.get(), context_, autotuned_);
  if (!entry_function_.empty() && ir::lookup_function(module_.get(), entry_function_))
    ir::erase_unreachable_functions(module_.get(), [&](ir::Operation* func) {
      return func->symbol_name() == entry_function_ || func->region(0).empty();
    });
  return run_passes ? run_pipeline(opt_level, stage) : module_.get();
}

ir::Operation* Compilation::parse_ir(int opt_level, ir::PipelineStage stage) {
  internal_check(file_.valid() && !module_, "driver", "parse_ir() without a loaded file, or twice");
  enter("ir parser");
  module_ = ir::parse_module(context_, sources_, file_, diags_);
  if (!module_ || !ir::verify_and_report(module_.get(), diags_)) return nullptr;
  return run_pipeline(opt_level, stage);
}

void Compilation::set_stdlib_directory(std::string directory) {
  library_ = std::make_unique<ir::DirectoryKernelLibrary>(std::move(directory));
}

ir::Operation* Compilation::run_pipeline(int opt_level, ir::PipelineStage stage) {
  enter("ir passes");
  if (!library_) set_stdlib_directory(ir::default_stdlib_directory());
  ir::PassContext pass_context{context_, diags_, library_.get(), cpu_only_};
  // The stdlib GEMM's points for the tuner (docs/autotuning.md, "Stdlib
  // kernels"), unless tuning is off in this process: then its default point
  // alone, as the tuner would launch.
  const char* autotune = std::getenv("TESSERA_AUTOTUNE");
  pass_context.tune_stdlib = !(autotune && std::string_view(autotune) == "0");
  generated_tuning_.clear();
  pass_context.generated_tuning = &generated_tuning_;
  pass_context.pruned_points = &spilling_generated_;
  std::vector<std::string_view> passes;
  for (std::string_view pass : ir::compile_pipeline(opt_level, stage))
    if (overlap_collectives_ || pass != "overlap-collectives") passes.push_back(pass);
  if (!ir::run_pipeline(module_.get(), pass_context, passes)) return nullptr;
  return module_.get();
}

namespace {

// A variant's spills on the architecture where it spills most (the first
// listed of equals): a point that spills on any requested architecture is
// pruned, and its reason names that one.
struct WorstSpill {
  int64_t bytes = 0;
  std::string arch;
};

// Of points with these spills, which to prune: every one that spills,
// unless all do; then all but the least-spilling (the first of equals).
// `least` is set to that one when all spill.
std::vector<bool> spilling_to_prune(const std::vector<WorstSpill>& spills, std::optional<size_t>& least) {
  std::vector<bool> prune(spills.size(), false);
  bool all = !spills.empty();
  for (const WorstSpill& s : spills) all = all && s.bytes > 0;
  least.reset();
  for (size_t i = 0; i < spills.size(); ++i) {
    prune[i] = spills[i].bytes > 0;
    if (all && (!least || spills[i].bytes < spills[*least].bytes)) least = i;
  }
  if (least) prune[*least] = false;
  return prune;
}

std::string spill_reason(const WorstSpill& spill) {
  return "registers spill: " + std::to_string(spill.bytes) + " bytes of spill stores on " + spill.arch + " (ptxas -v)";
}

}  // namespace

ir::Operation* Compilation::prune_spilling_points(int opt_level, ir::PipelineStage stage,
                                                  const CodegenOptions& options, const std::string& only_kernel) {
  if (!module_ || diags_.has_errors()) return module_.get();
  bool tuned = false;
  for (const AutotunedKernel& k : autotuned_) {
    size_t kept = 0;
    for (size_t p = 0; p < k.points.size(); ++p) kept += k.points[p].pruned.empty() && k.typed[p] ? 1 : 0;
    tuned = tuned || kept > 1;
  }
  for (const ir::GeneratedTuning& g : generated_tuning_) {
    size_t kept = 0;
    for (const std::string& reason : g.pruned) kept += reason.empty() ? 1 : 0;
    tuned = tuned || kept > 1;
  }
  if (!tuned) return module_.get();
  std::optional<std::vector<ArchSpillStores>> spills = kernel_spill_stores(module_.get(), options, diags_);
  if (!spills || spills->empty()) return module_.get();
  // A variant's spills: its own, its contiguous twin's (NAME$contiguous,
  // what a launch on contiguous tensors runs) and its helpers' (NAME.HELPER),
  // on the architecture where they are most.
  auto spill_of = [&](const std::string& symbol) {
    WorstSpill worst{0, spills->front().arch};
    for (const ArchSpillStores& on : *spills) {
      int64_t total = 0;
      for (const auto& [name, bytes] : on.stores)
        if (name == symbol || name == symbol + "$contiguous" || name.starts_with(symbol + ".")) total += bytes;
      if (total > worst.bytes) worst = {total, on.arch};
    }
    return worst;
  };
  bool pruned = false;
  for (AutotunedKernel& k : autotuned_) {
    std::vector<size_t> kept;
    std::vector<WorstSpill> worst;
    for (size_t p = 0; p < k.points.size(); ++p)
      if (k.points[p].pruned.empty() && k.typed[p]) {
        kept.push_back(p);
        worst.push_back(spill_of(variant_symbol(k, p)));
      }
    if (kept.size() < 2) continue;
    std::optional<size_t> least;
    std::vector<bool> prune = spilling_to_prune(worst, least);
    for (size_t i = 0; i < kept.size(); ++i)
      if (prune[i]) {
        k.points[kept[i]].pruned = spill_reason(worst[i]);
        pruned = true;
      }
    if (least)
      diags_.emit_global<diag::CodegenAutotuneSpills>(k.name, worst[*least].arch, point_text(k, kept[*least]),
                                                      worst[*least].bytes);
  }
  for (const ir::GeneratedTuning& g : generated_tuning_) {
    std::vector<size_t> kept;
    std::vector<WorstSpill> worst;
    for (size_t p = 0; p < g.points.size(); ++p)
      if (g.pruned[p].empty()) {
        kept.push_back(p);
        worst.push_back(spill_of(g.variants[p]));
      }
    if (kept.size() < 2) continue;
    auto text = [&](size_t p) {
      std::string t;
      for (size_t i = 0; i < g.knobs.size(); ++i)
        t += (i ? ", " : "") + g.knobs[i] + "=" + std::to_string(g.points[p][i]);
      return t;
    };
    std::optional<size_t> least;
    std::vector<bool> prune = spilling_to_prune(worst, least);
    for (size_t i = 0; i < kept.size(); ++i)
      if (prune[i]) {
        spilling_generated_[g.kernel][text(kept[i])] = spill_reason(worst[i]);
        pruned = true;
      }
    if (least)
      diags_.emit_global<diag::CodegenAutotuneSpills>(g.kernel, worst[*least].arch, text(kept[*least]),
                                                      worst[*least].bytes);
  }
  if (!pruned) return module_.get();
  return lower(opt_level, true, stage, only_kernel);
}

}  // namespace tessera::driver
