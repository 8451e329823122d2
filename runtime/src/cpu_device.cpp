// The CPU device: memory is host memory, work runs before the call returns,
// and a launch runs the groups of the grid in parallel on a pool of host
// threads, each group with its own shared memory (docs/runtime.md, and
// docs/abi.md for what a kernel function receives).
#include <dlfcn.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <link.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstddef>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <thread>
#include <unordered_set>

#include "cpu_lanes.h"
#include "runtime_internal.h"

namespace tessera::rt {
namespace {

// A kernel that overflows its stack (a helper recursing without end) faults
// on the stack it overflowed, where no signal handler can run: each thread
// that runs kernels gets an alternate signal stack, on which a handler
// installed with SA_ONSTACK (tesserac run's crash report) runs instead.
// A thread that has one already (a sanitizer's) keeps it.
void ensure_signal_stack() {
  thread_local std::unique_ptr<char[]> stack;
  if (stack) return;
  stack_t current{};
  if (sigaltstack(nullptr, &current) == 0 && !(current.ss_flags & SS_DISABLE)) return;
  size_t bytes = std::max<size_t>(static_cast<size_t>(SIGSTKSZ), 64 * 1024);
  stack.reset(new char[bytes]);
  stack_t alternate{};
  alternate.ss_sp = stack.get();
  alternate.ss_size = bytes;
  if (sigaltstack(&alternate, nullptr) != 0) stack.reset();
}
// The layouts docs/abi.md promises compiled code (LP64).
static_assert(sizeof(void*) == 8, "the CPU kernel ABI is defined for 64-bit targets");
static_assert(offsetof(tessCpuLaunchContext, grid) == 0);
static_assert(offsetof(tessCpuLaunchContext, group) == 12);
static_assert(offsetof(tessCpuLaunchContext, group_id) == 24);
static_assert(offsetof(tessCpuLaunchContext, worker) == 36);
static_assert(offsetof(tessCpuLaunchContext, shared) == 40);
static_assert(offsetof(tessCpuLaunchContext, dynamic_shared) == 48);
static_assert(offsetof(tessCpuLaunchContext, static_shared_bytes) == 56);
static_assert(offsetof(tessCpuLaunchContext, dynamic_shared_bytes) == 64);
static_assert(offsetof(tessCpuLaunchContext, scratch) == 72);
static_assert(offsetof(tessCpuLaunchContext, scratch_bytes) == 80);
static_assert(offsetof(tessCpuLaunchContext, report_error) == 88);
static_assert(offsetof(tessCpuLaunchContext, runtime_private) == 96);
static_assert(offsetof(tessCpuLaunchContext, run_lanes) == 104);
static_assert(offsetof(tessCpuLaunchContext, barrier) == 112);
static_assert(offsetof(tessCpuLaunchContext, shuffle) == 120);
static_assert(sizeof(tessCpuLaunchContext) == 128);
static_assert(offsetof(tessCpuKernelEntry, function) == 8);
static_assert(offsetof(tessCpuKernelEntry, static_shared_bytes) == 16);
static_assert(offsetof(tessCpuKernelEntry, scratch_bytes_per_lane) == 24);
static_assert(sizeof(tessCpuKernelEntry) == 32);
static_assert(sizeof(tessDtype) == 4);
static_assert(offsetof(tessTensor, dtype) == 8);
static_assert(offsetof(tessTensor, rank) == 12);
static_assert(offsetof(tessTensor, shape) == 16);
static_assert(offsetof(tessTensor, strides) == 80);
static_assert(sizeof(tessTensor) == 144);


constexpr size_t kSharedAlignment = 64;
constexpr size_t kAllocationAlignment = 256;  // as cuMemAlloc guarantees
constexpr int64_t kMaxGroupSize = 1024;
constexpr int64_t kMaxSharedPerGroup = 227 * 1024;  // as on sm_90 (opt-in); the portable static limit is 48 KiB
constexpr uint64_t kMaxScratchPerLane = uint64_t{1} << 30;

size_t align_up(uint64_t n, size_t alignment) { return static_cast<size_t>((n + alignment - 1) / alignment * alignment); }

// Set while a thread runs a CPU kernel: a launch from inside a kernel would
// wait for the pool it runs on.
thread_local bool inside_kernel = false;

// A fixed pool of worker threads running one job at a time; the calling
// thread takes part as worker 0.
class ThreadPool {
 public:
  explicit ThreadPool(unsigned workers) {
    for (unsigned i = 0; i < workers; ++i) threads_.emplace_back([this, i] { work(i + 1); });
  }
  ~ThreadPool() {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    wake_.notify_all();
    for (auto& t : threads_) t.join();
  }
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  unsigned size() const { return static_cast<unsigned>(threads_.size()) + 1; }

