// Python's printf-style string formatting, `"%d items, %.3f" % (n, loss)`,
// as `print` applies it (docs/language/graph.md, "print"). Each conversion
// becomes the format spec of Python's `format(v, spec)` with the same
// output (support/format_spec.h), so the runtime formats both with one
// formatter. The compiler parses the format when it compiles the program.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tessera {

// One conversion: `%-8.3f` is conversion 'f' with the spec "<8.3f".
struct PercentConversion {
  // 'd' (also for %i and %u), 'o', 'x', 'X', 'e', 'E', 'f', 'F', 'g', 'G',
  // or 's' (also for %r and %a: the value's printed text).
  char conversion = 's';
  std::string spec;  // the equivalent format spec ("" for a bare %s)
  bool repr = false; // %r, %a: a string prints quoted
};

// A format string: `text[0]`, conversion 0, `text[1]`, ..., `%%` already
// made `%`; `text.size() == conversions.size() + 1`.
struct PercentFormat {
  std::vector<std::string> text;
  std::vector<PercentConversion> conversions;
};

// The format, or why this implementation does not format it (`error`, a
// clause: "the conversion '%c' is not supported"). Not supported: mapping
// keys `%(name)s`, `*` widths and precisions, `%c`, a precision of `%s`
// or of an integer conversion.
std::optional<PercentFormat> parse_percent_format(std::string_view text, std::string* error);

}  // namespace tessera
