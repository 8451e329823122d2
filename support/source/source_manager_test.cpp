#include "support/source/source_manager.h"

#include <doctest/doctest.h>

#include <cstdio>
#include <optional>
#include <string>

namespace tessera {
namespace {

TEST_CASE("files get disjoint offset ranges and decompose back to line and column") {
  SourceManager sources;
  FileId a = sources.add_file("a.tsr", "x = 1\ny = 2\n");
  FileId b = sources.add_file("b.tsr", "z\n");
  CHECK(sources.file_end(a) < sources.file_begin(b));
  CHECK(sources.file_containing(sources.file_begin(b)) == b);
  CHECK(sources.file_containing(sources.file_end(a)) == a);  // end of file belongs to the file

  PresumedLocation loc = sources.presumed(sources.file_begin(a) + 6);
  CHECK(loc.file == a);
  CHECK(loc.file_name == "a.tsr");
  CHECK(loc.line == 2);
  CHECK(loc.column == 1);
  CHECK(sources.line_text(sources.file_begin(a) + 8) == "y = 2");
  CHECK(sources.line_count(a) == 3);
  CHECK(sources.line_start(a, 2) == sources.file_begin(a) + 6);
}

TEST_CASE("columns count code points, CRLF and lone CR end lines") {
  SourceManager sources;
  FileId f = sources.add_file("u.tsr", "é = 1\r\nx\ry");
  SourceOffset base = sources.file_begin(f);
  CHECK(sources.presumed(base + 2).column == 2);  // after the two-byte "é"
  CHECK(sources.presumed(base + 8).line == 2);
  CHECK(sources.line_text(base) == "é = 1");
  CHECK(sources.presumed(base + 10).line == 3);
  CHECK(count_code_points("aé→") == 3);
}

TEST_CASE("the end-of-file position has a location") {
  SourceManager sources;
  FileId f = sources.add_file("e.tsr", "ab");
  PresumedLocation loc = sources.presumed(sources.file_end(f));
  CHECK(loc.line == 1);
  CHECK(loc.column == 3);
}

TEST_CASE("load_file reports missing files") {
  SourceManager sources;
  std::string error;
  CHECK_FALSE(sources.load_file("/nonexistent/file.tsr", error).has_value());
  CHECK(error == "No such file or directory");
}

TEST_CASE("load_file refuses a directory with the system's reason") {
  SourceManager sources;
  std::string error;
  CHECK_FALSE(sources.load_file("/", error).has_value());
  CHECK(error == "Is a directory");
}

TEST_CASE("line and column of every offset of a small file") {
  SourceManager sources;
  FileId f = sources.add_file("l.tsr", "ab\ncd\n\nx");
  SourceOffset base = sources.file_begin(f);
  struct Expected {
    uint32_t offset, line, column;
  };
  for (Expected e : {Expected{0, 1, 1}, Expected{1, 1, 2}, Expected{2, 1, 3}, Expected{3, 2, 1}, Expected{4, 2, 2},
                     Expected{5, 2, 3}, Expected{6, 3, 1}, Expected{7, 4, 1}, Expected{8, 4, 2}}) {
    CAPTURE(e.offset);
    PresumedLocation loc = sources.presumed(base + e.offset);
    CHECK(loc.line == e.line);
    CHECK(loc.column == e.column);
  }
  CHECK(sources.line_count(f) == 4);
  CHECK(sources.line_text(base + 6).empty());  // the blank line
  CHECK(sources.line_text(base + 7) == "x");   // the last line has no newline
  CHECK(sources.line_start(f, 1) == base);
  CHECK(sources.line_start(f, 4) == base + 7);
}

TEST_CASE("UTF-8: columns count code points of 1 to 4 bytes") {
  SourceManager sources;
  // a (1 byte), é (2), → (3), 😀 (4), b (1)
  const std::string text = "a\xC3\xA9\xE2\x86\x92\xF0\x9F\x98\x80" + std::string("b");
  FileId f = sources.add_file("u.tsr", text);
  SourceOffset base = sources.file_begin(f);
  CHECK(sources.presumed(base + 0).column == 1);
  CHECK(sources.presumed(base + 1).column == 2);   // é
  CHECK(sources.presumed(base + 3).column == 3);   // →
  CHECK(sources.presumed(base + 6).column == 4);   // 😀
  CHECK(sources.presumed(base + 10).column == 5);  // b
  CHECK(sources.presumed(sources.file_end(f)).column == 6);
  CHECK(count_code_points(text) == 5);
  CHECK(count_code_points("") == 0);
}

TEST_CASE("count_code_points counts an invalid lead byte as one") {
  CHECK(count_code_points("\xFF") == 1);
  CHECK(count_code_points("a\xFE" + std::string("b")) == 3);
  CHECK(count_code_points("\xC3") == 1);  // a lead byte cut short
}

// BUG: count_code_points skips every byte of the form 10xxxxxx, so a stray
// continuation byte (invalid UTF-8, which the header says counts as one)
// counts as zero: carets after such bytes are too far left.
TEST_CASE("count_code_points counts a stray continuation byte as one" * doctest::should_fail()) {
  CHECK(count_code_points("\x80") == 1);
  CHECK(count_code_points("a\x80\x80" + std::string("b")) == 4);
}

TEST_CASE("CRLF: the CR belongs to the line, the next line starts after LF") {
  SourceManager sources;
  FileId f = sources.add_file("c.tsr", "ab\r\ncd\r\n");
  SourceOffset base = sources.file_begin(f);
  CHECK(sources.presumed(base + 2).line == 1);  // the CR
  CHECK(sources.presumed(base + 2).column == 3);
  CHECK(sources.presumed(base + 3).line == 1);  // the LF
  CHECK(sources.presumed(base + 4).line == 2);
  CHECK(sources.presumed(base + 4).column == 1);
  CHECK(sources.line_text(base + 4) == "cd");
  CHECK(sources.line_text(base) == "ab");
  CHECK(sources.line_count(f) == 3);
  CHECK(sources.line_start(f, 2) == base + 4);
}

TEST_CASE("a lone CR ends a line, CRLF counts once") {
  SourceManager sources;
  FileId f = sources.add_file("r.tsr", "a\rb\r\nc\n");
  SourceOffset base = sources.file_begin(f);
  CHECK(sources.line_count(f) == 4);
  CHECK(sources.presumed(base + 2).line == 2);  // b
  CHECK(sources.presumed(base + 5).line == 3);  // c
  CHECK(sources.line_text(base + 2) == "b");
}

TEST_CASE("end-of-file offsets") {
  SourceManager sources;
  FileId with_newline = sources.add_file("n.tsr", "ab\n");
  FileId empty = sources.add_file("e.tsr", "");
  FileId without = sources.add_file("w.tsr", "xyz");

  // After a final newline the end is the start of an (empty) last line.
  PresumedLocation loc = sources.presumed(sources.file_end(with_newline));
  CHECK(loc.line == 2);
  CHECK(loc.column == 1);
  CHECK(sources.line_text(sources.file_end(with_newline)).empty());

  // An empty file has one line and its end is at 1:1.
  CHECK(sources.file_begin(empty) == sources.file_end(empty));
  CHECK(sources.file_containing(sources.file_end(empty)) == empty);
  CHECK(sources.line_count(empty) == 1);
  loc = sources.presumed(sources.file_end(empty));
  CHECK(loc.file == empty);
  CHECK(loc.line == 1);
  CHECK(loc.column == 1);

  loc = sources.presumed(sources.file_end(without));
  CHECK(loc.line == 1);
  CHECK(loc.column == 4);
  CHECK(sources.line_text(sources.file_end(without)) == "xyz");
  // The byte after the contents is readable (the buffer ends with a NUL).
  CHECK(*sources.pointer(sources.file_end(without)) == '\0');
}

TEST_CASE("several files: disjoint ranges, each end position in its own file") {
  SourceManager sources;
  FileId a = sources.add_file("a.tsr", "aaa\n");
  FileId b = sources.add_file("b.tsr", "");
  FileId c = sources.add_file("c.tsr", "c\ncc");
  CHECK(sources.file_begin(a) > 0);  // offset 0 stays invalid
  CHECK(sources.file_begin(b) == sources.file_end(a) + 1);
  CHECK(sources.file_begin(c) == sources.file_end(b) + 1);
  for (FileId f : {a, b, c}) {
    CHECK(sources.file_containing(sources.file_begin(f)) == f);
    CHECK(sources.file_containing(sources.file_end(f)) == f);
  }
  PresumedLocation loc = sources.presumed(sources.file_begin(c) + 3);
  CHECK(loc.file == c);
  CHECK(loc.file_name == "c.tsr");
  CHECK(loc.line == 2);
  CHECK(loc.column == 2);
  CHECK(sources.file_name(b) == "b.tsr");
  CHECK(sources.contents(c) == "c\ncc");
  CHECK(*sources.pointer(sources.file_begin(c) + 2) == 'c');
}

TEST_CASE("SourceRange helpers") {
  SourceRange r = SourceRange::at(7);
  CHECK(r.empty());
  CHECK(r.begin == 7);
  SourceRange joined = SourceRange::join(SourceRange{2, 4}, SourceRange{9, 12});
  CHECK(joined == SourceRange{2, 12});
  CHECK_FALSE(joined.empty());
  CHECK_FALSE(FileId{}.valid());
}

TEST_CASE("load_file reads a file from disk under its path") {
  std::string path = "source_manager_test_input.tsr";
  {
    std::FILE* out = std::fopen(path.c_str(), "wb");
    REQUIRE(out != nullptr);
    std::fputs("x = 1\r\ny\n", out);
    std::fclose(out);
  }
  SourceManager sources;
  std::string error;
  std::optional<FileId> file = sources.load_file(path, error);
  std::remove(path.c_str());
  REQUIRE(file.has_value());
  CHECK(error.empty());
  CHECK(sources.file_name(*file) == path);
  CHECK(sources.contents(*file) == "x = 1\r\ny\n");  // bytes kept as they are
  CHECK(sources.presumed(sources.file_begin(*file) + 7).line == 2);
}

}  // namespace
}  // namespace tessera