  // Runs job(w) for every worker w < participants (at most size()) and waits.
  // One job at a time: concurrent callers take turns.
  void run(unsigned participants, const std::function<void(unsigned)>& job) {
    std::lock_guard launch_lock(launch_mutex_);
    if (participants > 1) {
      std::lock_guard lock(mutex_);
      job_ = &job;
      participants_ = participants;
      ++generation_;
      busy_ = static_cast<unsigned>(threads_.size());
    }
    if (participants > 1) wake_.notify_all();
    ensure_signal_stack();
    job(0);
    if (participants <= 1) return;
    std::unique_lock lock(mutex_);
    done_.wait(lock, [this] { return busy_ == 0; });
    job_ = nullptr;
  }

 private:
  void work(unsigned index) {
    ensure_signal_stack();
    uint64_t seen = 0;
    while (true) {
      const std::function<void(unsigned)>* job = nullptr;
      {
        std::unique_lock lock(mutex_);
        wake_.wait(lock, [&] { return stopping_ || generation_ != seen; });
        if (stopping_) return;
        seen = generation_;
        if (index < participants_) job = job_;
      }
      if (job) (*job)(index);
      std::lock_guard lock(mutex_);
      if (--busy_ == 0) done_.notify_all();
    }
  }

  std::vector<std::thread> threads_;
  std::mutex mutex_, launch_mutex_;
  std::condition_variable wake_, done_;
  const std::function<void(unsigned)>* job_ = nullptr;
  unsigned participants_ = 0;
  uint64_t generation_ = 0;
  unsigned busy_ = 0;
  bool stopping_ = false;
};

struct CpuKernel : tessKernel_st {
  tessCpuKernelFunction function = nullptr;
  uint64_t static_shared_bytes = 0;
  uint64_t scratch_bytes_per_lane = 0;
};

struct CpuEntry {
  std::string name;
  tessCpuKernelFunction function;
  uint64_t static_shared_bytes;
  uint64_t scratch_bytes_per_lane;
};

struct CpuModule : tessModule_st {
  std::vector<CpuEntry> entries;
  std::string origin;       // "the table", or the shared object's path
  void* library = nullptr;  // dlopen handle of a loaded shared object
  ~CpuModule() override {
    kernels.clear();
    if (library) dlclose(library);
  }
};

struct CpuEvent : tessEvent_st {
  std::chrono::steady_clock::time_point time;
  bool recorded = false;
};

// Per-launch state a kernel's report_error reaches through runtime_private.
struct LaunchErrors {
  std::mutex mutex;
  std::string first;
  std::atomic<bool> failed{false};
};

void report_error(const tessCpuLaunchContext* context, const char* message) {
  if (!context || !context->runtime_private) return;
  auto* errors = static_cast<LaunchErrors*>(context->runtime_private);
  std::lock_guard lock(errors->mutex);
  if (errors->failed.load()) return;  // the first error wins
  errors->first = fmt::format("group ({}, {}, {}): {}", context->group_id[0], context->group_id[1],
                              context->group_id[2], message && *message ? message : "(no message)");
  errors->failed.store(true);
}

// An aligned heap buffer.
struct AlignedBuffer {
  void* data = nullptr;
  AlignedBuffer() = default;
  AlignedBuffer(const AlignedBuffer&) = delete;
  AlignedBuffer& operator=(const AlignedBuffer&) = delete;
  AlignedBuffer(AlignedBuffer&& other) noexcept : data(other.data) { other.data = nullptr; }
  ~AlignedBuffer() { std::free(data); }
  bool allocate(size_t bytes, size_t alignment) {
    data = std::aligned_alloc(alignment, align_up(std::max<size_t>(bytes, 1), alignment));
    return data != nullptr;
  }
};

// Worker threads, the calling thread included: TESSERA_CPU_THREADS when it is
// a number from 1 to 1024, else one per hardware thread.
unsigned worker_count() {
  if (const char* value = std::getenv("TESSERA_CPU_THREADS"); value && *value) {
    char* end = nullptr;
    const long n = std::strtol(value, &end, 10);
    if (*end == '\0' && n >= 1 && n <= 1024) return static_cast<unsigned>(n);
  }
  return std::max(1u, std::thread::hardware_concurrency());
}

class CpuDevice : public tessDevice_st {
 public:
  CpuDevice() : pool_(worker_count() - 1) {}

