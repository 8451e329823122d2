// Unit tests of meshes and collectives in one process (part of
// runtime_unittests): the loopback backend through the C ABI and the C++
// layer, every argument check, and the NCCL backend against a fake libnccl
// (fake_nccl_stub.cpp) on the CPU device. The tests with several ranks run
// under mpirun: collectives_mpi_test.cpp.
#include <dlfcn.h>
#include <doctest/doctest.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "collectives/communicator.h"
#include "collectives/mesh.h"
#include "collectives/nccl_communicator.h"
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

tessMesh one_device_mesh(const char* device = "cpu:0", unsigned flags = 0) {
  const char* devices[] = {device};
  const char* axes[] = {"x"};
  const int shape[] = {1};
  tessMesh mesh = nullptr;
  REQUIRE_MESSAGE(tessMeshCreate(devices, 1, axes, shape, 1, flags, &mesh) == TESS_SUCCESS, last_message());
  return mesh;
}

tessDevicePtr allocate(size_t bytes) {
  tessDevicePtr p = 0;
  REQUIRE(tessMalloc(cpu(), bytes, &p) == TESS_SUCCESS);
  return p;
}

template <class T>
T* host(tessDevicePtr p) {
  return reinterpret_cast<T*>(p);
}

}  // namespace

TEST_SUITE("collectives") {
  TEST_CASE("a process started alone is rank 0 of a job of 1") {
    int rank = -1, size = -1;
    CHECK(tessJobRank(&rank) == TESS_SUCCESS);
    CHECK(tessJobSize(&size) == TESS_SUCCESS);
    CHECK(rank == 0);
    CHECK(size == 1);
    CHECK(tessJobRank(nullptr) == TESS_ERROR_INVALID_VALUE);
  }

  TEST_CASE("a one-device mesh uses the loopback communicator: every collective is a copy") {
    tessMesh mesh = one_device_mesh();
    tessCollectiveBackend backend = TESS_COLLECTIVES_MPI;
    CHECK(tessMeshGetBackend(mesh, &backend) == TESS_SUCCESS);
    CHECK(backend == TESS_COLLECTIVES_LOOPBACK);
    int rank = -1, size = 0, axes = 0, axis_size = 0, axis_rank = -1;
    CHECK(tessMeshGetRank(mesh, &rank) == TESS_SUCCESS);
    CHECK(tessMeshGetSize(mesh, &size) == TESS_SUCCESS);
    CHECK(tessMeshGetAxisCount(mesh, &axes) == TESS_SUCCESS);
    CHECK(tessMeshGetAxisSize(mesh, "x", &axis_size) == TESS_SUCCESS);
    CHECK(tessMeshGetAxisRank(mesh, "x", &axis_rank) == TESS_SUCCESS);
    CHECK((rank == 0 && size == 1 && axes == 1 && axis_size == 1 && axis_rank == 0));
    tessDevice device = nullptr;
    CHECK(tessMeshGetDevice(mesh, &device) == TESS_SUCCESS);
    CHECK(device == cpu());

    const size_t n = 1000;
    tessDevicePtr a = allocate(n * 4), b = allocate(n * 4);
    for (size_t i = 0; i < n; ++i) host<float>(a)[i] = static_cast<float>(i) * 0.5f;
    for (tessReduceOp op : {TESS_REDUCE_SUM, TESS_REDUCE_PROD, TESS_REDUCE_MAX, TESS_REDUCE_MIN, TESS_REDUCE_AVG}) {
      std::memset(host<float>(b), 0, n * 4);
      REQUIRE(tessMeshAllReduce(mesh, "x", a, b, n, TESS_F32, op, nullptr) == TESS_SUCCESS);
      CHECK(std::memcmp(host<float>(a), host<float>(b), n * 4) == 0);
    }
    CHECK(tessMeshAllReduce(mesh, nullptr, a, a, n, TESS_F32, TESS_REDUCE_SUM, nullptr) == TESS_SUCCESS);
    std::memset(host<float>(b), 0, n * 4);
    CHECK(tessMeshAllGather(mesh, "x", a, b, n, TESS_F32, nullptr) == TESS_SUCCESS);
    CHECK(std::memcmp(host<float>(a), host<float>(b), n * 4) == 0);
    std::memset(host<float>(b), 0, n * 4);
    CHECK(tessMeshReduceScatter(mesh, "x", a, b, n, TESS_F32, TESS_REDUCE_SUM, nullptr) == TESS_SUCCESS);
    CHECK(std::memcmp(host<float>(a), host<float>(b), n * 4) == 0);
    CHECK(tessMeshBroadcast(mesh, "x", a, n, TESS_F32, 0, nullptr) == TESS_SUCCESS);
    CHECK(tessMeshBarrier(mesh, "x") == TESS_SUCCESS);
    CHECK(tessMeshBarrier(mesh, nullptr) == TESS_SUCCESS);

    // A send waits for its recv; narrow types move as bytes (6 fp4 values: 3 bytes).
    std::memset(host<unsigned char>(b), 0, 3);
    host<unsigned char>(a)[0] = 0x12, host<unsigned char>(a)[1] = 0x34, host<unsigned char>(a)[2] = 0x56;
    CHECK(tessMeshSend(mesh, "x", a, 6, TESS_FP4_E2M1, 0, nullptr) == TESS_SUCCESS);
    CHECK(tessMeshRecv(mesh, "x", b, 6, TESS_FP4_E2M1, 0, nullptr) == TESS_SUCCESS);
    CHECK(host<unsigned char>(b)[0] == 0x12);
    CHECK(host<unsigned char>(b)[2] == 0x56);
    CHECK(tessMeshRecv(mesh, "x", b, 6, TESS_FP4_E2M1, 0, nullptr) == TESS_ERROR_INVALID_VALUE);
    CHECK(contains(last_message(), "tessMeshRecv: recv on mesh axis 'x' (loopback) failed: no message was sent"));
    CHECK(tessMeshSend(mesh, "x", a, 4, TESS_F32, 0, nullptr) == TESS_SUCCESS);
    CHECK(tessMeshRecv(mesh, "x", b, 2, TESS_F32, 0, nullptr) == TESS_ERROR_INVALID_VALUE);
    CHECK(contains(last_message(), "the next message has 16 bytes, the recv expects 8"));
    // send_recv with itself is a copy of the send buffer into the recv buffer.
    for (size_t i = 0; i < 4; ++i) host<float>(a)[i] = static_cast<float>(i) + 0.25f;
    std::memset(host<float>(b), 0, 16);
    CHECK(tessMeshSendRecv(mesh, "x", a, 0, b, 0, 4, TESS_F32, nullptr) == TESS_SUCCESS);
    CHECK(std::memcmp(host<float>(a), host<float>(b), 16) == 0);

    // Started collectives complete at the start on loopback; the wait frees
    // the request. (First the message the short recv above left queued.)
    CHECK(tessMeshRecv(mesh, "x", b, 4, TESS_F32, 0, nullptr) == TESS_SUCCESS);
    for (size_t i = 0; i < 4; ++i) host<float>(a)[i] = static_cast<float>(i) + 2.0f;
    std::memset(host<float>(b), 0, 16);
    tessCollectiveRequest request = nullptr;
    REQUIRE(tessMeshAllReduceStart(mesh, "x", a, b, 4, TESS_F32, TESS_REDUCE_AVG, nullptr, &request) == TESS_SUCCESS);
    CHECK(std::memcmp(host<float>(a), host<float>(b), 16) == 0);
    CHECK(tessCollectiveWait(request) == TESS_SUCCESS);
    REQUIRE(tessMeshSendStart(mesh, "x", a, 4, TESS_F32, 0, nullptr, &request) == TESS_SUCCESS);
    CHECK(tessCollectiveWait(request) == TESS_SUCCESS);
    std::memset(host<float>(b), 0, 16);
    REQUIRE(tessMeshRecvStart(mesh, "x", b, 4, TESS_F32, 0, nullptr, &request) == TESS_SUCCESS);
    CHECK(tessCollectiveWait(request) == TESS_SUCCESS);
    CHECK(std::memcmp(host<float>(a), host<float>(b), 16) == 0);
    for (auto start : {+[](tessMesh m, tessDevicePtr x, tessDevicePtr y, tessCollectiveRequest* r) {
                         return tessMeshAllGatherStart(m, "x", x, y, 4, TESS_F32, nullptr, r);
                       },
                       +[](tessMesh m, tessDevicePtr x, tessDevicePtr y, tessCollectiveRequest* r) {
                         return tessMeshReduceScatterStart(m, "x", x, y, 4, TESS_F32, TESS_REDUCE_SUM, nullptr, r);
                       },
                       +[](tessMesh m, tessDevicePtr x, tessDevicePtr y, tessCollectiveRequest* r) {
                         return tessMeshSendRecvStart(m, "x", x, 0, y, 0, 4, TESS_F32, nullptr, r);
                       }}) {
      std::memset(host<float>(b), 0, 16);
      REQUIRE(start(mesh, a, b, &request) == TESS_SUCCESS);
      CHECK(tessCollectiveWait(request) == TESS_SUCCESS);
      CHECK(std::memcmp(host<float>(a), host<float>(b), 16) == 0);
    }
    REQUIRE(tessMeshBroadcastStart(mesh, "x", a, 4, TESS_F32, 0, nullptr, &request) == TESS_SUCCESS);
    CHECK(tessCollectiveWait(request) == TESS_SUCCESS);
    // A count of 0 still gives a request; errors give none.
    REQUIRE(tessMeshAllReduceStart(mesh, "x", 0, 0, 0, TESS_F32, TESS_REDUCE_SUM, nullptr, &request) == TESS_SUCCESS);
    CHECK(tessCollectiveWait(request) == TESS_SUCCESS);
    request = reinterpret_cast<tessCollectiveRequest>(1);
    CHECK(tessMeshRecvStart(mesh, "x", b, 4, TESS_F32, 0, nullptr, &request) == TESS_ERROR_INVALID_VALUE);
    CHECK(contains(last_message(), "tessMeshRecvStart: recv on mesh axis 'x' (loopback) failed: no message was sent"));
    CHECK(request == nullptr);
    CHECK(tessMeshAllReduceStart(mesh, "x", a, b, 4, TESS_F32, TESS_REDUCE_SUM, nullptr, nullptr) ==
          TESS_ERROR_INVALID_VALUE);
    CHECK(contains(last_message(), "tessMeshAllReduceStart: `request` is null"));
    CHECK(tessCollectiveWait(nullptr) == TESS_ERROR_INVALID_VALUE);

    CHECK(tessFree(cpu(), a) == TESS_SUCCESS);
    CHECK(tessFree(cpu(), b) == TESS_SUCCESS);
    CHECK(tessMeshDestroy(mesh) == TESS_SUCCESS);
  }

  TEST_CASE("a job of one rank never loads MPI") {
    tessMesh mesh = one_device_mesh();
    CHECK(tessMeshBarrier(mesh, nullptr) == TESS_SUCCESS);
    CHECK(tessMeshDestroy(mesh) == TESS_SUCCESS);
    CHECK(dlopen("libtessera_rt_mpi.so", RTLD_NOW | RTLD_NOLOAD) == nullptr);
    CHECK(dlopen("libmpi.so.40", RTLD_NOW | RTLD_NOLOAD) == nullptr);
  }

  TEST_CASE("mesh arguments are checked") {
    tessMesh mesh = nullptr;
    const char* two[] = {"cpu:0", "cpu:1"};
    const char* axes[] = {"x", "y"};
    const int shape[] = {2, 1};
    CHECK(tessMeshCreate(nullptr, 1, axes, shape, 1, 0, &mesh) == TESS_ERROR_INVALID_VALUE);
    CHECK(last_message() == "tessMeshCreate: `devices` is null");
    CHECK(tessMeshCreate(two, 2, axes, shape, 2, 0, &mesh) == TESS_ERROR_INVALID_VALUE);
    CHECK(contains(last_message(), "the mesh has 2 devices but the job has 1 rank (this process was not started by "
                                   "mpirun): one process per device, start it with mpirun -np 2"));
    const int bad_shape[] = {3, 1};
    CHECK(tessMeshCreate(two, 2, axes, bad_shape, 2, 0, &mesh) == TESS_ERROR_INVALID_VALUE);
    CHECK(contains(last_message(), "the shape 3 x 1 has 3 positions but 2 devices are given"));
    const int zero[] = {0};
    CHECK(tessMeshCreate(two, 1, axes, zero, 1, 0, &mesh) == TESS_ERROR_INVALID_VALUE);
    CHECK(contains(last_message(), "axis 'x' has size 0"));
    const char* same[] = {"x", "x"};
    CHECK(tessMeshCreate(two, 2, same, shape, 2, 0, &mesh) == TESS_ERROR_INVALID_VALUE);
    CHECK(contains(last_message(), "two axes are named 'x'"));
    CHECK(tessMeshCreate(two, 1, axes, shape, 0, 0, &mesh) == TESS_ERROR_INVALID_VALUE);
    CHECK(contains(last_message(), "axis_count is 0; a mesh has 1 to 8 axes"));
    const char* bad[] = {"gpu:0"};
    const int one[] = {1};
    CHECK(tessMeshCreate(bad, 1, axes, one, 1, 0, &mesh) == TESS_ERROR_INVALID_VALUE);
    CHECK(contains(last_message(), "device 0 'gpu:0' is not a device name (expected cpu:N or cuda:N)"));
    for (const char* name : {"cpu:", "cpu:-1", "cuda:x", "cpu0", "cuda:1:2"}) {
      const char* d[] = {name};
      CHECK(tessMeshCreate(d, 1, axes, one, 1, 0, &mesh) == TESS_ERROR_INVALID_VALUE);
    }
    const char* mixed[] = {"cpu:0", "cuda:0"};
    CHECK(tessMeshCreate(mixed, 2, axes, shape, 2, 0, &mesh) == TESS_ERROR_INVALID_VALUE);
    CHECK(contains(last_message(), "device 0 'cpu:0' and device 1 'cuda:0' are of different kinds"));
    CHECK(tessMeshCreate(two, 1, axes, one, 1, 4, &mesh) == TESS_ERROR_INVALID_VALUE);
    CHECK(contains(last_message(), "unknown flags 0x4"));
  }

  TEST_CASE("cuda:i is a local GPU, or with TESS_MESH_FORCE_CPU a CPU rank") {
    const char* devices[] = {"cuda:0"};
    const char* axes[] = {"x"};
    const int shape[] = {1};
    tessMesh mesh = nullptr;
    tessDevice gpu = nullptr;
    if (tessGetDeviceByName("cuda:0", &gpu) != TESS_SUCCESS) {
      CHECK(tessMeshCreate(devices, 1, axes, shape, 1, 0, &mesh) != TESS_SUCCESS);
      CHECK(contains(last_message(), "tessMeshCreate: this rank's device cuda:0 is not available"));
    }
    mesh = one_device_mesh("cuda:0", TESS_MESH_FORCE_CPU);
    tessDevice device = nullptr;
    CHECK(tessMeshGetDevice(mesh, &device) == TESS_SUCCESS);
    CHECK(device == cpu());
    CHECK(tessMeshDestroy(mesh) == TESS_SUCCESS);
  }

  TEST_CASE("coordinates are row-major: the last axis varies fastest") {
    // A one-rank job cannot create a 2x3 mesh, so this checks the arithmetic
    // shared with multi-rank meshes directly.
    using tessera::rt::mesh_coords;
    CHECK(mesh_coords({2, 3}, 0) == std::vector<int>{0, 0});
    CHECK(mesh_coords({2, 3}, 2) == std::vector<int>{0, 2});
    CHECK(mesh_coords({2, 3}, 4) == std::vector<int>{1, 1});
    CHECK(mesh_coords({2, 2, 2}, 6) == std::vector<int>{1, 1, 0});
    const int at[] = {1, 2};
    CHECK(tessera::rt::mesh_rank_at({2, 3}, at) == 5);
    tessMesh mesh = one_device_mesh();
    int coords[2] = {-1, -1};
    CHECK(tessMeshGetCoords(mesh, 0, coords, 2) == TESS_SUCCESS);
    CHECK(coords[0] == 0);
    CHECK(tessMeshGetCoords(mesh, 1, coords, 2) == TESS_ERROR_INVALID_VALUE);
    CHECK(contains(last_message(), "rank 1 is not in the mesh of 1 devices"));
    CHECK(tessMeshGetCoords(mesh, 0, coords, 0) == TESS_ERROR_INVALID_VALUE);
    int rank = -1;
    const int origin[] = {0}, outside[] = {1};
    CHECK(tessMeshGetRankAt(mesh, origin, &rank) == TESS_SUCCESS);
    CHECK(rank == 0);
    CHECK(tessMeshGetRankAt(mesh, outside, &rank) == TESS_ERROR_INVALID_VALUE);
    CHECK(contains(last_message(), "coordinate 1 along axis 'x' is outside 0..0"));
    const char* name = nullptr;
    CHECK(tessMeshGetAxisName(mesh, 0, &name) == TESS_SUCCESS);
    CHECK(std::string(name) == "x");
    CHECK(tessMeshGetAxisName(mesh, 1, &name) == TESS_ERROR_INVALID_VALUE);
    CHECK(tessMeshDestroy(mesh) == TESS_SUCCESS);
  }

  TEST_CASE("collective arguments are checked") {
    tessMesh mesh = one_device_mesh();
    tessDevicePtr a = allocate(64), b = allocate(64);
    CHECK(tessMeshAllReduce(mesh, "y", a, b, 4, TESS_F32, TESS_REDUCE_SUM, nullptr) == TESS_ERROR_INVALID_VALUE);
    CHECK(last_message() == "tessMeshAllReduce: the mesh has no axis 'y' (its axes are 'x')");
    CHECK(tessMeshAllReduce(mesh, "x", a, b, 4, static_cast<tessDtype>(99), TESS_REDUCE_SUM, nullptr) ==
          TESS_ERROR_INVALID_VALUE);
    CHECK(contains(last_message(), "invalid dtype 99"));
    CHECK(tessMeshAllReduce(mesh, "x", a, b, 4, TESS_F32, static_cast<tessReduceOp>(9), nullptr) ==
          TESS_ERROR_INVALID_VALUE);
    CHECK(contains(last_message(), "unknown reduction 9"));
    CHECK(tessMeshAllReduce(mesh, "x", a, b, 4, TESS_FP8_E4M3, TESS_REDUCE_SUM, nullptr) == TESS_ERROR_UNSUPPORTED);
    CHECK(contains(last_message(), "tessMeshAllReduce: all_reduce on mesh axis 'x' (loopback) cannot reduce fp8_e4m3 "
                                   "with sum: reductions take bool, the integer types, f16, bf16, f32 and f64"));
    CHECK(tessMeshReduceScatter(mesh, "x", a, b, 4, TESS_BOOL, TESS_REDUCE_SUM, nullptr) == TESS_ERROR_UNSUPPORTED);
    CHECK(contains(last_message(), "bool reduces with max (or) and min (and) only"));
    CHECK(tessMeshAllReduce(mesh, "x", a, b, 4, TESS_BOOL, TESS_REDUCE_MAX, nullptr) == TESS_SUCCESS);
    // Buffers must lie inside allocations of the rank's device.
    CHECK(tessMeshAllReduce(mesh, "x", a, b, 17, TESS_F32, TESS_REDUCE_SUM, nullptr) == TESS_ERROR_INVALID_VALUE);
    CHECK(contains(last_message(), "tessMeshAllReduce: 68 bytes at the send buffer"));
    CHECK(contains(last_message(), "overrun its allocation of 64 bytes"));
    float stack_value = 0;
    CHECK(tessMeshBroadcast(mesh, "x", reinterpret_cast<tessDevicePtr>(&stack_value), 1, TESS_F32, 0, nullptr) ==
          TESS_ERROR_INVALID_VALUE);
    CHECK(contains(last_message(), "is not inside a live allocation of the CPU device"));
    CHECK(tessMeshAllReduce(mesh, "x", 0, b, 4, TESS_F32, TESS_REDUCE_SUM, nullptr) == TESS_ERROR_INVALID_VALUE);
    CHECK(contains(last_message(), "`send buffer` is null"));
    // Overlaps other than in place.
    CHECK(tessMeshAllReduce(mesh, "x", a, a + 4, 4, TESS_F32, TESS_REDUCE_SUM, nullptr) == TESS_ERROR_INVALID_VALUE);
    CHECK(contains(last_message(), "the send and recv buffers overlap; in place is recv == send"));
    CHECK(tessMeshAllGather(mesh, "x", a, a, 4, TESS_F32, nullptr) == TESS_SUCCESS);  // this rank's block
    // Sub-byte element counts must fill whole bytes.
    CHECK(tessMeshAllGather(mesh, "x", a, b, 3, TESS_FP4_E2M1, nullptr) == TESS_ERROR_INVALID_VALUE);
    CHECK(contains(last_message(), "3 elements of fp4_e2m1 are not a whole number of bytes (12 bits)"));
    CHECK(tessMeshBroadcast(mesh, "x", a, 4, TESS_F32, 1, nullptr) == TESS_ERROR_INVALID_VALUE);
    CHECK(contains(last_message(), "root 1 is not an index of mesh axis 'x', which has 1 ranks"));
    CHECK(tessMeshSend(mesh, "x", a, 4, TESS_F32, -1, nullptr) == TESS_ERROR_INVALID_VALUE);
    CHECK(tessMeshSendRecv(mesh, "x", a, 0, b, 1, 4, TESS_F32, nullptr) == TESS_ERROR_INVALID_VALUE);
    CHECK(contains(last_message(), "tessMeshSendRecv: recv peer 1 is not an index of mesh axis 'x', which has 1 ranks"));
    CHECK(tessMeshSendRecv(mesh, "x", a, 0, a + 8, 0, 4, TESS_F32, nullptr) == TESS_ERROR_INVALID_VALUE);
    CHECK(contains(last_message(), "tessMeshSendRecv: the send and recv buffers overlap; in place is not supported"));
    // Count 0 does nothing, even with null buffers.
    CHECK(tessMeshAllReduce(mesh, "x", 0, 0, 0, TESS_F32, TESS_REDUCE_SUM, nullptr) == TESS_SUCCESS);
    // Streams of the mesh's device only; destroyed meshes are errors, not crashes.
    tessStream stream = nullptr;
    REQUIRE(tessStreamCreate(cpu(), &stream) == TESS_SUCCESS);
    CHECK(tessMeshAllReduce(mesh, "x", a, b, 4, TESS_F32, TESS_REDUCE_SUM, stream) == TESS_SUCCESS);
    CHECK(tessStreamDestroy(stream) == TESS_SUCCESS);
    CHECK(tessMeshAllReduce(mesh, "x", a, b, 4, TESS_F32, TESS_REDUCE_SUM, stream) == TESS_ERROR_INVALID_VALUE);
    CHECK(contains(last_message(), "is not a live stream"));
    CHECK(tessMeshDestroy(mesh) == TESS_SUCCESS);
    CHECK(tessMeshBarrier(mesh, nullptr) == TESS_ERROR_INVALID_VALUE);
    CHECK(contains(last_message(), "tessMeshBarrier: `mesh`"));
    CHECK(contains(last_message(), "is not a live mesh (already destroyed, or never created)"));
    CHECK(tessMeshDestroy(nullptr) == TESS_ERROR_INVALID_VALUE);
    CHECK(tessFree(cpu(), a) == TESS_SUCCESS);
    CHECK(tessFree(cpu(), b) == TESS_SUCCESS);
  }

  TEST_CASE("TESSERA_COLLECTIVE_TIMEOUT must be a number of seconds") {
    setenv("TESSERA_COLLECTIVE_TIMEOUT", "soon", 1);
    const char* devices[] = {"cpu:0"};
    const char* axes[] = {"x"};
    const int shape[] = {1};
    tessMesh mesh = nullptr;
    CHECK(tessMeshCreate(devices, 1, axes, shape, 1, 0, &mesh) == TESS_ERROR_INVALID_VALUE);
    CHECK(contains(last_message(), "TESSERA_COLLECTIVE_TIMEOUT='soon' is not a number of seconds (0 waits for ever; "
                                   "the default is 600)"));
    setenv("TESSERA_COLLECTIVE_TIMEOUT", "2.5", 1);
    CHECK(tessMeshCreate(devices, 1, axes, shape, 1, 0, &mesh) == TESS_SUCCESS);
    CHECK(tessMeshDestroy(mesh) == TESS_SUCCESS);
    unsetenv("TESSERA_COLLECTIVE_TIMEOUT");
  }

  TEST_CASE("the C++ layer") {
    using namespace tessera::rt;
    CHECK(job_rank() == 0);
    CHECK(job_size() == 1);
    Mesh mesh({"cpu:0"}, {"dp"}, {1});
    CHECK(mesh.rank() == 0);
    CHECK(mesh.size() == 1);
    CHECK(mesh.axis_size("dp") == 1);
    CHECK(mesh.axis_rank("dp") == 0);
    CHECK(mesh.coords(0) == std::vector<int>{0});
    CHECK(mesh.backend() == TESS_COLLECTIVES_LOOPBACK);
    Buffer x(mesh.device(), 16), y(mesh.device(), 16);
    const int values[4] = {1, -2, 3, -4};
    x.copy_from(values, 16);
    mesh.all_reduce("dp", x.address(), y.address(), 4, TESS_I32, TESS_REDUCE_SUM);
    int out[4] = {};
    y.copy_to(out, 16);
    CHECK(out[1] == -2);
    mesh.send_recv("dp", x.address(), 0, y.address(), 0, 2, TESS_I64);
    y.copy_to(out, 16);
    CHECK(out[3] == -4);
    mesh.barrier();
    CHECK_THROWS_WITH_AS(mesh.all_reduce("tp", x.address(), y.address(), 4, TESS_I32, TESS_REDUCE_SUM),
                         doctest::Contains("TESS_ERROR_INVALID_VALUE: tessMeshAllReduce: the mesh has no axis 'tp'"),
                         Error);
    CHECK_THROWS_AS(Mesh({"cpu:0"}, {"dp"}, {1, 1}), Error);
  }

  TEST_CASE("the C++ layer's started collectives: a request waited for once, by wait() or the destructor") {
    using namespace tessera::rt;
    Mesh mesh({"cpu:0"}, {"dp"}, {1});
    Buffer x(mesh.device(), 16), y(mesh.device(), 16);
    const int values[4] = {1, -2, 3, -4};
    x.copy_from(values, 16);
    int out[4] = {};
    CollectiveRequest request = mesh.start_all_reduce("dp", x.address(), y.address(), 4, TESS_I32, TESS_REDUCE_MAX);
    CHECK(request.in_flight());
    request.wait();
    CHECK_FALSE(request.in_flight());
    y.copy_to(out, 16);
    CHECK(out[3] == -4);
    CHECK_THROWS_WITH_AS(request.wait(), doctest::Contains("no collective in flight"), Error);
    {
      // Two in flight; the second never waited for explicitly: its destructor waits.
      CollectiveRequest gather = mesh.start_all_gather("dp", x.address(), y.address(), 2, TESS_I32);
      CollectiveRequest shift = mesh.start_send_recv("dp", x.address(), 0, y.address(), 0, 1, TESS_I64);
      gather.wait();
    }
    request = mesh.start_reduce_scatter("dp", x.address(), y.address(), 4, TESS_I32, TESS_REDUCE_SUM);
    request = mesh.start_broadcast("dp", y.address(), 4, TESS_I32, 0);  // the first waited for on assignment
    request.wait();
    CollectiveRequest sent = mesh.start_send("dp", x.address(), 4, TESS_I32, 0);
    CollectiveRequest received = mesh.start_recv("dp", y.address(), 4, TESS_I32, 0);
    sent.wait();
    received.wait();
    y.copy_to(out, 16);
    CHECK(out[1] == -2);
    CHECK_THROWS_WITH_AS(
        (void)mesh.start_all_reduce("tp", x.address(), y.address(), 4, TESS_I32, TESS_REDUCE_SUM),
        doctest::Contains("TESS_ERROR_INVALID_VALUE: tessMeshAllReduceStart: the mesh has no axis 'tp'"), Error);
  }

  TEST_CASE("status names of the collectives") {
    CHECK(std::string(tessGetErrorName(TESS_ERROR_LIBRARY_NOT_FOUND)) == "TESS_ERROR_LIBRARY_NOT_FOUND");
    CHECK(std::string(tessGetErrorName(TESS_ERROR_COLLECTIVE)) == "TESS_ERROR_COLLECTIVE");
    CHECK(std::string(tessGetErrorString(TESS_ERROR_COLLECTIVE)) == "a collective failed");
  }
}

