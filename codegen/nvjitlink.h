// PTX -> cubin in-process with libnvJitLink from the CUDA Toolkit: the same
// PTX assembler as ptxas, without a process or temporary files. The library
// is loaded with dlopen when a run needs it; tesserac has no build-time
// dependency on the toolkit, and without the library PTX output still works.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "codegen/gpu_arch.h"

namespace tessera::codegen {

struct NvJitLinkApi;  // the entry points resolved from the library

class NvJitLink {
 public:
  // `explicit_path` when given (nothing else is tried); else
  // libnvJitLink.so.13, then libnvJitLink.so, in <cuda_root>/lib64,
  // /usr/local/cuda/lib64 and the dynamic loader's search path. Null when
  // none loads; `error` then says what was tried and why it failed.
  static std::unique_ptr<NvJitLink> load(const std::string& explicit_path, const std::string& cuda_root,
                                         std::string& error);
  ~NvJitLink();
  NvJitLink(const NvJitLink&) = delete;
  NvJitLink& operator=(const NvJitLink&) = delete;

  const std::string& path() const { return path_; }

  // Assembles `ptx` for `arch` as `ptxas -arch=<arch> -O<opt_level>
  // [-lineinfo] [-g] <ptxas_options>` would. On failure returns nvJitLink's
  // error log. `messages` receives its info log (what ptxas prints for -v).
  std::optional<std::string> assemble(const std::string& ptx, const GpuArch& arch, int opt_level, bool line_info,
                                      bool debug_info, const std::vector<std::string>& ptxas_options,
                                      std::string& cubin, std::string& messages) const;

 private:
  NvJitLink() = default;
  void* handle_ = nullptr;
  std::string path_;
  std::unique_ptr<NvJitLinkApi> api_;
};

// The options given to nvJitLinkCreate for one assembly (exposed for tests).
std::vector<std::string> nvjitlink_options(const GpuArch& arch, int opt_level, bool line_info, bool debug_info,
                                           const std::vector<std::string>& ptxas_options);

}  // namespace tessera::codegen
