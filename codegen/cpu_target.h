// The CPU target's back end: Tile IR compiled by LLVM for the machine the
// compiler runs on, as an object file or loaded in-process by ORC's JIT
// (docs/cpu-target.md). The code follows the CPU kernel ABI (docs/abi.md).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "codegen/llvm_emitter.h"

namespace llvm {
class LLVMContext;
class Module;
namespace orc {
class LLJIT;
}
}  // namespace llvm

namespace tessera::codegen {

// The running machine: its triple, data layout, CPU and features.
std::optional<std::string> detect_host_target(HostTarget& target);

// The host's triple when `cpu` is not a CPU LLVM knows for it (the driver's
// codegen.unknown-host-cpu); nullopt when it is, and for "native".
std::optional<std::string> unknown_host_cpu(const std::string& cpu);

// Optimises a module made by emit_host_module at -O`opt_level` for `cpu`:
// "native" (the running machine with all its features, as the JIT uses) or
// an LLVM CPU name of the host architecture ("generic", "x86-64-v3").
std::optional<std::string> optimize_for_host(llvm::Module& module, int opt_level, const std::string& cpu = "native");

// Optimises and emits an ELF object file for the host architecture and `cpu`.
std::optional<std::string> emit_host_object(llvm::Module& module, int opt_level, std::string& object,
                                            const std::string& cpu = "native");

// Kernels compiled and loaded into this process. The table it returns is the
// module's `tessera_cpu_kernels` (an array of tessCpuKernelEntry ended by a
// null name) and stays valid while the HostJit lives.
class HostJit {
 public:
  // Optimises the module at -O`opt_level` and loads it; null with `error` set
  // on failure.
  static std::unique_ptr<HostJit> load(std::unique_ptr<llvm::Module> module,
                                       std::unique_ptr<llvm::LLVMContext> context, int opt_level, std::string& error);
  ~HostJit();
  HostJit(const HostJit&) = delete;
  HostJit& operator=(const HostJit&) = delete;

  const void* kernel_table() const { return kernel_table_; }
  // The address of a symbol the module defines, or null.
  void* lookup(const std::string& name) const;
  uint32_t abi_version() const { return abi_version_; }

 private:
  HostJit() = default;
  std::unique_ptr<llvm::orc::LLJIT> jit_;
  const void* kernel_table_ = nullptr;
  uint32_t abi_version_ = 0;
};

}  // namespace tessera::codegen
