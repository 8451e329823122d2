// Meshes and collectives on CPU ranks through MPI: run by ctest under
// `mpirun -np 2` and `-np 4` (runtime/CMakeLists.txt). Every rank runs every
// test case in the same order, as an SPMD program does, and checks its own
// results against an exact reference computed here. The values are small
// integers, so every sum, product and average is exact in every dtype and the
// order in which MPI combines them does not matter.
//
// The suites "dead-peer" and "plugin-missing" run alone, selected by ctest
// with TESSERA_RT_TEST_MPI set.
#include <doctest/doctest.h>
#include <unistd.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "tessera/numerics.hpp"
#include "tessera/runtime.hpp"
#include "tessera/tessera_runtime.h"

namespace {

using tessera::rt::Buffer;
using tessera::rt::Device;
using tessera::rt::Mesh;

std::string last_message() { return tessGetLastErrorMessage(); }

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

int job_rank() { return tessera::rt::job_rank(); }
int job_size() { return tessera::rt::job_size(); }

// "cpu:0", ..., "cpu:n-1".
std::vector<std::string> cpus(int n, const char* kind = "cpu") {
  std::vector<std::string> devices;
  for (int i = 0; i < n; ++i) devices.push_back(std::string(kind) + ":" + std::to_string(i));
  return devices;
}

bool is_signed(tessDtype t) { return t == TESS_I8 || t == TESS_I16 || t == TESS_I32 || t == TESS_I64; }
bool is_float(tessDtype t) { return t == TESS_F16 || t == TESS_BF16 || t == TESS_F32 || t == TESS_F64; }

void store(tessDtype t, void* data, size_t i, double v) {
  switch (t) {
    case TESS_BOOL: static_cast<uint8_t*>(data)[i] = v != 0; return;
    case TESS_I8: static_cast<int8_t*>(data)[i] = static_cast<int8_t>(v); return;
    case TESS_I16: static_cast<int16_t*>(data)[i] = static_cast<int16_t>(v); return;
    case TESS_I32: static_cast<int32_t*>(data)[i] = static_cast<int32_t>(v); return;
    case TESS_I64: static_cast<int64_t*>(data)[i] = static_cast<int64_t>(v); return;
    case TESS_U8: static_cast<uint8_t*>(data)[i] = static_cast<uint8_t>(v); return;
    case TESS_U16: static_cast<uint16_t*>(data)[i] = static_cast<uint16_t>(v); return;
    case TESS_U32: static_cast<uint32_t*>(data)[i] = static_cast<uint32_t>(v); return;
    case TESS_U64: static_cast<uint64_t*>(data)[i] = static_cast<uint64_t>(v); return;
    case TESS_F16:
      static_cast<uint16_t*>(data)[i] =
          tessera::numerics::f16_from_f32_bits(std::bit_cast<uint32_t>(static_cast<float>(v)));
      return;
    case TESS_BF16:
      static_cast<uint16_t*>(data)[i] =
          tessera::numerics::bf16_from_f32_bits(std::bit_cast<uint32_t>(static_cast<float>(v)));
      return;
    case TESS_F32: static_cast<float*>(data)[i] = static_cast<float>(v); return;
    case TESS_F64: static_cast<double*>(data)[i] = v; return;
    default: FAIL("not a reducible dtype");
  }
}

double load(tessDtype t, const void* data, size_t i) {
  switch (t) {
    case TESS_BOOL: return static_cast<const uint8_t*>(data)[i];
    case TESS_I8: return static_cast<const int8_t*>(data)[i];
    case TESS_I16: return static_cast<const int16_t*>(data)[i];
    case TESS_I32: return static_cast<const int32_t*>(data)[i];
    case TESS_I64: return static_cast<double>(static_cast<const int64_t*>(data)[i]);
    case TESS_U8: return static_cast<const uint8_t*>(data)[i];
    case TESS_U16: return static_cast<const uint16_t*>(data)[i];
    case TESS_U32: return static_cast<const uint32_t*>(data)[i];
    case TESS_U64: return static_cast<double>(static_cast<const uint64_t*>(data)[i]);
    case TESS_F16:
      return std::bit_cast<float>(tessera::numerics::f32_bits_from_f16(static_cast<const uint16_t*>(data)[i]));
    case TESS_BF16:
      return std::bit_cast<float>(tessera::numerics::f32_bits_from_bf16(static_cast<const uint16_t*>(data)[i]));
    case TESS_F32: return static_cast<const float*>(data)[i];
    case TESS_F64: return static_cast<const double*>(data)[i];
    default: FAIL("not a reducible dtype");
  }
  return 0;
}

// Rank r's element i: small integers, negative ones for signed and float
// types; for PROD only -1, 1 and 2, so that products stay small.
double value(tessDtype t, tessReduceOp op, int r, size_t i) {
  const int k = static_cast<int>((static_cast<size_t>(r) * 3 + i) % 7);
  if (t == TESS_BOOL) return (r + static_cast<int>(i)) % 3 == 0;
  const bool negative = is_signed(t) || is_float(t);
  if (op == TESS_REDUCE_PROD) return negative ? (k % 3 == 0 ? -1 : k % 3) : 1 + k % 2;  // -1, 1, 2 or 1, 2
  return negative ? k - 3 : k;
}

// The exact result for element i over ranks [0, n).
double reference(tessDtype t, tessReduceOp op, size_t i, int n) {
  double r = value(t, op, 0, i);
  int64_t integer_sum = static_cast<int64_t>(r);
  for (int rank = 1; rank < n; ++rank) {
    const double v = value(t, op, rank, i);
    switch (op) {
      case TESS_REDUCE_SUM:
      case TESS_REDUCE_AVG: r += v; break;
      case TESS_REDUCE_PROD: r *= v; break;
      case TESS_REDUCE_MAX: r = std::max(r, v); break;
      case TESS_REDUCE_MIN: r = std::min(r, v); break;
    }
    integer_sum += static_cast<int64_t>(v);
  }
  if (op == TESS_REDUCE_AVG) return is_float(t) ? r / n : static_cast<double>(integer_sum / n);  // C: toward zero
  return r;
}

const tessDtype kReducible[] = {TESS_BOOL, TESS_I8,  TESS_I16,  TESS_I32, TESS_I64, TESS_U8,  TESS_U16,
                                TESS_U32,  TESS_U64, TESS_F16, TESS_BF16, TESS_F32, TESS_F64};
const tessReduceOp kOps[] = {TESS_REDUCE_SUM, TESS_REDUCE_PROD, TESS_REDUCE_MAX, TESS_REDUCE_MIN, TESS_REDUCE_AVG};

// Row-major coordinates, written independently of the runtime's.
std::vector<int> coords_of(const std::vector<int>& shape, int rank) {
  std::vector<int> c(shape.size());
  int stride = 1;
  for (int s : shape) stride *= s;
  for (size_t k = 0; k < shape.size(); ++k) {
    stride /= shape[k];
    c[k] = rank / stride % shape[k];
  }
  return c;
}

}  // namespace

