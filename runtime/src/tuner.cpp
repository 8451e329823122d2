// The tuner's C functions (tessera_tuner.h): keys, the cache's place,
// timing the variants. The cache file itself is tuning_cache.cpp.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "collectives/job.h"
#include "runtime_internal.h"
#include "tessera/tessera_tuner.h"
#include "tuning_cache.h"

using tessera::rt::fail;

namespace {

tessStatus copy_out(const std::string& text, char* out, size_t capacity, const char* what) {
  if (!out || capacity <= text.size())
    return fail(TESS_ERROR_INVALID_VALUE, std::string(what) + " needs " + std::to_string(text.size() + 1) + " bytes");
  std::memcpy(out, text.c_str(), text.size() + 1);
  return TESS_SUCCESS;
}

std::string cache_directory() {
  if (const char* dir = std::getenv("TESSERA_CACHE_DIR"); dir && *dir) return dir;
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) return std::string(xdg) + "/tessera";
  if (const char* home = std::getenv("HOME"); home && *home) return std::string(home) + "/.cache/tessera";
  return ".tessera-cache";
}

std::string cache_path(const std::string& device) {
  std::string file;
  for (char c : device) {
    bool keep = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
    if (keep)
      file += c;
    else if (!file.empty() && file.back() != '-')
      file += '-';
  }
  while (!file.empty() && file.back() == '-') file.pop_back();
  return cache_directory() + "/" + (file.empty() ? "device" : file) + ".json";
}

bool tuning_disabled() {
  const char* setting = std::getenv("TESSERA_AUTOTUNE");
  return setting && std::strcmp(setting, "0") == 0;
}

void warn_about_cache(const std::string& path, const std::string& warning) {
  if (!warning.empty())
    std::fprintf(stderr, "tessera: warning: ignoring the tuning cache '%s': %s; it will be rewritten\n", path.c_str(),
                 warning.c_str());
}

// The variant the cache chose for the request's key, if it is still one of them.
bool cached_choice(const tessera::rt::TuningCache& cache, const tessTuneRequest& r, size_t& chosen) {
  auto it = cache.entries.find(tessera::rt::entry_name(r.kernel, r.key));
  if (it == cache.entries.end()) return false;
  for (size_t v = 0; v < r.variant_count; ++v)
    if (it->second.choice == r.variants[v]) {
      chosen = v;
      return true;
    }
  return false;  // compiled with other points since: tune again
}

double milliseconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

// Times one run of a variant (docs/autotuning.md, "Timing"): with a device,
// between two events recorded on its stream, after writing a scratch
// buffer twice the size of its L2 cache (none on the CPU); without one, the
// wall clock around the run.
class RunTimer {
 public:
  explicit RunTimer(const tessTuneRequest& request) : request_(request) {}
  RunTimer(const RunTimer&) = delete;
  RunTimer& operator=(const RunTimer&) = delete;
  ~RunTimer() {
    if (start_) tessEventDestroy(start_);
    if (end_) tessEventDestroy(end_);
    if (scratch_) tessFree(request_.timing_device, scratch_);
  }

  tessStatus prepare() {
    tessDevice device = request_.timing_device;
    if (!device) return TESS_SUCCESS;
    if (tessStatus s = tessEventCreate(device, &start_)) return s;
    if (tessStatus s = tessEventCreate(device, &end_)) return s;
    int64_t l2 = 0;
    if (tessStatus s = tessDeviceGetAttribute(device, TESS_ATTR_L2_CACHE_SIZE, &l2)) return s;
    scratch_bytes_ = l2 > 0 ? static_cast<size_t>(2 * l2) : 0;
    if (scratch_bytes_ > 0)
      if (tessStatus s = tessMalloc(device, scratch_bytes_, &scratch_)) return s;
    return TESS_SUCCESS;
  }

  size_t flush_bytes() const { return scratch_bytes_; }

