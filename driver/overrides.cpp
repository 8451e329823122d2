#include "driver/overrides.h"

#include <cctype>

#include "support/scalar_type.h"

namespace tessera::driver {

namespace {

bool is_identifier(std::string_view s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  for (char c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
  return true;
}

// Where the right-hand side of `name = ...` (or `name: T = ...`) starts in
// `line`, or npos; `end` receives where it ends (before a comment).
size_t assignment_value(std::string_view line, std::string_view name, size_t& end) {
  if (!line.starts_with(name)) return std::string_view::npos;
  size_t i = name.size();
  if (i < line.size() && (std::isalnum(static_cast<unsigned char>(line[i])) || line[i] == '_'))
    return std::string_view::npos;
  while (i < line.size() && line[i] == ' ') ++i;
  if (i < line.size() && line[i] == ':') {  // an annotation
    while (i < line.size() && line[i] != '=') ++i;
  }
  if (i >= line.size() || line[i] != '=' || (i + 1 < line.size() && line[i + 1] == '=')) return std::string_view::npos;
  ++i;
  while (i < line.size() && line[i] == ' ') ++i;
  // The value ends at a comment outside a string.
  end = line.size();
  char quote = 0;
  for (size_t j = i; j < line.size(); ++j) {
    char c = line[j];
    if (quote) {
      if (c == quote) quote = 0;
    } else if (c == '"' || c == '\'') {
      quote = c;
    } else if (c == '#') {
      end = j;
      break;
    }
  }
  while (end > i && line[end - 1] == ' ') --end;
  return i;
}

bool balanced(std::string_view text) {
  int depth = 0;
  for (char c : text) {
    if (c == '(' || c == '[' || c == '{') ++depth;
    if (c == ')' || c == ']' || c == '}') --depth;
  }
  return depth == 0 && !text.ends_with("\\");
}

// What a module constant's one-line value is, as far as -D checks a new
// value against it (anything else is left to sema: an expression, a
// tuple, another constant's name).
enum class ConstantKind { Other, String, Integer, Float, Bool, Dtype };

// A single string literal, '...' or "..." (no prefix, not triple-quoted).
bool is_string_literal(std::string_view s) {
  if (s.size() < 2 || (s[0] != '"' && s[0] != '\'') || s.back() != s[0] || s.starts_with("\"\"\"") ||
      s.starts_with("'''"))
    return false;
  size_t i = 1;
  while (i + 1 < s.size()) {
    if (s[i] == s[0]) return false;
    i += s[i] == '\\' ? 2 : 1;
  }
  return i + 1 == s.size();  // the closing quote is not escaped
}

// A Python integer literal (decimal, 0x, 0o, 0b, with `_` separators), signed.
bool is_integer_literal(std::string_view s) {
  if (!s.empty() && (s[0] == '-' || s[0] == '+')) s.remove_prefix(1);
  if (s.empty()) return false;
  int base = 10;
  if (s.size() > 2 && s[0] == '0' && std::isalpha(static_cast<unsigned char>(s[1]))) {
    char b = static_cast<char>(std::tolower(static_cast<unsigned char>(s[1])));
    base = b == 'x' ? 16 : b == 'o' ? 8 : b == 'b' ? 2 : 0;
    if (base == 0) return false;
    s.remove_prefix(2);
  }
  if (s.front() == '_' || s.back() == '_') return false;
  for (char c : s) {
    if (c == '_') continue;
    int digit = std::isdigit(static_cast<unsigned char>(c)) ? c - '0'
                : std::isxdigit(static_cast<unsigned char>(c)) ? std::tolower(static_cast<unsigned char>(c)) - 'a' + 10
                                                               : 99;
    if (digit >= base) return false;
  }
  return true;
}

// A Python number literal with a fraction or an exponent (or an integer), signed.
bool is_number_literal(std::string_view s) {
  if (is_integer_literal(s)) return true;
  if (!s.empty() && (s[0] == '-' || s[0] == '+')) s.remove_prefix(1);
  bool digits = false, dot = false, exponent = false;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (std::isdigit(static_cast<unsigned char>(c))) {
      digits = true;
    } else if (c == '.' && !dot && !exponent) {
      dot = true;
    } else if ((c == 'e' || c == 'E') && digits && !exponent) {
      exponent = true;
      digits = false;
      if (i + 1 < s.size() && (s[i + 1] == '-' || s[i + 1] == '+')) ++i;
    } else {
      return false;
    }
  }
  return digits;
}

// A dtype spelling: `f16`, `ts.bf16`, also with policies (`fp8_e4m3 @saturate`).
bool is_dtype(std::string_view s) {
  std::string_view name = s.substr(0, s.find_first_of(" @["));
  if (name.starts_with("ts.")) name.remove_prefix(3);
  return lookup_dtype(name).has_value();
}

ConstantKind constant_kind(std::string_view value) {
  if (is_string_literal(value)) return ConstantKind::String;
  if (is_integer_literal(value)) return ConstantKind::Integer;
  if (is_number_literal(value)) return ConstantKind::Float;
  if (value == "True" || value == "False") return ConstantKind::Bool;
  if (is_dtype(value)) return ConstantKind::Dtype;
  return ConstantKind::Other;
}

// `text` as a double-quoted string literal of the language.
std::string string_literal(std::string_view text) {
  std::string out = "\"";
  for (char c : text) {
    switch (c) {
      case '\\': out += "\\\\"; break;
      case '"': out += "\\\""; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default: out += c;
    }
  }
  return out + "\"";
}

// The text that replaces the constant's value `original` (line `line_number`)
// for `-D NAME=VALUE`: VALUE itself, or, for a string constant, VALUE as
// the string's text unless it is written as a string literal. Nullopt with
// `error` when VALUE cannot be a value of the constant's kind (a number
// for a number, True/False, a dtype), before sema would report it as
// something else (an undefined name with a suggestion).
std::optional<std::string> replacement(const Override& o, std::string_view original, std::string_view file_name,
                                       size_t line_number, std::string& error) {
  std::string_view value = o.value;
  while (!value.empty() && value.front() == ' ') value.remove_prefix(1);
  while (!value.empty() && value.back() == ' ') value.remove_suffix(1);
  const char* expected = nullptr;
  switch (constant_kind(original)) {
    case ConstantKind::String: return is_string_literal(value) ? std::string(value) : string_literal(o.value);
    case ConstantKind::Integer:
      if (!is_integer_literal(value)) expected = "an integer constant";
      break;
    case ConstantKind::Float:
      if (!is_number_literal(value)) expected = "a float constant (a number)";
      break;
    case ConstantKind::Bool:
      if (value != "True" && value != "False") expected = "a bool constant (True or False)";
      break;
    case ConstantKind::Dtype:
      if (!is_dtype(value)) expected = "a dtype (f32, bf16, ...)";
      break;
    case ConstantKind::Other: break;
  }
  if (expected) {
    error = "-D " + o.name + "=" + o.value + ": '" + o.value + "' is not a valid value for '" + o.name + "', " +
            expected + " (" + std::string(file_name) + ":" + std::to_string(line_number) + ": " + o.name + " = " +
            std::string(original) + ")";
    return std::nullopt;
  }
  return o.value;
}

}  // namespace

std::optional<Override> parse_override(std::string_view text) {
  size_t eq = text.find('=');
  if (eq == std::string_view::npos) return std::nullopt;
  std::string_view name = text.substr(0, eq);
  if (!is_identifier(name)) return std::nullopt;
  return Override{std::string(name), std::string(text.substr(eq + 1))};
}

std::optional<std::string> apply_overrides(std::string_view source, std::string_view file_name,
                                           const std::vector<Override>& overrides, std::string& error) {
  std::string out(source);
  for (const Override& o : overrides) {
    bool done = false;
    size_t start = 0, line_number = 1;
    for (; start <= out.size() && !done; ++line_number) {
      size_t stop = out.find('\n', start);
      if (stop == std::string::npos) stop = out.size();
      std::string_view line(out.data() + start, stop - start);
      size_t end = 0;
      size_t value = assignment_value(line, o.name, end);
      if (value != std::string_view::npos) {
        if (!balanced(line.substr(value, end - value))) {
          error = "-D " + o.name + ": its assignment's value continues on the next line; only a one-line value can be replaced";
          return std::nullopt;
        }
        std::optional<std::string> text = replacement(o, line.substr(value, end - value), file_name, line_number, error);
        if (!text) return std::nullopt;
        out.replace(start + value, end - value, *text);
        done = true;
      }
      start = stop + 1;
    }
    if (!done) {
      error = "-D " + o.name + ": the module has no top-level assignment '" + o.name + " = ...' to override";
      return std::nullopt;
    }
  }
  return out;
}

}  // namespace tessera::driver
