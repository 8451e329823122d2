// AOT objects called from C++ (docs/aot.md): the generated headers' typed
// functions for every scalar type, tensors of rank 1 to 4 and low-precision
// element types; the launch stubs' checks (dimension agreement, dtypes,
// ranks, static sizes, group and shared-memory limits); two objects with a
// kernel of the same name in one program; the contiguous and general
// versions of a kernel picked by its tensors' layout; sizes past 2^31 - 1
// rejected; @jit functions with tuple, 0-d and GEMM results. Runs on the
// CPU device.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <unistd.h>
#include <cstring>
#include <thread>
#include <string>
#include <vector>

#include <tessera/numerics.hpp>
#include <tessera/runtime.hpp>

#include "autotuned.h"
#include "concurrent.h"
#include "graph.h"
#include "narrow.h"
#include "signatures.h"
#include "two_a.h"
#include "two_b.h"
#include "variants.h"

namespace {

using tessera::rt::Buffer;
using tessera::rt::Device;

template <class T>
struct Array {
  Array(Device device, std::vector<T> values) : host(std::move(values)), buffer(device, host.size() * sizeof(T) + 1) {
    if (!host.empty()) buffer.copy_from(host.data(), host.size() * sizeof(T));
  }
  std::vector<T> read() {
    std::vector<T> out(host.size());
    if (!out.empty()) buffer.copy_to(out.data(), out.size() * sizeof(T));
    return out;
  }
  std::vector<T> host;
  Buffer buffer;
};

std::string last_error() { return tessGetLastErrorMessage(); }

}  // namespace

TEST_CASE("every scalar type reaches the kernel intact") {
  Device cpu = Device::cpu();
  Array<uint8_t> o_bool(cpu, {0});  // bool tensors hold one byte per element, 0 or 1
  Array<int8_t> o_i8(cpu, {0});
  Array<int16_t> o_i16(cpu, {0});
  Array<int32_t> o_i32(cpu, {0});
  Array<int64_t> o_i64(cpu, {0});
  Array<uint8_t> o_u8(cpu, {0});
  Array<uint16_t> o_u16(cpu, {0});
  Array<uint32_t> o_u32(cpu, {0});
  Array<uint64_t> o_u64(cpu, {0});
  Array<float> o_f32(cpu, {0});
  Array<double> o_f64(cpu, {0});
  Array<uint16_t> o_f16(cpu, {0});
  Array<uint16_t> o_bf16(cpu, {0});
  auto view = [](auto& a) {
    using T = typename std::remove_reference_t<decltype(a.host)>::value_type;
    return tessera::TensorView<T, 1>(a.buffer.address(), {1});
  };
  tessera::TensorView<tessera::f16, 1> f16_view(o_f16.buffer.address(), {1});
  tessera::TensorView<tessera::bf16, 1> bf16_view(o_bf16.buffer.address(), {1});
  tessStatus status = signatures::scalars(
      cpu.handle(), tessera::Grid(1), tessera::TensorView<bool, 1>(o_bool.buffer.address(), {1}), view(o_i8), view(o_i16), view(o_i32), view(o_i64), view(o_u8),
      view(o_u16), view(o_u32), view(o_u64), view(o_f32), view(o_f64), f16_view, bf16_view, true, int8_t{-100},
      int16_t{-30000}, int32_t{-2000000000}, int64_t{-9000000000000000000}, uint8_t{250}, uint16_t{65000},
      uint32_t{4000000000u}, uint64_t{18000000000000000000u}, 1.5f, -2.25, tessera::f16{0x3e00} /* 1.5 */,
      tessera::bf16{0xc010} /* -2.25 */);
  REQUIRE_MESSAGE(status == TESS_SUCCESS, last_error());
  CHECK(o_bool.read()[0] == 1);
  CHECK(o_i8.read()[0] == -100);
  CHECK(o_i16.read()[0] == -30000);
  CHECK(o_i32.read()[0] == -2000000000);
  CHECK(o_i64.read()[0] == -9000000000000000000);
  CHECK(o_u8.read()[0] == 250);
  CHECK(o_u16.read()[0] == 65000);
  CHECK(o_u32.read()[0] == 4000000000u);
  CHECK(o_u64.read()[0] == 18000000000000000000u);
  CHECK(o_f32.read()[0] == 1.5f);
  CHECK(o_f64.read()[0] == -2.25);
  CHECK(o_f16.read()[0] == 0x3e00);
  CHECK(o_bf16.read()[0] == 0xc010);
}

