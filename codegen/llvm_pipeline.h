// LLVM's -O pipeline, shared by the NVPTX and CPU targets.
#pragma once

namespace llvm {
class Module;
class TargetMachine;
}  // namespace llvm

namespace tessera::codegen {

// Whether code for `machine` calls glibc's vector math library (libmvec)
// in vectorised loops: x86-64 Linux (glibc) with AVX2. Programs that link
// such code link libmvec (the runtime library's link interface has it).
bool uses_vector_math_library(const llvm::TargetMachine& machine);

// Runs LLVM's default per-module pipeline at -O`opt_level` (nothing at -O0)
// with the target's cost model.
void run_llvm_pipeline(llvm::Module& module, llvm::TargetMachine* machine, int opt_level);

}  // namespace tessera::codegen