  tessDeviceKind kind() const override { return TESS_DEVICE_CPU; }
  std::string name() const override { return fmt::format("cpu ({} threads)", pool_.size()); }

  tessStatus attribute(tessDeviceAttribute attribute, int64_t* value) override {
    switch (attribute) {
      case TESS_ATTR_MAX_GROUP_SIZE: *value = kMaxGroupSize; return ok();
      case TESS_ATTR_MAX_SHARED_PER_GROUP: *value = kMaxSharedPerGroup; return ok();
      case TESS_ATTR_MULTIPROCESSOR_COUNT: *value = pool_.size(); return ok();
      case TESS_ATTR_WARP_SIZE: *value = 32; return ok();
      case TESS_ATTR_COMPUTE_CAPABILITY: *value = 0; return ok();
      case TESS_ATTR_L2_CACHE_SIZE: *value = 0; return ok();  // the tuner flushes no cache on the CPU
    }
    return fail(TESS_ERROR_INVALID_VALUE,
                fmt::format("tessDeviceGetAttribute: unknown attribute {}", static_cast<int>(attribute)));
  }

  // --- memory: every allocation is tracked, so copies can be range-checked.

  tessStatus malloc(size_t bytes, tessDevicePtr* ptr) override {
    if (bytes > (size_t{1} << 48))
      return fail(TESS_ERROR_OUT_OF_MEMORY, fmt::format("tessMalloc: cannot allocate {} bytes on the CPU device", bytes));
    void* p = std::aligned_alloc(kAllocationAlignment, align_up(std::max<size_t>(bytes, 1), kAllocationAlignment));
    if (!p)
      return fail(TESS_ERROR_OUT_OF_MEMORY, fmt::format("tessMalloc: cannot allocate {} bytes on the CPU device", bytes));
    auto address = reinterpret_cast<tessDevicePtr>(p);
    std::lock_guard lock(mutex_);
    allocations_[address] = bytes;
    freed_.erase(address);
    *ptr = address;
    return ok();
  }

  tessStatus free(tessDevicePtr ptr) override {
    if (ptr == 0) return ok();
    {
      std::lock_guard lock(mutex_);
      auto it = allocations_.find(ptr);
      if (it == allocations_.end()) {
        if (freed_.count(ptr))
          return fail(TESS_ERROR_INVALID_VALUE,
                      fmt::format("tessFree: 0x{:x} was already freed (double free) on the CPU device", ptr));
        if (auto inside = containing(ptr); inside != allocations_.end())
          return fail(TESS_ERROR_INVALID_VALUE,
                      fmt::format("tessFree: 0x{:x} points {} bytes into the allocation of {} bytes at 0x{:x}; "
                                  "pass the address tessMalloc returned",
                                  ptr, ptr - inside->first, inside->second, inside->first));
        return fail(TESS_ERROR_INVALID_VALUE,
                    fmt::format("tessFree: 0x{:x} was not allocated by tessMalloc on the CPU device", ptr));
      }
      allocations_.erase(it);
      if (freed_.size() > 65536) freed_.clear();  // only a hint for the message above
      freed_.insert(ptr);
    }
    std::free(reinterpret_cast<void*>(ptr));
    return ok();
  }

