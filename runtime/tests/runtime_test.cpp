// Unit tests of the runtime library through its C ABI and its C++ layer, on
// the CPU device (always present) and with fake CUDA drivers.
#include <doctest/doctest.h>

#include <atomic>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "tessera/runtime.hpp"
#include "tessera/tessera_runtime.h"

namespace {

std::string last_message() { return tessGetLastErrorMessage(); }

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

tessDevice cpu() {
  tessDevice d = nullptr;
  REQUIRE(tessGetDevice(0, &d) == TESS_SUCCESS);
  return d;
}

// --- hand-written CPU kernels, as the compiler's CPU target will emit them ---

// A rank-1 tensor parameter: args[j] -> base address, args[j + 1] -> size,
// args[j + 2] -> stride (docs/abi.md).
template <class T>
struct Vector {
  T* data;
  int64_t size;
  int64_t stride;
  T& operator[](int64_t i) const { return data[i * stride]; }
};
template <class T>
Vector<T> vector_parameter(void** args, int j) {
  return {reinterpret_cast<T*>(*static_cast<const uint64_t*>(args[j])), *static_cast<const int64_t*>(args[j + 1]),
          *static_cast<const int64_t*>(args[j + 2])};
}

// saxpy(x: f32[n], y: mut f32[n], alpha: f32): one lane loop.
void saxpy(void** args, const tessCpuLaunchContext* context) {
  const auto x = vector_parameter<const float>(args, 0);
  const auto y = vector_parameter<float>(args, 3);
  const float alpha = *static_cast<const float*>(args[6]);
  const uint32_t lanes = context->group[0];
  for (uint32_t lane = 0; lane < lanes; ++lane) {
    const int64_t i = int64_t{context->group_id[0]} * lanes + lane;  // tile.linear_id()
    if (i < x.size) y[i] = alpha * x[i] + y[i];                       // if i < n
  }
}

// group_sum(x: f32[n], sums: mut f32[groups]): each group loads its slice into
// shared memory, then halves it with a barrier per step (the seeds' tree
// reduction); lane 0 writes the result. Every barrier ends a lane loop.
void group_sum(void** args, const tessCpuLaunchContext* context) {
  const auto x = vector_parameter<const float>(args, 0);
  const auto sums = vector_parameter<float>(args, 3);
  auto* shared = static_cast<float*>(context->shared);
  const uint32_t lanes = context->group[0];
  for (uint32_t lane = 0; lane < lanes; ++lane) {
    const int64_t i = int64_t{context->group_id[0]} * lanes + lane;
    shared[lane] = i < x.size ? x[i] : 0.0f;
  }
  for (uint32_t s = lanes / 2; s > 0; s /= 2)  // barrier before each step
    for (uint32_t lane = 0; lane < s; ++lane) shared[lane] += shared[lane + s];
  sums[context->group_id[0]] = shared[0];
}

// Counts visits per group over a 3-D grid and checks the context.
void visit_groups(void** args, const tessCpuLaunchContext* context) {
  auto* visits = static_cast<std::atomic<int>*>(*static_cast<void**>(args[0]));
  const uint32_t g = context->group_id[0] + context->grid[0] * (context->group_id[1] + context->grid[1] * context->group_id[2]);
  visits[g].fetch_add(1);
  if (context->group_id[0] >= context->grid[0] || context->group_id[1] >= context->grid[1] ||
      context->group_id[2] >= context->grid[2])
    context->report_error(context, "group id outside the grid");
}

// Checks the shared-memory and scratch layout the ABI promises.
void layout_probe(void** args, const tessCpuLaunchContext* context) {
  (void)args;
  const auto aligned = [](const void* p) { return reinterpret_cast<uintptr_t>(p) % 64 == 0; };
  const uint32_t lanes = context->group[0] * context->group[1] * context->group[2];
  if (!aligned(context->shared) || !aligned(context->dynamic_shared) || !aligned(context->scratch))
    return context->report_error(context, "misaligned shared memory or scratch");
  if (static_cast<char*>(context->dynamic_shared) < static_cast<char*>(context->shared) + context->static_shared_bytes)
    return context->report_error(context, "dynamic shared memory overlaps the static part");
  if (context->static_shared_bytes != 100 || context->dynamic_shared_bytes != 200 || context->scratch_bytes != lanes * 24u)
    return context->report_error(context, "wrong sizes in the context");
  // Touch every byte, so that AddressSanitizer checks the sizes.
  std::memset(context->shared, 1, context->static_shared_bytes);
  std::memset(context->dynamic_shared, 2, context->dynamic_shared_bytes);
  std::memset(context->scratch, 3, context->scratch_bytes);
}

// Fails in group 3 like a bounds check would.
void bounds_failure(void** args, const tessCpuLaunchContext* context) {
  (void)args;
  if (context->group_id[0] == 3) context->report_error(context, "index 12 is out of bounds for x of size 10");
}

void throws(void**, const tessCpuLaunchContext*) { throw std::runtime_error("boom"); }

// Launches a kernel from inside a kernel (not allowed).
void nested_launch(void** args, const tessCpuLaunchContext* context) {
  auto kernel = *static_cast<tessKernel*>(args[0]);
  const uint32_t one[3] = {1, 1, 1};
  if (tessLaunchKernel(kernel, one, one, 0, nullptr, nullptr) != TESS_SUCCESS)
    context->report_error(context, tessGetLastErrorMessage());
}

void nothing(void**, const tessCpuLaunchContext*) {}

// The tree sum again, written per lane as the compiler writes kernels that
// synchronise: one lane function, real barriers, run through run_lanes.
void fiber_group_sum_lane(void** args, const tessCpuLaunchContext* context, uint64_t lane) {
  const auto x = vector_parameter<const float>(args, 0);
  const auto sums = vector_parameter<float>(args, 3);
  auto* shared = static_cast<float*>(context->shared);
  const uint32_t lanes = context->group[0];
  const int64_t i = int64_t{context->group_id[0]} * lanes + static_cast<int64_t>(lane);
  shared[lane] = i < x.size ? x[i] : 0.0f;
  context->barrier(context);
  for (uint32_t s = lanes / 2; s > 0; s /= 2) {
    if (lane < s) shared[lane] += shared[lane + s];
    context->barrier(context);
  }
  if (lane == 0) sums[context->group_id[0]] = shared[0];
}
void fiber_group_sum(void** args, const tessCpuLaunchContext* context) {
  context->run_lanes(context, &fiber_group_sum_lane, args);
}

// out[g * L + l] = the value of lane l ^ 1, then of lane (l + 3) in the warp
// (its own value past the warp's end), summed over two exchanges; lanes of
// odd groups return early after the first exchange when l % 4 == 3.
void fiber_shuffle_lane(void** args, const tessCpuLaunchContext* context, uint64_t lane) {
  const auto out = vector_parameter<int64_t>(args, 0);
  const uint32_t lanes = context->group[0];
  const int64_t i = int64_t{context->group_id[0]} * lanes + static_cast<int64_t>(lane);
  const uint64_t mine = 1000 * context->group_id[0] + lane;
  const uint32_t in_warp = static_cast<uint32_t>(lane % 32);
  const uint64_t partner = context->shuffle(context, mine, in_warp ^ 1u);
  out[i] = static_cast<int64_t>(partner);
  if (context->group_id[0] % 2 == 1 && lane % 4 == 3) return;
  const uint64_t later = context->shuffle(context, mine, in_warp + 3 < 32 ? in_warp + 3 : in_warp);
  out[i] += static_cast<int64_t>(later) * 1000000;
}
void fiber_shuffle(void** args, const tessCpuLaunchContext* context) {
  context->run_lanes(context, &fiber_shuffle_lane, args);
}

// Lane 0 waits at a barrier while the rest of its warp shuffles: a deadlock on
// the GPU, an error here.
void fiber_deadlock_lane(void**, const tessCpuLaunchContext* context, uint64_t lane) {
  if (lane == 0)
    context->barrier(context);
  else
    context->shuffle(context, lane, 0);
}
void fiber_deadlock(void** args, const tessCpuLaunchContext* context) {
  context->run_lanes(context, &fiber_deadlock_lane, args);
}

const tessCpuKernelEntry kTable[] = {
    {"saxpy", &saxpy, 0, 0},
    {"group_sum", &group_sum, 1024 * sizeof(float), 0},
    {"visit_groups", &visit_groups, 0, 0},
    {"layout_probe", &layout_probe, 100, 24},
    {"bounds_failure", &bounds_failure, 0, 0},
    {"throws", &throws, 0, 0},
    {"nested_launch", &nested_launch, 0, 0},
    {"nothing", &nothing, 0, 0},
    {"big_static", &nothing, 300 * 1024, 0},
    {"fiber_group_sum", &fiber_group_sum, 1024 * sizeof(float), 0},
    {"fiber_shuffle", &fiber_shuffle, 0, 0},
    {"fiber_deadlock", &fiber_deadlock, 0, 0},
};

tessModule table_module() {
  tessModule m = nullptr;
  REQUIRE(tessModuleLoadCpuTable(cpu(), kTable, std::size(kTable), &m) == TESS_SUCCESS);
  return m;
}

tessKernel kernel(tessModule m, const char* name) {
  tessKernel k = nullptr;
  REQUIRE(tessModuleGetKernel(m, name, &k) == TESS_SUCCESS);
  return k;
}

// Packs kernel arguments as the ABI says: tensors as base, sizes, strides.
class ArgumentList {
 public:
  ArgumentList& tensor(const tessTensor& t) {
    void* slots[1 + 2 * TESS_MAX_RANK];
    size_t count = 0;
    REQUIRE(tessTensorKernelArgs(&t, slots, std::size(slots), &count) == TESS_SUCCESS);
    pointers_.insert(pointers_.end(), slots, slots + count);
    return *this;
  }
  template <class T>
  ArgumentList& value(T& v) {
    pointers_.push_back(&v);
    return *this;
  }
  void** data() { return pointers_.data(); }

