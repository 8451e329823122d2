// LLVM IR -> PTX through LLVM's NVPTX backend.
#pragma once

#include <optional>
#include <string>

#include "codegen/gpu_arch.h"

namespace llvm {
class Module;
}

namespace tessera::codegen {

struct PtxOptions {
  GpuArch arch;
  int opt_level = 3;            // -O0 .. -O3
  std::string libdevice_path;   // libdevice.10.bc (find_libdevice); empty when there is none
};

// Where libdevice is, or empty when it cannot be found.
std::string find_libdevice(const std::string& cuda_root);
const char* default_cuda_root();
// `cuda_path` (--cuda-path), or default_cuda_root() when it is empty.
inline std::string cuda_root_or_default(const std::string& cuda_path) {
  return cuda_path.empty() ? std::string(default_cuda_root()) : cuda_path;
}

// Links libdevice when the module calls __nv_* math functions, optimises at
// `opt_level` and prints PTX. Returns an error message on failure (the PTX
// goes to `ptx`).
std::optional<std::string> emit_ptx(llvm::Module& module, const PtxOptions& options, std::string& ptx);

// Optimises the module in place (the -O pipeline, for --emit=llvm).
std::optional<std::string> optimize_for_nvptx(llvm::Module& module, const PtxOptions& options);

}  // namespace tessera::codegen
