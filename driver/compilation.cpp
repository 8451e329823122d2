#include "driver/compilation.h"

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
  std::optional<FileId> file = sources_.load_file(path, error);
  if (file) file_ = *file;
  return file;
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
  return diags_.has_errors() ? nullptr : typed_.get();
}

ir::Operation* Compilation::lower(int opt_level, bool run_passes) {
  if (!typed_ || diags_.has_errors()) return nullptr;
  enter("lower");
  module_ = ir::lower_to_tile_ir(context_, ast_, values_, *typed_, diags_);
  if (!module_) return nullptr;
  return run_passes ? run_pipeline(opt_level) : module_.get();
}

ir::Operation* Compilation::parse_ir(int opt_level) {
  internal_check(file_.valid() && !module_, "driver", "parse_ir() without a loaded file, or twice");
  enter("ir parser");
  module_ = ir::parse_module(context_, sources_, file_, diags_);
  if (!module_ || !ir::verify_and_report(module_.get(), diags_)) return nullptr;
  return run_pipeline(opt_level);
}

ir::Operation* Compilation::run_pipeline(int opt_level) {
  enter("ir passes");
  ir::PassContext pass_context{context_, diags_};
  if (!ir::run_pipeline(module_.get(), pass_context, ir::compile_pipeline(opt_level))) return nullptr;
  return module_.get();
}

}  // namespace tessera::driver