  tessStatus copy_to_device(tessDevicePtr dst, const void* src, size_t bytes) override {
    if (bytes == 0) return ok();
    if (!src) return fail(TESS_ERROR_INVALID_VALUE, "tessMemcpyHtoD: the host source is null");
    if (auto s = check_range("tessMemcpyHtoD", "destination", dst, bytes); s) return s;
    std::memcpy(reinterpret_cast<void*>(dst), src, bytes);
    return ok();
  }
  tessStatus copy_to_host(void* dst, tessDevicePtr src, size_t bytes) override {
    if (bytes == 0) return ok();
    if (!dst) return fail(TESS_ERROR_INVALID_VALUE, "tessMemcpyDtoH: the host destination is null");
    if (auto s = check_range("tessMemcpyDtoH", "source", src, bytes); s) return s;
    std::memcpy(dst, reinterpret_cast<const void*>(src), bytes);
    return ok();
  }
  tessStatus copy_on_device(tessDevicePtr dst, tessDevicePtr src, size_t bytes) override {
    if (bytes == 0) return ok();
    if (auto s = check_range("tessMemcpyDtoD", "source", src, bytes); s) return s;
    if (auto s = check_range("tessMemcpyDtoD", "destination", dst, bytes); s) return s;
    std::memmove(reinterpret_cast<void*>(dst), reinterpret_cast<const void*>(src), bytes);
    return ok();
  }
  tessStatus memset(tessDevicePtr dst, int value, size_t bytes) override {
    if (bytes == 0) return ok();
    if (auto s = check_range("tessMemset", "destination", dst, bytes); s) return s;
    std::memset(reinterpret_cast<void*>(dst), value, bytes);
    return ok();
  }
  tessStatus check_buffer(const char* what, const char* role, tessDevicePtr p, size_t bytes) override {
    return check_range(what, role, p, bytes);
  }

  // --- streams and events: work runs when submitted, so they are always complete.

  tessStatus create_stream(tessStream* stream) override {
    auto* s = new tessStream_st();
    s->device = this;
    *stream = s;
    return ok();
  }
  tessStatus synchronize_stream(tessStream) override { return ok(); }
  tessStatus wait_event(tessStream, tessEvent) override { return ok(); }
  tessStatus destroy_stream(tessStream stream) override {
    delete stream;
    return ok();
  }
  tessStatus synchronize() override { return ok(); }
  tessStatus create_event(tessEvent* event) override {
    auto* e = new CpuEvent();
    e->device = this;
    *event = e;
    return ok();
  }
  tessStatus record_event(tessEvent event, tessStream) override {
    auto* e = static_cast<CpuEvent*>(event);
    e->time = std::chrono::steady_clock::now();
    e->recorded = true;
    return ok();
  }
  tessStatus synchronize_event(tessEvent) override { return ok(); }
  tessStatus query_event(tessEvent, bool* complete) override {
    *complete = true;
    return ok();
  }
  tessStatus elapsed(float* ms, tessEvent start, tessEvent end) override {
    auto* a = static_cast<CpuEvent*>(start);
    auto* b = static_cast<CpuEvent*>(end);
    if (!a->recorded || !b->recorded)
      return fail(TESS_ERROR_INVALID_VALUE,
                  fmt::format("tessEventElapsedTime: the {} event was never recorded", a->recorded ? "end" : "start"));
    *ms = std::chrono::duration<float, std::milli>(b->time - a->time).count();
    return ok();
  }
  tessStatus destroy_event(tessEvent event) override {
    delete event;
    return ok();
  }

  // --- modules

  tessStatus load_cpu_table(const tessCpuKernelEntry* entries, size_t count, tessModule* module) override {
    auto m = std::make_unique<CpuModule>();
    m->device = this;
    m->origin = "the kernel table";
    if (auto s = add_entries(*m, entries, count, false); s) return s;
    *module = m.release();
    return ok();
  }

  tessStatus load_module(const void* image, size_t bytes, tessModule* module) override {
    static const unsigned char kElfMagic[4] = {0x7f, 'E', 'L', 'F'};
    if (bytes < 4 || std::memcmp(image, kElfMagic, 4) != 0)
      return fail(TESS_ERROR_INVALID_MODULE,
                  fmt::format("tessModuleLoadData: the {}-byte image is not a CPU code object (an ELF shared object "
                              "built for the CPU target); fatbins, cubins and PTX need a CUDA device",
                              bytes));
    // dlopen needs a file: write the image to a temporary one, load it and
    // remove it at once (the mapping stays).
    const char* tmpdir = std::getenv("TMPDIR");
    std::string path = fmt::format("{}/tessera-module-XXXXXX", tmpdir && *tmpdir ? tmpdir : "/tmp");
    int fd = ::mkstemp(path.data());
    if (fd < 0)
      return fail(TESS_ERROR_INVALID_MODULE,
                  fmt::format("tessModuleLoadData: cannot create a temporary file {}: {}", path, std::strerror(errno)));
    const char* p = static_cast<const char*>(image);
    size_t left = bytes;
    while (left > 0) {
      ssize_t n = ::write(fd, p, left);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        int error = errno;
        ::close(fd);
        ::unlink(path.c_str());
        return fail(TESS_ERROR_INVALID_MODULE, fmt::format("tessModuleLoadData: cannot write the CPU code object to {}: {}",
                                                           path, std::strerror(error)));
      }
      p += n;
      left -= static_cast<size_t>(n);
    }
    ::close(fd);
    tessStatus s = open_shared_object(path, "tessModuleLoadData", module);
    ::unlink(path.c_str());
    return s;
  }

