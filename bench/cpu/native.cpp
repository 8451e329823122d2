// bench/cpu baseline: the same two kernels as plain C++ loops (g++ -O3
// -march=native), split over the same number of threads as the CPU device
// uses (TESSERA_CPU_THREADS, else the hardware threads). Writes the inputs
// as .npy for `tesserac run` and prints its own times.
//
// usage: native DIR N REPEAT
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {

void write_npy(const std::string& path, const std::vector<float>& data) {
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (" + std::to_string(data.size()) + ",), }";
  header.append((64 - (10 + header.size() + 1) % 64) % 64, ' ');
  header += '\n';
  FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) {
    std::perror(path.c_str());
    std::exit(1);
  }
  std::fwrite("\x93NUMPY\x01\x00", 1, 8, f);
  unsigned char length[2] = {static_cast<unsigned char>(header.size() & 0xff), static_cast<unsigned char>(header.size() >> 8)};
  std::fwrite(length, 1, 2, f);
  std::fwrite(header.data(), 1, header.size(), f);
  std::fwrite(data.data(), sizeof(float), data.size(), f);
  std::fclose(f);
}

unsigned threads() {
  if (const char* v = std::getenv("TESSERA_CPU_THREADS")) return static_cast<unsigned>(std::max(1, std::atoi(v)));
  return std::max(1u, std::thread::hardware_concurrency());
}

// Runs body(t) on `count` threads (the caller is thread 0) and waits.
template <class F>
void parallel(unsigned count, F body) {
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < count; ++t) pool.emplace_back(body, t);
  body(0u);
  for (auto& th : pool) th.join();
}

template <class F>
double best_ms(int repeat, F run) {
  std::vector<double> times;
  for (int r = 0; r < repeat; ++r) {
    auto start = std::chrono::steady_clock::now();
    run();
    times.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
  }
  std::sort(times.begin(), times.end());
  return times.front();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: native DIR N REPEAT\n");
    return 2;
  }
  const std::string dir = argv[1];
  const size_t n = std::strtoull(argv[2], nullptr, 10);
  const int repeat = std::atoi(argv[3]);
  const unsigned workers = threads();
  std::vector<float> x(n), y(n);
  for (size_t i = 0; i < n; ++i) {
    x[i] = static_cast<float>(i % 1000) * 0.001f;
    y[i] = 1.0f;
  }
  write_npy(dir + "/x.npy", x);
  write_npy(dir + "/y.npy", y);
  write_npy(dir + "/out.npy", {0.0f});

  const float alpha = 2.0f;
  double saxpy = best_ms(repeat, [&] {
    parallel(workers, [&](unsigned t) {
      size_t begin = n * t / workers, end = n * (t + 1) / workers;
      float* __restrict yp = y.data();
      const float* __restrict xp = x.data();
      for (size_t i = begin; i < end; ++i) yp[i] = alpha * xp[i] + yp[i];
    });
  });
  std::atomic<double> sink{0};
  double total = best_ms(repeat, [&] {
    std::vector<float> sums(workers);
    parallel(workers, [&](unsigned t) {
      size_t begin = n * t / workers, end = n * (t + 1) / workers;
      float acc = 0;
      for (size_t i = begin; i < end; ++i) acc += x[i];  // in order, as the kernel's lanes add
      sums[t] = acc;
    });
    float s = 0;
    for (float v : sums) s += v;
    sink = s;
  });
  std::printf("native: saxpy min %.6f ms, total min %.6f ms (%u threads, n = %zu)\n", saxpy, total, workers, n);
  return sink.load() < 0 ? 1 : 0;
}
