// GPU code from a Tile IR module: LLVM IR and PTX for one architecture, a
// cubin, a fatbin for several (docs/codegen.md, docs/driver.md). Each
// returns nullopt after reporting a diagnostic.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "codegen/gpu_arch.h"
#include "driver/options.h"
#include "ir/core/ir.h"
#include "support/diagnostics/diagnostics.h"

namespace tessera::driver {

// The architectures of `options.archs` (sm_80 when none), with the tensor-core
// choice of `options.mma`; nullopt after reporting an unknown one.
std::optional<std::vector<codegen::GpuArch>> gpu_archs(const CodegenOptions& options, DiagnosticEngine& diags);

// The one architecture listed, for outputs of one architecture
// (--emit=llvm|ptx|cubin, named by `emit_name` in the error); nullopt after
// reporting.
std::optional<codegen::GpuArch> single_gpu_arch(const CodegenOptions& options, const std::string& emit_name,
                                                DiagnosticEngine& diags);

// The PTX that ships for GPUs newer than those listed: the newest listed
// architecture without its 'a' features (those are not forward compatible).
codegen::GpuArch forward_compatible_arch(const std::vector<codegen::GpuArch>& archs);

// LLVM IR (optimised at the options' level) or PTX for one architecture.
std::optional<std::string> gpu_llvm_ir(ir::Operation* module, const codegen::GpuArch& arch,
                                       const CodegenOptions& options, DiagnosticEngine& diags);
std::optional<std::string> gpu_ptx(ir::Operation* module, const codegen::GpuArch& arch, const CodegenOptions& options,
                                   DiagnosticEngine& diags);

enum class GpuBinary : uint8_t { Cubin, Fatbin };
// A cubin (exactly one architecture listed; `emit_name` words the error) or a
// fatbin (a cubin per architecture and the forward-compatible PTX).
std::optional<std::string> gpu_binary(ir::Operation* module, GpuBinary kind, const CodegenOptions& options,
                                      DiagnosticEngine& diags);

// Each kernel's bytes of spill stores when `module` is assembled by ptxas -v
// or nvJitLink, for every requested architecture (in the order listed: a
// fatbin's architectures may allocate registers differently); nullopt when
// no assembler is found or the code does not compile (nothing reported: the
// compilation itself reports that).
struct ArchSpillStores {
  std::string arch;                       // sm_90
  std::map<std::string, int64_t> stores;  // kernel symbol -> bytes
};
std::optional<std::vector<ArchSpillStores>> kernel_spill_stores(ir::Operation* module, const CodegenOptions& options,
                                                                DiagnosticEngine& diags);

// Whether a PTX assembler (ptxas or libnvJitLink) and fatbinary are found:
// what an AOT object's GpuCode::Auto picks a fatbin by.
bool fatbin_tools_found(const CodegenOptions& options);

}  // namespace tessera::driver