  tessStatus load_module_file(const char* path, tessModule* module) override {
    struct stat st;
    if (::stat(path, &st) != 0)
      return fail(TESS_ERROR_NOT_FOUND, fmt::format("tessModuleLoadFile: cannot open '{}': {}", path, std::strerror(errno)));
    std::string p = path;
    if (p.find('/') == std::string::npos) p = "./" + p;  // else dlopen would search the library path
    return open_shared_object(p, "tessModuleLoadFile", module);
  }

  tessStatus find_kernel(tessModule module, const char* name, tessKernel* kernel) override {
    auto* m = static_cast<CpuModule*>(module);
    std::lock_guard lock(m->mutex);
    if (tessKernel k = m->cached(name)) {
      *kernel = k;
      return ok();
    }
    for (const CpuEntry& e : m->entries) {
      if (e.name != name) continue;
      auto k = std::make_unique<CpuKernel>();
      k->module = module;
      k->name = name;
      k->function = e.function;
      k->static_shared_bytes = e.static_shared_bytes;
      k->scratch_bytes_per_lane = e.scratch_bytes_per_lane;
      *kernel = k.get();
      m->kernels.push_back(std::move(k));
      return ok();
    }
    std::string known;
    for (const CpuEntry& e : m->entries) known += (known.empty() ? "'" : ", '") + e.name + "'";
    return fail(TESS_ERROR_NOT_FOUND, fmt::format("tessModuleGetKernel: no kernel named '{}' in {} (it has {})", name,
                                                  m->origin, known.empty() ? "no kernels" : known));
  }

  tessStatus unload_module(tessModule module) override {
    delete module;
    return ok();
  }

  // --- launches