  tessStatus time(size_t variant, double& milliseconds) {
    if (!request_.timing_device) {
      auto start = std::chrono::steady_clock::now();
      if (tessStatus s = request_.run(request_.user, variant)) return s;
      milliseconds = milliseconds_since(start);
      return TESS_SUCCESS;
    }
    if (scratch_bytes_ > 0) {
      // A new value each time: the writes miss in L2 and evict what the
      // last run left there.
      if (tessStatus s = tessMemset(request_.timing_device, scratch_, ++flushes_ & 0xff, scratch_bytes_)) return s;
      if (tessStatus s = tessDeviceSynchronize(request_.timing_device)) return s;
    }
    if (tessStatus s = tessEventRecord(start_, request_.timing_stream)) return s;
    if (tessStatus s = request_.run(request_.user, variant)) return s;
    if (tessStatus s = tessEventRecord(end_, request_.timing_stream)) return s;
    if (tessStatus s = tessEventSynchronize(end_)) return s;
    float elapsed = 0.0f;
    if (tessStatus s = tessEventElapsedTime(&elapsed, start_, end_)) return s;
    milliseconds = elapsed;
    return TESS_SUCCESS;
  }

 private:
  const tessTuneRequest& request_;
  tessEvent start_ = nullptr;
  tessEvent end_ = nullptr;
  tessDevicePtr scratch_ = 0;
  size_t scratch_bytes_ = 0;
  int flushes_ = 0;
};

}  // namespace

extern "C" {

int64_t tessTuneBucket(int64_t extent) {
  int64_t bucket = 1;
  while (bucket < extent && bucket < (INT64_C(1) << 62)) bucket <<= 1;
  return bucket;
}

tessStatus tessTuneMakeKey(const tessTuneTensor* tensors, size_t tensor_count, const tessTuneDimension* dimensions,
                           size_t dimension_count, const char* compiler_version, char* key, size_t capacity) {
  if ((tensor_count > 0 && !tensors) || (dimension_count > 0 && !dimensions))
    return fail(TESS_ERROR_INVALID_VALUE, "tessTuneMakeKey: null tensors or dimensions");
  std::string text;
  for (size_t d = 0; d < dimension_count; ++d) {
    if (!dimensions[d].name) return fail(TESS_ERROR_INVALID_VALUE, "tessTuneMakeKey: a dimension without a name");
    text += std::string(text.empty() ? "" : " ") + dimensions[d].name + "=" + std::to_string(dimensions[d].value);
  }
  for (size_t t = 0; t < tensor_count; ++t) {
    const tessTuneTensor& tensor = tensors[t];
    if (!tensor.name || tensor.rank < 0 || (tensor.rank > 0 && !tensor.shape))
      return fail(TESS_ERROR_INVALID_VALUE, "tessTuneMakeKey: a tensor without a name or shape");
    text += std::string(text.empty() ? "" : " ") + tensor.name + ":" + tessDtypeName(tensor.dtype);
    if (dimensions) continue;  // key=(...): the named dimensions stand for the shapes
    text += "[";
    for (int32_t i = 0; i < tensor.rank; ++i) text += (i ? "," : "") + std::to_string(tessTuneBucket(tensor.shape[i]));
    text += "]";
  }
  text += std::string(" | ") + (compiler_version ? compiler_version : "unknown compiler");
  return copy_out(text, key, capacity, "tessTuneMakeKey: the key");
}

tessStatus tessTuneCacheChoices(const char* path, const char* kernel, char* choices, size_t capacity) {
  if (!path || !kernel) return fail(TESS_ERROR_INVALID_VALUE, "tessTuneCacheChoices: null path or kernel");
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return fail(TESS_ERROR_NOT_FOUND, std::string("no such file"));
  std::string warning;
  tessera::rt::TuningCache cache = tessera::rt::read_tuning_cache(path, warning);
  if (!warning.empty()) return fail(TESS_ERROR_INVALID_VALUE, warning);
  std::set<std::string> chosen;
  for (const auto& [name, entry] : cache.entries)
    if (entry.kernel == kernel) chosen.insert(entry.choice);
  std::string text;
  for (const std::string& c : chosen) text += c + "\n";
  return copy_out(text, choices, capacity, "tessTuneCacheChoices: the choices");
}

tessStatus tessTuneCacheDirectory(char* path, size_t capacity) {
  return copy_out(cache_directory(), path, capacity, "tessTuneCacheDirectory: the path");
}

tessStatus tessTuneCachePath(const char* device, char* path, size_t capacity) {
  if (!device) return fail(TESS_ERROR_INVALID_VALUE, "tessTuneCachePath: null device name");
  return copy_out(cache_path(device), path, capacity, "tessTuneCachePath: the path");
}

}  // extern "C"

