#include "codegen/nvjitlink.h"

#include <dlfcn.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>

namespace tessera::codegen {

// Our own declarations of the few nvJitLink entry points we call, as
// nvJitLink.h (CUDA 12 and 13) declares them; the header is not needed to
// build. The enums are plain ints in the C ABI.
namespace {

using Handle = struct NvJitLinkOpaque*;
using Result = int;                   // nvJitLinkResult; 0 is NVJITLINK_SUCCESS
constexpr int kInputPtx = 2;          // NVJITLINK_INPUT_PTX

const char* result_name(Result r) {
  switch (r) {
    case 0: return "NVJITLINK_SUCCESS";
    case 1: return "NVJITLINK_ERROR_UNRECOGNIZED_OPTION";
    case 2: return "NVJITLINK_ERROR_MISSING_ARCH";
    case 3: return "NVJITLINK_ERROR_INVALID_INPUT";
    case 4: return "NVJITLINK_ERROR_PTX_COMPILE";
    case 5: return "NVJITLINK_ERROR_NVVM_COMPILE";
    case 6: return "NVJITLINK_ERROR_INTERNAL";
    case 7: return "NVJITLINK_ERROR_THREADPOOL";
    case 8: return "NVJITLINK_ERROR_UNRECOGNIZED_INPUT";
    case 9: return "NVJITLINK_ERROR_FINALIZE";
    case 10: return "NVJITLINK_ERROR_NULL_INPUT";
    case 11: return "NVJITLINK_ERROR_INCOMPATIBLE_OPTIONS";
    case 12: return "NVJITLINK_ERROR_INCORRECT_INPUT_TYPE";
    case 13: return "NVJITLINK_ERROR_ARCH_MISMATCH";
    case 14: return "NVJITLINK_ERROR_OUTDATED_LIBRARY";
    case 15: return "NVJITLINK_ERROR_MISSING_FATBIN";
    case 16: return "NVJITLINK_ERROR_UNRECOGNIZED_ARCH";
    case 17: return "NVJITLINK_ERROR_UNSUPPORTED_ARCH";
    case 18: return "NVJITLINK_ERROR_LTO_NOT_ENABLED";
    default: return "an unknown nvJitLink error";
  }
}

std::string trimmed(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ' || s.back() == '\0')) s.pop_back();
  return s;
}

}  // namespace

struct NvJitLinkApi {
  Result (*create)(Handle*, uint32_t, const char* const*) = nullptr;
  Result (*destroy)(Handle*) = nullptr;
  Result (*add_data)(Handle, int, const void*, size_t, const char*) = nullptr;
  Result (*complete)(Handle) = nullptr;
  Result (*get_linked_cubin_size)(Handle, size_t*) = nullptr;
  Result (*get_linked_cubin)(Handle, void*) = nullptr;
  Result (*get_error_log_size)(Handle, size_t*) = nullptr;
  Result (*get_error_log)(Handle, char*) = nullptr;
  Result (*get_info_log_size)(Handle, size_t*) = nullptr;
  Result (*get_info_log)(Handle, char*) = nullptr;
};

namespace {

// The unversioned name (exported by CUDA 12 and 13), else the CUDA 13 one
// that nvJitLink.h's inline wrappers call.
template <typename F>
bool resolve(void* handle, const char* name, F& function) {
  void* symbol = ::dlsym(handle, name);
  if (!symbol) symbol = ::dlsym(handle, ("__" + std::string(name) + "_13_0").c_str());
  function = reinterpret_cast<F>(symbol);
  return symbol != nullptr;
}

}  // namespace

std::unique_ptr<NvJitLink> NvJitLink::load(const std::string& explicit_path, const std::string& cuda_root,
                                           std::string& error) {
  namespace fs = std::filesystem;
  std::vector<std::string> candidates;
  if (!explicit_path.empty()) {
    candidates.push_back(explicit_path);
  } else {
    for (const std::string& dir : {cuda_root + "/lib64", std::string("/usr/local/cuda/lib64")})
      for (const char* name : {"libnvJitLink.so.13", "libnvJitLink.so"}) {
        std::error_code ec;
        std::string path = (fs::path(dir) / name).string();
        if (fs::exists(path, ec)) candidates.push_back(path);
      }
    candidates.push_back("libnvJitLink.so.13");  // the loader's search path
    candidates.push_back("libnvJitLink.so");
  }
  error.clear();
  for (const std::string& candidate : candidates) {
    // RTLD_LOCAL: nvJitLink's symbols stay out of the global namespace.
    void* handle = ::dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
      if (error.empty()) error = ::dlerror();
      continue;
    }
    auto api = std::make_unique<NvJitLinkApi>();
    bool complete = resolve(handle, "nvJitLinkCreate", api->create) &&
                    resolve(handle, "nvJitLinkDestroy", api->destroy) &&
                    resolve(handle, "nvJitLinkAddData", api->add_data) &&
                    resolve(handle, "nvJitLinkComplete", api->complete) &&
                    resolve(handle, "nvJitLinkGetLinkedCubinSize", api->get_linked_cubin_size) &&
                    resolve(handle, "nvJitLinkGetLinkedCubin", api->get_linked_cubin) &&
                    resolve(handle, "nvJitLinkGetErrorLogSize", api->get_error_log_size) &&
                    resolve(handle, "nvJitLinkGetErrorLog", api->get_error_log) &&
                    resolve(handle, "nvJitLinkGetInfoLogSize", api->get_info_log_size) &&
                    resolve(handle, "nvJitLinkGetInfoLog", api->get_info_log);
    if (!complete) {
      error = "'" + candidate + "' lacks the nvJitLink entry points";
      ::dlclose(handle);
      continue;
    }
    std::unique_ptr<NvJitLink> loaded(new NvJitLink());
    loaded->handle_ = handle;
    loaded->path_ = candidate;
    loaded->api_ = std::move(api);
    error.clear();
    return loaded;
  }
  return nullptr;
}

