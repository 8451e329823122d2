// bench/dist: all_reduce (f32 sum) over every rank of the job through the
// runtime's C ABI (a 1-D mesh of CPU devices, the MPI backend), for sizes
// from 4 KiB to 64 MiB. Rank 0 prints one line per size:
//   runtime <bytes> <microseconds per all_reduce> <bus bandwidth GB/s>
// with the time the slowest rank took, as mpi_allreduce.c prints for plain
// MPI. run.sh starts both under mpirun and compares them.
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

int main() {
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

  const size_t largest = size_t{64} << 20;
  tessDevicePtr send = 0, recv = 0, timing = 0;
  check(tessMalloc(cpu, largest, &send), "tessMalloc");
  check(tessMalloc(cpu, largest, &recv), "tessMalloc");
  check(tessMalloc(cpu, sizeof(double), &timing), "tessMalloc");
  auto* data = reinterpret_cast<float*>(send);
  for (size_t i = 0; i < largest / 4; ++i) data[i] = static_cast<float>(i % 7);

  for (size_t bytes = 4096; bytes <= largest; bytes *= 4) {
    const size_t count = bytes / 4;
    // About 256 MiB reduced per size: many iterations of small ones.
    const int iterations = static_cast<int>(std::max<size_t>(5, std::min<size_t>(1000, (size_t{256} << 20) / bytes)));
    for (int i = 0; i < 3; ++i)
      check(tessMeshAllReduce(mesh, "x", send, recv, count, TESS_F32, TESS_REDUCE_SUM, nullptr), "warm-up");
    check(tessMeshBarrier(mesh, nullptr), "tessMeshBarrier");
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < iterations; ++i)
      check(tessMeshAllReduce(mesh, "x", send, recv, count, TESS_F32, TESS_REDUCE_SUM, nullptr), "all_reduce");
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() / iterations;
    *reinterpret_cast<double*>(timing) = seconds;
    check(tessMeshAllReduce(mesh, "x", timing, timing, 1, TESS_F64, TESS_REDUCE_MAX, nullptr), "timing");
    const double slowest = *reinterpret_cast<double*>(timing);
    const double bus_bandwidth = static_cast<double>(bytes) / slowest * 2.0 * (size - 1) / size / 1e9;
    if (rank == 0) std::printf("runtime %zu %.2f %.3f\n", bytes, slowest * 1e6, bus_bandwidth);
  }
  check(tessMeshDestroy(mesh), "tessMeshDestroy");
  return 0;
}