TEST_CASE("tensors of rank 1 to 4") {
  Device cpu = Device::cpu();
  const int64_t p = 3, q = 4, r = 5, s = 2;
  std::vector<float> a_values(p), b_values(p * q);
  for (int64_t i = 0; i < p; ++i) a_values[i] = static_cast<float>(i) + 0.5f;
  for (int64_t i = 0; i < p * q; ++i) b_values[i] = static_cast<float>(i);
  Array<float> a(cpu, a_values), b(cpu, b_values), c(cpu, std::vector<float>(p * q * r, 0.0f));
  Array<int32_t> d(cpu, std::vector<int32_t>(2 * q * r * s, 7));
  tessera::TensorView<const float, 1> a_view(a.buffer.address(), {p});
  tessera::TensorView<const float, 2> b_view(b.buffer.address(), {p, q});
  tessera::TensorView<float, 3> c_view(c.buffer.address(), {p, q, r});
  tessera::TensorView<int32_t, 4> d_view(d.buffer.address(), {2, q, r, s});
  const uint32_t lanes = signatures::groups::ranks[0] * signatures::groups::ranks[1];
  CHECK(lanes == 64);
  REQUIRE_MESSAGE(signatures::ranks(cpu.handle(), tessera::Grid(2), a_view, b_view, c_view, d_view) == TESS_SUCCESS,
                  last_error());
  std::vector<float> c_out = c.read();
  for (int64_t i = 0; i < p; ++i)
    for (int64_t j = 0; j < q; ++j)
      for (int64_t k = 0; k < r; ++k)
        CHECK(c_out[(i * q + j) * r + k] == a_values[i] + 10.0f * b_values[i * q + j] + 100.0f * static_cast<float>(k));
  std::vector<int32_t> d_out = d.read();
  for (int64_t j = 0; j < q; ++j)
    for (int64_t k = 0; k < r; ++k)
      for (int64_t l = 0; l < s; ++l) {
        CHECK(d_out[((0 * q + j) * r + k) * s + l] == j + 10 * k + 100 * l);
        CHECK(d_out[((1 * q + j) * r + k) * s + l] == -1);
      }

  SUBCASE("a strided (transposed) view") {
    // b as the transpose of a q x p matrix: element (i, j) at j * p + i.
    std::vector<float> bt(p * q);
    for (int64_t i = 0; i < p; ++i)
      for (int64_t j = 0; j < q; ++j) bt[j * p + i] = b_values[i * q + j];
    Array<float> b_transposed(cpu, bt);
    tessera::TensorView<const float, 2> strided(b_transposed.buffer.address(), {p, q}, {1, p});
    Array<float> c2(cpu, std::vector<float>(p * q * r, 0.0f));
    tessera::TensorView<float, 3> c2_view(c2.buffer.address(), {p, q, r});
    REQUIRE_MESSAGE(signatures::ranks(cpu.handle(), tessera::Grid(2), a_view, strided, c2_view, d_view) == TESS_SUCCESS,
                    last_error());
    CHECK(c2.read() == c_out);
  }
}

TEST_CASE("bf16, f16 and fp8 tensors") {
  Device cpu = Device::cpu();
  const int64_t n = 100;
  std::vector<uint16_t> bits(n);
  for (int64_t i = 0; i < n; ++i) bits[i] = static_cast<uint16_t>(0x3f80 + i);
  Array<uint16_t> x(cpu, bits), y(cpu, std::vector<uint16_t>(n, 0)), h(cpu, bits), g(cpu, std::vector<uint16_t>(n, 0));
  Array<uint8_t> e4(cpu, std::vector<uint8_t>(n, 0x38)), e5(cpu, std::vector<uint8_t>(n, 0x3c));
  tessera::TensorView<tessera::bf16, 1> y_view(y.buffer.address(), {n});
  tessera::TensorView<tessera::f16, 1> g_view(g.buffer.address(), {n});
  tessera::TensorView<const tessera::fp8_e4m3, 1> e4_view(e4.buffer.address(), {n});
  tessera::TensorView<const tessera::fp8_e5m2, 1> e5_view(e5.buffer.address(), {n});
  REQUIRE_MESSAGE(signatures::low_precision(cpu.handle(), tessera::Grid(2), tessera::TensorView<const tessera::bf16, 1>(x.buffer.address(), {n}), y_view,
                                            tessera::TensorView<const tessera::f16, 1>(h.buffer.address(), {n}), g_view, e4_view, e5_view) == TESS_SUCCESS,
                  last_error());
  CHECK(y.read() == bits);
  CHECK(g.read() == bits);
}

