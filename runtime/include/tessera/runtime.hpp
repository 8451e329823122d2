// A thin C++ layer over the C ABI of tessera_runtime.h: failures become
// tessera::rt::Error exceptions carrying the status and the runtime's message,
// and modules, streams, events and buffers release themselves.
//
//   auto device = tessera::rt::Device::by_name("cpu");
//   tessera::rt::Buffer x(device, n * sizeof(float));
//   x.copy_from(host.data(), n * sizeof(float));
//   auto module = tessera::rt::Module::from_table(device, table, count);
//   module.kernel("saxpy").launch({groups}, {256}, x_view, y_view, alpha);  // tessTensor views
//
//   tessera::rt::Mesh mesh({"cpu:0", "cpu:1", "cpu:2", "cpu:3"}, {"dp", "tp"}, {2, 2});
//   mesh.all_reduce("tp", x.address(), x.address(), n, TESS_F32, TESS_REDUCE_SUM);
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "tessera/tessera_runtime.h"

namespace tessera::rt {

class Error : public std::runtime_error {
 public:
  Error(tessStatus status, const std::string& message) : std::runtime_error(message), status_(status) {}
  tessStatus status() const { return status_; }

 private:
  tessStatus status_;
};

// Throws an Error for a failing status: "TESS_ERROR_X: <the last error message>".
inline void check(tessStatus status) {
  if (status == TESS_SUCCESS) return;
  throw Error(status, std::string(tessGetErrorName(status)) + ": " + tessGetLastErrorMessage());
}

class Device {
 public:
  explicit Device(tessDevice handle) : handle_(handle) {}
  static Device at(int index) {
    tessDevice d = nullptr;
    check(tessGetDevice(index, &d));
    return Device(d);
  }
  static Device cpu() { return at(0); }
  static Device by_name(const char* name) {
    tessDevice d = nullptr;
    check(tessGetDeviceByName(name, &d));
    return Device(d);
  }
  static Device default_device() {
    tessDevice d = nullptr;
    check(tessGetDefaultDevice(&d));
    return Device(d);
  }
  static int count() {
    int n = 0;
    check(tessGetDeviceCount(&n));
    return n;
  }

  tessDevice handle() const { return handle_; }
  tessDeviceKind kind() const {
    tessDeviceKind k = TESS_DEVICE_CPU;
    check(tessDeviceGetKind(handle_, &k));
    return k;
  }
  std::string name() const {
    char buffer[256];
    check(tessDeviceGetName(handle_, buffer, sizeof buffer));
    return buffer;
  }
  int64_t attribute(tessDeviceAttribute a) const {
    int64_t v = 0;
    check(tessDeviceGetAttribute(handle_, a, &v));
    return v;
  }
  void synchronize() const { check(tessDeviceSynchronize(handle_)); }

 private:
  tessDevice handle_;
};

// Owns a handle and releases it with `Release` (whose status is ignored in
// the destructor, which must not throw).
template <class Handle, tessStatus (*Release)(Handle)>
class Owned {
 public:
  Owned() = default;
  explicit Owned(Handle h) : handle_(h) {}
  Owned(Owned&& other) noexcept : handle_(std::exchange(other.handle_, nullptr)) {}
  Owned& operator=(Owned&& other) noexcept {
    if (this != &other) {
      reset();
      handle_ = std::exchange(other.handle_, nullptr);
    }
    return *this;
  }
  Owned(const Owned&) = delete;
  Owned& operator=(const Owned&) = delete;
  ~Owned() { reset(); }

  Handle get() const { return handle_; }
  Handle release() { return std::exchange(handle_, nullptr); }
  void reset() {
    if (handle_) (void)Release(std::exchange(handle_, nullptr));
  }

 private:
  Handle handle_ = nullptr;
};

class Stream : public Owned<tessStream, tessStreamDestroy> {
 public:
  explicit Stream(Device device) : Owned(create(device)) {}
  void synchronize() const { check(tessStreamSynchronize(get())); }

 private:
  static tessStream create(Device device) {
    tessStream s = nullptr;
    check(tessStreamCreate(device.handle(), &s));
    return s;
  }
};

class Event : public Owned<tessEvent, tessEventDestroy> {
 public:
  explicit Event(Device device) : Owned(create(device)) {}
  void record(tessStream stream = nullptr) const { check(tessEventRecord(get(), stream)); }
  void synchronize() const { check(tessEventSynchronize(get())); }
  // Milliseconds from `start` to this event.
  float since(const Event& start) const {
    float ms = 0;
    check(tessEventElapsedTime(&ms, start.get(), get()));
    return ms;
  }

