// The tuner (tessera_tuner.h): key and bucket rules, the cache file's round
// trip, a corrupt cache, the choice reproduced from the cache without
// timing, TESSERA_AUTOTUNE=0. Every file is written in a fresh directory
// under $TMPDIR (or /tmp), removed at the end.
#include <doctest/doctest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tessera/tessera_tuner.h"
#include "tuning_cache.h"

namespace {

struct TempDir {
  std::string path;
  TempDir() {
    const char* base = std::getenv("TMPDIR");
    std::string pattern = std::string(base && *base ? base : "/tmp") + "/tessera-tuner-test.XXXXXX";
    path = mkdtemp(pattern.data()) ? pattern : "";
    REQUIRE(!path.empty());
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
};

// Variant i sleeps delays[i] microseconds; counts the runs.
struct FakeVariants {
  std::vector<int> delays;
  int runs = 0;
  static tessStatus run(void* user, size_t v) {
    auto* self = static_cast<FakeVariants*>(user);
    ++self->runs;
    std::this_thread::sleep_for(std::chrono::microseconds(self->delays[v]));
    return TESS_SUCCESS;
  }
};

const char* kPoints[] = {"BM=64", "BM=128", "BM=256"};

tessTuneRequest request_for(FakeVariants& variants, const std::string& cache) {
  // These cases time: a TESSERA_AUTOTUNE=0 inherited from the caller's
  // environment (a script that turns tuning off for the lit tests) would
  // turn them into default choices. The case of TESSERA_AUTOTUNE=0 sets it.
  unsetenv("TESSERA_AUTOTUNE");
  tessTuneRequest r{};
  r.kernel = "gemm";
  r.key = "a:f32[128,128] | test";
  r.device = "cpu (test)";
  r.variants = kPoints;
  r.variant_count = 3;
  r.default_variant = 2;
  r.run = FakeVariants::run;
  r.user = &variants;
  r.warmup = 1;
  r.repetitions = 3;
  r.cache_file = cache.c_str();
  return r;
}

}  // namespace

TEST_CASE("tuner: extents round up to powers of two") {
  CHECK(tessTuneBucket(0) == 1);
  CHECK(tessTuneBucket(1) == 1);
  CHECK(tessTuneBucket(2) == 2);
  CHECK(tessTuneBucket(3) == 4);
  CHECK(tessTuneBucket(1000) == 1024);
  CHECK(tessTuneBucket(1024) == 1024);
  CHECK(tessTuneBucket(1025) == 2048);
}

TEST_CASE("tuner: the key holds bucketed extents and dtypes, or key=(...)'s exact dimensions") {
  int64_t a_shape[] = {1000, 3};
  int64_t b_shape[] = {17};
  tessTuneTensor tensors[] = {{"a", TESS_F32, 2, a_shape}, {"b", TESS_BF16, 1, b_shape}};
  char key[256];
  REQUIRE(tessTuneMakeKey(tensors, 2, nullptr, 0, "tesserac 1.2", key, sizeof key) == TESS_SUCCESS);
  CHECK(std::string(key) == "a:f32[1024,4] b:bf16[32] | tesserac 1.2");
  tessTuneDimension n{"n", 1000};
  REQUIRE(tessTuneMakeKey(tensors, 2, &n, 1, "tesserac 1.2", key, sizeof key) == TESS_SUCCESS);
  CHECK(std::string(key) == "n=1000 a:f32 b:bf16 | tesserac 1.2");
  char small[8];
  CHECK(tessTuneMakeKey(tensors, 2, nullptr, 0, "tesserac 1.2", small, sizeof small) == TESS_ERROR_INVALID_VALUE);
}

TEST_CASE("tuner: the cache directory and file of a device") {
  setenv("TESSERA_CACHE_DIR", "/some/dir", 1);
  char path[256];
  REQUIRE(tessTuneCachePath("NVIDIA H100 80GB HBM3 (sm_90)", path, sizeof path) == TESS_SUCCESS);
  CHECK(std::string(path) == "/some/dir/NVIDIA-H100-80GB-HBM3-sm-90.json");
  unsetenv("TESSERA_CACHE_DIR");
  setenv("XDG_CACHE_HOME", "/xdg", 1);
  REQUIRE(tessTuneCacheDirectory(path, sizeof path) == TESS_SUCCESS);
  CHECK(std::string(path) == "/xdg/tessera");
  unsetenv("XDG_CACHE_HOME");
  if (const char* home = std::getenv("HOME")) {
    REQUIRE(tessTuneCacheDirectory(path, sizeof path) == TESS_SUCCESS);
    CHECK(std::string(path) == std::string(home) + "/.cache/tessera");
  }
}

TEST_CASE("tuner: the cache file round trip") {
  TempDir dir;
  std::string path = dir.path + "/cache.json";
  tessera::rt::TuningCache cache;
  cache.device = "cpu (test)";
  tessera::rt::TuningEntry entry{"k", "x:f32[8] | v", "BM=64", {{"BM=64", 0.5}, {"BM=128", 0.75}}};
  cache.entries[tessera::rt::entry_name(entry.kernel, entry.key)] = entry;
  std::string error, warning;
  REQUIRE(tessera::rt::write_tuning_cache(path, cache, error));
  tessera::rt::TuningCache back = tessera::rt::read_tuning_cache(path, warning);
  CHECK(warning.empty());
  CHECK(back.device == "cpu (test)");
  REQUIRE(back.entries.size() == 1);
  const tessera::rt::TuningEntry& e = back.entries.begin()->second;
  CHECK(e.kernel == "k");
  CHECK(e.key == "x:f32[8] | v");
  CHECK(e.choice == "BM=64");
  CHECK(e.median_ms.at("BM=128") == 0.75);
  // Nothing but the cache (and no temporary file) in the directory.
  size_t files = 0;
  for (const auto& f : std::filesystem::directory_iterator(dir.path))
    files += f.path().filename() == "cache.json" ? 1 : 100;
  CHECK(files == 1);
  // No file: an empty cache, no warning.
  back = tessera::rt::read_tuning_cache(dir.path + "/none.json", warning);
  CHECK(back.entries.empty());
  CHECK(warning.empty());
}

TEST_CASE("tuner: times the variants once, then reads the choice from the cache") {
  TempDir dir;
  std::string cache = dir.path + "/cpu.json";
  FakeVariants variants{{3000, 200, 3000}};
  tessTuneRequest r = request_for(variants, cache);
  tessTuneResult result{};
  REQUIRE(tessTune(&r, &result) == TESS_SUCCESS);
  CHECK(result.source == TESS_TUNE_TIMED);
  CHECK(result.chosen == 1);
  CHECK(variants.runs == 3 * (1 + 3));
  CHECK(result.chosen_median_ms > 0.0);
  variants.runs = 0;
  variants.delays = {0, 5000, 0};  // the cache's choice stands: nothing is timed
  REQUIRE(tessTune(&r, &result) == TESS_SUCCESS);
  CHECK(result.source == TESS_TUNE_CACHE);
  CHECK(result.chosen == 1);
  CHECK(variants.runs == 0);
  // force: timed again, the new choice replaces the entry.
  r.force = 1;
  REQUIRE(tessTune(&r, &result) == TESS_SUCCESS);
  CHECK(result.source == TESS_TUNE_TIMED);
  CHECK(result.chosen != 1);
  std::string warning;
  CHECK(tessera::rt::read_tuning_cache(cache, warning).entries.size() == 1);
}

TEST_CASE("tuner: with a device, each run is timed between two events; the CPU flushes no cache") {
  TempDir dir;
  std::string cache = dir.path + "/cpu.json";
  tessDevice cpu = nullptr;
  REQUIRE(tessGetDeviceByName("cpu", &cpu) == TESS_SUCCESS);
  int64_t l2 = -1;
  REQUIRE(tessDeviceGetAttribute(cpu, TESS_ATTR_L2_CACHE_SIZE, &l2) == TESS_SUCCESS);
  CHECK(l2 == 0);  // nothing to flush: no scratch buffer is allocated
  FakeVariants variants{{3000, 200, 3000}};
  tessTuneRequest r = request_for(variants, cache);
  r.timing_device = cpu;  // events on the default stream (the CPU's read the steady clock)
  tessTuneResult result{};
  REQUIRE(tessTune(&r, &result) == TESS_SUCCESS);
  CHECK(result.source == TESS_TUNE_TIMED);
  CHECK(result.chosen == 1);
  CHECK(variants.runs == 3 * (1 + 3));
  // The events measured the sleeps: at least the fastest's 0.2 ms, and
  // every variant's median in the cache.
  CHECK(result.chosen_median_ms >= 0.2);
  std::string warning;
  tessera::rt::TuningCache back = tessera::rt::read_tuning_cache(cache, warning);
  REQUIRE(back.entries.size() == 1);
  const tessera::rt::TuningEntry& entry = back.entries.begin()->second;
  CHECK(entry.median_ms.size() == 3);
  CHECK(entry.median_ms.at("BM=64") >= 3.0);
}

TEST_CASE("tuner: a corrupt cache is ignored and rewritten") {
  TempDir dir;
  std::string cache = dir.path + "/cpu.json";
  std::ofstream(cache) << "{\"format\": \"tessera-tuning-cache\", \"version\": 1, \"entries\": [{\"kernel\": 3}]}";
  std::string warning;
  CHECK(tessera::rt::read_tuning_cache(cache, warning).entries.empty());
  CHECK(warning.find("malformed") != std::string::npos);
  std::ofstream(cache) << "not json";
  CHECK(tessera::rt::read_tuning_cache(cache, warning).entries.empty());
  CHECK(warning == "it is not valid JSON");
  FakeVariants variants{{0, 0, 0}};
  tessTuneRequest r = request_for(variants, cache);
  tessTuneResult result{};
  REQUIRE(tessTune(&r, &result) == TESS_SUCCESS);
  CHECK(result.source == TESS_TUNE_TIMED);
  warning.clear();
  CHECK(tessera::rt::read_tuning_cache(cache, warning).entries.size() == 1);
  CHECK(warning.empty());
}

TEST_CASE("tuner: TESSERA_AUTOTUNE=0 takes the default variant without timing or a cache") {
  TempDir dir;
  std::string cache = dir.path + "/cpu.json";
  FakeVariants variants{{0, 0, 0}};
  tessTuneRequest r = request_for(variants, cache);
  setenv("TESSERA_AUTOTUNE", "0", 1);
  tessTuneResult result{};
  tessStatus status = tessTune(&r, &result);
  unsetenv("TESSERA_AUTOTUNE");
  REQUIRE(status == TESS_SUCCESS);
  CHECK(result.source == TESS_TUNE_DEFAULT);
  CHECK(result.chosen == 2);
  CHECK(variants.runs == 0);
  CHECK(!std::filesystem::exists(cache));
}

TEST_CASE("tuner: a process that dies while tuning leaves the cache whole and the lock free") {
  TempDir dir;
  std::string cache = dir.path + "/cpu.json";
  FakeVariants variants{{0, 0, 0}};
  tessTuneRequest r = request_for(variants, cache);
  tessTuneResult result{};
  REQUIRE(tessTune(&r, &result) == TESS_SUCCESS);  // one entry
  std::stringstream before;
  before << std::ifstream(cache).rdbuf();
  // A child tunes another key and dies in the middle of timing, holding the lock.
  pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    tessTuneRequest dying = request_for(variants, cache);
    dying.key = "another key";
    dying.run = [](void*, size_t v) -> tessStatus {
      if (v == 1) _exit(3);
      return TESS_SUCCESS;
    };
    tessTuneResult ignored{};
    tessTune(&dying, &ignored);
    _exit(0);
  }
  int status = 0;
  REQUIRE(waitpid(child, &status, 0) == child);
  CHECK(WEXITSTATUS(status) == 3);
  std::stringstream after;
  after << std::ifstream(cache).rdbuf();
  CHECK(after.str() == before.str());
  // The lock died with it: this process tunes the other key at once.
  r.key = "another key";
  REQUIRE(tessTune(&r, &result) == TESS_SUCCESS);
  CHECK(result.source == TESS_TUNE_TIMED);
  std::string warning;
  CHECK(tessera::rt::read_tuning_cache(cache, warning).entries.size() == 2);
}

TEST_CASE("tuner: bad requests") {
  tessTuneResult result{};
  CHECK(tessTune(nullptr, &result) == TESS_ERROR_INVALID_VALUE);
  FakeVariants variants{{0, 0, 0}};
  tessTuneRequest r = request_for(variants, "/nonexistent");
  r.default_variant = 3;
  CHECK(tessTune(&r, &result) == TESS_ERROR_INVALID_VALUE);
}