TEST_CASE("the launch stub checks arguments before anything runs") {
  Device cpu = Device::cpu();
  const int64_t n = 10;
  Array<float> x(cpu, std::vector<float>(n, 1.0f));
  Array<float> y(cpu, std::vector<float>(n, 1.0f));
  const int64_t p = 3, q = 4, r = 5, s = 2;
  Array<float> a(cpu, std::vector<float>(p, 0.0f)), b(cpu, std::vector<float>(p * q, 0.0f)),
      c(cpu, std::vector<float>(p * q * r, 0.0f));
  Array<int32_t> d(cpu, std::vector<int32_t>(2 * q * r * s, 7));
  tessera::TensorView<const float, 1> a_view(a.buffer.address(), {p});
  tessera::TensorView<const float, 2> b_view(b.buffer.address(), {p, q});
  tessera::TensorView<float, 3> c_view(c.buffer.address(), {p, q, r});
  tessera::TensorView<int32_t, 4> d_view(d.buffer.address(), {2, q, r, s});

  SUBCASE("a symbolic dimension bound to two values") {
    tessera::TensorView<const float, 2> b_short(b.buffer.address(), {p, q - 1});
    CHECK(signatures::ranks(cpu.handle(), tessera::Grid(1), a_view, b_short, c_view, d_view) == TESS_ERROR_INVALID_VALUE);
    CHECK(last_error() ==
          "launching 'ranks(a: f32[p], b: f32[p, q], c: mut f32[p, q, r], d: mut i32[2, q, r, s])' (" TESSERA_AOT_SOURCE_DIR
          "/Inputs/signatures.tsr): dimension mismatch: 'q' is 3 from b dimension 1 but 4 from c dimension 1");
  }
  SUBCASE("a static dimension") {
    tessera::TensorView<int32_t, 4> d_wrong(d.buffer.address(), {1, q, r, s * 2});
    CHECK(signatures::ranks(cpu.handle(), tessera::Grid(1), a_view, b_view, c_view, d_wrong) == TESS_ERROR_INVALID_VALUE);
    CHECK(last_error().find("parameter 'd': dimension 0 is 1 (shape (1, 4, 5, 4)), the kernel wants 2") != std::string::npos);
  }
  SUBCASE("a wrong rank or dtype from an untyped tessTensor") {
    tessTensor raw{};
    int64_t shape[2] = {p, q};
    REQUIRE(tessTensorMakeContiguous(a.buffer.address(), TESS_F32, 2, shape, &raw) == TESS_SUCCESS);
    CHECK(signatures::ranks(cpu.handle(), tessera::Grid(1), tessera::TensorView<const float, 1>(raw), b_view, c_view,
                            d_view) == TESS_ERROR_INVALID_VALUE);
    CHECK(last_error().find("parameter 'a': a rank-2 tensor of shape (3, 4), the kernel wants rank 1") != std::string::npos);
    REQUIRE(tessTensorMakeContiguous(a.buffer.address(), TESS_F64, 1, shape, &raw) == TESS_SUCCESS);
    CHECK(signatures::ranks(cpu.handle(), tessera::Grid(1), tessera::TensorView<const float, 1>(raw), b_view, c_view,
                            d_view) == TESS_ERROR_INVALID_VALUE);
    CHECK(last_error().find("parameter 'a': the tensor holds f64, the kernel wants f32") != std::string::npos);
  }
  SUBCASE("a typed view made with the wrong number of sizes") {
    tessera::TensorView<const float, 1> two(a.buffer.address(), {p, q});
    CHECK(signatures::ranks(cpu.handle(), tessera::Grid(1), two, b_view, c_view, d_view) == TESS_ERROR_INVALID_VALUE);
    CHECK(last_error().find("parameter 'a': a rank-2 tensor of shape (3, 4), the kernel wants rank 1") != std::string::npos);
    tessera::TensorView<const float, 1> nine(a.buffer.address(), {1, 1, 1, 1, 1, 1, 1, 1, 1});  // more than TESS_MAX_RANK
    CHECK(signatures::ranks(cpu.handle(), tessera::Grid(1), nine, b_view, c_view, d_view) == TESS_ERROR_INVALID_VALUE);
    CHECK(last_error().find("parameter 'a': a tensor of rank 9, outside 0..8 (the kernel wants rank 1)") != std::string::npos);
  }
  SUBCASE("a null data pointer") {
    tessera::TensorView<const float, 1> null_a(tessDevicePtr{0}, {p});
    CHECK(signatures::ranks(cpu.handle(), tessera::Grid(1), null_a, b_view, c_view, d_view) == TESS_ERROR_INVALID_VALUE);
    CHECK(last_error().find("parameter 'a': the data pointer is null") != std::string::npos);
  }
  SUBCASE("an empty grid") {
    CHECK(signatures::ranks(cpu.handle(), tessera::Grid(0), a_view, b_view, c_view, d_view) == TESS_ERROR_LAUNCH);
    CHECK(last_error().find("the grid 0x1x1 is empty") != std::string::npos);
  }
  SUBCASE("more shared memory than a group may have") {
    int64_t limit = cpu.attribute(TESS_ATTR_MAX_SHARED_PER_GROUP);
    tessera::TensorView<float, 1> x_view(x.buffer.address(), {n});
    CHECK(signatures::big_group(cpu.handle(), tessera::Grid(1, 1, 1, static_cast<size_t>(limit)), x_view) ==
          TESS_ERROR_LAUNCH);
    CHECK(last_error().find("bytes of shared memory per group (8192 static + ") != std::string::npos);
    REQUIRE_MESSAGE(signatures::big_group(cpu.handle(), tessera::Grid(1), x_view) == TESS_SUCCESS, last_error());
    CHECK(x.read() == std::vector<float>(n, 1.0f));
  }
  SUBCASE("neither a stream nor a device") {
    CHECK(signatures::ranks(tessStream{nullptr}, tessera::Grid(1), a_view, b_view, c_view, d_view) ==
          TESS_ERROR_INVALID_VALUE);
    CHECK(last_error().find("neither a stream nor a device was given") != std::string::npos);
  }
  SUBCASE("on a stream") {
    tessera::rt::Stream stream(cpu);
    CHECK(signatures::ranks(stream.get(), tessera::Grid(2), a_view, b_view, c_view, d_view) == TESS_SUCCESS);
  }
  SUBCASE("nothing was written by a refused launch") {
    tessera::TensorView<const float, 2> b_short(b.buffer.address(), {p, q - 1});
    CHECK(signatures::ranks(cpu.handle(), tessera::Grid(2), a_view, b_short, c_view, d_view) != TESS_SUCCESS);
    CHECK(d.read() == std::vector<int32_t>(2 * q * r * s, 7));
  }
}