TEST_SUITE("mpi") {
  TEST_CASE("the job: rank and size from the launcher, a mesh over every rank uses MPI") {
    REQUIRE(job_size() >= 2);
    Mesh mesh(cpus(job_size()), {"x"}, {job_size()});
    CHECK(mesh.backend() == TESS_COLLECTIVES_MPI);
    CHECK(mesh.rank() == job_rank());
    CHECK(mesh.axis_rank("x") == job_rank());
    CHECK(mesh.axis_size(nullptr) == job_size());
    CHECK(mesh.device().kind() == TESS_DEVICE_CPU);
    mesh.barrier();
    mesh.barrier("x");
  }

  TEST_CASE("all_reduce: every reducible dtype and operation, exact") {
    const int n = job_size();
    Mesh mesh(cpus(n), {"x"}, {n});
    const Device cpu = mesh.device();
    const size_t count = 37;
    Buffer send(cpu, count * 8), recv(cpu, count * 8);
    for (tessDtype t : kReducible)
      for (tessReduceOp op : kOps) {
        if (t == TESS_BOOL && op != TESS_REDUCE_MAX && op != TESS_REDUCE_MIN) continue;
        auto* in = reinterpret_cast<void*>(send.address());
        auto* out = reinterpret_cast<void*>(recv.address());
        for (size_t i = 0; i < count; ++i) store(t, in, i, value(t, op, job_rank(), i));
        std::memset(out, 0xee, count * 8);
        const tessStatus s = tessMeshAllReduce(mesh.get(), "x", send.address(), recv.address(), count, t, op, nullptr);
        INFO(tessDtypeName(t) << " op " << static_cast<int>(op) << ": " << last_message());
        REQUIRE(s == TESS_SUCCESS);
        int wrong = 0;
        for (size_t i = 0; i < count; ++i)
          if (load(t, out, i) != reference(t, op, i, n)) {
            if (wrong++ < 3) CHECK(load(t, out, i) == reference(t, op, i, n));
          }
        CHECK(wrong == 0);
        // In place gives the same.
        REQUIRE(tessMeshAllReduce(mesh.get(), nullptr, send.address(), send.address(), count, t, op, nullptr) ==
                TESS_SUCCESS);
        CHECK(std::memcmp(in, out, count * static_cast<size_t>(tessDtypeBits(t)) / 8) == 0);
      }
  }

  TEST_CASE("all_reduce of a large buffer") {
    const int n = job_size();
    Mesh mesh(cpus(n), {"x"}, {n});
    const size_t count = size_t{1} << 20;
    Buffer buffer(mesh.device(), count * 4);
    auto* data = reinterpret_cast<float*>(buffer.address());
    for (size_t i = 0; i < count; ++i) data[i] = static_cast<float>((i % 1000) + static_cast<size_t>(job_rank()));
    mesh.all_reduce("x", buffer.address(), buffer.address(), count, TESS_F32, TESS_REDUCE_SUM);
    int wrong = 0;
    for (size_t i = 0; i < count; ++i)
      wrong += data[i] != static_cast<float>(static_cast<double>(i % 1000) * n + n * (n - 1) / 2);
    CHECK(wrong == 0);
  }

  TEST_CASE("all_gather concatenates in index order, for every dtype, sub-byte ones included") {
    const int n = job_size();
    Mesh mesh(cpus(n), {"x"}, {n});
    const size_t count = 8;  // whole bytes for the 6- and 4-bit types too
    for (int d = 0; d < TESS_DTYPE_COUNT; ++d) {
      const auto t = static_cast<tessDtype>(d);
      const size_t bytes = count * static_cast<size_t>(tessDtypeBits(t)) / 8;
      Buffer send(mesh.device(), bytes), recv(mesh.device(), bytes * static_cast<size_t>(n));
      auto* in = reinterpret_cast<uint8_t*>(send.address());
      auto* out = reinterpret_cast<uint8_t*>(recv.address());
      for (size_t j = 0; j < bytes; ++j) in[j] = static_cast<uint8_t>(job_rank() * 31 + static_cast<int>(j) + d);
      INFO(tessDtypeName(t));
      mesh.all_gather("x", send.address(), recv.address(), count, t);
      int wrong = 0;
      for (int r = 0; r < n; ++r)
        for (size_t j = 0; j < bytes; ++j)
          wrong += out[static_cast<size_t>(r) * bytes + j] != static_cast<uint8_t>(r * 31 + static_cast<int>(j) + d);
      CHECK(wrong == 0);
      // In place: this rank's block of recv is its input.
      std::memset(out, 0, bytes * static_cast<size_t>(n));
      std::memcpy(out + static_cast<size_t>(job_rank()) * bytes, in, bytes);
      mesh.all_gather("x", recv.address() + static_cast<size_t>(job_rank()) * bytes, recv.address(), count, t);
      for (int r = 0; r < n; ++r)
        for (size_t j = 0; j < bytes; ++j)
          wrong += out[static_cast<size_t>(r) * bytes + j] != static_cast<uint8_t>(r * 31 + static_cast<int>(j) + d);
      CHECK(wrong == 0);
    }
  }

  TEST_CASE("reduce_scatter of a partial sum: index j receives the sum of everyone's block j") {
    const int n = job_size();
    const int me = job_rank();
    Mesh mesh(cpus(n), {"x"}, {n});
    const size_t count = 5;
    for (tessDtype t : {TESS_F32, TESS_I32, TESS_BF16})
      for (tessReduceOp op : {TESS_REDUCE_SUM, TESS_REDUCE_MAX, TESS_REDUCE_AVG}) {
        Buffer send(mesh.device(), count * static_cast<size_t>(n) * 4), recv(mesh.device(), count * 4);
        auto* in = reinterpret_cast<void*>(send.address());
        // Rank r's partial value of element k of block j: r * 8 + j * 2 + k.
        for (int j = 0; j < n; ++j)
          for (size_t k = 0; k < count; ++k)
            store(t, in, static_cast<size_t>(j) * count + k, me * 8 + j * 2 + static_cast<double>(k));
        INFO(tessDtypeName(t) << " op " << static_cast<int>(op));
        mesh.reduce_scatter("x", send.address(), recv.address(), count, t, op);
        for (size_t k = 0; k < count; ++k) {
          const double mine = me * 2 + static_cast<double>(k);
          double expected = op == TESS_REDUCE_MAX ? (n - 1) * 8 + mine : 8.0 * n * (n - 1) / 2 + n * mine;
          if (op == TESS_REDUCE_AVG) expected = t == TESS_I32 ? std::trunc(expected / n) : expected / n;
          CHECK(load(t, reinterpret_cast<void*>(recv.address()), k) == expected);
        }
        // In place: recv is this rank's block of send.
        const tessDevicePtr block = send.address() + static_cast<size_t>(me) * count * static_cast<size_t>(tessDtypeBits(t)) / 8;
        std::vector<unsigned char> before(count * 4);
        std::memcpy(before.data(), reinterpret_cast<void*>(recv.address()), count * 4);
        mesh.reduce_scatter("x", send.address(), block, count, t, op);
        CHECK(std::memcmp(before.data(), reinterpret_cast<void*>(block), count * static_cast<size_t>(tessDtypeBits(t)) / 8) == 0);
      }
  }

  TEST_CASE("reduce_scatter: every reducible dtype and operation, exact") {
    const int n = job_size();
    const int me = job_rank();
    Mesh mesh(cpus(n), {"x"}, {n});
    const size_t count = 11;
    Buffer send(mesh.device(), count * static_cast<size_t>(n) * 8), recv(mesh.device(), count * 8);
    for (tessDtype t : kReducible)
      for (tessReduceOp op : kOps) {
        if (t == TESS_BOOL && op != TESS_REDUCE_MAX && op != TESS_REDUCE_MIN) continue;
        auto* in = reinterpret_cast<void*>(send.address());
        auto* out = reinterpret_cast<void*>(recv.address());
        // Element k of block j holds this rank's value of global element j * count + k.
        for (size_t g = 0; g < count * static_cast<size_t>(n); ++g) store(t, in, g, value(t, op, me, g));
        INFO(tessDtypeName(t) << " op " << static_cast<int>(op));
        mesh.reduce_scatter("x", send.address(), recv.address(), count, t, op);
        int wrong = 0;
        for (size_t k = 0; k < count; ++k)
          wrong += load(t, out, k) != reference(t, op, static_cast<size_t>(me) * count + k, n);
        CHECK(wrong == 0);
      }
  }

  TEST_CASE("max and min of floats propagate a NaN from any rank, as NumPy's maximum and minimum") {
    // MPI_MAX and MPI_MIN keep or drop a NaN depending on the rank that holds
    // it (Open MPI 4.1); the plugin's own operations make it NaN either way.
    const int n = job_size();
    const int me = job_rank();
    Mesh mesh(cpus(n), {"x"}, {n});
    const size_t block = 37;  // the plugin's vector blocks of 16 and a tail
    const size_t count = block * static_cast<size_t>(n);
    // Element g is NaN on rank g % (n + 1), on none when that is n.
    auto nan_rank = [&](size_t g) { return static_cast<int>(g % static_cast<size_t>(n + 1)); };
    auto fill = [&](tessDtype t, tessReduceOp op, void* data) {
      for (size_t g = 0; g < count; ++g) store(t, data, g, nan_rank(g) == me ? std::nan("") : value(t, op, me, g));
    };
    auto wrong_in = [&](tessDtype t, tessReduceOp op, const void* result, size_t first, size_t elements) {
      int wrong = 0;
      for (size_t k = 0; k < elements; ++k) {
        const size_t g = first + k;
        const double got = load(t, result, k);
        wrong += nan_rank(g) < n ? !std::isnan(got) : got != reference(t, op, g, n);
      }
      return wrong;
    };
    Buffer send(mesh.device(), count * 8), recv(mesh.device(), count * 8);
    auto* in = reinterpret_cast<void*>(send.address());
    auto* out = reinterpret_cast<void*>(recv.address());
    for (tessDtype t : {TESS_F16, TESS_BF16, TESS_F32, TESS_F64})
      for (tessReduceOp op : {TESS_REDUCE_MAX, TESS_REDUCE_MIN}) {
        INFO(tessDtypeName(t) << (op == TESS_REDUCE_MAX ? " max" : " min"));
        // all_reduce: blocking, in place, started.
        fill(t, op, in);
        mesh.all_reduce("x", send.address(), recv.address(), count, t, op);
        CHECK(wrong_in(t, op, out, 0, count) == 0);
        mesh.all_reduce("x", send.address(), send.address(), count, t, op);
        CHECK(wrong_in(t, op, in, 0, count) == 0);
        fill(t, op, in);
        tessCollectiveRequest request = nullptr;
        REQUIRE(tessMeshAllReduceStart(mesh.get(), "x", send.address(), recv.address(), count, t, op, nullptr,
                                       &request) == TESS_SUCCESS);
        REQUIRE(tessCollectiveWait(request) == TESS_SUCCESS);
        CHECK(wrong_in(t, op, out, 0, count) == 0);
        // reduce_scatter: blocking and started; index me holds block me.
        const size_t mine = static_cast<size_t>(me) * block;
        mesh.reduce_scatter("x", send.address(), recv.address(), block, t, op);
        CHECK(wrong_in(t, op, out, mine, block) == 0);
        REQUIRE(tessMeshReduceScatterStart(mesh.get(), "x", send.address(), recv.address(), block, t, op, nullptr,
                                           &request) == TESS_SUCCESS);
        REQUIRE(tessCollectiveWait(request) == TESS_SUCCESS);
        CHECK(wrong_in(t, op, out, mine, block) == 0);
      }
  }

  TEST_CASE("broadcast from the last index, every dtype") {
    const int n = job_size();
    Mesh mesh(cpus(n), {"x"}, {n});
    const size_t count = 16;  // whole bytes for every dtype
    for (int d = 0; d < TESS_DTYPE_COUNT; ++d) {
      const auto t = static_cast<tessDtype>(d);
      const size_t bytes = count * static_cast<size_t>(tessDtypeBits(t)) / 8;
      Buffer buffer(mesh.device(), bytes);
      auto* data = reinterpret_cast<uint8_t*>(buffer.address());
      for (size_t j = 0; j < bytes; ++j) data[j] = job_rank() == n - 1 ? static_cast<uint8_t>(j * 7 + d) : 0xee;
      INFO(tessDtypeName(t));
      mesh.broadcast("x", buffer.address(), count, t, n - 1);
      int wrong = 0;
      for (size_t j = 0; j < bytes; ++j) wrong += data[j] != static_cast<uint8_t>(j * 7 + d);
      CHECK(wrong == 0);
    }
    // A root in the middle, on f64.
    Buffer buffer(mesh.device(), 100 * 8);
    auto* data = reinterpret_cast<double*>(buffer.address());
    for (int i = 0; i < 100; ++i) data[i] = job_rank() == n / 2 ? i * 0.25 : -1;
    mesh.broadcast(nullptr, buffer.address(), 100, TESS_F64, n / 2);
    int wrong = 0;
    for (int i = 0; i < 100; ++i) wrong += data[i] != i * 0.25;
    CHECK(wrong == 0);
  }

  TEST_CASE("send and recv of every dtype") {
    const int n = job_size();
    Mesh mesh(cpus(n), {"x"}, {n});
    const size_t count = 24;
    for (int d = 0; d < TESS_DTYPE_COUNT; ++d) {
      const auto t = static_cast<tessDtype>(d);
      const size_t bytes = count * static_cast<size_t>(tessDtypeBits(t)) / 8;
      Buffer buffer(mesh.device(), bytes);
      auto* data = reinterpret_cast<uint8_t*>(buffer.address());
      INFO(tessDtypeName(t));
      // Index 0 sends to index n - 1.
      if (job_rank() == 0) {
        for (size_t j = 0; j < bytes; ++j) data[j] = static_cast<uint8_t>(j * 5 + d);
        mesh.send("x", buffer.address(), count, t, n - 1);
      } else if (job_rank() == n - 1) {
        std::memset(data, 0, bytes);
        mesh.recv("x", buffer.address(), count, t, 0);
        int wrong = 0;
        for (size_t j = 0; j < bytes; ++j) wrong += data[j] != static_cast<uint8_t>(j * 5 + d);
        CHECK(wrong == 0);
      }
    }
  }

  TEST_CASE("send and recv between pipeline stages") {
    const int n = job_size();
    const int stage = job_rank();
    Mesh mesh(cpus(n), {"pp"}, {n});
    const size_t count = 1000;
    Buffer activations(mesh.device(), count * 4);
    auto* a = reinterpret_cast<float*>(activations.address());
    // Stage 0 starts; every later stage receives, adds its number, passes on.
    if (stage == 0)
      for (size_t i = 0; i < count; ++i) a[i] = static_cast<float>(i);
    else
      mesh.recv("pp", activations.address(), count, TESS_F32, stage - 1);
    for (size_t i = 0; i < count; ++i) a[i] += static_cast<float>(stage);
    if (stage + 1 < n) mesh.send("pp", activations.address(), count, TESS_F32, stage + 1);
    if (stage == n - 1) {
      int wrong = 0;
      for (size_t i = 0; i < count; ++i) wrong += a[i] != static_cast<float>(i) + n * (n - 1) / 2.0f;
      CHECK(wrong == 0);
    }
    // The last stage answers the first (gradients flowing back).
    if (stage == n - 1) mesh.send("pp", activations.address(), 10, TESS_F32, 0);
    if (stage == 0) {
      mesh.recv("pp", activations.address(), 10, TESS_F32, n - 1);
      CHECK(a[9] == 9.0f + n * (n - 1) / 2.0f);
    }
  }

  TEST_CASE("send_recv: a ring shift in both directions, every rank at once, no deadlock") {
    const int n = job_size();
    const int j = job_rank();
    Mesh mesh(cpus(n), {"x"}, {n});
    // Large enough that a plain send would wait for its recv (rendezvous).
    const size_t count = 1 << 18;
    Buffer out(mesh.device(), count * 8), in(mesh.device(), count * 8);
    auto* o = reinterpret_cast<int64_t*>(out.address());
    auto* r = reinterpret_cast<int64_t*>(in.address());
    for (size_t i = 0; i < count; ++i) o[i] = static_cast<int64_t>(i) * 100 + j;
    for (int shift : {1, -1, n + 1}) {
      INFO("shift " << shift);
      const int to = ((j + shift) % n + n) % n, from = ((j - shift) % n + n) % n;
      std::memset(r, 0, count * 8);
      mesh.send_recv("x", out.address(), to, in.address(), from, count, TESS_I64);
      int wrong = 0;
      for (size_t i = 0; i < count; ++i) wrong += r[i] != static_cast<int64_t>(i) * 100 + from;
      CHECK(wrong == 0);
    }
    // On a 2-D mesh the ring runs inside each group of the axis.
    if (n % 2 == 0) {
      Mesh grid(cpus(n), {"a", "b"}, {2, n / 2});
      const int b = grid.axis_rank("b"), size = grid.axis_size("b");
      Buffer x(grid.device(), 4), y(grid.device(), 4);
      *reinterpret_cast<int*>(x.address()) = j;
      grid.send_recv("b", x.address(), (b + 1) % size, y.address(), (b - 1 + size) % size, 1, TESS_I32);
      std::vector<int> at = grid.coords(j);
      at[1] = (b - 1 + size) % size;
      CHECK(*reinterpret_cast<int*>(y.address()) == grid.rank_at(at));
    }
  }

  TEST_CASE("send and recv of different sizes are errors naming MPI's") {
    const int n = job_size();
    Mesh mesh(cpus(n), {"x"}, {n});
    Buffer buffer(mesh.device(), 64);
    if (job_rank() == 0) {
      mesh.send("x", buffer.address(), 8, TESS_F32, 1);  // 32 bytes, recv'd as 16: truncated
      mesh.send("x", buffer.address(), 2, TESS_F32, 1);  // 8 bytes, recv'd as 16: short
    } else if (job_rank() == 1) {
      CHECK(tessMeshRecv(mesh.get(), "x", buffer.address(), 4, TESS_F32, 0, nullptr) == TESS_ERROR_COLLECTIVE);
      CHECK(contains(last_message(), "tessMeshRecv: recv on mesh axis 'x' (MPI) failed: MPI_Recv failed: "
                                     "MPI_ERR_TRUNCATE: message truncated"));
      CHECK(tessMeshRecv(mesh.get(), "x", buffer.address(), 4, TESS_F32, 0, nullptr) == TESS_ERROR_COLLECTIVE);
      CHECK(contains(last_message(), "(MPI) failed: the message from index 0 has 8 bytes, the recv expects 16"));
    }
    mesh.barrier();
  }

  TEST_CASE("started collectives: tessMesh*Start and tessCollectiveWait give the blocking calls' results") {
    const int n = job_size();
    const int j = job_rank();
    Mesh mesh(cpus(n), {"x"}, {n});
    const Device cpu = mesh.device();
    // all_reduce of every reducible dtype with AVG (the division happens at
    // the wait) and SUM, two in flight at once on one axis.
    const size_t count = 37;
    Buffer a(cpu, count * 8), b(cpu, count * 8), c(cpu, count * 8), d(cpu, count * 8);
    for (tessDtype t : kReducible) {
      if (t == TESS_BOOL) continue;
      auto* ia = reinterpret_cast<void*>(a.address());
      auto* ic = reinterpret_cast<void*>(c.address());
      for (size_t i = 0; i < count; ++i) {
        store(t, ia, i, value(t, TESS_REDUCE_AVG, j, i));
        store(t, ic, i, value(t, TESS_REDUCE_SUM, j, i));
      }
      tessCollectiveRequest first = nullptr, second = nullptr;
      REQUIRE(tessMeshAllReduceStart(mesh.get(), "x", a.address(), b.address(), count, t, TESS_REDUCE_AVG, nullptr,
                                     &first) == TESS_SUCCESS);
      REQUIRE(tessMeshAllReduceStart(mesh.get(), "x", c.address(), c.address(), count, t, TESS_REDUCE_SUM, nullptr,
                                     &second) == TESS_SUCCESS);
      REQUIRE(tessCollectiveWait(second) == TESS_SUCCESS);
      REQUIRE(tessCollectiveWait(first) == TESS_SUCCESS);
      int wrong = 0;
      for (size_t i = 0; i < count; ++i) {
        wrong += load(t, reinterpret_cast<void*>(b.address()), i) != reference(t, TESS_REDUCE_AVG, i, n);
        wrong += load(t, ic, i) != reference(t, TESS_REDUCE_SUM, i, n);
      }
      INFO(tessDtypeName(t));
      CHECK(wrong == 0);
    }
    // reduce_scatter in place (the result copied at the wait) and out of place.
    {
      Buffer whole(cpu, static_cast<size_t>(n) * 4 * 4), out(cpu, 4 * 4);
      auto* w = reinterpret_cast<int32_t*>(whole.address());
      for (int k = 0; k < n * 4; ++k) w[k] = k + j;
      tessCollectiveRequest in_place = nullptr, apart = nullptr;
      REQUIRE(tessMeshReduceScatterStart(mesh.get(), "x", whole.address(), out.address(), 4, TESS_I32,
                                         TESS_REDUCE_SUM, nullptr, &apart) == TESS_SUCCESS);
      REQUIRE(tessCollectiveWait(apart) == TESS_SUCCESS);
      const tessDevicePtr block = whole.address() + static_cast<size_t>(j) * 16;
      REQUIRE(tessMeshReduceScatterStart(mesh.get(), "x", whole.address(), block, 4, TESS_I32, TESS_REDUCE_SUM,
                                         nullptr, &in_place) == TESS_SUCCESS);
      REQUIRE(tessCollectiveWait(in_place) == TESS_SUCCESS);
      for (int k = 0; k < 4; ++k) {
        const int expected = n * (j * 4 + k) + n * (n - 1) / 2;
        CHECK(reinterpret_cast<int32_t*>(out.address())[k] == expected);
        CHECK(w[j * 4 + k] == expected);
      }
    }
    // all_gather, broadcast from the last index, and a ring of send_recv.
    {
      Buffer mine(cpu, 8), all(cpu, static_cast<size_t>(n) * 8), ring(cpu, 8);
      auto* m = reinterpret_cast<int64_t*>(mine.address());
      m[0] = j;
      tessCollectiveRequest gather = nullptr, shift = nullptr, bcast = nullptr;
      REQUIRE(tessMeshAllGatherStart(mesh.get(), "x", mine.address(), all.address(), 1, TESS_I64, nullptr, &gather) ==
              TESS_SUCCESS);
      REQUIRE(tessCollectiveWait(gather) == TESS_SUCCESS);
      for (int k = 0; k < n; ++k) CHECK(reinterpret_cast<int64_t*>(all.address())[k] == k);
      REQUIRE(tessMeshSendRecvStart(mesh.get(), "x", mine.address(), (j + 1) % n, ring.address(), (j - 1 + n) % n, 1,
                                    TESS_I64, nullptr, &shift) == TESS_SUCCESS);
      REQUIRE(tessCollectiveWait(shift) == TESS_SUCCESS);
      CHECK(reinterpret_cast<int64_t*>(ring.address())[0] == (j - 1 + n) % n);
      REQUIRE(tessMeshBroadcastStart(mesh.get(), "x", mine.address(), 1, TESS_I64, n - 1, nullptr, &bcast) ==
              TESS_SUCCESS);
      REQUIRE(tessCollectiveWait(bcast) == TESS_SUCCESS);
      CHECK(m[0] == n - 1);
    }
    // send and recv; a recv that expects more than is sent fails at the wait,
    // naming the collective, the axis and MPI.
    {
      Buffer buffer(cpu, 64);
      auto* f = reinterpret_cast<float*>(buffer.address());
      if (j == 0) {
        for (int k = 0; k < 4; ++k) f[k] = static_cast<float>(k + 1);
        tessCollectiveRequest sent = nullptr, short_send = nullptr;
        REQUIRE(tessMeshSendStart(mesh.get(), "x", buffer.address(), 4, TESS_F32, 1, nullptr, &sent) == TESS_SUCCESS);
        REQUIRE(tessCollectiveWait(sent) == TESS_SUCCESS);
        REQUIRE(tessMeshSendStart(mesh.get(), "x", buffer.address(), 2, TESS_F32, 1, nullptr, &short_send) ==
                TESS_SUCCESS);
        REQUIRE(tessCollectiveWait(short_send) == TESS_SUCCESS);
      } else if (j == 1) {
        tessCollectiveRequest received = nullptr, too_long = nullptr;
        REQUIRE(tessMeshRecvStart(mesh.get(), "x", buffer.address(), 4, TESS_F32, 0, nullptr, &received) ==
                TESS_SUCCESS);
        REQUIRE(tessCollectiveWait(received) == TESS_SUCCESS);
        for (int k = 0; k < 4; ++k) CHECK(f[k] == static_cast<float>(k + 1));
        REQUIRE(tessMeshRecvStart(mesh.get(), "x", buffer.address(), 4, TESS_F32, 0, nullptr, &too_long) ==
                TESS_SUCCESS);
        CHECK(tessCollectiveWait(too_long) == TESS_ERROR_COLLECTIVE);
        CHECK(contains(last_message(), "tessCollectiveWait: recv on mesh axis 'x' (MPI) failed: the message from "
                                       "index 0 has 8 bytes, the recv expects 16"));
      }
    }
    // The arguments are checked as for the blocking calls.
    tessCollectiveRequest request = nullptr;
    CHECK(tessMeshAllReduceStart(mesh.get(), "y", a.address(), a.address(), 1, TESS_F32, TESS_REDUCE_SUM, nullptr,
                                 &request) == TESS_ERROR_INVALID_VALUE);
    CHECK(contains(last_message(), "tessMeshAllReduceStart: the mesh has no axis 'y'"));
    CHECK(request == nullptr);
    CHECK(tessMeshAllReduceStart(mesh.get(), "x", a.address(), a.address(), 1, TESS_F32, TESS_REDUCE_SUM, nullptr,
                                 nullptr) == TESS_ERROR_INVALID_VALUE);
    CHECK(tessCollectiveWait(nullptr) == TESS_ERROR_INVALID_VALUE);
    mesh.barrier();
  }

  TEST_CASE("the C++ layer's started collectives: several in flight, waited for in another order") {
    const int n = job_size();
    const int j = job_rank();
    Mesh mesh(cpus(n), {"x"}, {n});
    const Device cpu = mesh.device();
    Buffer mine(cpu, 8), sum(cpu, 8), all(cpu, static_cast<size_t>(n) * 8), ring(cpu, 8);
    reinterpret_cast<int64_t*>(mine.address())[0] = j + 1;
    tessera::rt::CollectiveRequest reduced =
        mesh.start_all_reduce("x", mine.address(), sum.address(), 1, TESS_I64, TESS_REDUCE_SUM);
    tessera::rt::CollectiveRequest gathered = mesh.start_all_gather("x", mine.address(), all.address(), 1, TESS_I64);
    tessera::rt::CollectiveRequest shifted =
        mesh.start_send_recv("x", mine.address(), (j + 1) % n, ring.address(), (j - 1 + n) % n, 1, TESS_I64);
    shifted.wait();
    gathered.wait();
    reduced.wait();
    CHECK(reinterpret_cast<int64_t*>(sum.address())[0] == n * (n + 1) / 2);
    for (int k = 0; k < n; ++k) CHECK(reinterpret_cast<int64_t*>(all.address())[k] == k + 1);
    CHECK(reinterpret_cast<int64_t*>(ring.address())[0] == (j - 1 + n) % n + 1);
    {
      // Not waited for explicitly: the destructor waits.
      tessera::rt::CollectiveRequest broadcast = mesh.start_broadcast("x", mine.address(), 1, TESS_I64, n - 1);
    }
    CHECK(reinterpret_cast<int64_t*>(mine.address())[0] == n);
  }

  TEST_CASE("a 2-D mesh (dp x tp) and others: one communicator per axis") {
    const int n = job_size();
    std::vector<std::vector<int>> shapes = {{n}, {1, n}, {n, 1}};
    if (n % 2 == 0) shapes.push_back({2, n / 2}), shapes.push_back({n / 2, 2}), shapes.push_back({2, 1, n / 2});
    for (const auto& shape : shapes) {
      std::vector<std::string> axes;
      const char* names[] = {"dp", "tp", "pp"};
      for (size_t k = 0; k < shape.size(); ++k) axes.push_back(names[k]);
      INFO("shape of " << shape.size() << " axes, first " << shape[0]);
      Mesh mesh(cpus(n), axes, shape);
      const std::vector<int> mine = coords_of(shape, job_rank());
      CHECK(mesh.coords(job_rank()) == mine);
      CHECK(mesh.rank_at(mine) == job_rank());
      Buffer one(mesh.device(), 4), all(mesh.device(), 4 * static_cast<size_t>(n));
      auto* v = reinterpret_cast<int32_t*>(one.address());
      auto* gathered = reinterpret_cast<int32_t*>(all.address());
      for (size_t k = 0; k < shape.size(); ++k) {
        const char* axis = axes[k].c_str();
        CHECK(mesh.axis_size(axis) == shape[k]);
        CHECK(mesh.axis_rank(axis) == mine[k]);
        // The group of axis k: the ranks whose other coordinates are ours.
        std::vector<int> group;
        for (int r = 0; r < n; ++r) {
          std::vector<int> c = coords_of(shape, r);
          c[k] = mine[k];
          if (c == mine) group.push_back(r);
        }
        *v = job_rank();
        mesh.all_reduce(axis, one.address(), one.address(), 1, TESS_I32, TESS_REDUCE_SUM);
        int sum = 0;
        for (int r : group) sum += r;
        CHECK(*v == sum);
        // all_gather orders the group by the coordinate along the axis.
        *v = job_rank();
        mesh.all_gather(axis, one.address(), all.address(), 1, TESS_I32);
        for (size_t j = 0; j < group.size(); ++j) CHECK(gathered[j] == group[j]);
      }
    }
  }

  TEST_CASE("a mesh larger than the job is an error naming both sizes") {
    const int n = job_size();
    std::vector<std::string> devices = cpus(n + 1);
    std::vector<const char*> d;
    for (const auto& s : devices) d.push_back(s.c_str());
    const char* axes[] = {"x"};
    const int shape[] = {n + 1};
    tessMesh mesh = nullptr;
    CHECK(tessMeshCreate(d.data(), n + 1, axes, shape, 1, 0, &mesh) == TESS_ERROR_INVALID_VALUE);
    CHECK(last_message() == "tessMeshCreate: the mesh has " + std::to_string(n + 1) + " devices but the job has " +
                                std::to_string(n) + " ranks: one process per device, start it with mpirun -np " +
                                std::to_string(n + 1));
  }

  TEST_CASE("a mesh smaller than the job: the other ranks are not members") {
    const int n = job_size();
    Mesh mesh(cpus(n - 1), {"x"}, {n - 1});
    Buffer b(mesh.device(), 4);
    if (job_rank() < n - 1) {
      CHECK(mesh.rank() == job_rank());
      *reinterpret_cast<int32_t*>(b.address()) = 1;
      mesh.all_reduce("x", b.address(), b.address(), 1, TESS_I32, TESS_REDUCE_SUM);
      CHECK(*reinterpret_cast<int32_t*>(b.address()) == n - 1);
    } else {
      CHECK(mesh.rank() == -1);
      CHECK(mesh.axis_rank("x") == -1);
      CHECK(tessMeshAllReduce(mesh.get(), "x", b.address(), b.address(), 1, TESS_I32, TESS_REDUCE_SUM, nullptr) ==
            TESS_ERROR_INVALID_VALUE);
      CHECK(last_message() == "tessMeshAllReduce: this process (job rank " + std::to_string(n - 1) +
                                  ") is not a member of the mesh of " + std::to_string(n - 1) + " devices");
    }
  }

  TEST_CASE("ranks that disagree about the mesh all get an error") {
    const int n = job_size();
    std::vector<std::string> devices = cpus(n);
    std::vector<const char*> d;
    for (const auto& s : devices) d.push_back(s.c_str());
    const char* axes[] = {job_rank() == 0 ? "x" : "y"};
    const int shape[] = {n};
    tessMesh mesh = nullptr;
    CHECK(tessMeshCreate(d.data(), n, axes, shape, 1, 0, &mesh) == TESS_ERROR_INVALID_VALUE);
    CHECK(contains(last_message(), "the ranks of the job called it with different devices, axes, shape or flags"));
  }

  TEST_CASE("GPU meshes: cuda:i without a GPU fails on every rank; TESS_MESH_FORCE_CPU runs them on CPU ranks") {
    const int n = job_size();
    std::vector<std::string> devices = cpus(n, "cuda");
    tessDevice gpu = nullptr;
    if (tessGetDeviceByName("cuda:0", &gpu) != TESS_SUCCESS) {
      std::vector<const char*> d;
      for (const auto& s : devices) d.push_back(s.c_str());
      const char* axes[] = {"x"};
      const int shape[] = {n};
      tessMesh mesh = nullptr;
      CHECK(tessMeshCreate(d.data(), n, axes, shape, 1, 0, &mesh) != TESS_SUCCESS);
      CHECK(contains(last_message(), "tessMeshCreate: this rank's device cuda:" + std::to_string(job_rank()) +
                                         " is not available"));
    }
    Mesh mesh(devices, {"x"}, {n}, TESS_MESH_FORCE_CPU);
    CHECK(mesh.backend() == TESS_COLLECTIVES_MPI);
    CHECK(mesh.device().kind() == TESS_DEVICE_CPU);
    Buffer b(mesh.device(), 8);
    *reinterpret_cast<double*>(b.address()) = 1.5;
    mesh.all_reduce("x", b.address(), b.address(), 1, TESS_F64, TESS_REDUCE_SUM);
    CHECK(*reinterpret_cast<double*>(b.address()) == 1.5 * n);
  }
}