 private:
  static tessEvent create(Device device) {
    tessEvent e = nullptr;
    check(tessEventCreate(device.handle(), &e));
    return e;
  }
};

// Device memory.
class Buffer {
 public:
  Buffer(Device device, size_t bytes) : device_(device), bytes_(bytes) { check(tessMalloc(device.handle(), bytes, &ptr_)); }
  Buffer(Buffer&& other) noexcept
      : device_(other.device_), ptr_(std::exchange(other.ptr_, 0)), bytes_(std::exchange(other.bytes_, 0)) {}
  Buffer& operator=(Buffer&& other) noexcept {
    if (this != &other) {
      reset();
      device_ = other.device_;
      ptr_ = std::exchange(other.ptr_, 0);
      bytes_ = std::exchange(other.bytes_, 0);
    }
    return *this;
  }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  ~Buffer() { reset(); }

  tessDevicePtr address() const { return ptr_; }
  size_t size() const { return bytes_; }
  void copy_from(const void* host, size_t bytes) { check(tessMemcpyHtoD(device_.handle(), ptr_, host, bytes)); }
  void copy_to(void* host, size_t bytes) const { check(tessMemcpyDtoH(device_.handle(), host, ptr_, bytes)); }
  void fill(int byte) { check(tessMemset(device_.handle(), ptr_, byte, bytes_)); }

 private:
  void reset() {
    if (ptr_) (void)tessFree(device_.handle(), std::exchange(ptr_, 0));
  }
  Device device_;
  tessDevicePtr ptr_ = 0;
  size_t bytes_ = 0;
};

struct Dim3 {
  uint32_t x = 1, y = 1, z = 1;
};

// A kernel of a loaded module (valid while the module is).
class Kernel {
 public:
  explicit Kernel(tessKernel handle) : handle_(handle) {}
  tessKernel handle() const { return handle_; }

  // Launches with `args` as the kernel's parameters, in order, packed as
  // docs/abi.md says: a scalar by the address of its value, a tessTensor as
  // its base address, sizes and strides.
  template <class... Args>
  void launch(Dim3 grid, Dim3 group, const Args&... args) const {
    launch_on(nullptr, 0, grid, group, args...);
  }
  template <class... Args>
  void launch_on(tessStream stream, size_t dynamic_shared_bytes, Dim3 grid, Dim3 group, const Args&... args) const {
    std::vector<void*> pointers;
    (add(pointers, args), ...);
    pointers.push_back(nullptr);
    const uint32_t g[3] = {grid.x, grid.y, grid.z};
    const uint32_t l[3] = {group.x, group.y, group.z};
    check(tessLaunchKernel(handle_, g, l, dynamic_shared_bytes, stream, pointers.data()));
  }

 private:
  static void add(std::vector<void*>& pointers, const tessTensor& tensor) {
    void* slots[1 + 2 * TESS_MAX_RANK];
    size_t count = 0;
    check(tessTensorKernelArgs(&tensor, slots, 1 + 2 * TESS_MAX_RANK, &count));
    pointers.insert(pointers.end(), slots, slots + count);
  }
  template <class T>
  static void add(std::vector<void*>& pointers, const T& value) {
    pointers.push_back(const_cast<void*>(static_cast<const void*>(&value)));
  }