  tessStatus launch(tessKernel kernel, const uint32_t grid[3], const uint32_t group[3], size_t dynamic_shared_bytes,
                    tessStream, void** args) override {
    auto* k = static_cast<CpuKernel*>(kernel);
    if (inside_kernel)
      return fail(TESS_ERROR_UNSUPPORTED,
                  fmt::format("launch of '{}': a CPU kernel cannot launch kernels while it runs", k->name));
    const uint64_t groups = uint64_t{grid[0]} * grid[1] * grid[2];
    const uint64_t lanes = uint64_t{group[0]} * group[1] * group[2];
    if (groups == 0 || lanes == 0)
      return fail(TESS_ERROR_LAUNCH, fmt::format("launch of '{}': empty grid {}x{}x{} or group {}x{}x{}", k->name,
                                                 grid[0], grid[1], grid[2], group[0], group[1], group[2]));
    if (lanes > static_cast<uint64_t>(kMaxGroupSize))
      return fail(TESS_ERROR_LAUNCH,
                  fmt::format("launch of '{}': a group of {}x{}x{} = {} lanes exceeds the CPU device's limit of {} lanes",
                              k->name, group[0], group[1], group[2], lanes, kMaxGroupSize));
    const uint64_t shared = k->static_shared_bytes + dynamic_shared_bytes;
    if (k->static_shared_bytes > static_cast<uint64_t>(kMaxSharedPerGroup) ||
        dynamic_shared_bytes > static_cast<uint64_t>(kMaxSharedPerGroup) || shared > static_cast<uint64_t>(kMaxSharedPerGroup))
      return fail(TESS_ERROR_LAUNCH,
                  fmt::format("launch of '{}': {} bytes of shared memory per group ({} static + {} dynamic) exceed the "
                              "CPU device's limit of {} bytes",
                              k->name, shared, k->static_shared_bytes, dynamic_shared_bytes, kMaxSharedPerGroup));
    if (k->scratch_bytes_per_lane > kMaxScratchPerLane)
      return fail(TESS_ERROR_LAUNCH, fmt::format("launch of '{}': {} bytes of scratch per lane exceed the limit of {}",
                                                 k->name, k->scratch_bytes_per_lane, kMaxScratchPerLane));
    const uint64_t scratch = lanes * k->scratch_bytes_per_lane;

    // One shared-memory block and one scratch block per participating worker,
    // allocated up front so that running out of memory is a clean error.
    const unsigned participants = static_cast<unsigned>(std::min<uint64_t>(groups, pool_.size()));
    const size_t static_part = align_up(k->static_shared_bytes, kSharedAlignment);
    const size_t shared_block = static_part + align_up(dynamic_shared_bytes, kSharedAlignment);
    std::vector<AlignedBuffer> shared_memory(participants), scratch_memory(participants);
    for (unsigned w = 0; w < participants; ++w) {
      if (!shared_memory[w].allocate(shared_block, kSharedAlignment) ||
          (scratch && !scratch_memory[w].allocate(static_cast<size_t>(scratch), kSharedAlignment)))
        return fail(TESS_ERROR_OUT_OF_MEMORY,
                    fmt::format("launch of '{}': cannot allocate {} bytes of shared memory and {} bytes of scratch "
                                "for each of {} worker threads",
                                k->name, shared_block, scratch, participants));
    }

    LaunchErrors errors;
    std::atomic<uint64_t> next{0};
    const uint64_t chunk = std::max<uint64_t>(1, groups / (uint64_t{participants} * 16));
    std::function<void(unsigned)> job = [&](unsigned worker) {
      tessCpuLaunchContext context{};
      std::copy(grid, grid + 3, context.grid);
      std::copy(group, group + 3, context.group);
      context.worker = worker;
      context.shared = shared_memory[worker].data;
      context.dynamic_shared = static_cast<char*>(shared_memory[worker].data) + static_part;
      context.static_shared_bytes = k->static_shared_bytes;
      context.dynamic_shared_bytes = dynamic_shared_bytes;
      context.scratch = scratch ? scratch_memory[worker].data : nullptr;
      context.scratch_bytes = scratch;
      context.report_error = &report_error;
      context.runtime_private = &errors;
      context.run_lanes = &run_lanes;
      context.barrier = &lane_barrier;
      context.shuffle = &lane_shuffle;
      inside_kernel = true;
      // Groups are taken in chunks: one atomic per chunk, not per group
      // (small groups of an elementwise kernel cost little more than that
      // atomic), with chunks small enough to balance the workers.
      uint64_t chunk_end = 0, g = 0;
      while (!errors.failed.load(std::memory_order_relaxed)) {
        if (g == chunk_end) {
          g = next.fetch_add(chunk, std::memory_order_relaxed);
          if (g >= groups) break;
          chunk_end = std::min(groups, g + chunk);
        }
        context.group_id[0] = static_cast<uint32_t>(g % grid[0]);
        context.group_id[1] = static_cast<uint32_t>((g / grid[0]) % grid[1]);
        context.group_id[2] = static_cast<uint32_t>(g / (uint64_t{grid[0]} * grid[1]));
        try {
          k->function(args, &context);
        } catch (const std::exception& e) {
          report_error(&context, fmt::format("the kernel threw a C++ exception: {}", e.what()).c_str());
        } catch (...) {
          report_error(&context, "the kernel threw a C++ exception");
        }
        ++g;
      }
      inside_kernel = false;
    };
    pool_.run(participants, job);
    if (errors.failed)
      return fail(TESS_ERROR_KERNEL,
                  fmt::format("kernel '{}' (grid {}x{}x{}, group {}x{}x{}) failed in {}", k->name, grid[0], grid[1],
                              grid[2], group[0], group[1], group[2], errors.first));
    return ok();
  }

 private:
  // The live allocation holding `p`, or end(). Caller holds mutex_.
  std::map<tessDevicePtr, size_t>::const_iterator containing(tessDevicePtr p) const {
    auto it = allocations_.upper_bound(p);
    if (it == allocations_.begin()) return allocations_.end();
    --it;
    if (p - it->first < std::max<size_t>(it->second, 1)) return it;
    return allocations_.end();
  }