namespace {

// The cache, else timing, on this process alone (tessTune's work, or rank
// 0's in a job). `medians` receives every timed variant's median.
tessStatus tune_on_this_rank(const tessTuneRequest* request, tessTuneResult* result,
                             std::map<std::string, double>* medians) {
  auto start = std::chrono::steady_clock::now();
  std::string path = request->cache_file ? request->cache_file : cache_path(request->device);
  std::string warning;
  if (!request->force) {
    tessera::rt::TuningCache cache = tessera::rt::read_tuning_cache(path, warning);
    if (cached_choice(cache, *request, result->chosen)) {
      result->source = TESS_TUNE_CACHE;
      result->tuning_ms = milliseconds_since(start);
      return TESS_SUCCESS;
    }
  }
  // Tune under the lock, after reading the cache again: a process that
  // waited for another one's tuning finds its result.
  tessera::rt::TuningLock lock(path);
  if (!lock.ok()) return fail(TESS_ERROR_INVALID_VALUE, "tessTune: " + lock.error());
  warning.clear();
  tessera::rt::TuningCache cache = tessera::rt::read_tuning_cache(path, warning);
  warn_about_cache(path, warning);
  if (!request->force && cached_choice(cache, *request, result->chosen)) {
    result->source = TESS_TUNE_CACHE;
    result->tuning_ms = milliseconds_since(start);
    return TESS_SUCCESS;
  }
  int warmup = request->warmup > 0 ? request->warmup : 1;
  int repetitions = request->repetitions > 0 ? request->repetitions : 5;
  tessera::rt::TuningEntry entry{request->kernel, request->key, {}, {}};
  double best = 0.0;
  RunTimer timer(*request);
  if (tessStatus s = timer.prepare()) return s;
  for (size_t v = 0; v < request->variant_count; ++v) {
    for (int i = 0; i < warmup; ++i)
      if (tessStatus s = request->run(request->user, v); s != TESS_SUCCESS) return s;
    std::vector<double> times;
    for (int i = 0; i < repetitions; ++i) {
      double milliseconds = 0.0;
      if (tessStatus s = timer.time(v, milliseconds); s != TESS_SUCCESS) return s;
      times.push_back(milliseconds);
    }
    std::sort(times.begin(), times.end());
    double median = times[times.size() / 2];
    entry.median_ms[request->variants[v]] = median;
    if (v == 0 || median < best) {  // ties keep the earlier point
      best = median;
      result->chosen = v;
    }
  }
  entry.choice = request->variants[result->chosen];
  if (medians) *medians = entry.median_ms;
  if (cache.device.empty()) cache.device = request->device;
  cache.entries[tessera::rt::entry_name(entry.kernel, entry.key)] = std::move(entry);
  std::string error;
  if (!tessera::rt::write_tuning_cache(path, cache, error)) return fail(TESS_ERROR_INVALID_VALUE, "tessTune: " + error);
  result->source = TESS_TUNE_TIMED;
  result->chosen_median_ms = best;
  result->tuning_ms = milliseconds_since(start);
  return TESS_SUCCESS;
}

// A job of several ranks (docs/autotuning.md, "Distributed jobs"): rank 0
// tunes (its cache, else timing) and broadcasts its choice over the world
// communicator; every other rank takes it without timing and records it in
// its own cache unless that holds it already (a cache directory shared with
// rank 0 does). Message: status, chosen, source, chosen median, then each
// variant's median (NaN when not timed).
tessStatus tune_in_job(const tessTuneRequest* request, tessTuneResult* result, tessera::rt::Communicator* world) {
  auto start = std::chrono::steady_clock::now();
  const size_t count = request->variant_count;
  std::vector<double> message(4 + count, std::nan(""));
  tessStatus status = TESS_SUCCESS;
  std::string error;
  if (world->rank() == 0) {
    std::map<std::string, double> medians;
    status = tune_on_this_rank(request, result, &medians);
    if (status) error = tessGetLastErrorMessage();
    message[0] = static_cast<double>(status);
    message[1] = static_cast<double>(result->chosen);
    message[2] = static_cast<double>(result->source);
    message[3] = result->chosen_median_ms;
    for (size_t v = 0; v < count; ++v)
      if (auto it = medians.find(request->variants[v]); it != medians.end()) message[4 + v] = it->second;
  }
  tessera::rt::CollectiveCall call;
  call.function = "tessTune";
  call.collective = "broadcast of the tuner's choice";
  call.group = "the job";
  if (tessStatus s = tessera::rt::collective_timeout_seconds("tessTune", &call.timeout_seconds)) return s;
  if (tessStatus s = world->broadcast(call, message.data(), message.size() * sizeof(double), 0, nullptr)) return s;
  if (world->rank() == 0) return status ? fail(status, error) : TESS_SUCCESS;
  if (message[0] != 0.0)
    return fail(static_cast<tessStatus>(message[0]),
                std::string("tessTune: rank 0 failed to tune '") + request->kernel + "' (its message is on its stderr)");
  auto chosen = static_cast<size_t>(message[1]);
  if (chosen >= count) return fail(TESS_ERROR_INVALID_VALUE, "tessTune: rank 0 chose a variant this rank lacks");
  result->chosen = chosen;
  result->source = TESS_TUNE_RANK0;
  result->chosen_median_ms = message[3];
  if (static_cast<tessTuneSource>(static_cast<int>(message[2])) != TESS_TUNE_DEFAULT) {
    std::string path = request->cache_file ? request->cache_file : cache_path(request->device);
    tessera::rt::TuningLock lock(path);
    if (!lock.ok()) return fail(TESS_ERROR_INVALID_VALUE, "tessTune: " + lock.error());
    std::string warning;
    tessera::rt::TuningCache cache = tessera::rt::read_tuning_cache(path, warning);
    warn_about_cache(path, warning);
    size_t cached = 0;
    if (!cached_choice(cache, *request, cached) || cached != chosen) {
      tessera::rt::TuningEntry entry{request->kernel, request->key, request->variants[chosen], {}};
      for (size_t v = 0; v < count; ++v)
        if (!std::isnan(message[4 + v])) entry.median_ms[request->variants[v]] = message[4 + v];
      if (cache.device.empty()) cache.device = request->device;
      cache.entries[tessera::rt::entry_name(entry.kernel, entry.key)] = std::move(entry);
      std::string write_error;
      if (!tessera::rt::write_tuning_cache(path, cache, write_error))
        return fail(TESS_ERROR_INVALID_VALUE, "tessTune: " + write_error);
    }
  }
  result->tuning_ms = milliseconds_since(start);
  return TESS_SUCCESS;
}

}  // namespace

