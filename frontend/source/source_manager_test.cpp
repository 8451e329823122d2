#include "frontend/source/source_manager.h"

#include <doctest/doctest.h>

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
  CHECK(error.find("cannot open") != std::string::npos);
}

}  // namespace
}  // namespace tessera