// A rank leaves without taking part: the others must end the job with a
// message naming the collective after TESSERA_COLLECTIVE_TIMEOUT, not hang.
// ctest checks the message and bounds the time.
TEST_SUITE("dead-peer") {
  TEST_CASE("a peer that exits early ends the job with a clear error") {
    const char* scenario = std::getenv("TESSERA_RT_TEST_MPI");
    if (!scenario) return;
    const int n = job_size();
    Mesh mesh(cpus(n), {"x"}, {n});
    if (job_rank() == n - 1) {
      if (std::string(scenario) == "peer-crashes") _exit(3);  // without MPI_Finalize
      return;                                                // returns; exits normally
    }
    Buffer b(mesh.device(), 4);
    if (std::string(scenario) == "peer-returns-started") {
      // Started: the wait, in MPI_Waitall, times out as the blocking call does.
      tessCollectiveRequest request = nullptr;
      REQUIRE(tessMeshAllReduceStart(mesh.get(), "x", b.address(), b.address(), 1, TESS_F32, TESS_REDUCE_SUM,
                                     nullptr, &request) == TESS_SUCCESS);
      tessCollectiveWait(request);
    } else {
      mesh.all_reduce("x", b.address(), b.address(), 1, TESS_F32, TESS_REDUCE_SUM);
    }
    FAIL("the all_reduce completed without its peer");
  }
}

