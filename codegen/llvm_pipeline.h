// LLVM's -O pipeline, shared by the NVPTX and CPU targets.
#pragma once

namespace llvm {
class Module;
class TargetMachine;
}  // namespace llvm

namespace tessera::codegen {

// Runs LLVM's default per-module pipeline at -O`opt_level` (nothing at -O0)
// with the target's cost model.
void run_llvm_pipeline(llvm::Module& module, llvm::TargetMachine* machine, int opt_level);

}  // namespace tessera::codegen
