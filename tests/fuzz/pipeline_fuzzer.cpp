// libFuzzer target: the whole compiler short of LLVM's optimiser and ptxas.
// Every input sema accepts is lowered to Tile IR (the IR pipeline included),
// its IR printed and parsed back, and LLVM IR emitted for NVPTX (sm_90a,
// tensor cores, with and without wgmma) and for the host CPU (with bounds
// checks, and the emulated tensor-core paths), each verified by LLVM. An
// internal compiler error, a crash, a sanitizer report or a leak is a bug;
// diagnostics (lower.unsupported and codegen.unsupported included) are fine.
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>

#include "codegen/cpu_target.h"
#include "codegen/gpu_arch.h"
#include "codegen/llvm_emitter.h"
#include "driver/compilation.h"
#include "ir/core/ir_text.h"
#include "support/diagnostics/internal_error.h"

namespace {

[[noreturn]] void bug(const char* what, const std::string& detail) {
  std::fprintf(stderr, "pipeline fuzzer: %s: %s\n", what, detail.c_str());
  std::abort();
}

// The LLVM IR of `module` for one target; a codegen.unsupported diagnostic
// (a null module) is fine.
void emit_nvptx(tessera::ir::Operation* module, bool wgmma, tessera::DiagnosticEngine& diags) {
  std::optional<tessera::codegen::GpuArch> arch = tessera::codegen::parse_gpu_arch("sm_90a");
  arch->wgmma = wgmma;
  llvm::LLVMContext context;
  (void)tessera::codegen::emit_nvptx_module(module, context, *arch, diags, tessera::codegen::DebugInfo::None,
                                            /*bounds_check=*/!wgmma);
}

void emit_host(tessera::ir::Operation* module, tessera::codegen::HostTarget::EmulatedMma mma,
               tessera::DiagnosticEngine& diags) {
  static const tessera::codegen::HostTarget host = [] {
    tessera::codegen::HostTarget target;
    if (auto error = tessera::codegen::detect_host_target(target)) bug("no host target", *error);
    return target;
  }();
  tessera::codegen::HostTarget target = host;
  target.emulate_mma = mma;
  llvm::LLVMContext context;
  (void)tessera::codegen::emit_host_module(module, context, target, diags, /*bounds_check=*/true);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tessera;
  SourceManager sources;
  CollectingDiagnosticConsumer consumer;
  DiagnosticEngine diags(sources, consumer, DiagnosticOptions{false, false, 0});
  driver::Compilation compilation(sources, diags);
  compilation.load_text("fuzz.tsr", std::string(reinterpret_cast<const char*>(data), size));
  try {
    compilation.lex();
    compilation.parse();
    if (compilation.check()) {
      if (ir::Operation* module = compilation.lower(/*opt_level=*/3)) {
        ir::PrintOptions print{true};
        std::string text = ir::print_operation(module, print);
        if (std::string mismatch = ir::round_trip_mismatch(text, print); !mismatch.empty())
          bug("the Tile IR does not print back identically", mismatch);
        // The targets each see the module as the pipeline left it; which
        // variant of each runs depends on the input, so both are reached.
        emit_nvptx(module, size % 2 == 0, diags);
        emit_host(module, static_cast<codegen::HostTarget::EmulatedMma>(size % 3), diags);
      }
    }
  } catch (const InternalError& e) {
    bug("internal compiler error", std::string(e.phase()) + ": " + e.what());
  }
  diags.flush();
  TextDiagnosticPrinter printer(sources, stderr);
  for (const Diagnostic& d : consumer.diagnostics) (void)printer.render(d);
  return 0;
}