// The library stays loaded until the process exits: nvJitLink may keep
// worker threads and caches that must not outlive its code.
NvJitLink::~NvJitLink() = default;

std::vector<std::string> nvjitlink_options(const GpuArch& arch, int opt_level, bool line_info, bool debug_info,
                                           const std::vector<std::string>& ptxas_options) {
  // nvJitLink takes -O0 and -O3 only; -O1 and -O2 reach the assembler
  // through -Xptxas (the same code as ptxas's; repeating -O0/-O3 there makes
  // it warn about a redefined option).
  // -g sets the level itself (-O0) and warns about another.
  std::vector<std::string> options{"-arch=" + arch.name()};
  if (debug_info) {
    options.push_back("-g");
  } else {
    options.push_back(opt_level == 0 ? "-O0" : "-O3");
    if (opt_level == 1 || opt_level == 2) options.push_back("-Xptxas=-O" + std::to_string(opt_level));
    if (line_info) options.push_back("-lineinfo");
  }
  for (const std::string& option : ptxas_options) options.push_back("-Xptxas=" + option);
  return options;
}

std::optional<std::string> NvJitLink::assemble(const std::string& ptx, const GpuArch& arch, int opt_level,
                                               bool line_info, bool debug_info,
                                               const std::vector<std::string>& ptxas_options, std::string& cubin,
                                               std::string& messages) const {
  std::vector<std::string> options = nvjitlink_options(arch, opt_level, line_info, debug_info, ptxas_options);
  std::vector<const char*> argv;
  for (const std::string& o : options) argv.push_back(o.c_str());
  Handle link = nullptr;
  Result r = api_->create(&link, static_cast<uint32_t>(argv.size()), argv.data());
  if (r != 0 || !link) {
    std::string what = std::string("nvJitLinkCreate: ") + result_name(r) + " (options:";
    for (const std::string& o : options) what += " " + o;
    return what + ")";
  }
  auto log_of = [&](Result (*size_of)(Handle, size_t*), Result (*get)(Handle, char*)) {
    size_t size = 0;
    if (size_of(link, &size) != 0 || size == 0) return std::string();
    std::string log(size, '\0');
    if (get(link, log.data()) != 0) return std::string();
    return trimmed(std::move(log));
  };
  std::optional<std::string> failure;
  // The PTX is handed over with its terminating NUL, as nvJitLink expects text.
  r = api_->add_data(link, kInputPtx, ptx.c_str(), ptx.size() + 1, "kernels.ptx");
  if (r == 0) r = api_->complete(link);
  size_t size = 0;
  if (r == 0) r = api_->get_linked_cubin_size(link, &size);
  if (r == 0) {
    cubin.assign(size, '\0');
    r = api_->get_linked_cubin(link, cubin.data());
  }
  if (r != 0) {
    std::string log = log_of(api_->get_error_log_size, api_->get_error_log);
    failure = log.empty() ? std::string(result_name(r)) : log;
    cubin.clear();
  }
  messages = log_of(api_->get_info_log_size, api_->get_info_log);
  api_->destroy(&link);
  return failure;
}

}  // namespace tessera::codegen