// --- NCCL -----------------------------------------------------------------------------------
// NCCL is loaded once per process, so ctest runs this suite once per library
// (runtime/CMakeLists.txt) with TESSERA_LIBNCCL pointing at it and
// TESSERA_RT_TEST_NCCL saying what to expect.

namespace {

using tessera::rt::CollectiveCall;
using tessera::rt::Communicator;

// The fake library's log, through the handle the runtime loaded.
std::string nccl_log() {
  void* library = dlopen(std::getenv("TESSERA_LIBNCCL"), RTLD_NOW | RTLD_NOLOAD);
  REQUIRE(library != nullptr);
  auto log = reinterpret_cast<const char* (*)()>(dlsym(library, "fake_nccl_log"));
  REQUIRE((log != nullptr));
  std::string text = log();
  reinterpret_cast<void (*)()>(dlsym(library, "fake_nccl_clear_log"))();
  dlclose(library);
  return text;
}

void nccl_fail_next(int result) {
  void* library = dlopen(std::getenv("TESSERA_LIBNCCL"), RTLD_NOW | RTLD_NOLOAD);
  REQUIRE(library != nullptr);
  reinterpret_cast<void (*)(int)>(dlsym(library, "fake_nccl_fail_next"))(result);
  dlclose(library);
}

std::string address(const void* p) { return std::to_string(reinterpret_cast<std::uintptr_t>(p)); }

// An NCCL communicator of one rank on the CPU device, bootstrapped by loopback.
std::unique_ptr<Communicator> nccl_communicator(const tessera::rt::NcclFunctions& nccl, double timeout = 0) {
  CollectiveCall call;
  call.function = "test";
  call.collective = "setup";
  call.group = "the test group";
  call.timeout_seconds = timeout;
  std::unique_ptr<Communicator> comm;
  REQUIRE_MESSAGE(tessera::rt::make_nccl_communicator(call, nccl, tessera::rt::make_loopback_communicator(cpu()),
                                                      cpu(), &comm) == TESS_SUCCESS,
                  last_message());
  return comm;
}

CollectiveCall call_of(const char* collective, double timeout = 0) {
  CollectiveCall call;
  call.function = "tessMeshTest";
  call.collective = collective;
  call.group = "mesh axis 'tp'";
  call.timeout_seconds = timeout;
  return call;
}

}  // namespace

