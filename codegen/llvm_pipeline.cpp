#include "codegen/llvm_pipeline.h"

#include <cstdlib>
#include <memory>
#include <string_view>

#include <llvm/Analysis/TargetLibraryInfo.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/SystemLibraries.h>
#include <llvm/MC/MCSubtargetInfo.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Target/TargetMachine.h>

namespace tessera::codegen {

bool uses_vector_math_library(const llvm::TargetMachine& machine) {
  const llvm::Triple& triple = machine.getTargetTriple();
  return triple.getArch() == llvm::Triple::x86_64 && triple.isOSLinux() && triple.isGNUEnvironment() &&
         machine.getMCSubtargetInfo()->checkFeatures("+avx2");
}

void run_llvm_pipeline(llvm::Module& module, llvm::TargetMachine* machine, int opt_level) {
  if (opt_level <= 0) return;
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  // SLP vectorisation (off in LLVM's default tuning options, on in clang's
  // -O2/-O3) for the host: a lane's straight-line code, such as a GEMM
  // micro-tile's unrolled outer products, becomes vector code. Not for
  // NVPTX, whose vectors are only the loads and stores its back end forms.
  llvm::PipelineTuningOptions tuning;
  tuning.SLPVectorization = opt_level >= 2 && machine && !machine->getTargetTriple().isNVPTX();
  // A measurement knob, not an option (docs/codegen.md, "Where LLVM's part
  // goes"): TESSERA_NVPTX_LOOP_UNROLL=0 leaves NVPTX loops to ptxas's own
  // unrolling, a third of the -O3 pipeline's instructions on matmul, so that
  // its effect on run time can be measured on a GPU.
  if (machine && machine->getTargetTriple().isNVPTX()) {
    const char* unroll = std::getenv("TESSERA_NVPTX_LOOP_UNROLL");
    if (unroll && std::string_view(unroll) == "0") tuning.LoopUnrolling = false;
  }
  llvm::PassBuilder builder(machine, tuning);
  // Loops the vectorizer widens call glibc's vector math library (libmvec:
  // _ZGVdN8v_expf for 8 expf at once) instead of the scalar function once
  // per element, as clang's -fveclib=libmvec does; registered before the
  // default analyses so that it is the one used.
  std::unique_ptr<llvm::TargetLibraryInfoImpl> library;
  if (machine && uses_vector_math_library(*machine)) {
    library = std::make_unique<llvm::TargetLibraryInfoImpl>(machine->getTargetTriple(), llvm::VectorLibrary::LIBMVEC);
    fam.registerPass([&] { return llvm::TargetLibraryAnalysis(*library); });
  }
  builder.registerModuleAnalyses(mam);
  builder.registerCGSCCAnalyses(cgam);
  builder.registerFunctionAnalyses(fam);
  builder.registerLoopAnalyses(lam);
  builder.crossRegisterProxies(lam, fam, cgam, mam);
  llvm::OptimizationLevel level = opt_level == 1   ? llvm::OptimizationLevel::O1
                                  : opt_level == 2 ? llvm::OptimizationLevel::O2
                                                   : llvm::OptimizationLevel::O3;
  builder.buildPerModuleDefaultPipeline(level).run(module, mam);
}

}  // namespace tessera::codegen
