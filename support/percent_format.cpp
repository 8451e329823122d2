#include "support/percent_format.h"

#include <cctype>

namespace tessera {

std::optional<PercentFormat> parse_percent_format(std::string_view text, std::string* error) {
  auto fail = [&](std::string why) -> std::optional<PercentFormat> {
    if (error) *error = std::move(why);
    return std::nullopt;
  };
  PercentFormat format;
  format.text.emplace_back();
  size_t i = 0;
  while (i < text.size()) {
    char c = text[i++];
    if (c != '%') {
      format.text.back() += c;
      continue;
    }
    if (i == text.size()) return fail("ends in the middle of a conversion ('%' at its end)");
    if (text[i] == '%') {
      format.text.back() += '%';
      ++i;
      continue;
    }
    if (text[i] == '(') return fail("has a mapping key ('%(name)...'), which is not supported");
    bool left = false, zero = false, alternate = false;
    char sign = 0;
    for (; i < text.size(); ++i) {
      char flag = text[i];
      if (flag == '-') left = true;
      else if (flag == '0') zero = true;
      else if (flag == '#') alternate = true;
      else if (flag == '+') sign = '+';
      else if (flag == ' ') sign = sign == '+' ? '+' : ' ';
      else break;
    }
    std::string width, precision;
    bool has_precision = false;
    while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) width += text[i++];
    if (i < text.size() && text[i] == '*') return fail("has a '*' width, which is not supported");
    if (i < text.size() && text[i] == '.') {
      ++i;
      has_precision = true;
      while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) precision += text[i++];
      if (i < text.size() && text[i] == '*') return fail("has a '*' precision, which is not supported");
      if (precision.empty()) precision = "0";  // Python: `%.f` is `%.0f`
    }
    // A length modifier (h, l, L) is accepted and ignored, as Python does.
    while (i < text.size() && (text[i] == 'h' || text[i] == 'l' || text[i] == 'L')) ++i;
    if (i == text.size()) return fail("ends in the middle of a conversion");
    char type = text[i++];
    PercentConversion conversion;
    switch (type) {
      case 'd': case 'i': case 'u': conversion.conversion = 'd'; break;
      case 'o': case 'x': case 'X': case 'e': case 'E': case 'f': case 'F': case 'g': case 'G':
        conversion.conversion = type;
        break;
      case 's': conversion.conversion = 's'; break;
      case 'r': case 'a':
        conversion.conversion = 's';
        conversion.repr = true;
        break;
      case 'c': return fail("has the conversion '%c', which is not supported");
      default: return fail("has the unknown conversion '%" + std::string(1, type) + "'");
    }
    bool integer = conversion.conversion == 'd' || conversion.conversion == 'o' || conversion.conversion == 'x' ||
                   conversion.conversion == 'X';
    if (has_precision && (integer || conversion.conversion == 's'))
      return fail(std::string("has a precision on '%") + type + "', which is not supported");
    std::string spec;
    if (left) spec += '<';
    if (conversion.conversion != 's') {
      if (sign) spec += sign;
      if (alternate) spec += '#';
      if (zero && !left) spec += '0';
    } else if (!left && !width.empty()) {
      spec += '>';  // Python right-aligns %10s; format() left-aligns text
    }
    spec += width;
    if (has_precision) spec += "." + precision;
    if (conversion.conversion != 's') spec += conversion.conversion;
    conversion.spec = conversion.conversion == 's' && width.empty() ? "" : spec;
    format.conversions.push_back(std::move(conversion));
    format.text.emplace_back();
  }
  return format;
}

}  // namespace tessera