TEST_SUITE("nccl") {
  TEST_CASE("the NCCL backend against a fake libnccl") {
    const char* expectation = std::getenv("TESSERA_RT_TEST_NCCL");
    if (!expectation) return;  // a plain run: ctest runs this once per library
    const std::string expect = expectation;
    std::string error;
    const tessera::rt::NcclFunctions* nccl = tessera::rt::load_nccl(error);
    INFO("load_nccl: " << error);

    if (expect == "missing") {
      CHECK(nccl == nullptr);
      CHECK(contains(error, "NCCL could not be loaded from TESSERA_LIBNCCL; tried:"));
      CHECK(contains(error, "no-such-dir/libnccl.so.2: "));
      return;
    }
    if (expect == "too-old") {
      CHECK(nccl == nullptr);
      CHECK(contains(error, "NCCL 2.9.9 is older than 2.10, which the runtime needs (bf16, avg)"));
      return;
    }
    if (expect == "not-nccl") {
      CHECK(nccl == nullptr);
      CHECK(contains(error, "not NCCL, or an NCCL without ncclGetVersion, ncclGetErrorString, ncclGetUniqueId"));
      return;
    }
    REQUIRE(nccl != nullptr);
    CHECK(nccl->version >= 21000);
    if (expect == "real") {
      // The installed libnccl.so.2 exports every entry point of the table
      // (no GPU needed to load it).
      CHECK((nccl->ncclGetLastError != nullptr));
      MESSAGE("NCCL " << tessera::rt::nccl_version_string(nccl->version) << " from " << nccl->path);
      return;
    }
    REQUIRE(expect == "stub");
    CHECK(tessera::rt::nccl_version_string(nccl->version) == "2.28.9");
    CHECK(tessera::rt::nccl_version_string(2708) == "2.7.8");
    nccl_log();

    auto comm = nccl_communicator(*nccl);
    CHECK(comm->backend() == TESS_COLLECTIVES_NCCL);
    CHECK(comm->rank() == 0);
    CHECK(comm->size() == 1);
    CHECK(nccl_log() == "ncclGetUniqueId\nncclCommInitRank nranks=1 rank=0 id=fake-unique-id\n");

    // Each collective maps to its NCCL call with NCCL's types and ops, on the
    // device's native stream (null on the CPU), and does what one rank does.
    std::vector<uint16_t> a(8), b(8);
    for (int i = 0; i < 8; ++i) a[static_cast<size_t>(i)] = static_cast<uint16_t>(0x3c00 + i);  // f16
    CHECK(comm->all_reduce(call_of("all_reduce"), a.data(), b.data(), 8, TESS_F16, TESS_REDUCE_AVG, nullptr) ==
          TESS_SUCCESS);
    CHECK(b == a);
    CHECK(nccl_log() == "ncclAllReduce send=" + address(a.data()) + " recv=" + address(b.data()) +
                            " count=8 datatype=6 op=4 stream=0\n");
    // Started: the same call queued on the stream, nothing left to wait for.
    {
      std::unique_ptr<tessera::rt::PendingCollective> pending;
      CHECK(comm->start_all_reduce(call_of("all_reduce"), a.data(), b.data(), 8, TESS_F16, TESS_REDUCE_AVG, nullptr,
                                   &pending) == TESS_SUCCESS);
      CHECK(pending == nullptr);
      CHECK(nccl_log() == "ncclAllReduce send=" + address(a.data()) + " recv=" + address(b.data()) +
                              " count=8 datatype=6 op=4 stream=0\n");
    }
    CHECK(comm->all_reduce(call_of("all_reduce"), a.data(), a.data(), 4, TESS_BF16, TESS_REDUCE_MAX, nullptr) ==
          TESS_SUCCESS);
    CHECK(contains(nccl_log(), "count=4 datatype=9 op=2"));
    CHECK(comm->all_reduce(call_of("all_reduce"), a.data(), b.data(), 2, TESS_I64, TESS_REDUCE_PROD, nullptr) ==
          TESS_SUCCESS);
    CHECK(contains(nccl_log(), "count=2 datatype=4 op=1"));
    CHECK(comm->all_reduce(call_of("all_reduce"), a.data(), b.data(), 16, TESS_BOOL, TESS_REDUCE_MIN, nullptr) ==
          TESS_SUCCESS);
    CHECK(contains(nccl_log(), "count=16 datatype=1 op=3"));
    CHECK(comm->reduce_scatter(call_of("reduce_scatter"), a.data(), b.data(), 4, TESS_U32, TESS_REDUCE_SUM,
                               nullptr) == TESS_SUCCESS);
    CHECK(nccl_log() == "ncclReduceScatter send=" + address(a.data()) + " recv=" + address(b.data()) +
                            " count=4 datatype=3 op=0 stream=0\n");
    // Data movement is in bytes (ncclUint8), whatever the dtype.
    CHECK(comm->all_gather(call_of("all_gather"), a.data(), b.data(), 16, nullptr) == TESS_SUCCESS);
    CHECK(contains(nccl_log(), "ncclAllGather send=" + address(a.data()) + " recv=" + address(b.data()) +
                                   " count=16 datatype=1 stream=0"));
    CHECK(comm->broadcast(call_of("broadcast"), a.data(), 10, 0, nullptr) == TESS_SUCCESS);
    CHECK(nccl_log() == "ncclBroadcast send=" + address(a.data()) + " recv=" + address(a.data()) +
                            " count=10 datatype=1 root=0 stream=0\n");
    CHECK(comm->send(call_of("send"), a.data(), 6, 0, nullptr) == TESS_SUCCESS);
    CHECK(comm->recv(call_of("recv"), b.data(), 6, 0, nullptr) == TESS_SUCCESS);
    CHECK(nccl_log() == "ncclSend buffer=" + address(a.data()) + " count=6 datatype=1 peer=0 stream=0\nncclRecv buffer=" +
                            address(b.data()) + " count=6 datatype=1 peer=0 stream=0\n");
    // send_recv is one NCCL group of a send and a recv.
    CHECK(comm->send_recv(call_of("send_recv"), a.data(), 0, b.data(), 0, 6, nullptr) == TESS_SUCCESS);
    CHECK(nccl_log() == "ncclGroupStart\nncclSend buffer=" + address(a.data()) +
                            " count=6 datatype=1 peer=0 stream=0\nncclRecv buffer=" + address(b.data()) +
                            " count=6 datatype=1 peer=0 stream=0\nncclGroupEnd\n");
    CHECK(comm->barrier(call_of("barrier")) == TESS_SUCCESS);

    // NCCL's errors are named, with its own string and last error.
    nccl_fail_next(4);
    CHECK(comm->all_reduce(call_of("all_reduce"), a.data(), b.data(), 4, TESS_F32, TESS_REDUCE_SUM, nullptr) ==
          TESS_ERROR_COLLECTIVE);
    CHECK(last_message() ==
          "tessMeshTest: all_reduce on mesh axis 'tp' (NCCL) failed: ncclAllReduce failed with ncclInvalidArgument "
          "(4): invalid argument (run with NCCL_DEBUG=WARN for details); last error: fake NCCL: the injected failure");
    nccl_log();

    // A watched collective (with a timeout) records an event after it; CPU
    // events complete at once, so the watchdog lets it go.
    CHECK(comm->all_reduce(call_of("all_reduce", 30), a.data(), b.data(), 4, TESS_F32, TESS_REDUCE_SUM, nullptr) ==
          TESS_SUCCESS);

    // A split makes a new communicator over the bootstrap's split.
    std::unique_ptr<Communicator> sub;
    CHECK(comm->split(call_of("split"), 0, 0, &sub) == TESS_SUCCESS);
    REQUIRE(sub != nullptr);
    CHECK(sub->backend() == TESS_COLLECTIVES_NCCL);
    CHECK(comm->split(call_of("split"), -1, 0, &sub) == TESS_SUCCESS);
    CHECK(sub == nullptr);
    nccl_log();
    comm.reset();
    CHECK(nccl_log() == "ncclCommDestroy\n");
  }
}

