// -D NAME=VALUE: a module-level constant's value from the command line
// (language brief, "Graph level and programs"). The assignment `NAME = ...`
// at the start of a line of the module (outside any function) gets VALUE as
// its right-hand side before the file is lexed, so sema checks the new
// value like any other (a dtype alias `T = f16`, a size `D = 64`), and a
// diagnostic on that line shows the value given. A string constant takes
// VALUE as its text (`-D MODE=relu` for `MODE = "gelu"`).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tessera::driver {

struct Override {
  std::string name;
  std::string value;
};

// Parses "NAME=VALUE"; nullopt when NAME is not an identifier or '=' is missing.
std::optional<Override> parse_override(std::string_view text);

// `source` (the file `file_name`) with each override applied. The value of
// a string constant (`NAME = "..."`) is VALUE's text, unless VALUE is
// itself a string literal; for a constant whose value is an integer, a
// number, True/False or a dtype, VALUE must be one too. Nullopt with
// `error` saying which override has no module-level assignment to replace
// (or one that spans several lines), or has a value not of its constant's
// kind.
std::optional<std::string> apply_overrides(std::string_view source, std::string_view file_name,
                                           const std::vector<Override>& overrides, std::string& error);

}  // namespace tessera::driver
