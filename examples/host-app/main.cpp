// examples/host-app: runs the kernels and the @jit function of kernels.tsr on
// the CPU device, and on every GPU that works, and checks the results against
// plain C++.
// Exit status 0 when every result matches.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

#include <tessera/runtime.hpp>

#include "kernels.h"

namespace {

using tessera::rt::Buffer;
using tessera::rt::Device;

// Runs both kernels on `device`; true when the results match.
bool run_on(Device device) {
  std::printf("host-app: on %s\n", device.name().c_str());
  bool ok = true;

  // saxpy over n elements: grid = ceil(n / group size).
  const int64_t n = 10000;
  std::vector<float> x(n), y(n), expected(n);
  for (int64_t i = 0; i < n; ++i) {
    x[i] = 0.5f * static_cast<float>(i % 97);
    y[i] = static_cast<float>(i % 13) - 6.0f;
    expected[i] = 3.0f * x[i] + y[i];
  }
  Buffer x_buffer(device, n * sizeof(float)), y_buffer(device, n * sizeof(float));
  x_buffer.copy_from(x.data(), n * sizeof(float));
  y_buffer.copy_from(y.data(), n * sizeof(float));
  tessera::TensorView<float, 1> x_view(x_buffer.address(), {n}), y_view(y_buffer.address(), {n});
  const uint32_t group = kernels::groups::saxpy[0];
  tessera::rt::check(kernels::saxpy(device.handle(), tessera::Grid(static_cast<uint32_t>((n + group - 1) / group)),
                                    x_view, y_view, 3.0f));
  device.synchronize();
  y_buffer.copy_to(y.data(), n * sizeof(float));
  int wrong = 0;
  for (int64_t i = 0; i < n; ++i) wrong += y[i] != expected[i];
  std::printf("  saxpy(n=%lld): %s\n", static_cast<long long>(n), wrong ? "MISMATCH" : "ok");
  ok = ok && !wrong;

  // row_sums of a rows x cols matrix: one group per row.
  const int64_t rows = 37, cols = 1000;
  std::vector<float> m(rows * cols), sums(rows);
  for (int64_t i = 0; i < rows * cols; ++i) m[i] = static_cast<float>((i * 7) % 11) - 5.0f;
  Buffer m_buffer(device, m.size() * sizeof(float)), sums_buffer(device, rows * sizeof(float));
  m_buffer.copy_from(m.data(), m.size() * sizeof(float));
  tessera::TensorView<float, 2> m_view(m_buffer.address(), {rows, cols});
  tessera::TensorView<float, 1> sums_view(sums_buffer.address(), {rows});
  tessera::rt::check(kernels::row_sums(device.handle(), tessera::Grid(rows), m_view, sums_view));
  device.synchronize();
  sums_buffer.copy_to(sums.data(), rows * sizeof(float));
  wrong = 0;
  for (int64_t r = 0; r < rows; ++r) {
    double reference = 0;
    for (int64_t c = 0; c < cols; ++c) reference += m[r * cols + c];
    wrong += std::fabs(sums[r] - reference) > 1e-3;
  }
  std::printf("  row_sums(%lldx%lld): %s\n", static_cast<long long>(rows), static_cast<long long>(cols),
              wrong ? "MISMATCH" : "ok");
  ok = ok && !wrong;

  // The @jit function: a new result tensor on the device, freed by the caller.
  const int64_t batch = 9, features = 20, units = 7;
  std::vector<float> xs(batch * features), ws(features * units), bs(units);
  for (int64_t i = 0; i < batch * features; ++i) xs[i] = static_cast<float>((i * 5) % 9) * 0.25f - 1.0f;
  for (int64_t i = 0; i < features * units; ++i) ws[i] = static_cast<float>((i * 3) % 7) * 0.125f - 0.375f;
  for (int64_t i = 0; i < units; ++i) bs[i] = 0.1f * static_cast<float>(i) - 0.3f;
  Buffer xs_buffer(device, xs.size() * sizeof(float)), ws_buffer(device, ws.size() * sizeof(float)),
      bs_buffer(device, bs.size() * sizeof(float));
  xs_buffer.copy_from(xs.data(), xs.size() * sizeof(float));
  ws_buffer.copy_from(ws.data(), ws.size() * sizeof(float));
  bs_buffer.copy_from(bs.data(), bs.size() * sizeof(float));
  tessTensor dense{};
  tessera::rt::check(kernels::dense_relu(device.handle(), tessera::TensorView<const float, 2>(xs_buffer.address(), {batch, features}),
                                         tessera::TensorView<const float, 2>(ws_buffer.address(), {features, units}),
                                         tessera::TensorView<const float, 1>(bs_buffer.address(), {units}), &dense));
  std::vector<float> out(batch * units);
  tessera::rt::check(tessMemcpyDtoH(device.handle(), out.data(), dense.data, out.size() * sizeof(float)));
  tessera::rt::check(tessFree(device.handle(), dense.data));
  wrong = 0;
  for (int64_t r = 0; r < batch; ++r)
    for (int64_t u = 0; u < units; ++u) {
      double reference = bs[u];
      for (int64_t f = 0; f < features; ++f) reference += double{xs[r * features + f]} * ws[f * units + u];
      wrong += std::fabs(out[r * units + u] - std::max(reference, 0.0)) > 1e-4;
    }
  std::printf("  dense_relu(%lldx%lld @ %lldx%lld): %s\n", static_cast<long long>(batch),
              static_cast<long long>(features), static_cast<long long>(features), static_cast<long long>(units),
              wrong ? "MISMATCH" : "ok");
  ok = ok && !wrong;

  // A shape that does not fit the signature is an error, not a launch.
  tessera::TensorView<float, 1> short_y(y_buffer.address(), {n - 1});
  tessStatus status = kernels::saxpy(device.handle(), tessera::Grid(1), x_view, short_y, 1.0f);
  std::printf("  mismatched shapes: %s: %s\n", tessGetErrorName(status), tessGetLastErrorMessage());
  ok = ok && status == TESS_ERROR_INVALID_VALUE;
  return ok;
}

}  // namespace

int main() {
  try {
    bool ok = run_on(Device::cpu());
    for (int i = 1; i < Device::count(); ++i) ok = run_on(Device::at(i)) && ok;
    if (Device::count() == 1) std::printf("host-app: no GPU (%s)\n", tessCudaUnavailableReason());
    std::printf("host-app: %s\n", ok ? "all results match" : "FAILED");
    return ok ? 0 : 1;
  } catch (const tessera::rt::Error& e) {
    std::fprintf(stderr, "host-app: %s\n", e.what());
    return 1;
  }
}