TEST_CASE("two objects with a kernel of the same name link into one program") {
  Device cpu = Device::cpu();
  const int64_t n = 300;
  Array<float> x(cpu, std::vector<float>(n, 1.0f));
  tessera::TensorView<float, 1> view(x.buffer.address(), {n});
  REQUIRE(two_a::scale(cpu.handle(), tessera::Grid(3), view) == TESS_SUCCESS);
  REQUIRE(two_b::scale(cpu.handle(), tessera::Grid(3), view) == TESS_SUCCESS);
  CHECK(x.read() == std::vector<float>(n, 6.0f));
  CHECK(std::string(two_a::module().source) != std::string(two_b::module().source));
}

TEST_CASE("the module loads once per device and kernels are found by index") {
  Device cpu = Device::cpu();
  tessKernel first = nullptr, second = nullptr;
  REQUIRE(tessAotGetKernel(&two_a::module(), 0, cpu.handle(), &first) == TESS_SUCCESS);
  REQUIRE(tessAotGetKernel(&two_a::module(), 0, cpu.handle(), &second) == TESS_SUCCESS);
  CHECK(first == second);
  CHECK(tessAotGetKernel(&two_a::module(), 5, cpu.handle(), &first) == TESS_ERROR_INVALID_VALUE);
  CHECK(last_error().find("kernel index 5 is out of range") != std::string::npos);
}

TEST_CASE("threads launching a module that is not loaded yet") {
  // No test above touched `concurrent`: its first launches race to load it.
  Device cpu = Device::cpu();
  const int threads = 8;
  const int64_t n = 1000;
  std::vector<Array<int32_t>> arrays;
  for (int t = 0; t < threads; ++t) arrays.emplace_back(cpu, std::vector<int32_t>(n, t));
  std::vector<tessStatus> statuses(threads, TESS_ERROR_INVALID_VALUE);
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t)
    workers.emplace_back([&, t] {
      tessera::TensorView<int32_t, 1> view(arrays[t].buffer.address(), {n});
      statuses[t] = concurrent::add_one(cpu.handle(), tessera::Grid(16), view);
    });
  for (std::thread& w : workers) w.join();
  for (int t = 0; t < threads; ++t) {
    CHECK(statuses[t] == TESS_SUCCESS);
    CHECK(arrays[t].read() == std::vector<int32_t>(n, t + 1));
  }
  tessKernel a = nullptr, b = nullptr;
  REQUIRE(tessAotGetKernel(&concurrent::module(), 0, cpu.handle(), &a) == TESS_SUCCESS);
  REQUIRE(tessAotGetKernel(&concurrent::module(), 0, cpu.handle(), &b) == TESS_SUCCESS);
  CHECK(a == b);
}

