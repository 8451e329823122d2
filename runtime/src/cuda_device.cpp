// CUDA devices through the driver API, loaded at run time with dlopen so that
// neither the build nor a GPU-less machine needs the CUDA Toolkit. Only the
// few driver types and entry points used here are declared.
#include <dlfcn.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <type_traits>

#include "dynamic_library.h"
#include "runtime_internal.h"

namespace tessera::rt {
namespace {

using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
struct CUctx_st;
struct CUmod_st;
struct CUfunc_st;
struct CUstream_st;
struct CUevent_st;
using CUcontext = CUctx_st*;
using CUmodule = CUmod_st*;
using CUfunction = CUfunc_st*;
using CUstream = CUstream_st*;
using CUevent = CUevent_st*;

constexpr CUresult CUDA_SUCCESS = 0;
constexpr CUresult CUDA_ERROR_STUB_LIBRARY = 34;
constexpr CUresult CUDA_ERROR_NOT_READY = 600;
constexpr int CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 1;
constexpr int CU_DEVICE_ATTRIBUTE_WARP_SIZE = 10;
constexpr int CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16;
constexpr int CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75;
constexpr int CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76;
constexpr int CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE = 38;
constexpr int CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = 97;
constexpr int CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8;

// The driver entry points (cuda_driver_functions.def), resolved once.
struct Driver {
#define TESS_CUDA_DRIVER_FUNCTION(name, versioned, signature) std::add_pointer_t<signature> name = nullptr;
#include "cuda_driver_functions.def"
#undef TESS_CUDA_DRIVER_FUNCTION
};

// Names of the driver errors the runtime explains, for drivers whose
// cuGetErrorName is missing or fails (the stub library's does).
const char* known_error_name(CUresult r) {
  switch (r) {
    case 1: return "CUDA_ERROR_INVALID_VALUE";
    case 2: return "CUDA_ERROR_OUT_OF_MEMORY";
    case 3: return "CUDA_ERROR_NOT_INITIALIZED";
    case 34: return "CUDA_ERROR_STUB_LIBRARY";
    case 35: return "CUDA_ERROR_INSUFFICIENT_DRIVER";
    case 46: return "CUDA_ERROR_DEVICES_UNAVAILABLE";
    case 100: return "CUDA_ERROR_NO_DEVICE";
    case 101: return "CUDA_ERROR_INVALID_DEVICE";
    case 200: return "CUDA_ERROR_INVALID_IMAGE";
    case 201: return "CUDA_ERROR_INVALID_CONTEXT";
    case 209: return "CUDA_ERROR_NO_BINARY_FOR_GPU";
    case 218: return "CUDA_ERROR_INVALID_PTX";
    case 222: return "CUDA_ERROR_UNSUPPORTED_PTX_VERSION";
    case 500: return "CUDA_ERROR_NOT_FOUND";
    case 600: return "CUDA_ERROR_NOT_READY";
    case 700: return "CUDA_ERROR_ILLEGAL_ADDRESS";
    case 701: return "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES";
    case 719: return "CUDA_ERROR_LAUNCH_FAILED";
    case 804: return "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE";
    case 999: return "CUDA_ERROR_UNKNOWN";
    default: return nullptr;
  }
}

// "CUDA_ERROR_X (code): description".
std::string error_name(const Driver& d, CUresult r) {
  const char* name = nullptr;
  const char* text = nullptr;
  if (d.cuGetErrorName && d.cuGetErrorName(r, &name) != CUDA_SUCCESS) name = nullptr;
  if (d.cuGetErrorString && d.cuGetErrorString(r, &text) != CUDA_SUCCESS) text = nullptr;
  if (!name) name = known_error_name(r);
  return fmt::format("{} ({}){}{}", name ? name : "unknown CUDA error", r, text ? ": " : "", text ? text : "");
}

// What a failing cuInit means, for the errors people meet.
const char* explain_init_error(CUresult r) {
  switch (r) {
    case CUDA_ERROR_STUB_LIBRARY:
      return "the loaded libcuda is the CUDA Toolkit's stub library (lib64/stubs), not the NVIDIA driver: install the "
             "driver, or remove the stubs directory from LD_LIBRARY_PATH";
    case 35: return "the NVIDIA driver is older than this CUDA driver API needs";
    case 100: return "the NVIDIA driver is installed but no CUDA-capable GPU was found";
    case 46: return "the GPUs are busy or unavailable (exclusive compute mode?)";
    case 804: return "the forward-compatibility driver does not support this GPU";
    default: return nullptr;
  }
}

// Loads the driver; returns null and sets `reason` when it cannot.
const Driver* load_driver(std::string& reason) {
  const char* override_path = std::getenv("TESSERA_LIBCUDA");
  const bool overridden = override_path && *override_path;
  const char* path = overridden ? override_path : "libcuda.so.1";
  dlerror();
  void* library = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!library) {
    const std::string error = dl_error();
    reason = overridden ? fmt::format("TESSERA_LIBCUDA={} could not be loaded: {}", path, error)
                        : fmt::format("libcuda.so.1 not found (the NVIDIA driver is not installed): {}", error);
    return nullptr;
  }
  auto d = std::make_unique<Driver>();
  std::string missing;
#define TESS_CUDA_DRIVER_FUNCTION(name, versioned, signature) \
  resolve_function(library, d->name, #name, versioned, &missing);
#include "cuda_driver_functions.def"
#undef TESS_CUDA_DRIVER_FUNCTION
  if (!d->cuInit) {
    reason = fmt::format("{} is not a CUDA driver: it exports no cuInit", path);
    dlclose(library);
    return nullptr;
  }
  // cuInit first: the stub library exports every entry point, and its cuInit
  // says what it is.
  CUresult r = d->cuInit(0);
  if (r != CUDA_SUCCESS) {
    const char* why = explain_init_error(r);
    reason = fmt::format("cuInit failed with {}{}{} (loaded from {})", error_name(*d, r), why ? "; " : "", why ? why : "",
                         path);
    dlclose(library);
    return nullptr;
  }
  if (!missing.empty()) {
    reason = fmt::format("the CUDA driver {} lacks entry points the runtime needs: {}", path, missing);
    dlclose(library);
    return nullptr;
  }
  return d.release();  // kept for the life of the process, like the library
}

struct CudaModule : tessModule_st {
  CUmodule handle = nullptr;
  ~CudaModule() override { kernels.clear(); }
};
struct CudaKernel : tessKernel_st {
  CUfunction function = nullptr;
};
struct CudaStream : tessStream_st {
  CUstream handle = nullptr;
};
struct CudaEvent : tessEvent_st {
  CUevent handle = nullptr;
};

// Every operation first makes the device's primary context current on the
// calling thread (driver contexts are per thread), through `call`'s callers.
class CudaDevice : public tessDevice_st {
 public:
  CudaDevice(const Driver& driver, CUdevice device, int ordinal, CUcontext context)
      : d_(driver), device_(device), ordinal_(ordinal), context_(context) {}

