#include "codegen/llvm_pipeline.h"

#include <llvm/IR/Module.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Target/TargetMachine.h>

namespace tessera::codegen {

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
  llvm::PassBuilder builder(machine, tuning);
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
