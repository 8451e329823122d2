// The tuning cache file (tessera_tuner.h, docs/autotuning.md, "The cache"):
// JSON through nlohmann/json, versioned, replaced atomically, guarded by an
// flock'd lock file beside it.
#pragma once

#include <map>
#include <optional>
#include <string>

namespace tessera::rt {

inline constexpr const char* kTuningCacheFormat = "tessera-tuning-cache";
inline constexpr int kTuningCacheVersion = 1;

struct TuningEntry {
  std::string kernel;
  std::string key;
  std::string choice;                       // the chosen variant's point, "BM=64, BN=128"
  std::map<std::string, double> median_ms;  // every timed variant's median
};

struct TuningCache {
  std::string device;
  std::map<std::string, TuningEntry> entries;  // by entry_name(kernel, key)
};

std::string entry_name(const std::string& kernel, const std::string& key);

// The cache at `path`: an empty one when there is no file; also when it
// cannot be read, does not parse or has another format or version, with
// `warning` saying why (the caller prints it; the next write replaces it).
TuningCache read_tuning_cache(const std::string& path, std::string& warning);

// Writes `cache` to a temporary file in `path`'s directory and renames it
// over `path`; false with `error` set when that fails.
bool write_tuning_cache(const std::string& path, const TuningCache& cache, std::string& error);

// An exclusive flock on PATH.lock, held while the object lives (creates the
// directory and the lock file). `ok()` false with `error` set when it failed.
class TuningLock {
 public:
  explicit TuningLock(const std::string& path);
  ~TuningLock();
  TuningLock(const TuningLock&) = delete;
  TuningLock& operator=(const TuningLock&) = delete;
  bool ok() const { return fd_ >= 0; }
  const std::string& error() const { return error_; }

 private:
  int fd_ = -1;
  std::string error_;
};

}  // namespace tessera::rt