  tessDeviceKind kind() const override { return TESS_DEVICE_CUDA; }
  int cuda_ordinal() const override { return ordinal_; }
  tessStatus make_current() override { return current(); }
  void* native_stream(tessStream stream) override { return handle(stream); }
  std::string name() const override {
    char buffer[256] = {};
    if (d_.cuDeviceGetName(buffer, sizeof buffer - 1, device_) != CUDA_SUCCESS) return fmt::format("cuda:{}", ordinal_);
    return fmt::format("cuda:{} ({})", ordinal_, buffer);
  }

  tessStatus attribute(tessDeviceAttribute attribute, int64_t* value) override {
    CUresult r = CUDA_SUCCESS;
    auto get = [&](int which) {
      int v = 0;
      if (r == CUDA_SUCCESS) r = d_.cuDeviceGetAttribute(&v, which, device_);
      return static_cast<int64_t>(v);
    };
    switch (attribute) {
      case TESS_ATTR_MAX_GROUP_SIZE: *value = get(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK); break;
      case TESS_ATTR_MAX_SHARED_PER_GROUP: *value = get(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN); break;
      case TESS_ATTR_MULTIPROCESSOR_COUNT: *value = get(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT); break;
      case TESS_ATTR_WARP_SIZE: *value = get(CU_DEVICE_ATTRIBUTE_WARP_SIZE); break;
      case TESS_ATTR_L2_CACHE_SIZE: *value = get(CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE); break;
      case TESS_ATTR_COMPUTE_CAPABILITY:
        *value = get(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR) * 10 + get(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
        break;
      default:
        return fail(TESS_ERROR_INVALID_VALUE,
                    fmt::format("tessDeviceGetAttribute: unknown attribute {}", static_cast<int>(attribute)));
    }
    return call("cuDeviceGetAttribute", r);
  }

  tessStatus malloc(size_t bytes, tessDevicePtr* ptr) override {
    if (auto s = current(); s) return s;
    CUdeviceptr p = 0;
    if (auto s = call("cuMemAlloc", d_.cuMemAlloc(&p, bytes ? bytes : 1), fmt::format("{} bytes", bytes)); s) return s;
    *ptr = p;
    return ok();
  }
  tessStatus free(tessDevicePtr ptr) override {
    if (ptr == 0) return ok();
    if (auto s = current(); s) return s;
    return call("cuMemFree", d_.cuMemFree(ptr), fmt::format("address 0x{:x}", ptr));
  }
  tessStatus copy_to_device(tessDevicePtr dst, const void* src, size_t bytes) override {
    if (bytes == 0) return ok();
    if (auto s = current(); s) return s;
    return call("cuMemcpyHtoD", d_.cuMemcpyHtoD(dst, src, bytes), fmt::format("{} bytes to 0x{:x}", bytes, dst));
  }
  tessStatus copy_to_host(void* dst, tessDevicePtr src, size_t bytes) override {
    if (bytes == 0) return ok();
    if (auto s = current(); s) return s;
    return call("cuMemcpyDtoH", d_.cuMemcpyDtoH(dst, src, bytes), fmt::format("{} bytes from 0x{:x}", bytes, src));
  }
  tessStatus copy_on_device(tessDevicePtr dst, tessDevicePtr src, size_t bytes) override {
    if (bytes == 0) return ok();
    if (auto s = current(); s) return s;
    return call("cuMemcpyDtoD", d_.cuMemcpyDtoD(dst, src, bytes),
                fmt::format("{} bytes from 0x{:x} to 0x{:x}", bytes, src, dst));
  }
  tessStatus memset(tessDevicePtr dst, int value, size_t bytes) override {
    if (bytes == 0) return ok();
    if (auto s = current(); s) return s;
    return call("cuMemsetD8", d_.cuMemsetD8(dst, static_cast<unsigned char>(value), bytes),
                fmt::format("{} bytes at 0x{:x}", bytes, dst));
  }

  tessStatus create_stream(tessStream* stream) override {
    if (auto s = current(); s) return s;
    auto s = std::make_unique<CudaStream>();
    s->device = this;
    if (auto st = call("cuStreamCreate", d_.cuStreamCreate(&s->handle, 0)); st) return st;
    *stream = s.release();
    return ok();
  }
  tessStatus synchronize_stream(tessStream stream) override {
    if (auto s = current(); s) return s;
    return call("cuStreamSynchronize", d_.cuStreamSynchronize(handle(stream)));
  }
  tessStatus wait_event(tessStream stream, tessEvent event) override {
    if (auto s = current(); s) return s;
    return call("cuStreamWaitEvent", d_.cuStreamWaitEvent(handle(stream), static_cast<CudaEvent*>(event)->handle, 0));
  }
  tessStatus destroy_stream(tessStream stream) override {
    tessStatus s = current();
    if (!s) s = call("cuStreamDestroy", d_.cuStreamDestroy(handle(stream)));
    delete stream;
    return s;
  }
  tessStatus synchronize() override {
    if (auto s = current(); s) return s;
    return call("cuCtxSynchronize", d_.cuCtxSynchronize());
  }
  tessStatus create_event(tessEvent* event) override {
    if (auto s = current(); s) return s;
    auto e = std::make_unique<CudaEvent>();
    e->device = this;
    if (auto s = call("cuEventCreate", d_.cuEventCreate(&e->handle, 0)); s) return s;
    *event = e.release();
    return ok();
  }
  tessStatus record_event(tessEvent event, tessStream stream) override {
    if (auto s = current(); s) return s;
    return call("cuEventRecord", d_.cuEventRecord(static_cast<CudaEvent*>(event)->handle, handle(stream)));
  }
  tessStatus synchronize_event(tessEvent event) override {
    if (auto s = current(); s) return s;
    return call("cuEventSynchronize", d_.cuEventSynchronize(static_cast<CudaEvent*>(event)->handle));
  }
  tessStatus query_event(tessEvent event, bool* complete) override {
    if (auto s = current(); s) return s;
    const CUresult r = d_.cuEventQuery(static_cast<CudaEvent*>(event)->handle);
    *complete = r == CUDA_SUCCESS;
    return r == CUDA_ERROR_NOT_READY ? ok() : call("cuEventQuery", r);
  }
  tessStatus elapsed(float* ms, tessEvent start, tessEvent end) override {
    if (auto s = current(); s) return s;
    return call("cuEventElapsedTime", d_.cuEventElapsedTime(ms, static_cast<CudaEvent*>(start)->handle,
                                                            static_cast<CudaEvent*>(end)->handle));
  }
  tessStatus destroy_event(tessEvent event) override {
    tessStatus s = current();
    if (!s) s = call("cuEventDestroy", d_.cuEventDestroy(static_cast<CudaEvent*>(event)->handle));
    delete event;
    return s;
  }

  tessStatus load_module(const void* image, size_t bytes, tessModule* module) override {
    if (auto s = current(); s) return s;
    // PTX must end with a NUL; fatbins and cubins carry their own sizes.
    std::string copy(static_cast<const char*>(image), bytes);
    auto m = std::make_unique<CudaModule>();
    m->device = this;
    CUresult r = d_.cuModuleLoadData(&m->handle, copy.c_str());
    if (r != CUDA_SUCCESS)
      return fail(r == 200 || r == 209 || r == 218 || r == 222 ? TESS_ERROR_INVALID_MODULE : TESS_ERROR_DRIVER,
                  fmt::format("cuModuleLoadData on {} failed with {} for a {}-byte image (a fatbin, cubin or PTX "
                              "with code for compute capability {} is needed)",
                              name(), error_name(d_, r), bytes, compute_capability()));
    *module = m.release();
    return ok();
  }
  tessStatus load_cpu_table(const tessCpuKernelEntry*, size_t, tessModule*) override {
    return fail(TESS_ERROR_UNSUPPORTED,
                fmt::format("tessModuleLoadCpuTable: {} cannot run CPU kernels; load a fatbin, cubin or PTX", name()));
  }
  tessStatus find_kernel(tessModule module, const char* name, tessKernel* kernel) override {
    if (auto s = current(); s) return s;
    auto* m = static_cast<CudaModule*>(module);
    std::lock_guard lock(m->mutex);
    if (tessKernel k = m->cached(name)) {
      *kernel = k;
      return ok();
    }
    auto k = std::make_unique<CudaKernel>();
    k->module = module;
    k->name = name;
    // The module spells a '.' of a symbol '$' (PTX names have no '.':
    // codegen/nvptx.cpp, optimize_with).
    std::string ptx_name = name;
    std::replace(ptx_name.begin(), ptx_name.end(), '.', '$');
    CUresult r = d_.cuModuleGetFunction(&k->function, m->handle, ptx_name.c_str());
    if (r != CUDA_SUCCESS)
      return fail(r == 500 ? TESS_ERROR_NOT_FOUND : TESS_ERROR_DRIVER,
                  fmt::format("tessModuleGetKernel: no kernel named '{}' in the module: cuModuleGetFunction failed with {}",
                              name, error_name(d_, r)));
    *kernel = k.get();
    m->kernels.push_back(std::move(k));
    return ok();
  }
  tessStatus unload_module(tessModule module) override {
    tessStatus s = current();
    if (!s) s = call("cuModuleUnload", d_.cuModuleUnload(static_cast<CudaModule*>(module)->handle));
    delete module;
    return s;
  }
  tessStatus launch(tessKernel kernel, const uint32_t grid[3], const uint32_t group[3], size_t dynamic_shared_bytes,
                    tessStream stream, void** args) override {
    if (auto s = current(); s) return s;
    auto* k = static_cast<CudaKernel*>(kernel);
    if (dynamic_shared_bytes > 48 * 1024) {
      CUresult r = d_.cuFuncSetAttribute(k->function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                         static_cast<int>(std::min<size_t>(dynamic_shared_bytes, INT32_MAX)));
      if (r != CUDA_SUCCESS)
        return fail(TESS_ERROR_LAUNCH, fmt::format("launch of '{}' on {}: cannot use {} bytes of dynamic shared memory "
                                                   "(cuFuncSetAttribute failed with {})",
                                                   k->name, name(), dynamic_shared_bytes, error_name(d_, r)));
    }
    CUresult r = d_.cuLaunchKernel(k->function, grid[0], grid[1], grid[2], group[0], group[1], group[2],
                                   static_cast<unsigned>(dynamic_shared_bytes), handle(stream), args, nullptr);
    if (r != CUDA_SUCCESS)
      return fail(r == 1 || r == 701 ? TESS_ERROR_LAUNCH : TESS_ERROR_DRIVER,
                  fmt::format("launch of '{}' on {} with grid {}x{}x{}, group {}x{}x{}, {} dynamic shared bytes: "
                              "cuLaunchKernel failed with {}",
                              k->name, name(), grid[0], grid[1], grid[2], group[0], group[1], group[2],
                              dynamic_shared_bytes, error_name(d_, r)));
    return ok();
  }

 private:
  static CUstream handle(tessStream stream) { return stream ? static_cast<CudaStream*>(stream)->handle : nullptr; }
  tessStatus current() { return call("cuCtxSetCurrent", d_.cuCtxSetCurrent(context_)); }
  int64_t compute_capability() {
    int64_t cc = 0;
    attribute(TESS_ATTR_COMPUTE_CAPABILITY, &cc);
    return cc;
  }
  tessStatus call(const char* what, CUresult r, const std::string& detail = "") {
    if (r == CUDA_SUCCESS) return ok();
    return fail(TESS_ERROR_DRIVER, fmt::format("{} on cuda:{} failed with {}{}{}", what, ordinal_, error_name(d_, r),
                                               detail.empty() ? "" : "; ", detail));
  }

  const Driver& d_;
  CUdevice device_;
  int ordinal_;
  CUcontext context_;
};

}  // namespace

std::vector<std::unique_ptr<tessDevice_st>> make_cuda_devices(std::string& reason, bool& driver_loaded) {
  std::vector<std::unique_ptr<tessDevice_st>> devices;
  const Driver* d = load_driver(reason);
  driver_loaded = d != nullptr;
  if (!d) return devices;
  int count = 0;
  CUresult r = d->cuDeviceGetCount(&count);
  if (r != CUDA_SUCCESS) {
    reason = fmt::format("cuDeviceGetCount failed with {}", error_name(*d, r));
    return devices;
  }
  if (count == 0) {
    reason = "the CUDA driver is installed but reports no GPU";
    return devices;
  }
  std::string unusable;
  for (int i = 0; i < count; ++i) {
    CUdevice device = 0;
    CUcontext context = nullptr;
    r = d->cuDeviceGet(&device, i);
    if (r == CUDA_SUCCESS) r = d->cuDevicePrimaryCtxRetain(&context, device);
    if (r != CUDA_SUCCESS) {
      unusable += fmt::format("{}cuda:{} is unusable: {}", unusable.empty() ? "" : "; ", i, error_name(*d, r));
      continue;
    }
    devices.push_back(std::make_unique<CudaDevice>(*d, device, i, context));
  }
  if (devices.empty()) reason = unusable;
  return devices;
}

}  // namespace tessera::rt
