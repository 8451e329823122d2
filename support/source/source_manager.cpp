#include "support/source/source_manager.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <iostream>
#include <iterator>
#include <sstream>

#include "support/diagnostics/internal_error.h"

namespace tessera {

FileId SourceManager::add_file(std::string name, std::string contents) {
  auto file = std::make_unique<File>();
  file->name = std::move(name);
  file->contents = std::move(contents);
  file->base = next_base_;
  // +1 so the end-of-file position belongs to this file and not the next one.
  uint64_t next = uint64_t{next_base_} + file->contents.size() + 1;
  internal_check(next < UINT32_MAX, "source", "total source size exceeds 4 GiB");
  next_base_ = static_cast<SourceOffset>(next);
  files_.push_back(std::move(file));
  return FileId{static_cast<uint32_t>(files_.size() - 1)};
}

std::optional<FileId> SourceManager::load_file(const std::string& path, std::string& error) {
  std::string contents;
  if (path == "-") {
    std::ostringstream buffer;
    buffer << std::cin.rdbuf();
    return add_file("<stdin>", buffer.str());
  }
  // POSIX calls rather than a stream, for the system's reason on failure
  // (and a directory is refused up front: reading one fails only later).
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    error = std::strerror(errno);
    return std::nullopt;
  }
  struct stat info {};
  if (::fstat(fd, &info) == 0 && S_ISDIR(info.st_mode)) {
    ::close(fd);
    error = std::strerror(EISDIR);
    return std::nullopt;
  }
  if (S_ISREG(info.st_mode) && info.st_size > 0) contents.reserve(static_cast<size_t>(info.st_size));
  char buffer[65536];
  while (true) {
    ssize_t count = ::read(fd, buffer, sizeof buffer);
    if (count < 0 && errno == EINTR) continue;
    if (count < 0) {
      error = std::strerror(errno);
      ::close(fd);
      return std::nullopt;
    }
    if (count == 0) break;
    contents.append(buffer, static_cast<size_t>(count));
  }
  ::close(fd);
  return add_file(path, std::move(contents));
}

FileId SourceManager::file_containing(SourceOffset offset) const {
  auto it = std::upper_bound(files_.begin(), files_.end(), offset,
                             [](SourceOffset value, const std::unique_ptr<File>& file) { return value < file->base; });
  internal_check(it != files_.begin(), "source", "offset before the first file");
  return FileId{static_cast<uint32_t>(std::distance(files_.begin(), it) - 1)};
}

const SourceManager::File& SourceManager::file_for(SourceOffset offset) const {
  return *files_[file_containing(offset).index];
}

const std::vector<uint32_t>& SourceManager::line_starts(const File& file) const {
  if (file.line_starts.empty()) {
    file.line_starts.push_back(0);
    const std::string& text = file.contents;
    for (uint32_t i = 0; i < text.size(); ++i) {
      if (text[i] == '\n') {
        file.line_starts.push_back(i + 1);
      } else if (text[i] == '\r' && (i + 1 >= text.size() || text[i + 1] != '\n')) {
        file.line_starts.push_back(i + 1);  // a lone CR ends a line too
      }
    }
  }
  return file.line_starts;
}

PresumedLocation SourceManager::presumed(SourceOffset offset) const {
  FileId id = file_containing(offset);
  const File& file = *files_[id.index];
  uint32_t local = std::min<uint32_t>(offset - file.base, static_cast<uint32_t>(file.contents.size()));
  const auto& starts = line_starts(file);
  auto it = std::upper_bound(starts.begin(), starts.end(), local);
  uint32_t line_index = static_cast<uint32_t>(std::distance(starts.begin(), it) - 1);
  std::string_view before(file.contents.data() + starts[line_index], local - starts[line_index]);
  return PresumedLocation{id, file.name, line_index + 1, count_code_points(before) + 1};
}

std::string_view SourceManager::line_text(SourceOffset offset) const {
  const File& file = file_for(offset);
  uint32_t local = std::min<uint32_t>(offset - file.base, static_cast<uint32_t>(file.contents.size()));
  const auto& starts = line_starts(file);
  auto it = std::upper_bound(starts.begin(), starts.end(), local);
  uint32_t begin = *std::prev(it);
  uint32_t end = it == starts.end() ? static_cast<uint32_t>(file.contents.size()) : *it;
  while (end > begin && (file.contents[end - 1] == '\n' || file.contents[end - 1] == '\r')) --end;
  return std::string_view(file.contents).substr(begin, end - begin);
}

SourceOffset SourceManager::line_start(FileId id, uint32_t line) const {
  const File& file = *files_[id.index];
  const auto& starts = line_starts(file);
  internal_check(line >= 1 && line <= starts.size(), "source", "line number out of range");
  return file.base + starts[line - 1];
}

uint32_t SourceManager::line_count(FileId id) const {
  return static_cast<uint32_t>(line_starts(*files_[id.index]).size());
}

const char* SourceManager::pointer(SourceOffset offset) const {
  const File& file = file_for(offset);
  return file.contents.data() + (offset - file.base);
}

uint32_t count_code_points(std::string_view text) {
  uint32_t count = 0;
  for (unsigned char c : text) {
    if ((c & 0xC0) != 0x80) ++count;  // count every byte that is not a continuation byte
  }
  return count;
}

}  // namespace tessera