// A rank that cannot go on ends the job while its peer waits in a barrier.
TEST_SUITE("job-abort") {
  TEST_CASE("tessJobAbort ends every rank") {
    if (!std::getenv("TESSERA_RT_TEST_MPI")) return;
    Mesh mesh(cpus(job_size()), {"x"}, {job_size()});
    if (job_rank() == 0) tessJobAbort(3, "the test gives up");
    mesh.barrier();
    FAIL("the barrier completed without rank 0");
  }
}

TEST_SUITE("plugin-missing") {
  TEST_CASE("without the MPI plugin, a mesh of several ranks is a clear error") {
    if (!std::getenv("TESSERA_RT_TEST_MPI")) return;
    const char* devices[] = {"cpu:0", "cpu:1"};
    const char* axes[] = {"x"};
    const int shape[] = {2};
    tessMesh mesh = nullptr;
    CHECK(tessMeshCreate(devices, 2, axes, shape, 1, 0, &mesh) == TESS_ERROR_LIBRARY_NOT_FOUND);
    CHECK(contains(last_message(), "tessMeshCreate: the MPI plugin libtessera_rt_mpi.so could not be loaded from "
                                   "TESSERA_MPI_PLUGIN; tried:"));
    CHECK(contains(last_message(), "no-such-dir/libtessera_rt_mpi.so: no such file"));
  }
}
