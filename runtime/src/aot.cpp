// Ahead-of-time modules (tessera_aot.h, docs/aot.md): the checks a launch
// stub makes before anything runs, and lazy, once-per-device loading.
//
// Everything here goes through the public C API, so the devices' own checks
// (limits, handles) still apply underneath; these checks come first because
// they can name the kernel's parameters and symbolic dimensions.
#include <fmt/format.h>

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "host_context.h"
#include "runtime_internal.h"
#include "tessera/tessera_aot.h"

namespace tessera::rt {
namespace {

// What the runtime remembers about one tessAotModule: the module loaded on
// each device that has launched one of its kernels, and the kernel handles.
struct LoadedAotModule {
  std::mutex mutex;
  struct PerDevice {
    tessModule module = nullptr;
    std::vector<tessKernel> kernels;  // by kernel index, null until looked up
    // Their contiguous variants (GPU modules), null where there is none.
    std::vector<tessKernel> variants;
    std::vector<bool> variants_looked_up;
  };
  std::map<tessDevice, PerDevice> devices;
};

std::mutex& cache_mutex() {
  static std::mutex mutex;
  return mutex;
}

// The module's state, created on first use. The object's cache slot holds it
// for the life of the process (modules of a linked program never go away).
LoadedAotModule& state_of(const tessAotModule* module) {
  void* cached = __atomic_load_n(module->cache, __ATOMIC_ACQUIRE);
  if (cached) return *static_cast<LoadedAotModule*>(cached);
  std::lock_guard lock(cache_mutex());
  cached = __atomic_load_n(module->cache, __ATOMIC_ACQUIRE);
  if (!cached) {
    cached = new LoadedAotModule();
    __atomic_store_n(module->cache, cached, __ATOMIC_RELEASE);
  }
  return *static_cast<LoadedAotModule*>(cached);
}

std::string device_name(tessDevice device) {
  char name[128] = "";
  if (tessDeviceGetName(device, name, sizeof name) != TESS_SUCCESS) return "the device";
  return name;
}

tessStatus check_module(const char* function, const tessAotModule* module, uint32_t kernel_index) {
  if (!module) return fail(TESS_ERROR_INVALID_VALUE, fmt::format("{}: `module` is null", function));
  if (module->abi_version != TESS_AOT_ABI_VERSION)
    return fail(TESS_ERROR_INVALID_MODULE,
                fmt::format("{}: the object compiled from '{}' has AOT ABI version {}, this runtime reads version {}: "
                            "recompile it with the tesserac that matches this runtime",
                            function, module->source ? module->source : "?", module->abi_version, TESS_AOT_ABI_VERSION));
  if (!module->cache || !module->kernels)
    return fail(TESS_ERROR_INVALID_MODULE, fmt::format("{}: a malformed AOT module", function));
  if (kernel_index >= module->kernel_count)
    return fail(TESS_ERROR_INVALID_VALUE, fmt::format("{}: kernel index {} is out of range: '{}' has {} kernel(s)",
                                                      function, kernel_index, module->source, module->kernel_count));
  return ok();
}

tessStatus load_on(const tessAotModule* module, tessDevice device, tessModule* loaded) {
  tessDeviceKind kind = TESS_DEVICE_CPU;
  if (auto s = tessDeviceGetKind(device, &kind); s) return s;
  if (kind == TESS_DEVICE_CPU) {
    if (module->cpu_abi_version != TESS_CPU_ABI_VERSION)
      return fail(TESS_ERROR_INVALID_MODULE,
                  fmt::format("the CPU code of '{}' follows CPU ABI version {}, this runtime reads version {}: recompile it",
                              module->source, module->cpu_abi_version, TESS_CPU_ABI_VERSION));
    return tessModuleLoadCpuTable(device, module->cpu_kernels, module->kernel_count, loaded);
  }
  if (module->image_kind == TESS_AOT_IMAGE_NONE || !module->image)
    return fail(TESS_ERROR_UNSUPPORTED,
                fmt::format("'{}' was compiled without GPU code (--gpu-code=none): its kernels run only on the CPU device, "
                            "not on {}",
                            module->source, device_name(device)));
  tessStatus s = tessModuleLoadData(device, module->image, module->image_bytes, loaded);
  if (s)
    return fail(s, fmt::format("loading the GPU code of '{}' ({}) on {}: {}", module->source,
                               module->image_kind == TESS_AOT_IMAGE_FATBIN ? "fatbin" : "PTX", device_name(device),
                               tessGetLastErrorMessage()));
  return ok();
}

// The kernel, or with `contiguous` its contiguous variant when the module
// has one (GPU code: docs/abi.md, "Contiguous variants"; the CPU code's
// kernels pick for themselves).
// The module's code loaded on `device` (on first use); the caller holds
// the state's mutex.
tessStatus loaded_on(const tessAotModule* module, LoadedAotModule& state, tessDevice device,
                     LoadedAotModule::PerDevice*& loaded) {
  LoadedAotModule::PerDevice& on = state.devices[device];
  if (!on.module) {
    if (auto s = load_on(module, device, &on.module); s) return s;
    on.kernels.assign(module->kernel_count, nullptr);
    on.variants.assign(module->kernel_count, nullptr);
    on.variants_looked_up.assign(module->kernel_count, false);
  }
  loaded = &on;
  return ok();
}

tessStatus get_kernel(const tessAotModule* module, uint32_t kernel_index, tessDevice device, tessKernel* kernel,
                      bool contiguous = false) {
  LoadedAotModule& state = state_of(module);
  std::lock_guard lock(state.mutex);
  LoadedAotModule::PerDevice* loaded = nullptr;
  if (auto s = loaded_on(module, state, device, loaded); s) return s;
  LoadedAotModule::PerDevice& on = *loaded;
  tessKernel& cached = on.kernels[kernel_index];
  if (!cached)
    if (auto s = tessModuleGetKernel(on.module, module->kernels[kernel_index].name, &cached); s) return s;
  *kernel = cached;
  if (!contiguous) return ok();
  if (!on.variants_looked_up[kernel_index]) {
    on.variants_looked_up[kernel_index] = true;
    std::string name = std::string(module->kernels[kernel_index].name) + TESS_CONTIGUOUS_VARIANT_SUFFIX;
    tessKernel variant = nullptr;
    if (tessModuleGetKernel(on.module, name.c_str(), &variant) == TESS_SUCCESS) on.variants[kernel_index] = variant;
  }
  if (on.variants[kernel_index]) *kernel = on.variants[kernel_index];
  return ok();
}

// Whether the launch may run the kernel's contiguous variant.
tessStatus contiguous_variant_applies(const tessAotKernel& k, const void* const* args, bool& applies) {
  std::vector<const tessTensor*> tensors;
  std::vector<uint8_t> writes;
  for (uint32_t i = 0; i < k.parameter_count; ++i)
    if (k.parameters[i].is_tensor) {
      tensors.push_back(static_cast<const tessTensor*>(args[i]));
      writes.push_back(k.parameters[i].is_mut ? 1 : 0);
    }
  int result = 0;
  if (auto s = tessContiguousVariantApplies(tensors.data(), writes.data(), tensors.size(), &result); s) return s;
  applies = result != 0;
  return ok();
}

std::string shape_text(const tessTensor& t) {
  std::string text = "(";
  for (int32_t d = 0; d < t.rank; ++d) text += (d ? ", " : "") + std::to_string(t.shape[d]);
  return text + (t.rank == 1 ? ",)" : ")");
}

// Every tensor's dtype, rank and static sizes, and one value per symbolic
// dimension across all the tensors that use it.
tessStatus check_arguments(const tessAotModule* module, const tessAotKernel& k, const void* const* args,
                           const char* verb = "launching") {
  std::vector<int64_t> symbol_value(k.symbol_count, -1);
  std::vector<std::string> symbol_where(k.symbol_count);
  for (uint32_t i = 0; i < k.parameter_count; ++i) {
    const tessAotParameter& p = k.parameters[i];
    auto error = [&](const std::string& what) {
      return fail(TESS_ERROR_INVALID_VALUE, fmt::format("{} '{}' ({}): parameter '{}': {}", verb, k.signature,
                                                        module->source, p.name, what));
    };
    if (!args[i]) return error("the argument pointer is null");
    if (!p.is_tensor) continue;
    const auto& t = *static_cast<const tessTensor*>(args[i]);
    if (t.rank < 0 || t.rank > TESS_MAX_RANK)
      return error(fmt::format("a tensor of rank {}, outside 0..{} (the kernel wants rank {})", t.rank, TESS_MAX_RANK,
                               p.rank));
    if (t.dtype != p.dtype)
      return error(fmt::format("the tensor holds {}, the kernel wants {}", tessDtypeName(t.dtype) ? tessDtypeName(t.dtype) : "an invalid dtype",
                               tessDtypeName(p.dtype)));
    if (t.rank != p.rank)
      return error(fmt::format("a rank-{} tensor of shape {}, the kernel wants rank {}", t.rank, shape_text(t), p.rank));
    for (int32_t d = 0; d < p.rank; ++d) {
      int64_t want = p.dims[d];
      if (t.shape[d] < 0) return error(fmt::format("dimension {} is negative ({})", d, t.shape[d]));
      if (t.shape[d] > INT32_MAX)
        return error(fmt::format("dimension {} is {} (shape {}), more than 2147483647: kernels index with 32-bit "
                                 "sizes (docs/abi.md, \"Sizes\")",
                                 d, t.shape[d], shape_text(t)));
      if (want >= 0 && t.shape[d] != want)
        return error(fmt::format("dimension {} is {} (shape {}), the kernel wants {}", d, t.shape[d], shape_text(t), want));
      if (want < 0 && want != TESS_AOT_ANY_DIM) {
        uint32_t symbol = static_cast<uint32_t>(-1 - want);
        std::string where = fmt::format("{} dimension {}", p.name, d);
        if (symbol_value[symbol] < 0) {
          symbol_value[symbol] = t.shape[d];
          symbol_where[symbol] = where;
        } else if (symbol_value[symbol] != t.shape[d]) {
          return fail(TESS_ERROR_INVALID_VALUE,
                      fmt::format("{} '{}' ({}): dimension mismatch: '{}' is {} from {} but {} from {}", verb, k.signature,
                                  module->source, k.symbols[symbol], symbol_value[symbol], symbol_where[symbol], t.shape[d],
                                  where));
        }
      }
    }
    uint64_t bytes = 0;
    if (auto s = tessTensorStorageBytes(&t, &bytes); s) return error(tessGetLastErrorMessage());
    if (bytes > 0 && t.data == 0) return error(fmt::format("the data pointer is null for shape {}", shape_text(t)));
  }
  return ok();
}

tessStatus check_limits(const tessAotModule* module, const tessAotKernel& k, tessDevice device, const uint32_t grid[3],
                        size_t dynamic_shared_bytes) {
  auto error = [&](const std::string& what) {
    return fail(TESS_ERROR_LAUNCH, fmt::format("launching '{}' ({}) on {}: {}", k.name, module->source,
                                               device_name(device), what));
  };
  if (grid[0] == 0 || grid[1] == 0 || grid[2] == 0)
    return error(fmt::format("the grid {}x{}x{} is empty", grid[0], grid[1], grid[2]));
  int64_t max_lanes = 0, max_shared = 0;
  if (auto s = tessDeviceGetAttribute(device, TESS_ATTR_MAX_GROUP_SIZE, &max_lanes); s) return s;
  if (auto s = tessDeviceGetAttribute(device, TESS_ATTR_MAX_SHARED_PER_GROUP, &max_shared); s) return s;
  uint64_t lanes = uint64_t{k.group[0]} * k.group[1] * k.group[2];
  if (lanes > static_cast<uint64_t>(max_lanes))
    return error(fmt::format("groups of {}x{}x{} = {} lanes, the device allows at most {}", k.group[0], k.group[1],
                             k.group[2], lanes, max_lanes));
  uint64_t shared = k.static_shared_bytes + dynamic_shared_bytes;
  if (shared > static_cast<uint64_t>(max_shared))
    return error(fmt::format("{} bytes of shared memory per group ({} static + {} dynamic), the device allows at most {}",
                             shared, k.static_shared_bytes, dynamic_shared_bytes, max_shared));
  return ok();
}

// The flattened kernel arguments (docs/abi.md): a tensor is its address,
// sizes and strides, pointing into the caller's tessTensor.
tessStatus flatten_arguments(const tessAotKernel& k, const void* const* args, std::vector<void*>& flat) {
  flat.reserve(k.parameter_count * 3 + 1);
  for (uint32_t i = 0; i < k.parameter_count; ++i) {
    if (!k.parameters[i].is_tensor) {
      flat.push_back(const_cast<void*>(args[i]));
      continue;
    }
    void* slots[1 + 2 * TESS_MAX_RANK];
    size_t count = 0;
    if (auto s = tessTensorKernelArgs(static_cast<const tessTensor*>(args[i]), slots, std::size(slots), &count); s) return s;
    flat.insert(flat.end(), slots, slots + count);
  }
  flat.push_back(nullptr);
  return ok();
}

// The device a call runs on: the stream's, or `device` (which must then
// match it).
tessStatus resolve_device(const char* what, tessDevice& device, tessStream stream) {
  if (stream) {
    tessDevice owner = nullptr;
    if (auto s = tessStreamGetDevice(stream, &owner); s) return s;
    if (device && device != owner)
      return fail(TESS_ERROR_INVALID_VALUE, fmt::format("{}: the stream belongs to {}, not to {}", what,
                                                        device_name(owner), device_name(device)));
    device = owner;
  }
  if (!device)
    return fail(TESS_ERROR_INVALID_VALUE,
                fmt::format("{}: neither a stream nor a device was given (pass the device to use its default stream)",
                            what));
  tessDeviceKind kind;
  return tessDeviceGetKind(device, &kind);  // checks the handle
}

}  // namespace
}  // namespace tessera::rt

