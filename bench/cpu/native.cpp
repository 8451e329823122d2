// bench/cpu baseline: the same kernels as plain C++ loops written as a C++
// programmer would (g++ -O3 -march=native), split over the same number of
// threads as the CPU device uses (TESSERA_CPU_THREADS, else the hardware
// threads): saxpy, a sum (each thread its slice, in order), a blocked
// transpose (32 x 32 blocks) and a blocked matmul (32 x 32 x 256 blocks, the
// innermost loop over a row of B and C, which g++ vectorises). Writes the
// inputs as .npy for `tesserac run` and prints its own times (the best of
// REPEAT runs each).
//
// usage: native DIR N REPEAT TRANSPOSE_SIZE MATMUL_SIZE
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

void write_npy(const std::string& path, const std::vector<float>& data, size_t rows = 0) {
  std::string shape = rows ? std::to_string(rows) + ", " + std::to_string(data.size() / rows) : std::to_string(data.size()) + ",";
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (" + shape + "), }";
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
  if (argc != 6) {
    std::fprintf(stderr, "usage: native DIR N REPEAT TRANSPOSE_SIZE MATMUL_SIZE\n");
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

  // Transpose: 32 x 32 blocks, each thread a band of block rows.
  const size_t t = std::strtoull(argv[4], nullptr, 10);
  std::vector<float> a(t * t), at(t * t);
  for (size_t i = 0; i < t * t; ++i) a[i] = static_cast<float>(i % 977);
  write_npy(dir + "/a.npy", a, t);
  write_npy(dir + "/at.npy", at, t);
  double transpose = best_ms(repeat, [&] {
    parallel(workers, [&](unsigned w) {
      size_t blocks = t / 32, begin = blocks * w / workers * 32, end = blocks * (w + 1) / workers * 32;
      for (size_t i0 = begin; i0 < end; i0 += 32)
        for (size_t j0 = 0; j0 < t; j0 += 32)
          for (size_t i = i0; i < i0 + 32; ++i)
            for (size_t j = j0; j < j0 + 32; ++j) at[j * t + i] = a[i * t + j];
    });
  });

  // Matmul C = A @ B: blocks of 32 rows x 32 k x 256 columns, C zeroed first.
  const size_t m = std::strtoull(argv[5], nullptr, 10);
  std::vector<float> A(m * m), B(m * m), C(m * m);
  for (size_t i = 0; i < m * m; ++i) {
    A[i] = static_cast<float>(i % 13) * 0.25f;
    B[i] = static_cast<float>(i % 7) * 0.5f;
  }
  write_npy(dir + "/A.npy", A, m);
  write_npy(dir + "/B.npy", B, m);
  write_npy(dir + "/C.npy", C, m);
  double matmul = best_ms(repeat, [&] {
    parallel(workers, [&](unsigned w) {
      size_t blocks = m / 32, begin = blocks * w / workers * 32, end = blocks * (w + 1) / workers * 32;
      std::fill(C.begin() + static_cast<std::ptrdiff_t>(begin * m), C.begin() + static_cast<std::ptrdiff_t>(end * m), 0.0f);
      for (size_t i0 = begin; i0 < end; i0 += 32)
        for (size_t k0 = 0; k0 < m; k0 += 32)
          for (size_t j0 = 0; j0 < m; j0 += 256)
            for (size_t i = i0; i < i0 + 32; ++i)
              for (size_t k = k0; k < k0 + 32; ++k) {
                const float aik = A[i * m + k];
                float* __restrict c = &C[i * m];
                const float* __restrict b = &B[k * m];
                const size_t j1 = std::min(j0 + 256, m);
                for (size_t j = j0; j < j1; ++j) c[j] += aik * b[j];
              }
    });
  });
  sink = sink + C[m + 1] + at[1];
  std::printf("native: saxpy min %.6f ms, total min %.6f ms, transpose min %.6f ms, matmul min %.6f ms "
              "(%u threads, n = %zu, transpose %zu x %zu, matmul %zu^3)\n",
              saxpy, total, transpose, matmul, workers, n, t, t, m);
  return sink.load() < 0 ? 1 : 0;
}