  tessStatus check_range(const char* what, const char* role, tessDevicePtr p, size_t bytes) const {
    std::lock_guard lock(mutex_);
    auto it = containing(p);
    if (it == allocations_.end())
      return fail(TESS_ERROR_INVALID_VALUE,
                  fmt::format("{}: the {} 0x{:x} is not inside a live allocation of the CPU device "
                              "(not from tessMalloc, or freed)",
                              what, role, p));
    const uint64_t offset = p - it->first;
    if (bytes > it->second - offset)
      return fail(TESS_ERROR_INVALID_VALUE,
                  fmt::format("{}: {} bytes at the {} 0x{:x} overrun its allocation of {} bytes at 0x{:x} "
                              "(offset {}, {} bytes past the end)",
                              what, bytes, role, p, it->second, it->first, offset, offset + bytes - it->second));
    return ok();
  }

  // Copies a kernel table into `m`; `terminated`: ends at a null name.
  static tessStatus add_entries(CpuModule& m, const tessCpuKernelEntry* entries, size_t count, bool terminated) {
    for (size_t i = 0; i < count; ++i) {
      const tessCpuKernelEntry& e = entries[i];
      if (!e.name) {
        if (terminated) return ok();
        return fail(TESS_ERROR_INVALID_MODULE, fmt::format("{}: entry {} has no name", m.origin, i));
      }
      if (!e.function)
        return fail(TESS_ERROR_INVALID_MODULE, fmt::format("{}: kernel '{}' (entry {}) has no function", m.origin, e.name, i));
      for (const CpuEntry& other : m.entries)
        if (other.name == e.name)
          return fail(TESS_ERROR_INVALID_MODULE, fmt::format("{}: two kernels are named '{}'", m.origin, e.name));
      m.entries.push_back({e.name, e.function, e.static_shared_bytes, e.scratch_bytes_per_lane});
    }
    if (terminated)
      return fail(TESS_ERROR_INVALID_MODULE,
                  fmt::format("{}: the tessera_cpu_kernels table has no terminating entry with a null name", m.origin));
    return ok();
  }

  tessStatus open_shared_object(const std::string& path, const char* what, tessModule* module) {
    auto m = std::make_unique<CpuModule>();
    m->device = this;
    m->origin = fmt::format("'{}'", path);
    dlerror();
    m->library = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!m->library) {
      const char* error = dlerror();
      return fail(TESS_ERROR_INVALID_MODULE,
                  fmt::format("{}: cannot load the CPU code object '{}': {}", what, path, error ? error : "dlopen failed"));
    }
    auto* version = static_cast<const uint32_t*>(dlsym(m->library, "tessera_cpu_abi_version"));
    if (!version)
      return fail(TESS_ERROR_INVALID_MODULE,
                  fmt::format("{}: '{}' exports no tessera_cpu_abi_version: it is not a Tessera CPU code object", what, path));
    if (*version != TESS_CPU_ABI_VERSION)
      return fail(TESS_ERROR_INVALID_MODULE,
                  fmt::format("{}: '{}' was built for CPU kernel ABI version {}; this runtime implements version {}", what,
                              path, *version, TESS_CPU_ABI_VERSION));
    auto* table = static_cast<const tessCpuKernelEntry*>(dlsym(m->library, "tessera_cpu_kernels"));
    if (!table)
      return fail(TESS_ERROR_INVALID_MODULE, fmt::format("{}: '{}' exports no tessera_cpu_kernels table", what, path));
    // The symbol's size bounds the table, so a missing terminator is an
    // error rather than a read past its end.
    size_t limit = size_t{1} << 20;
    Dl_info info;
    void* symbol_entry = nullptr;
    if (dladdr1(table, &info, &symbol_entry, RTLD_DL_SYMENT) && symbol_entry) {
      const auto* symbol = static_cast<const ElfW(Sym)*>(symbol_entry);
      if (symbol->st_size) limit = symbol->st_size / sizeof(tessCpuKernelEntry);
    }
    if (auto s = add_entries(*m, table, limit, true); s) return s;
    *module = m.release();
    return ok();
  }

  ThreadPool pool_;
  mutable std::mutex mutex_;
  std::map<tessDevicePtr, size_t> allocations_;  // start -> requested bytes
  std::unordered_set<tessDevicePtr> freed_;      // recently freed, for the double-free message
};

}  // namespace

std::unique_ptr<tessDevice_st> make_cpu_device() { return std::make_unique<CpuDevice>(); }

}  // namespace tessera::rt