  tessKernel handle_;
};

class Module : public Owned<tessModule, tessModuleUnload> {
 public:
  explicit Module(tessModule handle) : Owned(handle) {}
  static Module from_table(Device device, const tessCpuKernelEntry* entries, size_t count) {
    tessModule m = nullptr;
    check(tessModuleLoadCpuTable(device.handle(), entries, count, &m));
    return Module(m);
  }
  static Module from_file(Device device, const char* path) {
    tessModule m = nullptr;
    check(tessModuleLoadFile(device.handle(), path, &m));
    return Module(m);
  }
  static Module from_data(Device device, const void* image, size_t bytes) {
    tessModule m = nullptr;
    check(tessModuleLoadData(device.handle(), image, bytes, &m));
    return Module(m);
  }
  Kernel kernel(const char* name) const {
    tessKernel k = nullptr;
    check(tessModuleGetKernel(get(), name, &k));
    return Kernel(k);
  }
};

// --- meshes and collectives (tessera_collectives.h) ---------------------------------

inline int job_rank() {
  int r = 0;
  check(tessJobRank(&r));
  return r;
}
inline int job_size() {
  int n = 1;
  check(tessJobSize(&n));
  return n;
}

// A mesh of the job's ranks (collective: every rank constructs and destroys it).
// Axis names may be null: the whole mesh.
// A collective started by one of Mesh's start_* functions (tessMesh*Start),
// in flight until wait(), which returns once it is complete and throws what
// it failed with. Until then its send buffer must not be written nor its
// recv buffer read or written. A request not waited for is waited for by its
// destructor (its error then lost), so each is waited for exactly once;
// wait for or destroy every request before its mesh.
class CollectiveRequest : public Owned<tessCollectiveRequest, tessCollectiveWait> {
 public:
  CollectiveRequest() = default;
  explicit CollectiveRequest(tessCollectiveRequest request) : Owned(request) {}
  bool in_flight() const { return get() != nullptr; }
  void wait() {
    if (!get())
      throw Error(TESS_ERROR_INVALID_VALUE,
                  "TESS_ERROR_INVALID_VALUE: tessera::rt::CollectiveRequest::wait: no collective in flight (waited "
                  "for already, or moved from)");
    check(tessCollectiveWait(release()));
  }
};

class Mesh : public Owned<tessMesh, tessMeshDestroy> {
 public:
  Mesh(const std::vector<std::string>& devices, const std::vector<std::string>& axes, const std::vector<int>& shape,
       unsigned flags = 0)
      : Owned(create(devices, axes, shape, flags)) {}

  int rank() const { return get_int(tessMeshGetRank); }
  int size() const { return get_int(tessMeshGetSize); }
  int axis_count() const { return get_int(tessMeshGetAxisCount); }
  int axis_size(const char* axis) const {
    int n = 0;
    check(tessMeshGetAxisSize(get(), axis, &n));
    return n;
  }
  int axis_rank(const char* axis) const {
    int r = 0;
    check(tessMeshGetAxisRank(get(), axis, &r));
    return r;
  }
  std::vector<int> coords(int rank) const {
    std::vector<int> c(static_cast<size_t>(axis_count()));
    check(tessMeshGetCoords(get(), rank, c.data(), static_cast<int>(c.size())));
    return c;
  }
  int rank_at(const std::vector<int>& coords) const {
    int r = 0;
    check(tessMeshGetRankAt(get(), coords.data(), &r));
    return r;
  }
  Device device() const {
    tessDevice d = nullptr;
    check(tessMeshGetDevice(get(), &d));
    return Device(d);
  }
  tessCollectiveBackend backend() const {
    tessCollectiveBackend b = TESS_COLLECTIVES_LOOPBACK;
    check(tessMeshGetBackend(get(), &b));
    return b;
  }

  void all_reduce(const char* axis, tessDevicePtr send, tessDevicePtr recv, size_t count, tessDtype dtype,
                  tessReduceOp op, tessStream stream = nullptr) const {
    check(tessMeshAllReduce(get(), axis, send, recv, count, dtype, op, stream));
  }
  void all_gather(const char* axis, tessDevicePtr send, tessDevicePtr recv, size_t count, tessDtype dtype,
                  tessStream stream = nullptr) const {
    check(tessMeshAllGather(get(), axis, send, recv, count, dtype, stream));
  }
  void reduce_scatter(const char* axis, tessDevicePtr send, tessDevicePtr recv, size_t count, tessDtype dtype,
                      tessReduceOp op, tessStream stream = nullptr) const {
    check(tessMeshReduceScatter(get(), axis, send, recv, count, dtype, op, stream));
  }
  void broadcast(const char* axis, tessDevicePtr buffer, size_t count, tessDtype dtype, int root,
                 tessStream stream = nullptr) const {
    check(tessMeshBroadcast(get(), axis, buffer, count, dtype, root, stream));
  }
  void send(const char* axis, tessDevicePtr buffer, size_t count, tessDtype dtype, int peer,
            tessStream stream = nullptr) const {
    check(tessMeshSend(get(), axis, buffer, count, dtype, peer, stream));
  }
  void recv(const char* axis, tessDevicePtr buffer, size_t count, tessDtype dtype, int peer,
            tessStream stream = nullptr) const {
    check(tessMeshRecv(get(), axis, buffer, count, dtype, peer, stream));
  }
  void send_recv(const char* axis, tessDevicePtr send, int send_peer, tessDevicePtr recv, int recv_peer, size_t count,
                 tessDtype dtype, tessStream stream = nullptr) const {
    check(tessMeshSendRecv(get(), axis, send, send_peer, recv, recv_peer, count, dtype, stream));
  }
  void barrier(const char* axis = nullptr) const { check(tessMeshBarrier(get(), axis)); }

