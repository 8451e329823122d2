#include "support/format_spec.h"

#include <cctype>
#include <cmath>
#include <fmt/format.h>

namespace tessera {

std::optional<FormatSpec> parse_format_spec(std::string_view text, std::string* error) {
  FormatSpec spec;
  size_t i = 0;
  auto fail = [&](std::string why) -> std::optional<FormatSpec> {
    if (error) *error = std::move(why);
    return std::nullopt;
  };
  auto is_align = [](char c) { return c == '<' || c == '>' || c == '^' || c == '='; };
  if (text.size() >= 2 && is_align(text[1])) {
    spec.fill = text[0];
    spec.align = text[1];
    i = 2;
  } else if (!text.empty() && is_align(text[0])) {
    spec.align = text[0];
    i = 1;
  }
  if (spec.align == '=') return fail("the '=' alignment is not supported");
  if (spec.fill == '{' || spec.fill == '}') return fail("a nested replacement field is not supported");
  if (i < text.size() && (text[i] == '+' || text[i] == '-' || text[i] == ' ')) spec.sign = text[i++];
  if (i < text.size() && text[i] == '#') spec.alternate = true, ++i;
  if (i < text.size() && text[i] == '0') spec.zero = true, ++i;
  while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) {
    spec.width = spec.width * 10 + (text[i++] - '0');
    if (spec.width > 1000) return fail("a width over 1000 is not supported");
  }
  if (i < text.size() && (text[i] == ',' || text[i] == '_')) return fail("digit grouping ('" + std::string(1, text[i]) + "') is not supported");
  if (i < text.size() && text[i] == '.') {
    ++i;
    int precision = 0;
    size_t digits = 0;
    while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) {
      precision = precision * 10 + (text[i++] - '0');
      if (precision > 100) return fail("a precision over 100 is not supported");
      ++digits;
    }
    if (digits == 0) return fail("a '.' needs a precision");
    spec.precision = precision;
  }
  if (i < text.size()) {
    char t = text[i++];
    switch (t) {
      case 'd': case 'b': case 'o': case 'x': case 'X': case 'e': case 'E': case 'f': case 'F': case 'g': case 'G':
      case '%': spec.type = t; break;
      case 'n': case 'c': case 's': return fail("the presentation type '" + std::string(1, t) + "' is not supported");
      case '{': case '}': return fail("a nested replacement field is not supported");
      default: return fail("the presentation type '" + std::string(1, t) + "' is unknown");
    }
  }
  if (i != text.size()) return fail("the text '" + std::string(text.substr(i)) + "' after the presentation type is unknown");
  if (spec.integer_type() && spec.precision) return fail("a precision is not allowed with an integer presentation type");
  return spec;
}

std::optional<std::string> format_number(const FormatSpec& spec, bool is_float, double f, int64_t i, uint64_t u,
                                         bool is_unsigned, const std::string& plain) {
  std::string body;
  // The sign, '#' and '0' fields are fmt's, as are the types but '%' and
  // the default; the fill and alignment are applied last.
  std::string flags;
  if (spec.sign) flags += spec.sign;
  if (spec.alternate) flags += '#';
  bool float_type = spec.type == 'e' || spec.type == 'E' || spec.type == 'f' || spec.type == 'F' || spec.type == 'g' ||
                    spec.type == 'G' || spec.type == '%' || (spec.type == 0 && spec.precision);
  if (spec.integer_type()) {
    if (is_float) return std::nullopt;
    // fmt's '#o' is C's ("010"); Python's prefix is "0o" ("0o10", "0o0").
    bool octal_prefix = spec.type == 'o' && spec.alternate;
    if (octal_prefix) flags.erase(flags.find('#'), 1);
    std::string pattern = "{:" + flags + std::string(1, spec.type) + "}";
    body = is_unsigned ? fmt::format(fmt::runtime(pattern), u) : fmt::format(fmt::runtime(pattern), i);
    if (octal_prefix) body.insert(!body.empty() && (body[0] == '-' || body[0] == '+' || body[0] == ' ') ? 1 : 0, "0o");
  } else if (float_type) {
    double v = is_float ? f : is_unsigned ? static_cast<double>(u) : static_cast<double>(i);
    char type = spec.type == '%' ? 'f' : spec.type == 0 ? 'g' : spec.type;
    if (spec.type == '%') v *= 100;
    int precision = spec.precision.value_or(6);
    if (spec.type == 0 && precision == 0) precision = 1;  // Python: '.0' alone is one significant digit
    std::string pattern = "{:" + flags + "." + std::to_string(precision) + std::string(1, type) + "}";
    body = fmt::format(fmt::runtime(pattern), v);
    // Python's 'inf' and 'nan' (fmt spells them the same, upper-cased for F/E/G).
    if (spec.type == '%') body += '%';
    // No type: 'g', but a fixed-point result keeps one digit after the point.
    if (spec.type == 0 && std::isfinite(v) && body.find_first_of(".e") == std::string::npos) body += ".0";
  } else {
    body = plain;
    if (spec.sign == '+' || spec.sign == ' ') {
      bool negative = !body.empty() && body[0] == '-';
      if (!negative) body = std::string(1, spec.sign) + body;
    }
  }
  // '0': zero padding after the sign (an alignment given explicitly wins).
  size_t length = body.size();
  if (static_cast<size_t>(spec.width) <= length) return body;
  size_t pad = static_cast<size_t>(spec.width) - length;
  if (spec.zero && !spec.align) {
    size_t at = (!body.empty() && (body[0] == '-' || body[0] == '+' || body[0] == ' ')) ? 1 : 0;
    if (body.compare(at, 2, "0x") == 0 || body.compare(at, 2, "0X") == 0 || body.compare(at, 2, "0b") == 0 ||
        body.compare(at, 2, "0o") == 0)
      at += 2;
    return body.insert(at, pad, '0');
  }
  char align = spec.align ? spec.align : '>';
  if (align == '<') return body + std::string(pad, spec.fill);
  if (align == '>') return std::string(pad, spec.fill) + body;
  return std::string(pad / 2, spec.fill) + body + std::string(pad - pad / 2, spec.fill);
}

}  // namespace tessera
