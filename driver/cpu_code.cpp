#include "driver/cpu_code.h"

#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/Support/raw_ostream.h>

#include "codegen/cpu_target.h"
#include "codegen/llvm_emitter.h"
#include "driver/target_options.h"
#include "support/diagnostics/internal_error.h"

namespace tessera::driver {

namespace {

std::unique_ptr<llvm::Module> emit(ir::Operation* module, llvm::LLVMContext& context, const CodegenOptions& options,
                                   DiagnosticEngine& diags) {
  codegen::HostTarget target;
  if (auto error = codegen::detect_host_target(target)) internal_error("codegen", *error);
  target.emulate_mma = emulated_mma(options.mma);
  return codegen::emit_host_module(module, context, target, diags, options.bounds_check);
}

}  // namespace

bool host_cpu_known(const CodegenOptions& options, DiagnosticEngine& diags) {
  std::optional<std::string> triple = codegen::unknown_host_cpu(options.host_cpu);
  if (triple) diags.emit_global<diag::CodegenUnknownHostCpu>(options.host_cpu, *triple);
  return !triple;
}

std::optional<std::string> cpu_llvm_ir(ir::Operation* module, const CodegenOptions& options, DiagnosticEngine& diags) {
  llvm::LLVMContext context;
  std::unique_ptr<llvm::Module> llvm_module = emit(module, context, options, diags);
  if (!llvm_module) return std::nullopt;
  if (!host_cpu_known(options, diags)) return std::nullopt;
  if (auto error = codegen::optimize_for_host(*llvm_module, options.opt_level, options.host_cpu))
    internal_error("codegen", *error);
  std::string text;
  llvm::raw_string_ostream(text) << *llvm_module;
  return text;
}

std::optional<std::string> cpu_object(ir::Operation* module, const CodegenOptions& options, DiagnosticEngine& diags) {
  llvm::LLVMContext context;
  std::unique_ptr<llvm::Module> llvm_module = emit(module, context, options, diags);
  if (!llvm_module) return std::nullopt;
  if (!host_cpu_known(options, diags)) return std::nullopt;
  std::string object;
  if (auto error = codegen::emit_host_object(*llvm_module, options.opt_level, object, options.host_cpu))
    internal_error("codegen", *error);
  return object;
}

}  // namespace tessera::driver