  // The collectives above started (tessMesh*Start): the same arguments, the
  // request to wait for returned (docs/distributed.md, "Started collectives").
  [[nodiscard]] CollectiveRequest start_all_reduce(const char* axis, tessDevicePtr send, tessDevicePtr recv,
                                                   size_t count, tessDtype dtype, tessReduceOp op,
                                                   tessStream stream = nullptr) const {
    return started([&](tessCollectiveRequest* r) {
      return tessMeshAllReduceStart(get(), axis, send, recv, count, dtype, op, stream, r);
    });
  }
  [[nodiscard]] CollectiveRequest start_all_gather(const char* axis, tessDevicePtr send, tessDevicePtr recv,
                                                   size_t count, tessDtype dtype, tessStream stream = nullptr) const {
    return started([&](tessCollectiveRequest* r) {
      return tessMeshAllGatherStart(get(), axis, send, recv, count, dtype, stream, r);
    });
  }
  [[nodiscard]] CollectiveRequest start_reduce_scatter(const char* axis, tessDevicePtr send, tessDevicePtr recv,
                                                       size_t count, tessDtype dtype, tessReduceOp op,
                                                       tessStream stream = nullptr) const {
    return started([&](tessCollectiveRequest* r) {
      return tessMeshReduceScatterStart(get(), axis, send, recv, count, dtype, op, stream, r);
    });
  }
  [[nodiscard]] CollectiveRequest start_broadcast(const char* axis, tessDevicePtr buffer, size_t count,
                                                  tessDtype dtype, int root, tessStream stream = nullptr) const {
    return started([&](tessCollectiveRequest* r) {
      return tessMeshBroadcastStart(get(), axis, buffer, count, dtype, root, stream, r);
    });
  }
  [[nodiscard]] CollectiveRequest start_send(const char* axis, tessDevicePtr buffer, size_t count, tessDtype dtype,
                                             int peer, tessStream stream = nullptr) const {
    return started([&](tessCollectiveRequest* r) {
      return tessMeshSendStart(get(), axis, buffer, count, dtype, peer, stream, r);
    });
  }
  [[nodiscard]] CollectiveRequest start_recv(const char* axis, tessDevicePtr buffer, size_t count, tessDtype dtype,
                                             int peer, tessStream stream = nullptr) const {
    return started([&](tessCollectiveRequest* r) {
      return tessMeshRecvStart(get(), axis, buffer, count, dtype, peer, stream, r);
    });
  }
  [[nodiscard]] CollectiveRequest start_send_recv(const char* axis, tessDevicePtr send, int send_peer,
                                                  tessDevicePtr recv, int recv_peer, size_t count, tessDtype dtype,
                                                  tessStream stream = nullptr) const {
    return started([&](tessCollectiveRequest* r) {
      return tessMeshSendRecvStart(get(), axis, send, send_peer, recv, recv_peer, count, dtype, stream, r);
    });
  }

 private:
  // Runs start(&request) and owns the request it gives.
  template <class Start>
  static CollectiveRequest started(Start start) {
    tessCollectiveRequest r = nullptr;
    check(start(&r));
    return CollectiveRequest(r);
  }
  static tessMesh create(const std::vector<std::string>& devices, const std::vector<std::string>& axes,
                         const std::vector<int>& shape, unsigned flags) {
    if (shape.size() != axes.size())
      throw Error(TESS_ERROR_INVALID_VALUE, "TESS_ERROR_INVALID_VALUE: tessera::rt::Mesh: " +
                                                std::to_string(axes.size()) + " axis names but " +
                                                std::to_string(shape.size()) + " sizes");
    std::vector<const char*> d, a;
    for (const auto& s : devices) d.push_back(s.c_str());
    for (const auto& s : axes) a.push_back(s.c_str());
    tessMesh m = nullptr;
    check(tessMeshCreate(d.data(), static_cast<int>(d.size()), a.data(), shape.data(), static_cast<int>(a.size()),
                         flags, &m));
    return m;
  }
  int get_int(tessStatus (*query)(tessMesh, int*)) const {
    int v = 0;
    check(query(get(), &v));
    return v;
  }
};

}  // namespace tessera::rt