TEST_CASE("packed fp4/fp6 and fp8 tensors through the generated header") {
  namespace nm = tessera::numerics;
  Device cpu = Device::cpu();
  const int64_t n = 101;  // odd: the last fp4 byte is half used, fp6 elements straddle bytes
  std::vector<uint8_t> a_bytes(nm::packed_bytes(n, 4)), b_bytes(nm::packed_bytes(n, 6)), c_bytes(n);
  std::vector<float> expected(3 * n);
  auto as_float = [](uint32_t bits) {
    float f;
    std::memcpy(&f, &bits, sizeof f);
    return f;
  };
  for (int64_t i = 0; i < n; ++i) {
    uint32_t a = static_cast<uint32_t>(i * 7) % 16, b = static_cast<uint32_t>(i * 13) % 64, c = static_cast<uint32_t>(i * 29) % 256;
    nm::fp4_set(a_bytes.data(), static_cast<uint64_t>(i), a);
    nm::fp6_set(b_bytes.data(), static_cast<uint64_t>(i), b);
    c_bytes[static_cast<size_t>(i)] = static_cast<uint8_t>(c);
    expected[3 * i] = as_float(nm::decode_bits(nm::fp4_e2m1, a));
    expected[3 * i + 1] = as_float(nm::decode_bits(nm::fp6_e3m2, b));
    expected[3 * i + 2] = as_float(nm::decode_bits(nm::fp8_e4m3, c));
  }
  Array<uint8_t> a(cpu, a_bytes), b(cpu, b_bytes), c(cpu, c_bytes);
  Array<float> out(cpu, std::vector<float>(3 * n, -1.0f));
  REQUIRE_MESSAGE(narrow::decode(cpu.handle(), tessera::Grid(2),
                                 tessera::TensorView<const tessera::fp4_e2m1, 1>(a.buffer.address(), {n}),
                                 tessera::TensorView<const tessera::fp6_e3m2, 1>(b.buffer.address(), {n}),
                                 tessera::TensorView<const tessera::fp8_e4m3, 1>(c.buffer.address(), {n}),
                                 tessera::TensorView<float, 2>(out.buffer.address(), {n, 3})) == TESS_SUCCESS,
                  last_error());
  std::vector<float> decoded = out.read();
  for (size_t i = 0; i < decoded.size(); ++i)
    CHECK((decoded[i] == expected[i] || (std::isnan(decoded[i]) && std::isnan(expected[i]))));

  // Encoding: round to nearest even, e5m2 overflow to inf, fp4 to its max.
  std::vector<float> x(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) x[static_cast<size_t>(i)] = 0.37f * static_cast<float>(i - 50) * static_cast<float>(i % 5);
  x[3] = 1.0e6f;
  Array<float> xs(cpu, x);
  Array<uint8_t> packed(cpu, std::vector<uint8_t>(nm::packed_bytes(n, 4), 0xee)), codes(cpu, std::vector<uint8_t>(n, 0));
  REQUIRE_MESSAGE(narrow::encode(cpu.handle(), tessera::Grid(2), tessera::TensorView<const float, 1>(xs.buffer.address(), {n}),
                                 tessera::TensorView<tessera::fp4_e2m1, 1>(packed.buffer.address(), {n}),
                                 tessera::TensorView<tessera::fp8_e5m2, 1>(codes.buffer.address(), {n})) == TESS_SUCCESS,
                  last_error());
  std::vector<uint8_t> packed_out = packed.read(), codes_out = codes.read();
  for (int64_t i = 0; i < n; ++i) {
    uint32_t bits;
    std::memcpy(&bits, &x[static_cast<size_t>(i)], sizeof bits);
    auto rne = [&](const nm::Format& f) { return nm::encode_bits(f, bits, nm::Rounding::NearestEven, nm::Overflow::Propagate); };
    CHECK(nm::fp4_get(packed_out.data(), static_cast<uint64_t>(i)) == rne(nm::fp4_e2m1));
    CHECK(codes_out[static_cast<size_t>(i)] == rne(nm::fp8_e5m2));
  }
  CHECK(codes_out[3] == 0x7c);  // +inf
  CHECK((packed_out.back() >> 4) == 0xe);  // the unused high nibble of the last byte is kept
}

