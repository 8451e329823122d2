#include "support/format_spec.h"

#include <doctest/doctest.h>

namespace tessera {
namespace {

// format(v, spec) as Python 3 prints it (the expected strings are Python's).
std::string number(std::string_view spec, double v) {
  auto parsed = parse_format_spec(spec, nullptr);
  REQUIRE(parsed);
  return format_number(*parsed, true, v, 0, 0, false, "PLAIN").value_or("NULL");
}
std::string integer(std::string_view spec, int64_t v) {
  auto parsed = parse_format_spec(spec, nullptr);
  REQUIRE(parsed);
  return format_number(*parsed, false, 0, v, 0, false, std::to_string(v)).value_or("NULL");
}

TEST_CASE("format specs format numbers as Python's format()") {
  CHECK(number(".4f", 3.14159265) == "3.1416");
  CHECK(number("8.2f", -2.5) == "   -2.50");
  CHECK(number("<8.2f", 2.5) == "2.50    ");
  CHECK(number("*^9.1f", 2.5) == "***2.5***");
  CHECK(number("+.3e", 12345.678) == "+1.235e+04");
  CHECK(number(".3g", 0.00012345) == "0.000123");
  CHECK(number(".2%", 0.125) == "12.50%");
  CHECK(number(".3", 1.0) == "1.0");
  CHECK(number(".3", 1234.5) == "1.23e+03");
  CHECK(number("08.3f", -1.5) == "-001.500");
  CHECK(number(">10", 1.5) == "     PLAIN");
  CHECK(integer("d", 42) == "42");
  CHECK(integer("5d", 42) == "   42");
  CHECK(integer("#x", 255) == "0xff");
  CHECK(integer("#o", 8) == "0o10");
  CHECK(integer("#o", 0) == "0o0");
  CHECK(integer("+#o", -8) == "-0o10");
  CHECK(integer("#06o", 8) == "0o0010");
  CHECK(integer("08b", 5) == "00000101");
  CHECK(integer(".2f", 3) == "3.00");
  CHECK(integer("+", 3) == "+3");
  CHECK(integer("<4", 7) == "7   ");
}

TEST_CASE("format specs this implementation does not format are refused with a reason") {
  std::string why;
  CHECK_FALSE(parse_format_spec("=8", &why));
  CHECK(why == "the '=' alignment is not supported");
  CHECK_FALSE(parse_format_spec(",d", &why));
  CHECK(why == "digit grouping (',') is not supported");
  CHECK_FALSE(parse_format_spec(".2d", &why));
  CHECK(why == "a precision is not allowed with an integer presentation type");
  CHECK_FALSE(parse_format_spec("q", &why));
  CHECK(why == "the presentation type 'q' is unknown");
  CHECK_FALSE(parse_format_spec("fx", &why));
  CHECK(why == "the text 'x' after the presentation type is unknown");
  auto d = parse_format_spec("d", nullptr);
  REQUIRE(d);
  CHECK_FALSE(format_number(*d, true, 1.5, 0, 0, false, "1.5"));
}

}  // namespace
}  // namespace tessera
