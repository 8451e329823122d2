#include "tools/tesserac/output_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

namespace tessera {

namespace {

bool write_all(int fd, std::string_view contents) {
  while (!contents.empty()) {
    ssize_t written = ::write(fd, contents.data(), contents.size());
    if (written < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    contents.remove_prefix(static_cast<size_t>(written));
  }
  return true;
}

// What is at an output path now (following symbolic links: `-o /dev/stdout`
// is whatever standard output is).
enum class OutputKind { Missing, Regular, Stream, Directory, Other };

OutputKind output_kind(const std::string& path, int& error_number) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) {
    error_number = errno;
    return OutputKind::Missing;
  }
  if (S_ISREG(info.st_mode)) return OutputKind::Regular;
  if (S_ISCHR(info.st_mode) || S_ISFIFO(info.st_mode)) return OutputKind::Stream;
  if (S_ISDIR(info.st_mode)) return OutputKind::Directory;
  return OutputKind::Other;  // a block device, a socket
}

constexpr const char* kNotAnOutput = "not a regular file, a character device or a FIFO";

// A character device or a FIFO: written as it is (a FIFO's open waits for a reader).
bool write_stream(const std::string& path, std::string_view contents, std::string& error) {
  int fd;
  do {
    fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  } while (fd < 0 && errno == EINTR);
  if (fd < 0) {
    error = std::strerror(errno);
    return false;
  }
  bool ok = write_all(fd, contents);
  int saved = errno;
  if (::close(fd) != 0 && ok) {
    saved = errno;
    ok = false;
  }
  if (!ok) error = std::strerror(saved);
  return ok;
}

bool write_atomically(const std::string& path, std::string_view contents, std::string& error) {
  std::string temp = path + ".tmp-XXXXXX";
  int fd = ::mkstemp(temp.data());
  if (fd < 0) {
    error = std::strerror(errno);
    return false;
  }
  bool ok = write_all(fd, contents);
  int saved = errno;
  ok = (::fchmod(fd, 0644) == 0) && ok;
  ok = (::close(fd) == 0) && ok;
  if (ok && ::rename(temp.c_str(), path.c_str()) != 0) {
    saved = errno;
    ok = false;
  }
  if (!ok) {
    error = std::strerror(saved != 0 ? saved : errno);
    ::unlink(temp.c_str());
  }
  return ok;
}

}  // namespace

bool write_output(const std::string& path, std::string_view contents, std::string& error) {
  if (path == "-") {
    if (!write_all(STDOUT_FILENO, contents)) {
      error = std::strerror(errno);
      return false;
    }
    return true;
  }
  int error_number = 0;
  switch (output_kind(path, error_number)) {
    case OutputKind::Missing:
    case OutputKind::Regular:
      return write_atomically(path, contents, error);
    case OutputKind::Stream:
      return write_stream(path, contents, error);
    case OutputKind::Directory:
      error = std::strerror(EISDIR);
      return false;
    case OutputKind::Other:
      error = kNotAnOutput;
      return false;
  }
  return false;
}

bool output_path_usable(const std::string& path, std::string& error) {
  if (path == "-") return true;
  int error_number = 0;
  switch (output_kind(path, error_number)) {
    case OutputKind::Regular:
    case OutputKind::Stream:
      return true;
    case OutputKind::Directory:
      error = std::strerror(EISDIR);
      return false;
    case OutputKind::Other:
      error = kNotAnOutput;
      return false;
    case OutputKind::Missing:
      break;
  }
  if (error_number != ENOENT) {
    error = std::strerror(error_number);
    return false;
  }
  // A new file: its directory must exist.
  std::filesystem::path parent = std::filesystem::path(path).parent_path();
  struct stat info {};
  if (::stat(parent.empty() ? "." : parent.c_str(), &info) != 0) {
    error = std::strerror(errno);
    return false;
  }
  if (!S_ISDIR(info.st_mode)) {
    error = std::strerror(ENOTDIR);
    return false;
  }
  return true;
}

bool output_is_stream(const std::string& path) {
  int error_number = 0;
  return path == "-" || output_kind(path, error_number) == OutputKind::Stream;
}

void remove_output_file(const std::string& path) {
  struct stat info {};
  if (::lstat(path.c_str(), &info) == 0 && (S_ISREG(info.st_mode) || S_ISLNK(info.st_mode))) ::unlink(path.c_str());
}

}  // namespace tessera
