// Source files and locations.
//
// Every loaded file gets a contiguous range in one global offset space (as in
// clang), so a single 32-bit offset names a file and a byte in it. A
// `SourceRange` is a half-open range [begin, end) of such offsets; tokens, AST
// nodes and diagnostics all carry them, and only rendering turns them back
// into file/line/column.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tessera {

using SourceOffset = uint32_t;

struct SourceRange {
  SourceOffset begin = 0;
  SourceOffset end = 0;

  static SourceRange at(SourceOffset offset) { return {offset, offset}; }
  static SourceRange join(SourceRange first, SourceRange last) { return {first.begin, last.end}; }
  bool empty() const { return begin == end; }
  friend bool operator==(SourceRange, SourceRange) = default;
};

struct FileId {
  uint32_t index = UINT32_MAX;
  bool valid() const { return index != UINT32_MAX; }
  friend bool operator==(FileId, FileId) = default;
};

// A human-readable position: 1-based line and column (columns count Unicode
// code points, so a caret lines up under UTF-8 text).
struct PresumedLocation {
  FileId file;
  std::string_view file_name;
  uint32_t line = 0;
  uint32_t column = 0;
};

class SourceManager {
 public:
  // Adds a file whose contents are already in memory. The offset range of a
  // file includes one position past its end so that "end of file" has a
  // location of its own.
  FileId add_file(std::string name, std::string contents);

  // Reads a file from disk; `path == "-"` reads standard input and names the
  // buffer "<stdin>". Returns nullopt and fills `error` with the system's
  // reason ("No such file or directory", "Is a directory") when it cannot.
  std::optional<FileId> load_file(const std::string& path, std::string& error);

  std::string_view file_name(FileId file) const { return files_[file.index]->name; }
  std::string_view contents(FileId file) const { return files_[file.index]->contents; }
  SourceOffset file_begin(FileId file) const { return files_[file.index]->base; }
  SourceOffset file_end(FileId file) const {
    return files_[file.index]->base + static_cast<SourceOffset>(files_[file.index]->contents.size());
  }

  FileId file_containing(SourceOffset offset) const;
  PresumedLocation presumed(SourceOffset offset) const;
  // The text of the line holding `offset`, without its line terminator.
  std::string_view line_text(SourceOffset offset) const;
  // Offset of the first byte of line `line` (1-based) of `file`.
  SourceOffset line_start(FileId file, uint32_t line) const;
  uint32_t line_count(FileId file) const;
  uint32_t file_count() const { return static_cast<uint32_t>(files_.size()); }

  // A pointer to the byte at `offset`; valid as long as the manager lives.
  const char* pointer(SourceOffset offset) const;

 private:
  struct File {
    std::string name;
    std::string contents;
    SourceOffset base = 0;
    mutable std::vector<uint32_t> line_starts;  // byte index of each line start, built lazily
  };
  const File& file_for(SourceOffset offset) const;
  const std::vector<uint32_t>& line_starts(const File& file) const;

  std::vector<std::unique_ptr<File>> files_;
  SourceOffset next_base_ = 1;  // offset 0 stays invalid
};

// Number of Unicode code points in `text` (invalid UTF-8 bytes count as one each).
uint32_t count_code_points(std::string_view text);

}  // namespace tessera
