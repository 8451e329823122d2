#include "tools/tesserac/output_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

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

}  // namespace

bool write_output_atomically(const std::string& path, std::string_view contents, std::string& error) {
  if (path == "-") {
    if (!write_all(STDOUT_FILENO, contents)) {
      error = std::strerror(errno);
      return false;
    }
    return true;
  }
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

void remove_output_file(const std::string& path) {
  struct stat info {};
  if (::lstat(path.c_str(), &info) == 0 && (S_ISREG(info.st_mode) || S_ISLNK(info.st_mode))) ::unlink(path.c_str());
}

}  // namespace tessera