TEST_CASE("contiguous and general versions give the same results") {
  // The CPU code checks the contiguous variants' rule at each launch
  // (docs/abi.md): contiguous tensors run the version with unit strides and
  // noalias pointers, the others (strided, misaligned, aliased) the
  // general one. Every case must match the plain computation.
  Device cpu = Device::cpu();
  const int64_t n = 1000;
  std::vector<float> xs(2 * n + 4), ys(2 * n + 4);
  for (size_t i = 0; i < xs.size(); ++i) {
    xs[i] = static_cast<float>(i) * 0.5f;
    ys[i] = 100.0f - static_cast<float>(i);
  }
  const tessera::Grid grid(static_cast<uint32_t>((n + 63) / 64));
  auto expect_scale_add = [&](const std::vector<float>& y_before, const std::vector<float>& x, int64_t x_offset,
                              int64_t x_stride, int64_t y_offset, const std::vector<float>& y_after) {
    for (int64_t i = 0; i < n; ++i) {
      float want = 2.0f * x[x_offset + i * x_stride] + y_before[y_offset + i];
      if (y_after[y_offset + i] != want) {
        FAIL_CHECK("element " << i << ": " << y_after[y_offset + i] << " != " << want);
        return;
      }
    }
  };
  SUBCASE("contiguous") {
    Array<float> x(cpu, xs), y(cpu, ys);
    REQUIRE_MESSAGE(variants::scale_add(cpu.handle(), grid, tessera::TensorView<const float, 1>(x.buffer.address(), {n}),
                                        tessera::TensorView<float, 1>(y.buffer.address(), {n}), 2.0f) == TESS_SUCCESS,
                    last_error());
    expect_scale_add(ys, xs, 0, 1, 0, y.read());
  }
  SUBCASE("a strided view: every other element") {
    Array<float> x(cpu, xs), y(cpu, ys);
    REQUIRE_MESSAGE(
        variants::scale_add(cpu.handle(), grid, tessera::TensorView<const float, 1>(x.buffer.address(), {n}, {2}),
                            tessera::TensorView<float, 1>(y.buffer.address(), {n}), 2.0f) == TESS_SUCCESS,
        last_error());
    expect_scale_add(ys, xs, 0, 2, 0, y.read());
  }
  SUBCASE("a view starting at element 1: not 16-byte aligned") {
    Array<float> x(cpu, xs), y(cpu, ys);
    REQUIRE_MESSAGE(
        variants::scale_add(cpu.handle(), grid, tessera::TensorView<const float, 1>(x.buffer.address(), {n}),
                            tessera::TensorView<float, 1>(y.buffer.address() + sizeof(float), {n}), 2.0f) == TESS_SUCCESS,
        last_error());
    expect_scale_add(ys, xs, 0, 1, 1, y.read());
  }
  SUBCASE("the written tensor is the other one: y = 2 y + y") {
    Array<float> y(cpu, ys);
    REQUIRE_MESSAGE(variants::scale_add(cpu.handle(), grid, tessera::TensorView<const float, 1>(y.buffer.address(), {n}),
                                        tessera::TensorView<float, 1>(y.buffer.address(), {n}), 2.0f) == TESS_SUCCESS,
                    last_error());
    expect_scale_add(ys, ys, 0, 1, 0, y.read());
  }
  SUBCASE("lanes as loops around a barrier, contiguous and strided") {
    for (int64_t stride : {1, 2}) {
      Array<float> x(cpu, xs), y(cpu, std::vector<float>(n, 0.0f));
      REQUIRE_MESSAGE(
          variants::reverse_blocks(cpu.handle(), grid, tessera::TensorView<const float, 1>(x.buffer.address(), {n}, {stride}),
                                   tessera::TensorView<float, 1>(y.buffer.address(), {n})) == TESS_SUCCESS,
          last_error());
      std::vector<float> out = y.read();
      for (int64_t i = 0; i < n; ++i) {
        int64_t g = i / 64, l = 63 - i % 64, source = g * 64 + l;
        if (source < n) CHECK_MESSAGE(out[i] == xs[source * stride], "stride " << stride << ", element " << i);
      }
    }
  }
}

TEST_CASE("a dimension past 2^31 - 1 is rejected before anything runs") {
  // Kernels read sizes as 32-bit values (docs/abi.md, "Sizes").
  Device cpu = Device::cpu();
  Array<float> y(cpu, std::vector<float>(4, 0.0f));
  const int64_t huge = int64_t{3} << 30;
  tessStatus s = variants::scale_add(cpu.handle(), tessera::Grid(1), tessera::TensorView<const float, 1>(y.buffer.address(), {huge}),
                                     tessera::TensorView<float, 1>(y.buffer.address(), {huge}), 2.0f);
  CHECK(s == TESS_ERROR_INVALID_VALUE);
  CHECK_MESSAGE(last_error().find("parameter 'x': dimension 0 is 3221225472 (shape (3221225472,)), more than 2147483647") !=
                    std::string::npos,
                last_error());
  CHECK(y.read() == std::vector<float>(4, 0.0f));
}

