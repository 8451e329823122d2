#include "support/npy.h"

#include <doctest/doctest.h>

#include <optional>
#include <string>

namespace tessera::npy {
namespace {

// A version 1.0 file: the magic, the header dict padded with spaces to a
// multiple of 64 bytes (a newline last), then `data`.
std::string file_with(const std::string& dict, const std::string& data) {
  std::string header = dict;
  while ((10 + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  std::string bytes = "\x93NUMPY";
  bytes += '\x01';
  bytes += '\x00';
  bytes += static_cast<char>(header.size() & 0xFF);
  bytes += static_cast<char>(header.size() >> 8);
  return bytes + header + data;
}

TEST_CASE("a file round-trips through serialize and parse") {
  Array a{"<f4", {2, 3}, std::vector<char>(24, '\x01')};
  std::string error;
  std::optional<Array> b = parse(serialize(a), error);
  REQUIRE(b);
  CHECK(b->descr == "<f4");
  CHECK(b->shape == std::vector<int64_t>{2, 3});
  CHECK(b->data == a.data);
}

TEST_CASE("a shape whose size wraps around is rejected, not read as empty") {
  // 4611686018427387904 * 4 bytes = 2^64, which wraps to 0: the data (none)
  // would have matched.
  std::string error;
  CHECK_FALSE(
      parse(file_with("{'descr': '<f4', 'fortran_order': False, 'shape': (4611686018427387904,), }", ""), error));
  CHECK(error ==
        "the shape (4611686018427387904) of 4-byte elements is larger than any file can hold (more than 2^63 bytes)");
  // The same through the extents of several dimensions.
  CHECK_FALSE(
      parse(file_with("{'descr': '<f8', 'fortran_order': False, 'shape': (4294967296, 4294967296), }", ""), error));
  CHECK(error.find("larger than any file can hold") != std::string::npos);
  // An extent past int64 is reported, not thrown.
  CHECK_FALSE(
      parse(file_with("{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,), }", ""), error));
  CHECK(error == "the shape's extent 99999999999999999999 is too large");
}

TEST_CASE("an empty extent makes an empty array whatever the others") {
  std::string error;
  std::optional<Array> a =
      parse(file_with("{'descr': '<f4', 'fortran_order': False, 'shape': (0, 1000000), }", ""), error);
  REQUIRE(a);
  CHECK(a->element_count() == 0);
  CHECK_FALSE(parse(file_with("{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }", ""), error));
  CHECK(error == "the data holds 0 bytes, the header promises 12");
}

}  // namespace
}  // namespace tessera::npy