 private:
  std::vector<void*> pointers_;
};

tessTensor vector_view(tessDevicePtr data, tessDtype dtype, int64_t n) {
  tessTensor t;
  REQUIRE(tessTensorMakeContiguous(data, dtype, 1, &n, &t) == TESS_SUCCESS);
  return t;
}

std::string read_file(const char* path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace

TEST_SUITE("devices") {
  TEST_CASE("the CPU device is always device 0") {
    int count = 0;
    REQUIRE(tessGetDeviceCount(&count) == TESS_SUCCESS);
    CHECK(count >= 1);
    tessDevice d = cpu();
    tessDeviceKind kind = TESS_DEVICE_CUDA;
    CHECK(tessDeviceGetKind(d, &kind) == TESS_SUCCESS);
    CHECK(kind == TESS_DEVICE_CPU);
    int index = -1;
    CHECK(tessDeviceGetIndex(d, &index) == TESS_SUCCESS);
    CHECK(index == 0);
    tessDevice by_name = nullptr;
    CHECK(tessGetDeviceByName("cpu", &by_name) == TESS_SUCCESS);
    CHECK(by_name == d);
    char name[64];
    CHECK(tessDeviceGetName(d, name, sizeof name) == TESS_SUCCESS);
    CHECK(std::string(name).rfind("cpu (", 0) == 0);
    char tiny[4];
    CHECK(tessDeviceGetName(d, tiny, sizeof tiny) == TESS_SUCCESS);
    CHECK(std::string(tiny) == "cpu");
    tessDevice fallback = nullptr;
    CHECK(tessGetDefaultDevice(&fallback) == TESS_SUCCESS);
    if (count == 1) CHECK(fallback == d);
  }

  TEST_CASE("CPU attributes") {
    int64_t v = 0;
    CHECK(tessDeviceGetAttribute(cpu(), TESS_ATTR_MAX_GROUP_SIZE, &v) == TESS_SUCCESS);
    CHECK(v == 1024);
    CHECK(tessDeviceGetAttribute(cpu(), TESS_ATTR_MAX_SHARED_PER_GROUP, &v) == TESS_SUCCESS);
    CHECK(v == 227 * 1024);
    CHECK(tessDeviceGetAttribute(cpu(), TESS_ATTR_MULTIPROCESSOR_COUNT, &v) == TESS_SUCCESS);
    CHECK(v >= 1);
    if (const char* threads = std::getenv("TESSERA_CPU_THREADS")) CHECK(v == std::atol(threads));
    CHECK(tessDeviceGetAttribute(cpu(), TESS_ATTR_WARP_SIZE, &v) == TESS_SUCCESS);
    CHECK(v == 32);
    CHECK(tessDeviceGetAttribute(cpu(), TESS_ATTR_COMPUTE_CAPABILITY, &v) == TESS_SUCCESS);
    CHECK(v == 0);
    CHECK(tessDeviceGetAttribute(cpu(), TESS_ATTR_L2_CACHE_SIZE, &v) == TESS_SUCCESS);
    CHECK(v == 0);  // the tuner flushes no cache on the CPU
    CHECK(tessDeviceGetAttribute(cpu(), static_cast<tessDeviceAttribute>(99), &v) == TESS_ERROR_INVALID_VALUE);
    CHECK(contains(last_message(), "unknown attribute 99"));
  }

  TEST_CASE("bad device names, indices and handles") {
    tessDevice d = nullptr;
    CHECK(tessGetDeviceByName("gpu", &d) == TESS_ERROR_INVALID_VALUE);
    CHECK(contains(last_message(), "unknown device name 'gpu' (expected cpu, cuda or cuda:N)"));
    CHECK(tessGetDeviceByName("cuda:x", &d) == TESS_ERROR_INVALID_VALUE);
    CHECK(tessGetDeviceByName("cuda:99", &d) != TESS_SUCCESS);
    CHECK(contains(last_message(), "no device 'cuda:99'"));
    CHECK(tessGetDevice(99, &d) == TESS_ERROR_NO_DEVICE);
    CHECK(contains(last_message(), "no device 99"));
    CHECK(tessGetDevice(-1, &d) == TESS_ERROR_NO_DEVICE);
    CHECK(tessGetDevice(0, nullptr) == TESS_ERROR_INVALID_VALUE);
    CHECK(contains(last_message(), "tessGetDevice: `device` is null"));
    int not_a_device = 0;
    tessDeviceKind kind;
    CHECK(tessDeviceGetKind(reinterpret_cast<tessDevice>(&not_a_device), &kind) == TESS_ERROR_INVALID_VALUE);
    CHECK(contains(last_message(), "is not a device handle"));
    CHECK(tessMalloc(nullptr, 16, nullptr) == TESS_ERROR_INVALID_VALUE);
    CHECK(contains(last_message(), "tessMalloc: `device` is null"));
  }

  TEST_CASE("without CUDA devices the reason is given") {
    int count = 0;
    REQUIRE(tessGetDeviceCount(&count) == TESS_SUCCESS);
    const std::string reason = tessCudaUnavailableReason();
    if (count > 1) {
      CHECK(reason.empty());
      return;
    }
    CHECK(!reason.empty());
    const char* overridden = std::getenv("TESSERA_LIBCUDA");
    if (!overridden || !*overridden) CHECK(contains(reason, "libcuda.so.1"));
    tessDevice d = nullptr;
    const tessStatus s = tessGetDeviceByName("cuda", &d);
    CHECK((s == TESS_ERROR_DRIVER_NOT_FOUND || s == TESS_ERROR_NO_DEVICE));
    CHECK(contains(last_message(), reason));
    if (contains(reason, "not found")) CHECK(s == TESS_ERROR_DRIVER_NOT_FOUND);
  }

  TEST_CASE("status names") {
    CHECK(std::string(tessGetErrorName(TESS_SUCCESS)) == "TESS_SUCCESS");
    CHECK(std::string(tessGetErrorName(TESS_ERROR_KERNEL)) == "TESS_ERROR_KERNEL");
    CHECK(std::string(tessGetErrorName(static_cast<tessStatus>(77))) == "TESS_ERROR_UNKNOWN");
    CHECK(std::string(tessGetErrorString(TESS_ERROR_LAUNCH)) == "invalid launch configuration");
  }
}

TEST_SUITE("memory") {
  TEST_CASE("malloc, copies both ways, on the device, memset") {
    tessDevice d = cpu();
    tessDevicePtr a = 0, b = 0;
    REQUIRE(tessMalloc(d, 1000, &a) == TESS_SUCCESS);
    REQUIRE(tessMalloc(d, 1000, &b) == TESS_SUCCESS);
    CHECK(a % 256 == 0);
    CHECK(a != b);
    std::vector<uint8_t> host(1000), back(1000);
    for (size_t i = 0; i < host.size(); ++i) host[i] = static_cast<uint8_t>(i * 7);
    CHECK(tessMemcpyHtoD(d, a, host.data(), host.size()) == TESS_SUCCESS);
    CHECK(tessMemcpyDtoD(d, b, a, host.size()) == TESS_SUCCESS);
    CHECK(tessMemcpyDtoH(d, back.data(), b, back.size()) == TESS_SUCCESS);
    CHECK(back == host);
    CHECK(tessMemset(d, b + 10, 0xab, 20) == TESS_SUCCESS);
    CHECK(tessMemcpyDtoH(d, back.data(), b, back.size()) == TESS_SUCCESS);
    for (size_t i = 0; i < back.size(); ++i) {
      const uint8_t expected = i >= 10 && i < 30 ? 0xab : host[i];
      if (back[i] != expected) FAIL("byte " << i << " is " << int{back[i]});
    }
    // Within an allocation, at an offset.
    CHECK(tessMemcpyDtoH(d, back.data(), a + 500, 500) == TESS_SUCCESS);
    CHECK(back[0] == host[500]);
    CHECK(tessFree(d, a) == TESS_SUCCESS);
    CHECK(tessFree(d, b) == TESS_SUCCESS);
    CHECK(tessFree(d, 0) == TESS_SUCCESS);
  }

  TEST_CASE("zero-byte allocations and copies") {
    tessDevice d = cpu();
    tessDevicePtr a = 0, b = 0;
    REQUIRE(tessMalloc(d, 0, &a) == TESS_SUCCESS);
    REQUIRE(tessMalloc(d, 0, &b) == TESS_SUCCESS);
    CHECK(a != 0);
    CHECK(a != b);
    CHECK(tessMemcpyHtoD(d, a, nullptr, 0) == TESS_SUCCESS);
    uint8_t byte = 1;
    CHECK(tessMemcpyHtoD(d, a, &byte, 1) == TESS_ERROR_INVALID_VALUE);
    CHECK(contains(last_message(), "overrun its allocation of 0 bytes"));
    CHECK(tessFree(d, a) == TESS_SUCCESS);
    CHECK(tessFree(d, b) == TESS_SUCCESS);
  }

  TEST_CASE("invalid frees are clear errors") {
    tessDevice d = cpu();
    tessDevicePtr a = 0;
    REQUIRE(tessMalloc(d, 64, &a) == TESS_SUCCESS);
    int on_stack = 0;
    const auto stack_address = reinterpret_cast<tessDevicePtr>(&on_stack);
    CHECK(tessFree(d, stack_address) == TESS_ERROR_INVALID_VALUE);
    CHECK(contains(last_message(), "was not allocated by tessMalloc on the CPU device"));
    CHECK(tessFree(d, a + 16) == TESS_ERROR_INVALID_VALUE);
    CHECK(contains(last_message(), "points 16 bytes into the allocation of 64 bytes"));
    CHECK(tessFree(d, a) == TESS_SUCCESS);
    CHECK(tessFree(d, a) == TESS_ERROR_INVALID_VALUE);
    CHECK(contains(last_message(), "already freed (double free)"));
    // A success leaves the last message alone.
    CHECK(tessFree(d, 0) == TESS_SUCCESS);
    CHECK(contains(last_message(), "double free"));
  }

  TEST_CASE("copies outside allocations name the address and sizes") {
    tessDevice d = cpu();
    tessDevicePtr a = 0;
    REQUIRE(tessMalloc(d, 100, &a) == TESS_SUCCESS);
    std::vector<uint8_t> host(200);
    CHECK(tessMemcpyHtoD(d, a + 50, host.data(), 60) == TESS_ERROR_INVALID_VALUE);
    CHECK(contains(last_message(), "tessMemcpyHtoD: 60 bytes at the destination"));
    CHECK(contains(last_message(), "overrun its allocation of 100 bytes"));
    CHECK(contains(last_message(), "(offset 50, 10 bytes past the end)"));
    CHECK(tessMemcpyDtoH(d, host.data(), a, 101) == TESS_ERROR_INVALID_VALUE);
    CHECK(tessMemset(d, reinterpret_cast<tessDevicePtr>(host.data()), 0, 1) == TESS_ERROR_INVALID_VALUE);
    CHECK(contains(last_message(), "tessMemset: the destination"));
    CHECK(contains(last_message(), "is not inside a live allocation"));
    CHECK(tessMemcpyDtoH(d, nullptr, a, 4) == TESS_ERROR_INVALID_VALUE);
    CHECK(contains(last_message(), "`dst` is null"));
    CHECK(tessFree(d, a) == TESS_SUCCESS);
    CHECK(tessMemcpyDtoH(d, host.data(), a, 4) == TESS_ERROR_INVALID_VALUE);  // use after free
    CHECK(contains(last_message(), "not inside a live allocation"));
  }

  TEST_CASE("an impossible allocation is out of memory") {
    tessDevicePtr a = 0;
    CHECK(tessMalloc(cpu(), size_t{1} << 62, &a) == TESS_ERROR_OUT_OF_MEMORY);
    CHECK(contains(last_message(), std::to_string(size_t{1} << 62) + " bytes"));
  }
}

TEST_SUITE("launches") {
  TEST_CASE("saxpy over many groups") {
    tessDevice d = cpu();
    const int64_t n = 100'003;  // not a multiple of the group
    std::vector<float> x(n), y(n);
    for (int64_t i = 0; i < n; ++i) {
      x[i] = static_cast<float>(i);
      y[i] = static_cast<float>(2 * i + 1);
    }
    tessDevicePtr dx = 0, dy = 0;
    REQUIRE(tessMalloc(d, n * sizeof(float), &dx) == TESS_SUCCESS);
    REQUIRE(tessMalloc(d, n * sizeof(float), &dy) == TESS_SUCCESS);
    REQUIRE(tessMemcpyHtoD(d, dx, x.data(), n * sizeof(float)) == TESS_SUCCESS);
    REQUIRE(tessMemcpyHtoD(d, dy, y.data(), n * sizeof(float)) == TESS_SUCCESS);
    tessModule m = table_module();
    tessTensor tx = vector_view(dx, TESS_F32, n), ty = vector_view(dy, TESS_F32, n);
    float alpha = 3.0f;
    ArgumentList args;
    args.tensor(tx).tensor(ty).value(alpha);
    const uint32_t group[3] = {256, 1, 1};
    const uint32_t grid[3] = {static_cast<uint32_t>((n + 255) / 256), 1, 1};
    REQUIRE(tessLaunchKernel(kernel(m, "saxpy"), grid, group, 0, nullptr, args.data()) == TESS_SUCCESS);
    std::vector<float> out(n);
    REQUIRE(tessMemcpyDtoH(d, out.data(), dy, n * sizeof(float)) == TESS_SUCCESS);
    int64_t wrong = 0;
    for (int64_t i = 0; i < n; ++i) wrong += out[i] != 3.0f * x[i] + y[i];
    CHECK(wrong == 0);
    CHECK(tessModuleUnload(m) == TESS_SUCCESS);
    CHECK(tessFree(d, dx) == TESS_SUCCESS);
    CHECK(tessFree(d, dy) == TESS_SUCCESS);
  }

  TEST_CASE("a group sum through shared memory") {
    tessDevice d = cpu();
    for (uint32_t lanes : {1u, 32u, 256u, 1024u}) {
      CAPTURE(lanes);
      const uint32_t groups = 97;
      const int64_t n = int64_t{groups} * lanes - lanes / 3;  // the last group is partly empty
      std::vector<float> x(n);
      for (int64_t i = 0; i < n; ++i) x[i] = static_cast<float>(i % 13);
      tessDevicePtr dx = 0, dsums = 0;
      REQUIRE(tessMalloc(d, n * sizeof(float), &dx) == TESS_SUCCESS);
      REQUIRE(tessMalloc(d, groups * sizeof(float), &dsums) == TESS_SUCCESS);
      REQUIRE(tessMemcpyHtoD(d, dx, x.data(), n * sizeof(float)) == TESS_SUCCESS);
      tessModule m = table_module();
      tessTensor tx = vector_view(dx, TESS_F32, n), tsums = vector_view(dsums, TESS_F32, groups);
      ArgumentList args;
      args.tensor(tx).tensor(tsums);
      const uint32_t grid[3] = {groups, 1, 1}, group[3] = {lanes, 1, 1};
      REQUIRE(tessLaunchKernel(kernel(m, "group_sum"), grid, group, 0, nullptr, args.data()) == TESS_SUCCESS);
      std::vector<float> sums(groups);
      REQUIRE(tessMemcpyDtoH(d, sums.data(), dsums, groups * sizeof(float)) == TESS_SUCCESS);
      for (uint32_t g = 0; g < groups; ++g) {
        float expected = 0;
        for (int64_t i = int64_t{g} * lanes; i < std::min<int64_t>(n, int64_t{g + 1} * lanes); ++i) expected += x[i];
        if (sums[g] != expected) FAIL("group " << g << ": " << sums[g] << " != " << expected);
      }
      CHECK(tessModuleUnload(m) == TESS_SUCCESS);
      CHECK(tessFree(d, dx) == TESS_SUCCESS);
      CHECK(tessFree(d, dsums) == TESS_SUCCESS);
    }
  }

  TEST_CASE("lanes as fibers: barriers in a tree sum") {
    tessDevice d = cpu();
    for (uint32_t lanes : {1u, 32u, 96u, 1024u}) {
      CAPTURE(lanes);
      const uint32_t groups = 37;
      const int64_t n = int64_t{groups} * lanes - lanes / 3;
      std::vector<float> x(n);
      for (int64_t i = 0; i < n; ++i) x[i] = static_cast<float>(i % 7);
      tessDevicePtr dx = 0, dsums = 0;
      REQUIRE(tessMalloc(d, n * sizeof(float), &dx) == TESS_SUCCESS);
      REQUIRE(tessMalloc(d, groups * sizeof(float), &dsums) == TESS_SUCCESS);
      REQUIRE(tessMemcpyHtoD(d, dx, x.data(), n * sizeof(float)) == TESS_SUCCESS);
      tessModule m = table_module();
      tessTensor tx = vector_view(dx, TESS_F32, n), tsums = vector_view(dsums, TESS_F32, groups);
      ArgumentList args;
      args.tensor(tx).tensor(tsums);
      const uint32_t grid[3] = {groups, 1, 1}, group[3] = {lanes, 1, 1};
      REQUIRE(tessLaunchKernel(kernel(m, "fiber_group_sum"), grid, group, 0, nullptr, args.data()) == TESS_SUCCESS);
      std::vector<float> sums(groups);
      REQUIRE(tessMemcpyDtoH(d, sums.data(), dsums, groups * sizeof(float)) == TESS_SUCCESS);
      for (uint32_t g = 0; g < groups; ++g) {
        // The same tree, sequentially (for 96 lanes it drops some partial sums, on the GPU too).
        std::vector<float> tree(lanes);
        for (uint32_t l = 0; l < lanes; ++l) tree[l] = int64_t{g} * lanes + l < n ? x[int64_t{g} * lanes + l] : 0.0f;
        for (uint32_t s = lanes / 2; s > 0; s /= 2)
          for (uint32_t l = 0; l < s; ++l) tree[l] += tree[l + s];
        const float expected = tree[0];
        if (sums[g] != expected) FAIL("group " << g << ": " << sums[g] << " != " << expected);
      }
      CHECK(tessModuleUnload(m) == TESS_SUCCESS);
      CHECK(tessFree(d, dx) == TESS_SUCCESS);
      CHECK(tessFree(d, dsums) == TESS_SUCCESS);
    }
  }

  TEST_CASE("lanes as fibers: warp shuffles, partial warps and lanes that return early") {
    tessDevice d = cpu();
    const uint32_t groups = 6, lanes = 80;  // two full warps and a half one
    const int64_t n = int64_t{groups} * lanes;
    tessDevicePtr dout = 0;
    REQUIRE(tessMalloc(d, n * sizeof(int64_t), &dout) == TESS_SUCCESS);
    tessModule m = table_module();
    tessTensor tout = vector_view(dout, TESS_I64, n);
    ArgumentList args;
    args.tensor(tout);
    const uint32_t grid[3] = {groups, 1, 1}, group[3] = {lanes, 1, 1};
    REQUIRE(tessLaunchKernel(kernel(m, "fiber_shuffle"), grid, group, 0, nullptr, args.data()) == TESS_SUCCESS);
    std::vector<int64_t> out(n);
    REQUIRE(tessMemcpyDtoH(d, out.data(), dout, n * sizeof(int64_t)) == TESS_SUCCESS);
    for (uint32_t g = 0; g < groups; ++g) {
      for (uint32_t l = 0; l < lanes; ++l) {
        auto value = [&](uint32_t lane) { return int64_t{1000} * g + lane; };
        const uint32_t warp = l / 32 * 32, in_warp = l % 32;
        auto exists = [&](uint32_t lane) { return lane < lanes; };
        int64_t expected = exists(warp + (in_warp ^ 1u)) ? value(warp + (in_warp ^ 1u)) : value(l);
        if (!(g % 2 == 1 && l % 4 == 3)) {
          const uint32_t source = warp + (in_warp + 3 < 32 ? in_warp + 3 : in_warp);
          const bool returned = g % 2 == 1 && source % 4 == 3;  // left after the first exchange
          expected += (exists(source) && !returned ? value(source) : value(l)) * 1000000;
        }
        if (out[g * lanes + l] != expected) FAIL("group " << g << " lane " << l << ": " << out[g * lanes + l] << " != " << expected);
      }
    }
    CHECK(tessModuleUnload(m) == TESS_SUCCESS);
    CHECK(tessFree(d, dout) == TESS_SUCCESS);
  }

  TEST_CASE("lanes as fibers: a barrier and a shuffle in one warp is a deadlock, reported") {
    tessModule m = table_module();
    const uint32_t grid[3] = {2, 1, 1}, group[3] = {64, 1, 1};
    CHECK(tessLaunchKernel(kernel(m, "fiber_deadlock"), grid, group, 0, nullptr, nullptr) == TESS_ERROR_KERNEL);
    CHECK(contains(last_message(), "lanes of warp 0 diverged: lane(s) 0 wait at a barrier while lane(s) 1, 2, 3"));
    CHECK(tessModuleUnload(m) == TESS_SUCCESS);
  }

  TEST_CASE("every group of a 3-D grid runs once") {
    tessModule m = table_module();
    const uint32_t grid[3] = {7, 5, 3}, group[3] = {4, 2, 2};
    std::vector<std::atomic<int>> visits(7 * 5 * 3);
    void* visits_pointer = visits.data();
    void* args[] = {&visits_pointer};
    REQUIRE(tessLaunchKernel(kernel(m, "visit_groups"), grid, group, 0, nullptr, args) == TESS_SUCCESS);
    for (size_t g = 0; g < visits.size(); ++g) CHECK(visits[g].load() == 1);
    CHECK(tessModuleUnload(m) == TESS_SUCCESS);
  }

  TEST_CASE("shared memory, dynamic shared memory and scratch are laid out as the ABI says") {
    tessModule m = table_module();
    const uint32_t grid[3] = {50, 1, 1}, group[3] = {8, 2, 1};
    CHECK(tessLaunchKernel(kernel(m, "layout_probe"), grid, group, 200, nullptr, nullptr) == TESS_SUCCESS);
    CHECK(tessModuleUnload(m) == TESS_SUCCESS);
  }

  TEST_CASE("group-size and shared-memory limits") {
    tessModule m = table_module();
    tessKernel k = kernel(m, "nothing");
    const uint32_t grid[3] = {1, 1, 1};
    const uint32_t too_many[3] = {64, 32, 1};
    CHECK(tessLaunchKernel(k, grid, too_many, 0, nullptr, nullptr) == TESS_ERROR_LAUNCH);
    CHECK(contains(last_message(), "launch of 'nothing': a group of 64x32x1 = 2048 lanes exceeds the CPU device's limit "
                                   "of 1024 lanes"));
    const uint32_t group[3] = {128, 1, 1};
    CHECK(tessLaunchKernel(k, grid, group, 300000, nullptr, nullptr) == TESS_ERROR_LAUNCH);
    CHECK(contains(last_message(), "300000 bytes of shared memory per group (0 static + 300000 dynamic) exceed the CPU "
                                   "device's limit of 232448 bytes"));
    CHECK(tessLaunchKernel(kernel(m, "big_static"), grid, group, 0, nullptr, nullptr) == TESS_ERROR_LAUNCH);
    CHECK(contains(last_message(), "307200 bytes of shared memory per group (307200 static + 0 dynamic)"));
    CHECK(tessLaunchKernel(kernel(m, "group_sum"), grid, group, 227 * 1024 - 4095, nullptr, nullptr) == TESS_ERROR_LAUNCH);
    CHECK(contains(last_message(), "(4096 static + 228353 dynamic)"));
    const uint32_t empty[3] = {0, 1, 1};
    CHECK(tessLaunchKernel(k, empty, group, 0, nullptr, nullptr) == TESS_ERROR_LAUNCH);
    CHECK(contains(last_message(), "empty grid 0x1x1"));
    CHECK(tessLaunchKernel(k, nullptr, group, 0, nullptr, nullptr) == TESS_ERROR_INVALID_VALUE);
    // At the limits exactly.
    const uint32_t full[3] = {1024, 1, 1};
    CHECK(tessLaunchKernel(k, grid, full, 227 * 1024, nullptr, nullptr) == TESS_SUCCESS);
    CHECK(tessModuleUnload(m) == TESS_SUCCESS);
  }

  TEST_CASE("a kernel's reported error fails the launch with its message") {
    tessModule m = table_module();
    const uint32_t grid[3] = {16, 1, 1}, group[3] = {32, 1, 1};
    CHECK(tessLaunchKernel(kernel(m, "bounds_failure"), grid, group, 0, nullptr, nullptr) == TESS_ERROR_KERNEL);
    CHECK(last_message() ==
          "kernel 'bounds_failure' (grid 16x1x1, group 32x1x1) failed in group (3, 0, 0): index 12 is out of bounds for "
          "x of size 10");
    CHECK(tessLaunchKernel(kernel(m, "throws"), grid, group, 0, nullptr, nullptr) == TESS_ERROR_KERNEL);
    CHECK(contains(last_message(), "the kernel threw a C++ exception: boom"));
    // The device works afterwards.
    CHECK(tessLaunchKernel(kernel(m, "nothing"), grid, group, 0, nullptr, nullptr) == TESS_SUCCESS);
    CHECK(tessModuleUnload(m) == TESS_SUCCESS);
  }

  TEST_CASE("a kernel cannot launch kernels") {
    tessModule m = table_module();
    tessKernel inner = kernel(m, "nothing");
    void* args[] = {&inner};
    const uint32_t one[3] = {1, 1, 1};
    CHECK(tessLaunchKernel(kernel(m, "nested_launch"), one, one, 0, nullptr, args) == TESS_ERROR_KERNEL);
    CHECK(contains(last_message(), "a CPU kernel cannot launch kernels while it runs"));
    CHECK(tessModuleUnload(m) == TESS_SUCCESS);
  }

  TEST_CASE("launches from several host threads at once") {
    tessDevice d = cpu();
    tessModule m = table_module();
    tessKernel k = kernel(m, "saxpy");
    constexpr int kThreads = 4;
    std::atomic<int> failures{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t)
      threads.emplace_back([&, t] {
        const int64_t n = 5000 + t;
        std::vector<float> ones(n, 1.0f);
        tessDevicePtr dx = 0, dy = 0;
        if (tessMalloc(d, n * 4, &dx) || tessMalloc(d, n * 4, &dy) || tessMemcpyHtoD(d, dx, ones.data(), n * 4) ||
            tessMemcpyHtoD(d, dy, ones.data(), n * 4))
          ++failures;
        tessTensor tx, ty;
        tessTensorMakeContiguous(dx, TESS_F32, 1, &n, &tx);
        tessTensorMakeContiguous(dy, TESS_F32, 1, &n, &ty);
        float alpha = static_cast<float>(t);
        void* args[] = {&tx.data, &tx.shape[0], &tx.strides[0], &ty.data, &ty.shape[0], &ty.strides[0], &alpha};
        const uint32_t grid[3] = {static_cast<uint32_t>((n + 63) / 64), 1, 1}, group[3] = {64, 1, 1};
        for (int repeat = 0; repeat < 20; ++repeat)
          if (tessLaunchKernel(k, grid, group, 0, nullptr, args)) ++failures;
        std::vector<float> out(n);
        tessMemcpyDtoH(d, out.data(), dy, n * 4);
        for (float v : out)
          if (v != 1.0f + 20.0f * static_cast<float>(t)) {
            ++failures;
            break;
          }
        tessFree(d, dx);
        tessFree(d, dy);
      });
    for (auto& th : threads) th.join();
    CHECK(failures.load() == 0);
    CHECK(tessModuleUnload(m) == TESS_SUCCESS);
  }
}

TEST_SUITE("modules") {
  TEST_CASE("an unknown kernel name is named, with the kernels the module has") {
    tessModule m = table_module();
    tessKernel k = nullptr;
    CHECK(tessModuleGetKernel(m, "saxpi", &k) == TESS_ERROR_NOT_FOUND);
    CHECK(contains(last_message(), "no kernel named 'saxpi' in the kernel table (it has 'saxpy', 'group_sum'"));
    // Looking a kernel up twice gives the same handle.
    CHECK(kernel(m, "saxpy") == kernel(m, "saxpy"));
    CHECK(tessModuleUnload(m) == TESS_SUCCESS);
  }

  TEST_CASE("bad kernel tables") {
    tessModule m = nullptr;
    const tessCpuKernelEntry duplicate[] = {{"a", &nothing, 0, 0}, {"a", &nothing, 0, 0}};
    CHECK(tessModuleLoadCpuTable(cpu(), duplicate, 2, &m) == TESS_ERROR_INVALID_MODULE);
    CHECK(contains(last_message(), "two kernels are named 'a'"));
    const tessCpuKernelEntry no_function[] = {{"f", nullptr, 0, 0}};
    CHECK(tessModuleLoadCpuTable(cpu(), no_function, 1, &m) == TESS_ERROR_INVALID_MODULE);
    CHECK(contains(last_message(), "kernel 'f' (entry 0) has no function"));
    // An empty table is a module without kernels.
    REQUIRE(tessModuleLoadCpuTable(cpu(), nullptr, 0, &m) == TESS_SUCCESS);
    tessKernel k = nullptr;
    CHECK(tessModuleGetKernel(m, "x", &k) == TESS_ERROR_NOT_FOUND);
    CHECK(contains(last_message(), "(it has no kernels)"));
    CHECK(tessModuleUnload(m) == TESS_SUCCESS);
  }

  TEST_CASE("destroyed handles are errors, not crashes") {
    tessModule m = table_module();
    tessKernel k = kernel(m, "nothing");
    REQUIRE(tessModuleUnload(m) == TESS_SUCCESS);
    CHECK(tessModuleUnload(m) == TESS_ERROR_INVALID_VALUE);
    CHECK(contains(last_message(), "tessModuleUnload: `module`"));
    CHECK(contains(last_message(), "is not a live module (already destroyed, or never created)"));
    const uint32_t one[3] = {1, 1, 1};
    CHECK(tessLaunchKernel(k, one, one, 0, nullptr, nullptr) == TESS_ERROR_INVALID_VALUE);
    CHECK(contains(last_message(), "is not a live kernel"));
    tessStream s = nullptr;
    REQUIRE(tessStreamCreate(cpu(), &s) == TESS_SUCCESS);
    CHECK(tessStreamDestroy(s) == TESS_SUCCESS);
    CHECK(tessStreamDestroy(s) == TESS_ERROR_INVALID_VALUE);
    CHECK(contains(last_message(), "is not a live stream"));
    CHECK(tessStreamSynchronize(nullptr) == TESS_ERROR_INVALID_VALUE);
  }

  TEST_CASE("a CPU module from a shared object, by file and from memory") {
    tessDevice d = cpu();
    const int64_t n = 1000;
    tessDevicePtr out = 0;
    REQUIRE(tessMalloc(d, n * 4, &out) == TESS_SUCCESS);
    tessTensor t = vector_view(out, TESS_I32, n);
    const std::string image = read_file(TESS_TEST_CPU_MODULE);
    REQUIRE(!image.empty());
    for (bool from_memory : {false, true}) {
      CAPTURE(from_memory);
      tessModule m = nullptr;
      if (from_memory)
        REQUIRE(tessModuleLoadData(d, image.data(), image.size(), &m) == TESS_SUCCESS);
      else
        REQUIRE(tessModuleLoadFile(d, TESS_TEST_CPU_MODULE, &m) == TESS_SUCCESS);
      int32_t base = from_memory ? 7 : 5;
      ArgumentList args;
      args.tensor(t).value(base);
      const uint32_t grid[3] = {8, 1, 1}, group[3] = {128, 1, 1};
      REQUIRE(tessLaunchKernel(kernel(m, "fill_iota"), grid, group, 0, nullptr, args.data()) == TESS_SUCCESS);
      std::vector<int32_t> host(n);
      REQUIRE(tessMemcpyDtoH(d, host.data(), out, n * 4) == TESS_SUCCESS);
      for (int64_t i = 0; i < n; ++i)
        if (host[i] != base + i) FAIL("element " << i << " is " << host[i]);
      // The second kernel uses the static shared memory its entry declares.
      tessDevicePtr xs = 0;
      std::vector<float> x(256);
      for (int i = 0; i < 256; ++i) x[i] = static_cast<float>(i);
      REQUIRE(tessMalloc(d, 256 * 4, &xs) == TESS_SUCCESS);
      REQUIRE(tessMemcpyHtoD(d, xs, x.data(), 256 * 4) == TESS_SUCCESS);
      tessTensor tx = vector_view(xs, TESS_F32, 256);
      ArgumentList args2;
      args2.tensor(tx);
      const uint32_t grid2[3] = {4, 1, 1}, group2[3] = {64, 1, 1};
      REQUIRE(tessLaunchKernel(kernel(m, "reverse_in_group"), grid2, group2, 0, nullptr, args2.data()) == TESS_SUCCESS);
      REQUIRE(tessMemcpyDtoH(d, x.data(), xs, 256 * 4) == TESS_SUCCESS);
      CHECK(x[0] == 63.0f);
      CHECK(x[64] == 127.0f);
      CHECK(x[255] == 192.0f);
      CHECK(tessFree(d, xs) == TESS_SUCCESS);
      tessKernel k = nullptr;
      CHECK(tessModuleGetKernel(m, "missing", &k) == TESS_ERROR_NOT_FOUND);
      CHECK(contains(last_message(), "no kernel named 'missing' in '"));
      CHECK(contains(last_message(), "(it has 'fill_iota', 'reverse_in_group')"));
      CHECK(tessModuleUnload(m) == TESS_SUCCESS);
    }
    CHECK(tessFree(d, out) == TESS_SUCCESS);
  }

  TEST_CASE("images and files that are not CPU code objects") {
    tessDevice d = cpu();
    tessModule m = nullptr;
    const char garbage[] = "\x50\xed\x55\xba not an ELF file";
    CHECK(tessModuleLoadData(d, garbage, sizeof garbage, &m) == TESS_ERROR_INVALID_MODULE);
    CHECK(contains(last_message(), "is not a CPU code object"));
    CHECK(tessModuleLoadData(d, garbage, 0, &m) == TESS_ERROR_INVALID_MODULE);
    CHECK(tessModuleLoadFile(d, "/no/such/module.so", &m) == TESS_ERROR_NOT_FOUND);
    CHECK(contains(last_message(), "cannot open '/no/such/module.so': No such file or directory"));
    // A shared object that is not a Tessera module (the fake CUDA driver).
    CHECK(tessModuleLoadFile(d, TESS_TEST_FAKE_CUDA_STUB, &m) == TESS_ERROR_INVALID_MODULE);
    CHECK(contains(last_message(), "exports no tessera_cpu_abi_version: it is not a Tessera CPU code object"));
    // A truncated ELF image.
    const std::string image = read_file(TESS_TEST_CPU_MODULE);
    CHECK(tessModuleLoadData(d, image.data(), 64, &m) == TESS_ERROR_INVALID_MODULE);
    CHECK(contains(last_message(), "cannot load the CPU code object"));
  }
}

TEST_SUITE("streams and events") {
  TEST_CASE("work on the CPU device is ordered and complete when the call returns") {
    tessDevice d = cpu();
    tessStream s1 = nullptr, s2 = nullptr;
    REQUIRE(tessStreamCreate(d, &s1) == TESS_SUCCESS);
    REQUIRE(tessStreamCreate(d, &s2) == TESS_SUCCESS);
    tessEvent start = nullptr, middle = nullptr, end = nullptr;
    REQUIRE(tessEventCreate(d, &start) == TESS_SUCCESS);
    REQUIRE(tessEventCreate(d, &middle) == TESS_SUCCESS);
    REQUIRE(tessEventCreate(d, &end) == TESS_SUCCESS);
    float ms = -1;
    CHECK(tessEventElapsedTime(&ms, start, end) == TESS_ERROR_INVALID_VALUE);
    CHECK(contains(last_message(), "the start event was never recorded"));

    const int64_t n = 4096;
    std::vector<float> ones(n, 1.0f);
    tessDevicePtr dx = 0, dy = 0;
    REQUIRE(tessMalloc(d, n * 4, &dx) == TESS_SUCCESS);
    REQUIRE(tessMalloc(d, n * 4, &dy) == TESS_SUCCESS);
    REQUIRE(tessMemcpyHtoD(d, dx, ones.data(), n * 4) == TESS_SUCCESS);
    REQUIRE(tessMemset(d, dy, 0, n * 4) == TESS_SUCCESS);
    tessModule m = table_module();
    tessKernel k = kernel(m, "saxpy");
    tessTensor tx = vector_view(dx, TESS_F32, n), ty = vector_view(dy, TESS_F32, n);
    float two = 2.0f, three = 3.0f;
    const uint32_t grid[3] = {static_cast<uint32_t>(n / 128), 1, 1}, group[3] = {128, 1, 1};

    REQUIRE(tessEventRecord(start, s1) == TESS_SUCCESS);
    ArgumentList args1;
    args1.tensor(tx).tensor(ty).value(two);
    REQUIRE(tessLaunchKernel(k, grid, group, 0, s1, args1.data()) == TESS_SUCCESS);  // y = 2
    REQUIRE(tessEventRecord(middle, s1) == TESS_SUCCESS);
    REQUIRE(tessStreamWaitEvent(s2, middle) == TESS_SUCCESS);
    ArgumentList args2;
    args2.tensor(tx).tensor(ty).value(three);
    REQUIRE(tessLaunchKernel(k, grid, group, 0, s2, args2.data()) == TESS_SUCCESS);  // y = 5, after the first
    REQUIRE(tessEventRecord(end, s2) == TESS_SUCCESS);
    REQUIRE(tessStreamSynchronize(s2) == TESS_SUCCESS);
    REQUIRE(tessEventSynchronize(end) == TESS_SUCCESS);
    REQUIRE(tessDeviceSynchronize(d) == TESS_SUCCESS);
    std::vector<float> y(n);
    REQUIRE(tessMemcpyDtoH(d, y.data(), dy, n * 4) == TESS_SUCCESS);
    CHECK(y.front() == 5.0f);
    CHECK(y.back() == 5.0f);
    float first = -1, second = -1, total = -1;
    CHECK(tessEventElapsedTime(&first, start, middle) == TESS_SUCCESS);
    CHECK(tessEventElapsedTime(&second, middle, end) == TESS_SUCCESS);
    CHECK(tessEventElapsedTime(&total, start, end) == TESS_SUCCESS);
    CHECK(first >= 0);
    CHECK(second >= 0);
    CHECK(total >= first);
    // The default stream works too.
    REQUIRE(tessEventRecord(start, nullptr) == TESS_SUCCESS);
    REQUIRE(tessLaunchKernel(k, grid, group, 0, nullptr, args1.data()) == TESS_SUCCESS);

    CHECK(tessModuleUnload(m) == TESS_SUCCESS);
    CHECK(tessFree(d, dx) == TESS_SUCCESS);
    CHECK(tessFree(d, dy) == TESS_SUCCESS);
    for (tessEvent e : {start, middle, end}) CHECK(tessEventDestroy(e) == TESS_SUCCESS);
    CHECK(tessEventDestroy(end) == TESS_ERROR_INVALID_VALUE);
    CHECK(tessStreamDestroy(s1) == TESS_SUCCESS);
    CHECK(tessStreamDestroy(s2) == TESS_SUCCESS);
  }
}

TEST_SUITE("dtypes and tensors") {
  TEST_CASE("names and bit widths, sub-byte types included") {
    CHECK(std::string(tessDtypeName(TESS_F32)) == "f32");
    CHECK(std::string(tessDtypeName(TESS_BF16)) == "bf16");
    CHECK(std::string(tessDtypeName(TESS_FP8_E4M3)) == "fp8_e4m3");
    CHECK(std::string(tessDtypeName(TESS_FP6_E3M2)) == "fp6_e3m2");
    CHECK(std::string(tessDtypeName(TESS_FP4_E2M1)) == "fp4_e2m1");
    CHECK(tessDtypeName(static_cast<tessDtype>(TESS_DTYPE_COUNT)) == nullptr);
    CHECK(tessDtypeBits(TESS_BOOL) == 8);
    CHECK(tessDtypeBits(TESS_I64) == 64);
    CHECK(tessDtypeBits(TESS_F16) == 16);
    CHECK(tessDtypeBits(TESS_FP8_E5M2) == 8);
    CHECK(tessDtypeBits(TESS_FP6_E2M3) == 6);
    CHECK(tessDtypeBits(TESS_FP4_E2M1) == 4);
    CHECK(tessDtypeBits(static_cast<tessDtype>(-1)) == 0);
    for (int i = 0; i < TESS_DTYPE_COUNT; ++i) {
      tessDtype back = TESS_BOOL;
      CHECK(tessDtypeFromName(tessDtypeName(static_cast<tessDtype>(i)), &back) == TESS_SUCCESS);
      CHECK(back == i);
    }
    tessDtype t = TESS_BOOL;
    CHECK(tessDtypeFromName("bfloat16", &t) == TESS_SUCCESS);
    CHECK(t == TESS_BF16);
    CHECK(tessDtypeFromName("ts.fp8[e5m2]", &t) == TESS_SUCCESS);
    CHECK(t == TESS_FP8_E5M2);
    CHECK(tessDtypeFromName("f31", &t) == TESS_ERROR_NOT_FOUND);
    CHECK(contains(last_message(), "unknown element type 'f31'"));
  }

  TEST_CASE("contiguous views and their storage") {
    const int64_t shape[3] = {2, 3, 5};
    tessTensor t;
    REQUIRE(tessTensorMakeContiguous(0x1000, TESS_F16, 3, shape, &t) == TESS_SUCCESS);
    CHECK(t.rank == 3);
    CHECK(t.strides[0] == 15);
    CHECK(t.strides[1] == 5);
    CHECK(t.strides[2] == 1);
    uint64_t bytes = 0;
    CHECK(tessTensorStorageBytes(&t, &bytes) == TESS_SUCCESS);
    CHECK(bytes == 60);
    const int64_t seven = 7;
    REQUIRE(tessTensorMakeContiguous(0, TESS_FP6_E2M3, 1, &seven, &t) == TESS_SUCCESS);
    CHECK(tessTensorStorageBytes(&t, &bytes) == TESS_SUCCESS);
    CHECK(bytes == 6);  // 42 bits
    const int64_t five = 5;
    REQUIRE(tessTensorMakeContiguous(0, TESS_FP4_E2M1, 1, &five, &t) == TESS_SUCCESS);
    CHECK(tessTensorStorageBytes(&t, &bytes) == TESS_SUCCESS);
    CHECK(bytes == 3);
    REQUIRE(tessTensorMakeContiguous(0, TESS_F32, 0, nullptr, &t) == TESS_SUCCESS);  // a scalar
    CHECK(tessTensorStorageBytes(&t, &bytes) == TESS_SUCCESS);
    CHECK(bytes == 4);
    const int64_t with_zero[2] = {4, 0};
    REQUIRE(tessTensorMakeContiguous(0, TESS_F32, 2, with_zero, &t) == TESS_SUCCESS);
    CHECK(tessTensorStorageBytes(&t, &bytes) == TESS_SUCCESS);
    CHECK(bytes == 0);
    const int64_t negative = -1;
    CHECK(tessTensorMakeContiguous(0, TESS_F32, 1, &negative, &t) == TESS_ERROR_INVALID_VALUE);
    CHECK(contains(last_message(), "dimension 0 is negative (-1)"));
    CHECK(tessTensorMakeContiguous(0, TESS_F32, 9, shape, &t) == TESS_ERROR_INVALID_VALUE);
    CHECK(contains(last_message(), "rank 9 is outside 0..8"));
    // A strided view (every other column of a 4x8 matrix).
    REQUIRE(tessTensorMakeContiguous(0, TESS_F32, 2, shape, &t) == TESS_SUCCESS);
    t.shape[0] = 4;
    t.shape[1] = 4;
    t.strides[0] = 8;
    t.strides[1] = 2;
    CHECK(tessTensorStorageBytes(&t, &bytes) == TESS_SUCCESS);
    CHECK(bytes == (3 * 8 + 3 * 2 + 1) * 4);
    // Its kernel arguments point into the view.
    void* slots[5];
    size_t count = 0;
    REQUIRE(tessTensorKernelArgs(&t, slots, 5, &count) == TESS_SUCCESS);
    CHECK(count == 5);
    CHECK(slots[0] == &t.data);
    CHECK(slots[1] == &t.shape[0]);
    CHECK(slots[2] == &t.shape[1]);
    CHECK(slots[3] == &t.strides[0]);
    CHECK(slots[4] == &t.strides[1]);
    CHECK(tessTensorKernelArgs(&t, slots, 4, &count) == TESS_ERROR_INVALID_VALUE);
    CHECK(contains(last_message(), "a rank-2 tensor needs 5 argument slots, 4 given"));
  }
}

TEST_SUITE("contiguous variants") {
  // The launch-time rule for a kernel's contiguous variant (docs/abi.md).
  TEST_CASE("contiguous, aligned, written tensors apart: the variant applies") {
    const int64_t shape[2] = {4, 8};
    tessTensor x, y, z;
    REQUIRE(tessTensorMakeContiguous(0x10000, TESS_F32, 2, shape, &x) == TESS_SUCCESS);
    REQUIRE(tessTensorMakeContiguous(0x20000, TESS_F32, 2, shape, &y) == TESS_SUCCESS);
    REQUIRE(tessTensorMakeContiguous(0x30000, TESS_F32, 0, nullptr, &z) == TESS_SUCCESS);  // rank 0
    const tessTensor* tensors[3] = {&x, &y, &z};
    const uint8_t writes[3] = {0, 1, 0};
    int applies = -1;
    REQUIRE(tessContiguousVariantApplies(tensors, writes, 3, &applies) == TESS_SUCCESS);
    CHECK(applies == 1);
    REQUIRE(tessContiguousVariantApplies(nullptr, nullptr, 0, &applies) == TESS_SUCCESS);  // no tensors
    CHECK(applies == 1);

    SUBCASE("an innermost stride other than 1: the general kernel") {
      x.strides[1] = 2;
      REQUIRE(tessContiguousVariantApplies(tensors, writes, 3, &applies) == TESS_SUCCESS);
      CHECK(applies == 0);
    }
    SUBCASE("an innermost extent of 1 has no stride to speak of") {
      x.shape[1] = 1;
      x.strides[1] = 5;
      REQUIRE(tessContiguousVariantApplies(tensors, writes, 3, &applies) == TESS_SUCCESS);
      CHECK(applies == 1);
    }
    SUBCASE("a stride of 2^31 or more") {
      x.strides[0] = int64_t{1} << 31;
      REQUIRE(tessContiguousVariantApplies(tensors, writes, 3, &applies) == TESS_SUCCESS);
      CHECK(applies == 0);
    }
    SUBCASE("data not 16-byte aligned (a view starting at element 1)") {
      y.data += 4;
      REQUIRE(tessContiguousVariantApplies(tensors, writes, 3, &applies) == TESS_SUCCESS);
      CHECK(applies == 0);
    }
    SUBCASE("a written tensor overlapping another") {
      y.data = x.data + 64;  // y starts in x's third row
      REQUIRE(tessContiguousVariantApplies(tensors, writes, 3, &applies) == TESS_SUCCESS);
      CHECK(applies == 0);
      y.data = x.data + 32 * 4;  // right after x: apart
      REQUIRE(tessContiguousVariantApplies(tensors, writes, 3, &applies) == TESS_SUCCESS);
      CHECK(applies == 1);
    }
    SUBCASE("read-only tensors may overlap each other") {
      z = x;
      z.data = x.data + 16;
      REQUIRE(tessContiguousVariantApplies(tensors, writes, 3, &applies) == TESS_SUCCESS);
      CHECK(applies == 1);
    }
    SUBCASE("empty tensors touch no memory") {
      x.shape[0] = 0;
      x.data = y.data + 4;  // inside y, unaligned: neither matters
      REQUIRE(tessContiguousVariantApplies(tensors, writes, 3, &applies) == TESS_SUCCESS);
      CHECK(applies == 1);
    }
  }

  TEST_CASE("bad arguments are errors") {
    int applies = 0;
    CHECK(tessContiguousVariantApplies(nullptr, nullptr, 0, nullptr) == TESS_ERROR_INVALID_VALUE);
    CHECK(contains(last_message(), "`applies` is null"));
    const uint8_t writes[1] = {0};
    CHECK(tessContiguousVariantApplies(nullptr, writes, 1, &applies) == TESS_ERROR_INVALID_VALUE);
    const tessTensor* null_tensor[1] = {nullptr};
    CHECK(tessContiguousVariantApplies(null_tensor, writes, 1, &applies) == TESS_ERROR_INVALID_VALUE);
    CHECK(contains(last_message(), "tensor 0 is null"));
    tessTensor negative;
    const int64_t four = 4;
    REQUIRE(tessTensorMakeContiguous(0x1000, TESS_F32, 1, &four, &negative) == TESS_SUCCESS);
    negative.strides[0] = -1;
    const tessTensor* tensors[1] = {&negative};
    CHECK(tessContiguousVariantApplies(tensors, writes, 1, &applies) == TESS_ERROR_INVALID_VALUE);
  }
}

TEST_SUITE("C++ layer") {
  TEST_CASE("RAII wrappers and check()") {
    using namespace tessera::rt;
    Device d = Device::cpu();
    CHECK(d.kind() == TESS_DEVICE_CPU);
    CHECK(d.attribute(TESS_ATTR_WARP_SIZE) == 32);
    const int64_t n = 1000;
    Buffer x(d, n * 4), y(d, n * 4);
    std::vector<float> host(n, 2.0f);
    x.copy_from(host.data(), n * 4);
    y.fill(0);
    Module m = Module::from_table(d, kTable, std::size(kTable));
    tessTensor tx = vector_view(x.address(), TESS_F32, n), ty = vector_view(y.address(), TESS_F32, n);
    Stream s(d);
    Event before(d), after(d);
    before.record(s.get());
    m.kernel("saxpy").launch_on(s.get(), 0, {static_cast<uint32_t>((n + 127) / 128)}, {128}, tx, ty, 4.0f);
    after.record(s.get());
    s.synchronize();
    CHECK(after.since(before) >= 0);
    y.copy_to(host.data(), n * 4);
    CHECK(host[0] == 8.0f);
    CHECK(host[n - 1] == 8.0f);

    try {
      m.kernel("nope");
      FAIL("no exception");
    } catch (const Error& e) {
      CHECK(e.status() == TESS_ERROR_NOT_FOUND);
      CHECK(contains(e.what(), "TESS_ERROR_NOT_FOUND: tessModuleGetKernel: no kernel named 'nope'"));
    }
    CHECK_THROWS_AS(m.kernel("saxpy").launch({1}, {4096}, tx, ty, 1.0f), Error);
    CHECK_THROWS_WITH_AS(Device::by_name("tpu"), doctest::Contains("unknown device name 'tpu'"), Error);
    Buffer moved = std::move(x);
    CHECK(moved.size() == n * 4);
  }
}

// Run once per fake driver by ctest (runtime/CMakeLists.txt), with
// TESSERA_LIBCUDA pointing at it: the driver is probed once per process.
TEST_SUITE("driver") {
  TEST_CASE("CUDA driver problems are explained") {
    const char* expectation = std::getenv("TESSERA_RT_TEST_DRIVER");
    if (!expectation) return;  // a plain run: see "without CUDA devices the reason is given"
    const std::string expect = expectation;
    const std::string reason = tessCudaUnavailableReason();
    INFO("reason: " << reason);
    int count = 0;
    REQUIRE(tessGetDeviceCount(&count) == TESS_SUCCESS);
    CHECK(count == 1);  // the CPU still works
    tessDevice d = nullptr;
    CHECK(tessGetDeviceByName("cuda:0", &d) == TESS_ERROR_DRIVER_NOT_FOUND);
    CHECK(contains(last_message(), reason));
    CHECK(tessGetDefaultDevice(&d) == TESS_SUCCESS);
    CHECK(d == cpu());
    if (expect == "stub") {
      CHECK(contains(reason, "cuInit failed with CUDA_ERROR_STUB_LIBRARY (34)"));
      CHECK(contains(reason, "the loaded libcuda is the CUDA Toolkit's stub library (lib64/stubs), not the NVIDIA "
                             "driver"));
    } else if (expect == "missing") {
      CHECK(contains(reason, "no-such-dir/libcuda.so.1 could not be loaded"));
      CHECK(contains(reason, "No such file or directory"));
    } else if (expect == "not-a-driver") {
      CHECK(contains(reason, "is not a CUDA driver: it exports no cuInit"));
    } else {
      FAIL("unknown TESSERA_RT_TEST_DRIVER " << expect);
    }
  }
}
