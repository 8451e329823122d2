#include "support/percent_format.h"

#include "support/format_spec.h"

#include <doctest/doctest.h>

namespace tessera {
namespace {

// The spec each conversion becomes; format(v, spec) of it is what Python's
// `fmt % v` prints (checked against Python 3 for each line).
std::string spec_of(std::string_view fmt) {
  auto parsed = parse_percent_format(fmt, nullptr);
  REQUIRE(parsed);
  REQUIRE(parsed->conversions.size() == 1);
  return parsed->conversions[0].spec;
}

TEST_CASE("percent conversions become format specs") {
  CHECK(spec_of("%d") == "d");
  CHECK(spec_of("%i") == "d");
  CHECK(spec_of("%5d") == "5d");
  CHECK(spec_of("%-5d") == "<5d");
  CHECK(spec_of("%05d") == "05d");
  CHECK(spec_of("%-05d") == "<5d");  // '-' wins over '0', as in Python
  CHECK(spec_of("%+.3f") == "+.3f");
  CHECK(spec_of("% d") == " d");
  CHECK(spec_of("%#x") == "#x");
  CHECK(spec_of("%.f") == ".0f");
  CHECK(spec_of("%10.4e") == "10.4e");
  CHECK(spec_of("%g") == "g");
  CHECK(spec_of("%ld") == "d");
  CHECK(spec_of("%s") == "");
  CHECK(spec_of("%8s") == ">8");
  CHECK(spec_of("%-8s") == "<8");
  CHECK(parse_percent_format("%r", nullptr)->conversions[0].repr);
  // Every spec made is one the runtime formats, with Python's output.
  auto spec = parse_format_spec(spec_of("%-7.2f"), nullptr);
  REQUIRE(spec);
  CHECK(format_number(*spec, true, 3.14159, 0, 0, false, "") == "3.14   ");
  spec = parse_format_spec(spec_of("%05d"), nullptr);
  REQUIRE(spec);
  CHECK(format_number(*spec, false, 0, -3, 0, false, "-3") == "-0003");
}

TEST_CASE("the text around conversions, %% as %") {
  auto parsed = parse_percent_format("step %d: %.1f%% done", nullptr);
  REQUIRE(parsed);
  REQUIRE(parsed->text.size() == 3);
  CHECK(parsed->text[0] == "step ");
  CHECK(parsed->text[1] == ": ");
  CHECK(parsed->text[2] == "% done");
  CHECK(parsed->conversions[0].conversion == 'd');
  CHECK(parsed->conversions[1].conversion == 'f');
  CHECK(parse_percent_format("100%%", nullptr)->conversions.empty());
}

TEST_CASE("what is not formatted says why") {
  std::string why;
  CHECK_FALSE(parse_percent_format("%(name)s", &why));
  CHECK(why.find("mapping key") != std::string::npos);
  CHECK_FALSE(parse_percent_format("%*d", &why));
  CHECK_FALSE(parse_percent_format("%c", &why));
  CHECK_FALSE(parse_percent_format("%.3s", &why));
  CHECK_FALSE(parse_percent_format("%.2d", &why));
  CHECK_FALSE(parse_percent_format("%y", &why));
  CHECK(why == "has the unknown conversion '%y'");
  CHECK_FALSE(parse_percent_format("50%", &why));
}

}  // namespace
}  // namespace tessera