extern "C" {

namespace tessera::rt {

tessStatus TensorSnapshots::save(const tessTensor* tensor) {
  uint64_t bytes = 0;
  tessDevicePtr copy = 0;
  if (tessStatus s = tessTensorStorageBytes(tensor, &bytes)) return s;
  if (tessStatus s = tessMalloc(device_, bytes ? bytes : 1, &copy)) return s;
  saved_.emplace_back(tensor, copy);
  return tessMemcpyDtoD(device_, copy, tensor->data, bytes);
}

tessStatus TensorSnapshots::restore(bool copy_back) {
  tessStatus status = TESS_SUCCESS;
  for (auto& [tensor, copy] : saved_) {
    uint64_t bytes = 0;
    tessTensorStorageBytes(tensor, &bytes);
    if (copy_back && status == TESS_SUCCESS) status = tessMemcpyDtoD(device_, tensor->data, copy, bytes);
    tessFree(device_, copy);
  }
  saved_.clear();
  return status;
}

}  // namespace tessera::rt

tessStatus tessTune(const tessTuneRequest* request, tessTuneResult* result) {
  if (!request || !result || !request->kernel || !request->key || !request->device || !request->variants ||
      request->variant_count == 0 || request->default_variant >= request->variant_count || !request->run)
    return fail(TESS_ERROR_INVALID_VALUE, "tessTune: a null field or no variants in the request");
  for (size_t v = 0; v < request->variant_count; ++v)
    if (!request->variants[v]) return fail(TESS_ERROR_INVALID_VALUE, "tessTune: a variant without its point");
  *result = tessTuneResult{request->default_variant, TESS_TUNE_DEFAULT, 0.0, 0.0};
  if (tuning_disabled() && !request->force) return TESS_SUCCESS;  // force: asked for explicitly
  if (tessera::rt::job_environment().size > 1) {
    tessera::rt::CollectiveCall call;
    call.function = "tessTune";
    call.collective = "starting MPI";
    call.group = "the job";
    tessera::rt::Communicator* world = nullptr;
    if (tessera::rt::mpi_world(call, &world) == TESS_SUCCESS && world->size() > 1)
      return tune_in_job(request, result, world);
    std::fprintf(stderr, "tessera: warning: rank %d tunes '%s' on its own: %s\n", tessera::rt::job_environment().rank,
                 request->kernel, world ? "the MPI world has one rank" : tessGetLastErrorMessage());
  }
  return tune_on_this_rank(request, result, nullptr);
}

}  // extern "C"
