#include "driver/overrides.h"

#include <cctype>

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

}  // namespace

std::optional<Override> parse_override(std::string_view text) {
  size_t eq = text.find('=');
  if (eq == std::string_view::npos) return std::nullopt;
  std::string_view name = text.substr(0, eq);
  if (!is_identifier(name)) return std::nullopt;
  return Override{std::string(name), std::string(text.substr(eq + 1))};
}

std::optional<std::string> apply_overrides(std::string_view source, const std::vector<Override>& overrides,
                                           std::string& error) {
  std::string out(source);
  for (const Override& o : overrides) {
    bool done = false;
    size_t start = 0;
    while (start <= out.size() && !done) {
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
        out.replace(start + value, end - value, o.value);
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
