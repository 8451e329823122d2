// Tile IR -> LLVM IR for NVPTX.
//
// Each func.func becomes an LLVM function; kernels use the PTX_Kernel
// calling convention (LLVM 22 ignores nvvm.annotations in modules built in
// memory). The kernel ABI (docs/abi.md, docs/codegen.md): parameters in
// source order; a tensor (memref) parameter expands to its pointer, then one
// i64 size per dimension, then one i64 stride (in elements) per dimension; a
// scalar parameter is passed as itself (bf16/f16 as 16-bit floats, bool as
// i8... see docs). Structured control flow becomes basic blocks with phis.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "codegen/gpu_arch.h"
#include "support/diagnostics/diagnostics.h"
#include "ir/core/ir.h"

namespace llvm {
class LLVMContext;
class Module;
}  // namespace llvm

namespace tessera::codegen {

enum class DebugInfo : uint8_t {
  None,
  LineTables,  // -lineinfo: .loc lines pointing at the .tsr source, optimised code
  Full,        // -g: the same line tables (variables are future work); implies -O0 in the driver
};

// Whether any kernel of `module` gets a contiguous variant in GPU code.
bool has_contiguous_variants(ir::Operation* module);

// `bounds_check` (--bounds-check) makes every out-of-bounds tensor or
// shared-memory index an error naming the .tsr location: CUDA's assert on the
// GPU, the launch context's report_error on the CPU.
// Returns null after reporting (codegen.unsupported) an operation this
// backend cannot emit yet.
std::unique_ptr<llvm::Module> emit_nvptx_module(ir::Operation* module, llvm::LLVMContext& context,
                                                const GpuArch& arch, DiagnosticEngine& diags,
                                                DebugInfo debug = DebugInfo::None, bool bounds_check = false);

// The CPU target (docs/cpu-target.md, docs/abi.md): the same Tile IR for the
// host. Each kernel becomes `__tessera_cpu_<name>(void** args, const
// tessCpuLaunchContext*)`, listed in the exported table `tessera_cpu_kernels`
// with `tessera_cpu_abi_version`.
struct HostTarget {
  std::string triple;
  std::string data_layout;
  uint32_t abi_version = 0;
  // tile.mma in the tensor-core layout as on the GPU, to check the GPU code's
  // addressing without a GPU (`tesserac run --mma=sync|wgmma` on the CPU;
  // slower than the SIMT path the CPU takes otherwise). Sync: mma.sync's
  // fragment loads, each mma.m16n8k16 carried out by the lanes of the warp
  // exchanging fragments as the tensor cores do (warp shuffles). Wgmma:
  // where the operands allow wgmma (else as Sync), the same matrix
  // descriptors, each wgmma.mma_async read back through them by the PTX
  // ISA's canonical shared-memory layouts and swizzle.
  enum class EmulatedMma : uint8_t { None, Sync, Wgmma };
  EmulatedMma emulate_mma = EmulatedMma::None;
  // Every kernel's lanes as fibers, the fallback the CPU target keeps for
  // kernels its lane loops do not handle (docs/cpu-target.md): for tests
  // comparing the two (`tesserac run --cpu-lanes=fibers`).
  bool lanes_as_fibers = false;
};
// The CPU's emulation for a --mma value: "sync" and "wgmma" emulate those
// paths, "auto" (and anything else) takes the SIMT path.
inline HostTarget::EmulatedMma emulated_mma(std::string_view mma) {
  if (mma == "sync") return HostTarget::EmulatedMma::Sync;
  if (mma == "wgmma") return HostTarget::EmulatedMma::Wgmma;
  return HostTarget::EmulatedMma::None;
}
// The name of a kernel's contiguous variant in GPU code (its tensors'
// innermost strides 1, pointers 16-byte aligned, no written tensor
// overlapping another: docs/abi.md, "Contiguous variants"), which launchers
// pick when tessContiguousVariantApplies says so: "saxpy$contiguous".
std::string contiguous_variant_name(std::string_view kernel);

std::unique_ptr<llvm::Module> emit_host_module(ir::Operation* module, llvm::LLVMContext& context,
                                               const HostTarget& target, DiagnosticEngine& diags,
                                               bool bounds_check = false);

}  // namespace tessera::codegen