TEST_CASE("@jit functions through the generated header") {
  Device cpu = Device::cpu();
  const int64_t rows = 3, cols = 5;
  std::vector<float> values(rows * cols);
  for (int64_t i = 0; i < rows * cols; ++i) values[i] = 0.25f * static_cast<float>(i % 7) - 0.5f;
  Array<float> x(cpu, values);
  tessera::TensorView<const float, 2> x_view(x.buffer.address(), {rows, cols});
  tessTensor probabilities{}, total{};
  REQUIRE_MESSAGE(graph::softmax_and_sum(cpu.handle(), x_view, 1.5f, &probabilities, &total) == TESS_SUCCESS,
                  last_error());
  REQUIRE(probabilities.rank == 2);
  CHECK(probabilities.shape[0] == rows);
  CHECK(probabilities.shape[1] == cols);
  CHECK(total.rank == 0);
  std::vector<float> p(rows * cols);
  float sum = 0.0f;
  REQUIRE(tessMemcpyDtoH(cpu.handle(), p.data(), probabilities.data, p.size() * sizeof(float)) == TESS_SUCCESS);
  REQUIRE(tessMemcpyDtoH(cpu.handle(), &sum, total.data, sizeof(float)) == TESS_SUCCESS);
  double expected_sum = 0.0;
  for (int64_t r = 0; r < rows; ++r) {
    double denominator = 0.0, largest = -1e30;
    for (int64_t c = 0; c < cols; ++c) largest = std::max(largest, 3.0 * values[r * cols + c]);
    for (int64_t c = 0; c < cols; ++c) denominator += std::exp(3.0 * values[r * cols + c] - largest);
    for (int64_t c = 0; c < cols; ++c) {
      CHECK(p[r * cols + c] == doctest::Approx(std::exp(3.0 * values[r * cols + c] - largest) / denominator).epsilon(1e-5));
      expected_sum += values[r * cols + c] + 1.0;
    }
  }
  CHECK(sum == doctest::Approx(expected_sum).epsilon(1e-5));
  CHECK(tessFree(cpu.handle(), probabilities.data) == TESS_SUCCESS);
  CHECK(tessFree(cpu.handle(), total.data) == TESS_SUCCESS);

  SUBCASE("a GEMM, and its arguments checked") {
    const int64_t m = 4, k = 3, n = 2;
    std::vector<float> a_values(m * k), b_values(k * n);
    for (int64_t i = 0; i < m * k; ++i) a_values[i] = static_cast<float>(i) - 3.0f;
    for (int64_t i = 0; i < k * n; ++i) b_values[i] = 0.5f * static_cast<float>(i);
    Array<float> a(cpu, a_values), b(cpu, b_values);
    tessera::TensorView<const float, 2> a_view(a.buffer.address(), {m, k}), b_view(b.buffer.address(), {k, n});
    tessTensor c{};
    REQUIRE_MESSAGE(graph::product(cpu.handle(), a_view, b_view, &c) == TESS_SUCCESS, last_error());
    std::vector<float> c_values(m * n);
    REQUIRE(tessMemcpyDtoH(cpu.handle(), c_values.data(), c.data, c_values.size() * sizeof(float)) == TESS_SUCCESS);
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        float want = 0.0f;
        for (int64_t l = 0; l < k; ++l) want += a_values[i * k + l] * b_values[l * n + j];
        CHECK(c_values[i * n + j] == doctest::Approx(want));
      }
    CHECK(tessFree(cpu.handle(), c.data) == TESS_SUCCESS);
    tessera::TensorView<const float, 2> wrong(b.buffer.address(), {n, k});
    CHECK(graph::product(cpu.handle(), a_view, wrong, &c) == TESS_ERROR_INVALID_VALUE);
    CHECK(last_error().find("calling 'product(a: f32[M, K], b: f32[K, N]) -> f32[?, ?]'") != std::string::npos);
    CHECK(last_error().find("dimension mismatch: 'K' is 3") != std::string::npos);
    // A null result pointer: an error, not a write through it.
    CHECK(graph::product(cpu.handle(), a_view, b_view, nullptr) == TESS_ERROR_INVALID_VALUE);
    CHECK(last_error().find("calling 'product': the result pointer 'result' is null") != std::string::npos);
  }

  SUBCASE("parameters named as the wrappers' own names") {
    std::vector<float> ones(3, 1.0f), twos(3, 2.0f), threes(3, 3.0f);
    Array<float> r(cpu, ones), o(cpu, twos), m(cpu, threes);
    auto view = [](Array<float>& a) { return tessera::TensorView<const float, 1>(a.buffer.address(), {3}); };
    tessTensor added{}, doubled{}, shifted_by_one{};
    REQUIRE_MESSAGE(graph::clashing(cpu.handle(), view(r), view(o), view(m), &added) == TESS_SUCCESS, last_error());
    REQUIRE_MESSAGE(graph::clashing_pair(cpu.handle(), view(o), &doubled, &shifted_by_one) == TESS_SUCCESS, last_error());
    std::vector<float> got(3);
    REQUIRE(tessMemcpyDtoH(cpu.handle(), got.data(), added.data, 3 * sizeof(float)) == TESS_SUCCESS);
    CHECK(got == std::vector<float>(3, 7.0f));  // 1 + 2 * 3
    REQUIRE(tessMemcpyDtoH(cpu.handle(), got.data(), doubled.data, 3 * sizeof(float)) == TESS_SUCCESS);
    CHECK(got == std::vector<float>(3, 4.0f));
    REQUIRE(tessMemcpyDtoH(cpu.handle(), got.data(), shifted_by_one.data, 3 * sizeof(float)) == TESS_SUCCESS);
    CHECK(got == std::vector<float>(3, 3.0f));
    for (tessTensor* t : {&added, &doubled, &shifted_by_one}) CHECK(tessFree(cpu.handle(), t->data) == TESS_SUCCESS);
  }
}