// The NCCL backend on a real GPU (scripts/gpu-check.sh; ctest's
// unit.runtime_unittests.nccl-gpu skips, exit 77, without one): a one-rank
// communicator of the installed libnccl.so.2 on cuda:0, every collective on
// device memory and a stream of the runtime's, checked after copying back.
// One rank makes every collective an identity (or a copy), which is what this
// checks: NCCL takes the runtime's device pointers, counts, types and
// CUstream, and its results land where the runtime expects them.
TEST_SUITE("nccl-gpu") {
  TEST_CASE("the NCCL backend on cuda:0") {
    if (!std::getenv("TESSERA_RT_TEST_NCCL_GPU")) return;
    tessDevice gpu = nullptr;
    if (tessGetDeviceByName("cuda:0", &gpu) != TESS_SUCCESS) {
      MESSAGE("skipped: no CUDA device: " << tessCudaUnavailableReason());
      std::exit(77);
    }
    std::string error;
    const tessera::rt::NcclFunctions* nccl = tessera::rt::load_nccl(error);
    REQUIRE_MESSAGE(nccl != nullptr, error);
    MESSAGE("NCCL " << tessera::rt::nccl_version_string(nccl->version) << " from " << nccl->path);

    CollectiveCall setup = call_of("setup");
    std::unique_ptr<Communicator> comm;
    REQUIRE_MESSAGE(tessera::rt::make_nccl_communicator(setup, *nccl, tessera::rt::make_loopback_communicator(gpu),
                                                        gpu, &comm) == TESS_SUCCESS,
                    last_message());
    CHECK(comm->backend() == TESS_COLLECTIVES_NCCL);
    CHECK(comm->size() == 1);
    tessStream stream = nullptr;
    REQUIRE(tessStreamCreate(gpu, &stream) == TESS_SUCCESS);

    constexpr size_t n = 1000;
    std::vector<float> input(n);
    for (size_t i = 0; i < n; ++i) input[i] = static_cast<float>(i) * 0.5f - 7.0f;
    tessDevicePtr a = 0, b = 0;
    REQUIRE(tessMalloc(gpu, n * sizeof(float), &a) == TESS_SUCCESS);
    REQUIRE(tessMalloc(gpu, n * sizeof(float), &b) == TESS_SUCCESS);
    auto* da = reinterpret_cast<void*>(a);
    auto* db = reinterpret_cast<void*>(b);
    auto reset = [&] {
      REQUIRE(tessMemcpyHtoD(gpu, a, input.data(), n * sizeof(float)) == TESS_SUCCESS);
      REQUIRE(tessMemset(gpu, b, 0, n * sizeof(float)) == TESS_SUCCESS);
    };
    auto result = [&](tessDevicePtr from) {
      REQUIRE(tessStreamSynchronize(stream) == TESS_SUCCESS);
      std::vector<float> out(n);
      REQUIRE(tessMemcpyDtoH(gpu, out.data(), from, n * sizeof(float)) == TESS_SUCCESS);
      return out;
    };

    for (tessReduceOp op : {TESS_REDUCE_SUM, TESS_REDUCE_MAX, TESS_REDUCE_MIN, TESS_REDUCE_PROD, TESS_REDUCE_AVG}) {
      reset();
      CHECK_MESSAGE(comm->all_reduce(call_of("all_reduce"), da, db, n, TESS_F32, op, stream) == TESS_SUCCESS,
                    last_message());
      CHECK(result(b) == input);
    }
    reset();  // in place, watched (a timeout makes the watchdog follow it)
    CHECK(comm->all_reduce(call_of("all_reduce", 30), da, da, n, TESS_F32, TESS_REDUCE_SUM, stream) == TESS_SUCCESS);
    CHECK(result(a) == input);
    reset();
    CHECK(comm->reduce_scatter(call_of("reduce_scatter"), da, db, n, TESS_F32, TESS_REDUCE_SUM, stream) ==
          TESS_SUCCESS);
    CHECK(result(b) == input);
    reset();
    CHECK(comm->all_gather(call_of("all_gather"), da, db, n * sizeof(float), stream) == TESS_SUCCESS);
    CHECK(result(b) == input);
    reset();
    CHECK(comm->broadcast(call_of("broadcast"), da, n * sizeof(float), 0, stream) == TESS_SUCCESS);
    CHECK(result(a) == input);
    reset();  // to itself: one NCCL group of a send and a recv
    CHECK_MESSAGE(comm->send_recv(call_of("send_recv"), da, 0, db, 0, n * sizeof(float), stream) == TESS_SUCCESS,
                  last_message());
    CHECK(result(b) == input);
    CHECK(comm->barrier(call_of("barrier")) == TESS_SUCCESS);

    // Other dtypes reach NCCL's own types: bf16 (2.10+), f64, i32, u8.
    for (tessDtype dtype : {TESS_BF16, TESS_F16, TESS_F64, TESS_I32, TESS_I64, TESS_U8, TESS_I8}) {
      REQUIRE(tessMemset(gpu, a, 0x3c, n * sizeof(float)) == TESS_SUCCESS);
      CHECK_MESSAGE(comm->all_reduce(call_of("all_reduce"), da, db, 16, dtype, TESS_REDUCE_MAX, stream) ==
                        TESS_SUCCESS,
                    last_message());
      REQUIRE(tessStreamSynchronize(stream) == TESS_SUCCESS);
      std::vector<unsigned char> bytes(16 * 8);
      REQUIRE(tessMemcpyDtoH(gpu, bytes.data(), b, 16) == TESS_SUCCESS);
      CHECK(bytes[0] == 0x3c);
      CHECK(bytes[15] == 0x3c);
    }

    // Started: queued on the stream, nothing to wait for.
    reset();
    std::unique_ptr<tessera::rt::PendingCollective> pending;
    CHECK(comm->start_all_reduce(call_of("all_reduce"), da, db, n, TESS_F32, TESS_REDUCE_SUM, stream, &pending) ==
          TESS_SUCCESS);
    if (pending) CHECK(pending->wait() == TESS_SUCCESS);
    CHECK(result(b) == input);

    // NCCL's own error, named: a null buffer.
    CHECK(comm->all_reduce(call_of("all_reduce"), nullptr, db, n, TESS_F32, TESS_REDUCE_SUM, stream) ==
          TESS_ERROR_COLLECTIVE);
    CHECK(contains(last_message(), "all_reduce on mesh axis 'tp' (NCCL) failed: ncclAllReduce failed with"));

    // A split is a new NCCL communicator on the same GPU.
    std::unique_ptr<Communicator> sub;
    CHECK_MESSAGE(comm->split(call_of("split"), 0, 0, &sub) == TESS_SUCCESS, last_message());
    REQUIRE(sub != nullptr);
    reset();
    CHECK(sub->all_reduce(call_of("all_reduce"), da, db, n, TESS_F32, TESS_REDUCE_SUM, stream) == TESS_SUCCESS);
    CHECK(result(b) == input);
    sub.reset();
    comm.reset();
    CHECK(tessFree(gpu, a) == TESS_SUCCESS);
    CHECK(tessFree(gpu, b) == TESS_SUCCESS);
    CHECK(tessStreamDestroy(stream) == TESS_SUCCESS);
  }
}

