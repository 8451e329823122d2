// The C functions of tessera_runtime.h: they check arguments and handles and
// forward to the devices. The device list is built once, on the first call
// that needs it, and lives as long as the process.
#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>
#include <mutex>
#include <string_view>
#include <unordered_set>

#include "runtime_internal.h"

tessStatus tessDevice_st::load_module_file(const char* path, tessModule* module) {
  using tessera::rt::fail;
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return fail(TESS_ERROR_NOT_FOUND, fmt::format("tessModuleLoadFile: cannot open '{}': {}", path, std::strerror(errno)));
  std::string image((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) return fail(TESS_ERROR_NOT_FOUND, fmt::format("tessModuleLoadFile: cannot read '{}'", path));
  if (image.empty()) return fail(TESS_ERROR_INVALID_MODULE, fmt::format("tessModuleLoadFile: '{}' is empty", path));
  return load_module(image.data(), image.size(), module);
}

namespace tessera::rt {
namespace {

struct Registry {
  std::vector<std::unique_ptr<tessDevice_st>> devices;  // the CPU, then CUDA devices
  std::string cuda_reason;
  bool cuda_driver_loaded = false;

  // Live handles, so that a destroyed or foreign handle is an error rather
  // than a crash. Kernels leave with their module.
  std::mutex mutex;
  std::unordered_set<const void*> streams, events, modules, kernels;
};

// Built on first use and never destroyed: handles stay valid during static
// destruction, and the CPU device's worker threads are never joined late.
Registry& registry() {
  static std::once_flag once;
  static Registry* instance = nullptr;
  std::call_once(once, [] {
    auto* r = new Registry();
    r->devices.push_back(make_cpu_device());
    for (auto& d : make_cuda_devices(r->cuda_reason, r->cuda_driver_loaded)) r->devices.push_back(std::move(d));
    instance = r;
  });
  return *instance;
}

std::string pointer(const void* p) { return fmt::format("{}", p); }

tessStatus null_argument(const char* function, const char* argument) {
  return fail(TESS_ERROR_INVALID_VALUE, fmt::format("{}: `{}` is null", function, argument));
}

tessStatus check_device(const char* function, tessDevice device) {
  if (!device) return null_argument(function, "device");
  for (const auto& d : registry().devices)
    if (d.get() == device) return ok();
  return fail(TESS_ERROR_INVALID_VALUE,
              fmt::format("{}: {} is not a device handle from tessGetDevice", function, pointer(device)));
}

enum class HandleKind { Stream, Event, Module, Kernel };

const char* handle_name(HandleKind kind) {
  switch (kind) {
    case HandleKind::Stream: return "stream";
    case HandleKind::Event: return "event";
    case HandleKind::Module: return "module";
    case HandleKind::Kernel: return "kernel";
  }
  return "handle";
}

std::unordered_set<const void*>& handles(HandleKind kind) {
  Registry& r = registry();
  switch (kind) {
    case HandleKind::Stream: return r.streams;
    case HandleKind::Event: return r.events;
    case HandleKind::Module: return r.modules;
    case HandleKind::Kernel: return r.kernels;
  }
  return r.streams;
}

tessStatus check_handle(const char* function, const char* argument, HandleKind kind, const void* handle) {
  if (!handle) return null_argument(function, argument);
  std::lock_guard lock(registry().mutex);
  if (handles(kind).count(handle)) return ok();
  return fail(TESS_ERROR_INVALID_VALUE,
              fmt::format("{}: `{}` ({}) is not a live {} (already destroyed, or never created)", function, argument,
                          pointer(handle), handle_name(kind)));
}

void add_handle(HandleKind kind, const void* handle) {
  std::lock_guard lock(registry().mutex);
  handles(kind).insert(handle);
}

// Removes a handle; false when it was not live (a second destroy racing the first).
bool remove_handle(HandleKind kind, const void* handle) {
  std::lock_guard lock(registry().mutex);
  return handles(kind).erase(handle) != 0;
}

// A stream that is null or belongs to `device`.
tessStatus check_stream_of(const char* function, tessStream stream, tessDevice device) {
  if (!stream) return ok();
  if (auto s = check_handle(function, "stream", HandleKind::Stream, stream); s) return s;
  if (stream->device != device)
    return fail(TESS_ERROR_INVALID_VALUE, fmt::format("{}: the stream belongs to {}, not to {}", function,
                                                      stream->device->name(), device->name()));
  return ok();
}

std::string device_list() {
  std::string list;
  for (const auto& d : registry().devices) list += (list.empty() ? "" : ", ") + d->name();
  return list;
}

std::string cuda_unavailable() {
  const Registry& r = registry();
  return r.cuda_reason.empty() ? std::string("no CUDA device") : r.cuda_reason;
}

}  // namespace

tessStatus check_stream_for(const char* function, tessStream stream, tessDevice device) {
  return check_stream_of(function, stream, device);
}

}  // namespace tessera::rt

using namespace tessera::rt;

extern "C" {

// --- devices -----------------------------------------------------------------------

tessStatus tessGetDeviceCount(int* count) {
  if (!count) return null_argument("tessGetDeviceCount", "count");
  *count = static_cast<int>(registry().devices.size());
  return ok();
}

tessStatus tessGetDevice(int index, tessDevice* device) {
  if (!device) return null_argument("tessGetDevice", "device");
  const auto& devices = registry().devices;
  if (index < 0 || static_cast<size_t>(index) >= devices.size())
    return fail(TESS_ERROR_NO_DEVICE, fmt::format("tessGetDevice: no device {}; there {} {} ({}){}", index,
                                                  devices.size() == 1 ? "is" : "are", devices.size(), device_list(),
                                                  devices.size() == 1 ? fmt::format("; CUDA: {}", cuda_unavailable()) : ""));
  *device = devices[static_cast<size_t>(index)].get();
  return ok();
}

tessStatus tessGetDefaultDevice(tessDevice* device) {
  if (!device) return null_argument("tessGetDefaultDevice", "device");
  const auto& devices = registry().devices;
  *device = devices.size() > 1 ? devices[1].get() : devices[0].get();
  return ok();
}

tessStatus tessGetDeviceByName(const char* name, tessDevice* device) {
  if (!name) return null_argument("tessGetDeviceByName", "name");
  if (!device) return null_argument("tessGetDeviceByName", "device");
  const Registry& r = registry();
  std::string_view n = name;
  if (n == "cpu") {
    *device = r.devices[0].get();
    return ok();
  }
  int ordinal = -1;
  if (n == "cuda") {
    ordinal = 0;
  } else if (n.substr(0, 5) == "cuda:" && n.size() > 5 && n.size() <= 14 &&
             std::all_of(n.begin() + 5, n.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    ordinal = 0;
    for (char c : n.substr(5)) ordinal = ordinal * 10 + (c - '0');
  } else {
    return fail(TESS_ERROR_INVALID_VALUE,
                fmt::format("tessGetDeviceByName: unknown device name '{}' (expected cpu, cuda or cuda:N)", n));
  }
  for (const auto& d : r.devices)
    if (d->cuda_ordinal() == ordinal) {
      *device = d.get();
      return ok();
    }
  if (r.devices.size() == 1)
    return fail(r.cuda_driver_loaded ? TESS_ERROR_NO_DEVICE : TESS_ERROR_DRIVER_NOT_FOUND,
                fmt::format("tessGetDeviceByName: no device '{}': {}", n, cuda_unavailable()));
  return fail(TESS_ERROR_NO_DEVICE, fmt::format("tessGetDeviceByName: no device '{}'; the devices are {}", n, device_list()));
}

tessStatus tessDeviceGetKind(tessDevice device, tessDeviceKind* kind) {
  if (auto s = check_device("tessDeviceGetKind", device); s) return s;
  if (!kind) return null_argument("tessDeviceGetKind", "kind");
  *kind = device->kind();
  return ok();
}

tessStatus tessDeviceGetIndex(tessDevice device, int* index) {
  if (auto s = check_device("tessDeviceGetIndex", device); s) return s;
  if (!index) return null_argument("tessDeviceGetIndex", "index");
  const auto& devices = registry().devices;
  for (size_t i = 0; i < devices.size(); ++i)
    if (devices[i].get() == device) *index = static_cast<int>(i);
  return ok();
}

tessStatus tessDeviceGetName(tessDevice device, char* name, size_t capacity) {
  if (auto s = check_device("tessDeviceGetName", device); s) return s;
  if (!name) return null_argument("tessDeviceGetName", "name");
  if (capacity == 0) return fail(TESS_ERROR_INVALID_VALUE, "tessDeviceGetName: `capacity` is 0");
  std::string n = device->name();
  size_t length = std::min(n.size(), capacity - 1);
  std::memcpy(name, n.data(), length);
  name[length] = '\0';
  return ok();
}

tessStatus tessDeviceGetAttribute(tessDevice device, tessDeviceAttribute attribute, int64_t* value) {
  if (auto s = check_device("tessDeviceGetAttribute", device); s) return s;
  if (!value) return null_argument("tessDeviceGetAttribute", "value");
  return device->attribute(attribute, value);
}

const char* tessCudaUnavailableReason(void) { return registry().cuda_reason.c_str(); }

// --- memory --------------------------------------------------------------------------

tessStatus tessMalloc(tessDevice device, size_t bytes, tessDevicePtr* ptr) {
  if (auto s = check_device("tessMalloc", device); s) return s;
  if (!ptr) return null_argument("tessMalloc", "ptr");
  return device->malloc(bytes, ptr);
}

tessStatus tessFree(tessDevice device, tessDevicePtr ptr) {
  if (auto s = check_device("tessFree", device); s) return s;
  return device->free(ptr);
}

tessStatus tessMemcpyHtoD(tessDevice device, tessDevicePtr dst, const void* src, size_t bytes) {
  if (auto s = check_device("tessMemcpyHtoD", device); s) return s;
  if (bytes && !src) return null_argument("tessMemcpyHtoD", "src");
  return device->copy_to_device(dst, src, bytes);
}

tessStatus tessMemcpyDtoH(tessDevice device, void* dst, tessDevicePtr src, size_t bytes) {
  if (auto s = check_device("tessMemcpyDtoH", device); s) return s;
  if (bytes && !dst) return null_argument("tessMemcpyDtoH", "dst");
  return device->copy_to_host(dst, src, bytes);
}

tessStatus tessMemcpyDtoD(tessDevice device, tessDevicePtr dst, tessDevicePtr src, size_t bytes) {
  if (auto s = check_device("tessMemcpyDtoD", device); s) return s;
  return device->copy_on_device(dst, src, bytes);
}

tessStatus tessMemset(tessDevice device, tessDevicePtr dst, int value, size_t bytes) {
  if (auto s = check_device("tessMemset", device); s) return s;
  return device->memset(dst, value, bytes);
}

// --- streams and events ------------------------------------------------------------------

tessStatus tessStreamCreate(tessDevice device, tessStream* stream) {
  if (auto s = check_device("tessStreamCreate", device); s) return s;
  if (!stream) return null_argument("tessStreamCreate", "stream");
  if (auto s = device->create_stream(stream); s) return s;
  add_handle(HandleKind::Stream, *stream);
  return ok();
}

tessStatus tessStreamGetDevice(tessStream stream, tessDevice* device) {
  if (auto s = check_handle("tessStreamGetDevice", "stream", HandleKind::Stream, stream); s) return s;
  if (!device) return null_argument("tessStreamGetDevice", "device");
  *device = stream->device;
  return ok();
}

tessStatus tessStreamSynchronize(tessStream stream) {
  if (auto s = check_handle("tessStreamSynchronize", "stream", HandleKind::Stream, stream); s) return s;
  return stream->device->synchronize_stream(stream);
}

tessStatus tessStreamWaitEvent(tessStream stream, tessEvent event) {
  if (auto s = check_handle("tessStreamWaitEvent", "event", HandleKind::Event, event); s) return s;
  if (auto s = check_stream_of("tessStreamWaitEvent", stream, event->device); s) return s;
  return event->device->wait_event(stream, event);
}

tessStatus tessStreamDestroy(tessStream stream) {
  if (auto s = check_handle("tessStreamDestroy", "stream", HandleKind::Stream, stream); s) return s;
  if (!remove_handle(HandleKind::Stream, stream))
    return fail(TESS_ERROR_INVALID_VALUE, "tessStreamDestroy: the stream was destroyed by another thread");
  return stream->device->destroy_stream(stream);
}

tessStatus tessDeviceSynchronize(tessDevice device) {
  if (auto s = check_device("tessDeviceSynchronize", device); s) return s;
  return device->synchronize();
}

tessStatus tessEventCreate(tessDevice device, tessEvent* event) {
  if (auto s = check_device("tessEventCreate", device); s) return s;
  if (!event) return null_argument("tessEventCreate", "event");
  if (auto s = device->create_event(event); s) return s;
  add_handle(HandleKind::Event, *event);
  return ok();
}

tessStatus tessEventRecord(tessEvent event, tessStream stream) {
  if (auto s = check_handle("tessEventRecord", "event", HandleKind::Event, event); s) return s;
  if (auto s = check_stream_of("tessEventRecord", stream, event->device); s) return s;
  return event->device->record_event(event, stream);
}

tessStatus tessEventSynchronize(tessEvent event) {
  if (auto s = check_handle("tessEventSynchronize", "event", HandleKind::Event, event); s) return s;
  return event->device->synchronize_event(event);
}

tessStatus tessEventElapsedTime(float* milliseconds, tessEvent start, tessEvent end) {
  if (!milliseconds) return null_argument("tessEventElapsedTime", "milliseconds");
  if (auto s = check_handle("tessEventElapsedTime", "start", HandleKind::Event, start); s) return s;
  if (auto s = check_handle("tessEventElapsedTime", "end", HandleKind::Event, end); s) return s;
  if (start->device != end->device)
    return fail(TESS_ERROR_INVALID_VALUE, fmt::format("tessEventElapsedTime: the events belong to {} and {}",
                                                      start->device->name(), end->device->name()));
  return start->device->elapsed(milliseconds, start, end);
}

tessStatus tessEventDestroy(tessEvent event) {
  if (auto s = check_handle("tessEventDestroy", "event", HandleKind::Event, event); s) return s;
  if (!remove_handle(HandleKind::Event, event))
    return fail(TESS_ERROR_INVALID_VALUE, "tessEventDestroy: the event was destroyed by another thread");
  return event->device->destroy_event(event);
}

// --- modules and kernels ---------------------------------------------------------------------

tessStatus tessModuleLoadCpuTable(tessDevice device, const tessCpuKernelEntry* entries, size_t count,
                                  tessModule* module) {
  if (auto s = check_device("tessModuleLoadCpuTable", device); s) return s;
  if (!entries && count) return null_argument("tessModuleLoadCpuTable", "entries");
  if (!module) return null_argument("tessModuleLoadCpuTable", "module");
  if (auto s = device->load_cpu_table(entries, count, module); s) return s;
  add_handle(HandleKind::Module, *module);
  return ok();
}

tessStatus tessModuleLoadData(tessDevice device, const void* image, size_t bytes, tessModule* module) {
  if (auto s = check_device("tessModuleLoadData", device); s) return s;
  if (!image) return null_argument("tessModuleLoadData", "image");
  if (bytes == 0) return fail(TESS_ERROR_INVALID_MODULE, "tessModuleLoadData: the image is empty");
  if (!module) return null_argument("tessModuleLoadData", "module");
  if (auto s = device->load_module(image, bytes, module); s) return s;
  add_handle(HandleKind::Module, *module);
  return ok();
}

tessStatus tessModuleLoadFile(tessDevice device, const char* path, tessModule* module) {
  if (auto s = check_device("tessModuleLoadFile", device); s) return s;
  if (!path) return null_argument("tessModuleLoadFile", "path");
  if (!module) return null_argument("tessModuleLoadFile", "module");
  if (auto s = device->load_module_file(path, module); s) return s;
  add_handle(HandleKind::Module, *module);
  return ok();
}

tessStatus tessModuleGetKernel(tessModule module, const char* name, tessKernel* kernel) {
  if (auto s = check_handle("tessModuleGetKernel", "module", HandleKind::Module, module); s) return s;
  if (!name) return null_argument("tessModuleGetKernel", "name");
  if (!kernel) return null_argument("tessModuleGetKernel", "kernel");
  if (auto s = module->device->find_kernel(module, name, kernel); s) return s;
  add_handle(HandleKind::Kernel, *kernel);
  return ok();
}

tessStatus tessModuleUnload(tessModule module) {
  if (auto s = check_handle("tessModuleUnload", "module", HandleKind::Module, module); s) return s;
  {
    std::lock_guard lock(registry().mutex);
    if (!registry().modules.erase(module))
      return fail(TESS_ERROR_INVALID_VALUE, "tessModuleUnload: the module was unloaded by another thread");
    std::lock_guard module_lock(module->mutex);
    for (const auto& k : module->kernels) registry().kernels.erase(k.get());
  }
  return module->device->unload_module(module);
}

tessStatus tessLaunchKernel(tessKernel kernel, const uint32_t grid[3], const uint32_t group[3],
                            size_t dynamic_shared_bytes, tessStream stream, void** args) {
  if (auto s = check_handle("tessLaunchKernel", "kernel", HandleKind::Kernel, kernel); s) return s;
  if (!grid) return null_argument("tessLaunchKernel", "grid");
  if (!group) return null_argument("tessLaunchKernel", "group");
  tessDevice device = kernel->module->device;
  if (auto s = check_stream_of("tessLaunchKernel", stream, device); s) return s;
  return device->launch(kernel, grid, group, dynamic_shared_bytes, stream, args);
}

}  // extern "C"