TEST_CASE("an autotuned kernel through the tuner: each variant on its grid, results from the inputs") {
  // The cache in a fresh directory (docs/autotuning.md, "AOT").
  const char* base = std::getenv("TMPDIR");
  std::string dir = std::string(base && *base ? base : "/tmp") + "/tessera-aot-tune.XXXXXX";
  REQUIRE(mkdtemp(dir.data()) != nullptr);
  setenv("TESSERA_CACHE_DIR", dir.c_str(), 1);
  setenv("TESSERA_AUTOTUNE", "1", 1);
  Device cpu = Device::cpu();
  const int64_t n = 1000;
  std::vector<float> xs(n), ys(n);
  for (int64_t i = 0; i < n; ++i) {
    xs[i] = static_cast<float>(i);
    ys[i] = 1.0f;
  }
  int grids_asked = 0;
  auto grid_of = [&](const tessera::Knobs& knobs) {
    ++grids_asked;
    return tessera::Grid(tessera::cdiv(n, knobs["BM"]));
  };
  for (int round = 0; round < 2; ++round) {
    Array<float> x(cpu, xs), y(cpu, ys);
    REQUIRE_MESSAGE(autotuned::blocked_tuned(cpu.handle(), grid_of,
                                             tessera::TensorView<const float, 1>(x.buffer.address(), {n}),
                                             tessera::TensorView<float, 1>(y.buffer.address(), {n})) == TESS_SUCCESS,
                    last_error());
    std::vector<float> out = y.read();
    for (int64_t i = 0; i < n; ++i)
      if (out[i] != 2.0f * xs[i] + 1.0f) {
        FAIL_CHECK("round " << round << ", element " << i << ": " << out[i]);
        break;
      }
  }
  CHECK(grids_asked == 6);  // every variant's grid, on each launch
  // One cache file with the kernel's entry, choosing one of its points.
  std::string cache;
  for (const auto& f : std::filesystem::directory_iterator(dir))
    if (f.path().extension() == ".json") cache = f.path().string();
  REQUIRE(!cache.empty());
  std::stringstream text;
  text << std::ifstream(cache).rdbuf();
  CHECK(text.str().find("\"kernel\": \"blocked\"") != std::string::npos);
  CHECK(text.str().find("x:f32[1024] y:f32[1024]") != std::string::npos);
  // The default point through the plain overload, on its own grid (BM=256).
  Array<float> x(cpu, xs), y(cpu, ys);
  REQUIRE(autotuned::blocked(cpu.handle(), tessera::Grid(tessera::cdiv(n, 256)),
                             tessera::TensorView<const float, 1>(x.buffer.address(), {n}),
                             tessera::TensorView<float, 1>(y.buffer.address(), {n})) == TESS_SUCCESS);
  CHECK(y.read()[n - 1] == 2.0f * xs[n - 1] + 1.0f);
  unsetenv("TESSERA_CACHE_DIR");
  setenv("TESSERA_AUTOTUNE", "0", 1);  // as ctest runs the others (tests/aot/CMakeLists.txt)
  std::filesystem::remove_all(dir);
}

TEST_CASE("an autotuned kernel with key=(\"n\",): the key is n's value, one entry per n") {
  const char* base = std::getenv("TMPDIR");
  std::string dir = std::string(base && *base ? base : "/tmp") + "/tessera-aot-key.XXXXXX";
  REQUIRE(mkdtemp(dir.data()) != nullptr);
  setenv("TESSERA_CACHE_DIR", dir.c_str(), 1);
  setenv("TESSERA_AUTOTUNE", "1", 1);
  Device cpu = Device::cpu();
  for (int64_t n : {300, 500}) {  // one bucket (512), two keys
    std::vector<float> xs(static_cast<size_t>(n)), ys(static_cast<size_t>(n), 1.0f);
    for (int64_t i = 0; i < n; ++i) xs[static_cast<size_t>(i)] = static_cast<float>(i);
    Array<float> x(cpu, xs), y(cpu, ys);
    auto grid_of = [&](const tessera::Knobs& knobs) { return tessera::Grid(tessera::cdiv(n, knobs["BM"])); };
    REQUIRE_MESSAGE(autotuned::keyed_tuned(cpu.handle(), grid_of,
                                           tessera::TensorView<const float, 1>(x.buffer.address(), {n}),
                                           tessera::TensorView<float, 1>(y.buffer.address(), {n})) == TESS_SUCCESS,
                    last_error());
    std::vector<float> out = y.read();
    for (int64_t i = 0; i < n; ++i)
      if (out[static_cast<size_t>(i)] != xs[static_cast<size_t>(i)] - 1.0f) {
        FAIL_CHECK("n = " << n << ", element " << i << ": " << out[static_cast<size_t>(i)]);
        break;
      }
  }
  std::string cache;
  for (const auto& f : std::filesystem::directory_iterator(dir))
    if (f.path().extension() == ".json") cache = f.path().string();
  REQUIRE(!cache.empty());
  std::stringstream text;
  text << std::ifstream(cache).rdbuf();
  CHECK(text.str().find("n=300 x:f32 y:f32 | tesserac ") != std::string::npos);
  CHECK(text.str().find("n=500 x:f32 y:f32 | tesserac ") != std::string::npos);
  CHECK(text.str().find("[512]") == std::string::npos);
  unsetenv("TESSERA_CACHE_DIR");
  setenv("TESSERA_AUTOTUNE", "0", 1);  // as ctest runs the others (tests/aot/CMakeLists.txt)
  std::filesystem::remove_all(dir);
}
