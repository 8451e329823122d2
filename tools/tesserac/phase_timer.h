#pragma once
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <cstring>
#include <unistd.h>
#include <cstring>
#include <unistd.h>
namespace tprof {
inline double now_ms() { timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1e3 + t.tv_nsec / 1e6; }
inline double process_start_ms() {
  // process start time from /proc/self/stat (field 22, clock ticks since boot)
  FILE* f = fopen("/proc/self/stat", "r"); if (!f) return 0; char buf[4096]; size_t n = fread(buf, 1, sizeof buf - 1, f); fclose(f); buf[n] = 0;
  char* p = strrchr(buf, ')'); int field = 2; unsigned long long st = 0;
  for (char* s = strtok(p + 2, " "); s; s = strtok(nullptr, " ")) { ++field; if (field == 22) { st = strtoull(s, nullptr, 10); break; } }
  timespec b; clock_gettime(CLOCK_BOOTTIME, &b); timespec m; clock_gettime(CLOCK_MONOTONIC, &m);
  double boot_ms = b.tv_sec * 1e3 + b.tv_nsec / 1e6, mono_ms = m.tv_sec * 1e3 + m.tv_nsec / 1e6;
  return st * 1000.0 / sysconf(_SC_CLK_TCK) - boot_ms + mono_ms;
}
inline double& last() { static double t = 0; return t; }
inline void mark(const char* what) {
  if (!getenv("TPROF")) return;
  double t = now_ms();
  if (last() != 0) fprintf(stderr, "tprof %-20s %7.2f ms\n", what, t - last());
  last() = t;
}
}
