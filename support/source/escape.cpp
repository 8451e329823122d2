#include "support/source/escape.h"

#include <fmt/format.h>

namespace tessera {

std::string quote_for_display(std::string_view text) {
  std::string out = "\"";
  for (unsigned char c : text) {
    switch (c) {
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\r':
        out += "\\r";
        break;
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      default:
        if (c < 0x20 || c == 0x7F) {
          out += fmt::format("\\x{:02x}", c);
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  return out + "\"";
}

namespace {

// The length of the valid UTF-8 sequence at the start of `text`, or 0 when
// its first byte does not begin one (a stray continuation byte, an overlong
// form, a surrogate, a value past U+10FFFF, a truncated sequence).
size_t utf8_sequence(std::string_view text) {
  auto byte = [&](size_t i) { return static_cast<unsigned char>(text[i]); };
  unsigned char c = byte(0);
  if (c < 0x80) return 1;
  size_t length = c >= 0xC2 && c <= 0xDF ? 2 : c >= 0xE0 && c <= 0xEF ? 3 : c >= 0xF0 && c <= 0xF4 ? 4 : 0;
  if (length == 0 || text.size() < length) return 0;
  for (size_t i = 1; i < length; ++i)
    if ((byte(i) & 0xC0) != 0x80) return 0;
  if (c == 0xE0 && byte(1) < 0xA0) return 0;   // overlong
  if (c == 0xED && byte(1) >= 0xA0) return 0;  // a surrogate
  if (c == 0xF0 && byte(1) < 0x90) return 0;   // overlong
  if (c == 0xF4 && byte(1) >= 0x90) return 0;  // past U+10FFFF
  return length;
}

}  // namespace

std::string display_text(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    size_t length = utf8_sequence(text.substr(i));
    if (length == 0) {
      out += fmt::format("<{:02X}>", static_cast<unsigned char>(text[i]));
      ++i;
      continue;
    }
    if (text[i] == '\t') {
      out += ' ';
    } else {
      out.append(text.substr(i, length));
    }
    i += length;
  }
  return out;
}

uint32_t display_width(std::string_view text) {
  uint32_t width = 0;
  for (size_t i = 0; i < text.size();) {
    size_t length = utf8_sequence(text.substr(i));
    width += length == 0 ? 4 : 1;
    i += length == 0 ? 1 : length;
  }
  return width;
}

}  // namespace tessera
