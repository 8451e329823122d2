// Internal interfaces of the runtime: the device abstraction behind the C ABI.
//
// api.cpp checks every argument and handle (non-null, alive, of the right
// device) before it calls a device, so the device classes may assume valid
// handles of their own kind.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "tessera/tessera_runtime.h"

namespace tessera::rt {

// Records `message` as this thread's last error message and returns `status`.
tessStatus fail(tessStatus status, std::string message);
// Returns TESS_SUCCESS (the last error message is left alone).
inline tessStatus ok() { return TESS_SUCCESS; }
const std::string& last_error_message();

}  // namespace tessera::rt

// Opaque handles of the C ABI are these classes.
struct tessKernel_st {
  virtual ~tessKernel_st() = default;
  tessModule module = nullptr;
  std::string name;
};

struct tessModule_st {
  virtual ~tessModule_st() = default;
  tessDevice device = nullptr;
  std::mutex mutex;                                     // guards `kernels`
  std::vector<std::unique_ptr<tessKernel_st>> kernels;  // looked up so far (owned)

  // The kernel already looked up under `name`, or null. Caller holds `mutex`.
  tessKernel cached(const char* name) const {
    for (const auto& k : kernels)
      if (k->name == name) return k.get();
    return nullptr;
  }
};

struct tessStream_st {
  virtual ~tessStream_st() = default;
  tessDevice device = nullptr;
};

struct tessEvent_st {
  virtual ~tessEvent_st() = default;
  tessDevice device = nullptr;
};

struct tessDevice_st {
  virtual ~tessDevice_st() = default;
  virtual tessDeviceKind kind() const = 0;
  virtual std::string name() const = 0;
  virtual tessStatus attribute(tessDeviceAttribute attribute, int64_t* value) = 0;
  // The driver's ordinal N of a CUDA device ("cuda:N"); -1 for the CPU.
  virtual int cuda_ordinal() const { return -1; }
  // Makes the device current on the calling thread (a CUDA device's primary
  // context), for libraries that use the current device (NCCL).
  virtual tessStatus make_current() { return TESS_SUCCESS; }
  // The driver's handle of a stream of this device (CUstream; null for the
  // default stream and on the CPU).
  virtual void* native_stream(tessStream /*stream*/) { return nullptr; }
  // Checks that [p, p + bytes) is memory of this device a collective may use
  // (the CPU device: inside one live allocation); `what` and `role` name the
  // call and the buffer in the message.
  virtual tessStatus check_buffer(const char* what, const char* role, tessDevicePtr p, size_t bytes) {
    (void)what, (void)role, (void)p, (void)bytes;
    return TESS_SUCCESS;
  }

  virtual tessStatus malloc(size_t bytes, tessDevicePtr* ptr) = 0;
  virtual tessStatus free(tessDevicePtr ptr) = 0;
  virtual tessStatus copy_to_device(tessDevicePtr dst, const void* src, size_t bytes) = 0;
  virtual tessStatus copy_to_host(void* dst, tessDevicePtr src, size_t bytes) = 0;
  virtual tessStatus copy_on_device(tessDevicePtr dst, tessDevicePtr src, size_t bytes) = 0;
  virtual tessStatus memset(tessDevicePtr dst, int value, size_t bytes) = 0;

  // Streams and events passed in belong to this device; a null stream is the
  // default stream.
  virtual tessStatus create_stream(tessStream* stream) = 0;
  virtual tessStatus synchronize_stream(tessStream stream) = 0;
  virtual tessStatus wait_event(tessStream stream, tessEvent event) = 0;
  virtual tessStatus destroy_stream(tessStream stream) = 0;  // deletes it, even on failure
  virtual tessStatus synchronize() = 0;
  virtual tessStatus create_event(tessEvent* event) = 0;
  virtual tessStatus record_event(tessEvent event, tessStream stream) = 0;
  virtual tessStatus synchronize_event(tessEvent event) = 0;
  // Whether the work recorded before `event` has finished, without waiting.
  virtual tessStatus query_event(tessEvent event, bool* complete) = 0;
  virtual tessStatus elapsed(float* ms, tessEvent start, tessEvent end) = 0;
  virtual tessStatus destroy_event(tessEvent event) = 0;  // deletes it, even on failure

  virtual tessStatus load_module(const void* image, size_t bytes, tessModule* module) = 0;
  // Default: reads the file and calls load_module.
  virtual tessStatus load_module_file(const char* path, tessModule* module);
  virtual tessStatus load_cpu_table(const tessCpuKernelEntry* entries, size_t count, tessModule* module) = 0;
  virtual tessStatus find_kernel(tessModule module, const char* name, tessKernel* kernel) = 0;
  virtual tessStatus unload_module(tessModule module) = 0;  // deletes it, even on failure
  virtual tessStatus launch(tessKernel kernel, const uint32_t grid[3], const uint32_t group[3],
                            size_t dynamic_shared_bytes, tessStream stream, void** args) = 0;
};

namespace tessera::rt {

// A stream that is null or a live stream of `device` (else an error of `function`).
tessStatus check_stream_for(const char* function, tessStream stream, tessDevice device);

std::unique_ptr<tessDevice_st> make_cpu_device();
// The CUDA devices that work, in the driver's order; `reason` says why there
// are none, and `driver_loaded` whether libcuda loaded and initialised.
std::vector<std::unique_ptr<tessDevice_st>> make_cuda_devices(std::string& reason, bool& driver_loaded);

// Copies of the `mut` tensors that the timing runs of a tuned launch write
// (aot_tuning.cpp, host_tuning.cpp): each saved before, put back after.
class TensorSnapshots {
 public:
  explicit TensorSnapshots(tessDevice device) : device_(device) {}
  // Copies `tensor`'s storage aside.
  tessStatus save(const tessTensor* tensor);
  // Copies every saved tensor back when `copy_back` (up to the first failure)
  // and frees the copies; the first failure's status.
  tessStatus restore(bool copy_back);

 private:
  tessDevice device_;
  std::vector<std::pair<const tessTensor*, tessDevicePtr>> saved_;
};

}  // namespace tessera::rt