extern "C" {

tessStatus tessAotGetKernel(const tessAotModule* module, uint32_t kernel_index, tessDevice device, tessKernel* kernel) {
  using namespace tessera::rt;
  if (auto s = check_module("tessAotGetKernel", module, kernel_index); s) return s;
  if (!device) return fail(TESS_ERROR_INVALID_VALUE, "tessAotGetKernel: `device` is null");
  if (!kernel) return fail(TESS_ERROR_INVALID_VALUE, "tessAotGetKernel: `kernel` is null");
  tessDeviceKind kind;
  if (auto s = tessDeviceGetKind(device, &kind); s) return s;  // checks the handle
  return get_kernel(module, kernel_index, device, kernel);
}

tessStatus tessAotLaunch(const tessAotModule* module, uint32_t kernel_index, tessDevice device, tessStream stream,
                         const uint32_t grid[3], size_t dynamic_shared_bytes, const void* const* args) {
  using namespace tessera::rt;
  if (auto s = check_module("tessAotLaunch", module, kernel_index); s) return s;
  const tessAotKernel& k = module->kernels[kernel_index];
  if (!grid) return fail(TESS_ERROR_INVALID_VALUE, fmt::format("launching '{}': `grid` is null", k.name));
  if (!args && k.parameter_count) return fail(TESS_ERROR_INVALID_VALUE, fmt::format("launching '{}': `args` is null", k.name));
  if (auto s = resolve_device(fmt::format("launching '{}'", k.name).c_str(), device, stream); s) return s;
  tessDeviceKind kind;
  if (auto s = tessDeviceGetKind(device, &kind); s) return s;
  if (auto s = check_arguments(module, k, args); s) return s;
  if (auto s = check_limits(module, k, device, grid, dynamic_shared_bytes); s) return s;
  bool contiguous = false;
  if (kind != TESS_DEVICE_CPU)
    if (auto s = contiguous_variant_applies(k, args, contiguous); s) return s;
  tessKernel kernel = nullptr;
  if (auto s = get_kernel(module, kernel_index, device, &kernel, contiguous); s) return s;

  std::vector<void*> flat;
  if (auto s = flatten_arguments(k, args, flat); s) return s;
  tessStatus s = tessLaunchKernel(kernel, grid, k.group, dynamic_shared_bytes, stream, flat.data());
  if (s) return fail(s, fmt::format("launching '{}' ({}) on {}: {}", k.name, module->source, device_name(device),
                                    tessGetLastErrorMessage()));
  return ok();
}

tessStatus tessAotNullResult(const char* function, const char* result) {
  return tessera::rt::fail(TESS_ERROR_INVALID_VALUE, fmt::format("calling '{}': the result pointer '{}' is null",
                                                                 function ? function : "?", result ? result : "?"));
}

tessStatus tessAotCall(const tessAotModule* module, const tessAotKernel* function, tessHostFunction host,
                       tessDevice device, tessStream stream, const void* const* args, void** results) {
  return tessAotCallOnMesh(module, function, host, nullptr, nullptr, device, stream, args, results);
}

tessStatus tessAotCallOnMesh(const tessAotModule* module, const tessAotKernel* function, tessHostFunction host,
                             const char* mesh_description, tessMesh mesh, tessDevice device, tessStream stream,
                             const void* const* args, void** results) {
  using namespace tessera::rt;
  if (!module || !function || !host) return fail(TESS_ERROR_INVALID_VALUE, "tessAotCall: a null module or function");
  if (module->abi_version != TESS_AOT_ABI_VERSION || !module->cache)
    return fail(TESS_ERROR_INVALID_MODULE,
                fmt::format("tessAotCall: the object compiled from '{}' has AOT ABI version {}, this runtime reads "
                            "version {}: recompile it",
                            module->source ? module->source : "?", module->abi_version, TESS_AOT_ABI_VERSION));
  const tessAotKernel& f = *function;
  std::string what = fmt::format("calling '{}'", f.name);
  if (!args && f.parameter_count) return fail(TESS_ERROR_INVALID_VALUE, what + ": `args` is null");
  if (auto s = resolve_device(what.c_str(), device, stream); s) return s;
  if (auto s = check_arguments(module, f, args, "calling"); s) return s;
  std::vector<void*> flat;
  if (auto s = flatten_arguments(f, args, flat); s) return s;
  tessModule loaded = nullptr;
  {
    LoadedAotModule& state = state_of(module);
    std::lock_guard lock(state.mutex);
    LoadedAotModule::PerDevice* on = nullptr;
    if (auto s = loaded_on(module, state, device, on); s) return s;
    loaded = on->module;
  }
  tessHostContext context = nullptr;
  if (auto s = tessHostContextCreate(device, stream, loaded, &context); s) return s;
  tessStatus status = TESS_SUCCESS;
  if (mesh_description) status = lend_host_mesh(context, mesh_description, mesh, what);
  if (status) {
    tessHostContextDestroy(context);
    return status;
  }
  status = tessHostCall(context, host, flat.data(), results);
  std::string message = status ? tessGetLastErrorMessage() : std::string();
  tessHostContextDestroy(context);
  if (status) return fail(status, fmt::format("{} ({}) on {}: {}", what, module->source, device_name(device), message));
  return ok();
}

}  // extern "C"
