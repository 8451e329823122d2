// Python's format-spec mini-language for one number, as `format(v, spec)` and
// an f-string's `{v:spec}` apply it (docs/language/graph.md, "print"). The
// compiler checks a spec when it compiles the f-string; the runtime formats
// with it. Shared by both: one grammar, one meaning.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace tessera {

// [[fill]align][sign][#][0][width][.precision][type], Python's fields.
// Not accepted: the '=' alignment, ',' and '_' grouping, 'n', 'c' and 's'
// (parse_format_spec says why).
struct FormatSpec {
  char fill = ' ';
  char align = 0;  // '<', '>', '^' or 0 (numbers right-align)
  char sign = 0;   // '+', '-', ' ' or 0
  bool alternate = false;
  bool zero = false;
  int width = 0;
  std::optional<int> precision;
  char type = 0;  // 'd', 'b', 'o', 'x', 'X', 'e', 'E', 'f', 'F', 'g', 'G', '%' or 0

  bool integer_type() const { return type == 'd' || type == 'b' || type == 'o' || type == 'x' || type == 'X'; }
};

// The spec, or the reason it is not one this implementation formats
// (`error`, a clause: "the '=' alignment is not supported").
std::optional<FormatSpec> parse_format_spec(std::string_view text, std::string* error);

// One number formatted by `spec`: a float (`is_float`, `f`), or an integer
// (`i`, or `u` when `is_unsigned`; a bool is the integer 0 or 1). `plain` is
// the number's text without a spec (Python's str), used when the spec has no
// type and no precision. Null when an integer type is asked of a float.
std::optional<std::string> format_number(const FormatSpec& spec, bool is_float, double f, int64_t i, uint64_t u,
                                         bool is_unsigned, const std::string& plain);

}  // namespace tessera
