#include "driver/compilation.h"

#include <cstdlib>
#include <string_view>

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
  std::optional<std::string> text = apply_overrides(sources_.contents(*file), overrides, error);
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
  std::vector<std::string_view> passes;
  for (std::string_view pass : ir::compile_pipeline(opt_level, stage))
    if (overlap_collectives_ || pass != "overlap-collectives") passes.push_back(pass);
  if (!ir::run_pipeline(module_.get(), pass_context, passes)) return nullptr;
  return module_.get();
}

}  // namespace tessera::driver
