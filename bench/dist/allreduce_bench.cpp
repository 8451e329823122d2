// bench/dist: all_reduce (f32 sum) over every rank of the job through the
// runtime's C ABI (a 1-D mesh of CPU devices, the MPI backend), for sizes
// from 4 KiB to 64 MiB. Every iteration is timed on every rank; an
// iteration's time is the slowest rank's, and the figure is the median over
// the iterations (robust against a shared machine's scheduler hiccups). Rank
// 0 prints one line per size:
//   runtime <bytes> <median microseconds> <bus bandwidth GB/s at the median>
// as mpi_allreduce.c does for plain MPI; run.sh runs both and compares them.
// Arguments: [smallest bytes] [largest bytes] (default 4096 and 64 MiB).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "tessera/tessera_runtime.h"

namespace {

void check(tessStatus s, const char* what) {
  if (s == TESS_SUCCESS) return;
  std::fprintf(stderr, "allreduce_bench: %s: %s: %s\n", what, tessGetErrorName(s), tessGetLastErrorMessage());
  std::exit(1);
}

}  // namespace

int main(int argc, char** argv) {
  const size_t smallest = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 4096;
  const size_t largest = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : size_t{64} << 20;
  int rank = 0, size = 1;
  check(tessJobRank(&rank), "tessJobRank");
  check(tessJobSize(&size), "tessJobSize");
  std::vector<std::string> names;
  for (int i = 0; i < size; ++i) names.push_back("cpu:" + std::to_string(i));
  std::vector<const char*> devices;
  for (const auto& n : names) devices.push_back(n.c_str());
  const char* axes[] = {"x"};
  tessMesh mesh = nullptr;
  check(tessMeshCreate(devices.data(), size, axes, &size, 1, 0, &mesh), "tessMeshCreate");
  tessDevice cpu = nullptr;
  check(tessMeshGetDevice(mesh, &cpu), "tessMeshGetDevice");

  const int most_iterations = 20000;
  tessDevicePtr send = 0, recv = 0, times = 0;
  check(tessMalloc(cpu, largest, &send), "tessMalloc");
  check(tessMalloc(cpu, largest, &recv), "tessMalloc");
  check(tessMalloc(cpu, most_iterations * sizeof(double), &times), "tessMalloc");
  auto* data = reinterpret_cast<float*>(send);
  for (size_t i = 0; i < largest / 4; ++i) data[i] = static_cast<float>(i % 7);
  auto* t = reinterpret_cast<double*>(times);

  for (size_t bytes = smallest; bytes <= largest; bytes *= 4) {
    const size_t count = bytes / 4;
    // About 1 GiB reduced per size, 10 to 20000 iterations.
    const int iterations = static_cast<int>(std::max<size_t>(10, std::min<size_t>(most_iterations, (size_t{1} << 30) / bytes)));
    for (int i = 0; i < 3; ++i)
      check(tessMeshAllReduce(mesh, "x", send, recv, count, TESS_F32, TESS_REDUCE_SUM, nullptr), "warm-up");
    check(tessMeshBarrier(mesh, nullptr), "tessMeshBarrier");
    for (int i = 0; i < iterations; ++i) {
      const auto start = std::chrono::steady_clock::now();
      check(tessMeshAllReduce(mesh, "x", send, recv, count, TESS_F32, TESS_REDUCE_SUM, nullptr), "all_reduce");
      t[i] = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    }
    check(tessMeshAllReduce(mesh, "x", times, times, static_cast<size_t>(iterations), TESS_F64, TESS_REDUCE_MAX, nullptr),
          "timing");
    std::nth_element(t, t + iterations / 2, t + iterations);
    const double median = t[iterations / 2];
    const double bus_bandwidth = static_cast<double>(bytes) / median * 2.0 * (size - 1) / size / 1e9;
    if (rank == 0) std::printf("runtime %zu %.2f %.3f\n", bytes, median * 1e6, bus_bandwidth);
  }
  check(tessMeshDestroy(mesh), "tessMeshDestroy");
  return 0;
}
