#include "tuning_cache.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

namespace tessera::rt {

namespace {

using nlohmann::json;

std::string parent_directory(const std::string& path) {
  std::filesystem::path parent = std::filesystem::path(path).parent_path();
  return parent.empty() ? std::string(".") : parent.string();
}

}  // namespace

std::string entry_name(const std::string& kernel, const std::string& key) {
  return kernel + " @ " + key;
}

TuningCache read_tuning_cache(const std::string& path, std::string& warning) {
  TuningCache cache;
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return cache;  // none yet: nothing to warn about
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    warning = "cannot read it";
    return cache;
  }
  std::stringstream text;
  text << in.rdbuf();
  json document = json::parse(text.str(), nullptr, false);
  if (document.is_discarded() || !document.is_object()) {
    warning = "it is not valid JSON";
    return cache;
  }
  if (document.value("format", "") != kTuningCacheFormat || !document.contains("version") ||
      !document["version"].is_number_integer() || document["version"].get<int>() != kTuningCacheVersion) {
    warning = "it is not a version " + std::to_string(kTuningCacheVersion) + " tuning cache";
    return cache;
  }
  try {
    cache.device = document.value("device", "");
    for (const json& e : document.at("entries")) {
      TuningEntry entry;
      entry.kernel = e.at("kernel").get<std::string>();
      entry.key = e.at("key").get<std::string>();
      entry.choice = e.at("choice").get<std::string>();
      if (e.contains("median_ms"))
        for (auto& [variant, ms] : e.at("median_ms").items()) entry.median_ms[variant] = ms.get<double>();
      cache.entries[entry_name(entry.kernel, entry.key)] = std::move(entry);
    }
  } catch (const json::exception& e) {
    cache.entries.clear();
    warning = std::string("its entries are malformed (") + e.what() + ")";
  }
  return cache;
}

bool write_tuning_cache(const std::string& path, const TuningCache& cache, std::string& error) {
  json entries = json::array();
  for (const auto& [name, entry] : cache.entries) {
    json times = json::object();
    for (const auto& [variant, ms] : entry.median_ms) times[variant] = ms;
    entries.push_back({{"kernel", entry.kernel}, {"key", entry.key}, {"choice", entry.choice}, {"median_ms", times}});
  }
  json document = {
      {"format", kTuningCacheFormat}, {"version", kTuningCacheVersion}, {"device", cache.device}, {"entries", entries}};
  std::string text = document.dump(2) + "\n";
  std::error_code ec;
  std::filesystem::create_directories(parent_directory(path), ec);
  // The temporary file is in the same directory, so rename() replaces the
  // cache in one step (and a crash before it leaves the old cache whole).
  std::string temporary = path + ".tmp.XXXXXX";
  int fd = mkstemp(temporary.data());
  if (fd < 0) {
    error = "cannot create a temporary file beside '" + path + "': " + std::strerror(errno);
    return false;
  }
  const char* data = text.data();
  size_t left = text.size();
  while (left > 0) {
    ssize_t n = ::write(fd, data, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      error = "cannot write '" + temporary + "': " + std::strerror(errno);
      ::close(fd);
      ::unlink(temporary.c_str());
      return false;
    }
    data += n;
    left -= static_cast<size_t>(n);
  }
  fchmod(fd, 0644);
  fsync(fd);
  ::close(fd);
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    error = "cannot rename '" + temporary + "' to '" + path + "': " + std::strerror(errno);
    ::unlink(temporary.c_str());
    return false;
  }
  return true;
}

TuningLock::TuningLock(const std::string& path) {
  std::error_code ec;
  std::filesystem::create_directories(parent_directory(path), ec);
  std::string lock = path + ".lock";
  fd_ = ::open(lock.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0) {
    error_ = "cannot open the lock file '" + lock + "': " + std::strerror(errno);
    return;
  }
  while (flock(fd_, LOCK_EX) != 0) {
    if (errno == EINTR) continue;
    error_ = "cannot lock '" + lock + "': " + std::strerror(errno);
    ::close(fd_);
    fd_ = -1;
    return;
  }
}

TuningLock::~TuningLock() {
  if (fd_ >= 0) {
    flock(fd_, LOCK_UN);
    ::close(fd_);
  }
}

}  // namespace tessera::rt