// Run by ctest with TESSERA_RT_TEST_JOB_ABORT set: a process alone exits
// with the code, after the message.
TEST_SUITE("job-abort") {
  TEST_CASE("tessJobAbort in a job of one process") {
    if (!std::getenv("TESSERA_RT_TEST_JOB_ABORT")) return;
    tessJobAbort(7, "nothing to do");
  }
}

// Run by ctest with FAKE_NCCL_ASYNC_ERROR set: the watchdog must end the
// process with a message naming the collective (the test passes on that
// message; reaching the end fails it).
TEST_SUITE("nccl-async-error") {
  TEST_CASE("an asynchronous NCCL error ends the job with a message") {
    if (!std::getenv("FAKE_NCCL_ASYNC_ERROR")) return;
    std::string error;
    const tessera::rt::NcclFunctions* nccl = tessera::rt::load_nccl(error);
    REQUIRE_MESSAGE(nccl != nullptr, error);
    auto comm = nccl_communicator(*nccl);
    std::vector<float> a(4), b(4);
    REQUIRE(comm->all_reduce(call_of("all_reduce", 30), a.data(), b.data(), 4, TESS_F32, TESS_REDUCE_SUM, nullptr) ==
            TESS_SUCCESS);
    std::this_thread::sleep_for(std::chrono::seconds(10));
    FAIL("the watchdog did not end the process");
  }
}
