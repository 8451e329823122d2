#include "support/diagnostics/verify.h"

#include <fmt/format.h>

#include <cctype>
#include <cstdlib>
#include <optional>

namespace tessera {

namespace {

struct Directive {
  Severity severity;
  bool any_line = false;
  uint32_t line = 0;
  uint32_t remaining = 1;
  std::string text;
  uint32_t directive_line = 0;
};

struct Emitted {
  Severity severity;
  bool located;
  uint32_t line;
  std::string message;
  bool matched = false;
};

void flatten(const SourceManager& sources, const Diagnostic& d, std::vector<Emitted>& out) {
  bool located = d.has_location && d.range.begin != UINT32_MAX;
  uint32_t line = located ? sources.presumed(d.range.begin).line : 0;
  out.push_back({d.severity, located, line, d.message});
  for (const Diagnostic& note : d.notes) flatten(sources, note, out);
}

// Parses the directives of one comment. Returns an error message for a
// malformed directive.
std::optional<std::string> parse_directives(std::string_view comment, uint32_t comment_line,
                                            std::vector<Directive>& out, bool& no_diagnostics) {
  size_t pos = 0;
  while ((pos = comment.find("expected-", pos)) != std::string_view::npos) {
    // A directive starts a word: `parse.unexpected-indent` in prose is none.
    bool at_word_start = pos == 0 || !(std::isalnum(static_cast<unsigned char>(comment[pos - 1])) ||
                                       comment[pos - 1] == '_' || comment[pos - 1] == '.' || comment[pos - 1] == '-');
    std::string_view rest = comment.substr(pos + 9);
    pos += 9;
    if (!at_word_start) continue;
    if (rest.starts_with("no-diagnostics")) {
      no_diagnostics = true;
      continue;
    }
    Directive directive{Severity::Error};
    if (rest.starts_with("error")) {
      rest.remove_prefix(5);
    } else if (rest.starts_with("warning")) {
      directive.severity = Severity::Warning;
      rest.remove_prefix(7);
    } else if (rest.starts_with("note")) {
      directive.severity = Severity::Note;
      rest.remove_prefix(4);
    } else {
      return "unknown directive 'expected-" + std::string(rest.substr(0, rest.find(' '))) + "'";
    }
    directive.line = comment_line;
    directive.directive_line = comment_line;
    if (!rest.empty() && rest[0] == '@') {
      rest.remove_prefix(1);
      if (!rest.empty() && rest[0] == '*') {
        directive.any_line = true;
        rest.remove_prefix(1);
      } else {
        int sign = 0;
        if (!rest.empty() && (rest[0] == '+' || rest[0] == '-')) {
          sign = rest[0] == '+' ? 1 : -1;
          rest.remove_prefix(1);
        }
        size_t digits = 0;
        while (digits < rest.size() && rest[digits] >= '0' && rest[digits] <= '9') ++digits;
        if (digits == 0) return std::string("expected a line number or offset after '@'");
        long value = std::strtol(std::string(rest.substr(0, digits)).c_str(), nullptr, 10);
        long line = sign == 0 ? value : static_cast<long>(comment_line) + sign * value;
        if (line < 1) return std::string("line offset points before the start of the file");
        directive.line = static_cast<uint32_t>(line);
        rest.remove_prefix(digits);
      }
    }
    size_t spaces = rest.find_first_not_of(' ');
    rest.remove_prefix(spaces == std::string_view::npos ? rest.size() : spaces);
    if (!rest.empty() && rest[0] >= '0' && rest[0] <= '9') {
      size_t digits = 0;
      while (digits < rest.size() && rest[digits] >= '0' && rest[digits] <= '9') ++digits;
      directive.remaining =
          static_cast<uint32_t>(std::strtoul(std::string(rest.substr(0, digits)).c_str(), nullptr, 10));
      rest.remove_prefix(digits);
      spaces = rest.find_first_not_of(' ');
      rest.remove_prefix(spaces == std::string_view::npos ? rest.size() : spaces);
    }
    if (!rest.starts_with("{{")) return std::string("expected '{{' after the directive");
    size_t close = rest.find("}}");
    if (close == std::string_view::npos) return std::string("missing '}}' at the end of the expected text");
    directive.text = std::string(rest.substr(2, close - 2));
    out.push_back(std::move(directive));
    pos = static_cast<size_t>(rest.data() - comment.data()) + close + 2;
  }
  return std::nullopt;
}

}  // namespace

VerifyResult verify_diagnostics(const SourceManager& sources, FileId file, const std::vector<SourceRange>& comments,
                                const std::vector<Diagnostic>& emitted) {
  VerifyResult result;
  std::string_view file_name = sources.file_name(file);
  std::vector<Directive> directives;
  bool no_diagnostics = false;
  TextDiagnosticPrinter printer(sources, stderr);
  auto report = [&](const Diagnostic& d) {
    log_diagnostic_kind_for_coverage(d);
    result.ok = false;
    result.report += printer.render(d);
  };
  for (SourceRange comment : comments) {
    std::string_view text(sources.pointer(comment.begin), comment.end - comment.begin);
    uint32_t line = sources.presumed(comment.begin).line;
    if (auto error = parse_directives(text, line, directives, no_diagnostics)) {
      report(Diagnostic{diag::VerifyMalformedDirective,
                        Severity::Error,
                        false,
                        true,
                        comment,
                        format_diagnostic_message<diag::VerifyMalformedDirective>(*error),
                        {},
                        {}});
    }
  }
  if (directives.empty() && !no_diagnostics && result.ok) {
    report(Diagnostic{diag::VerifyNoDirectives,
                      Severity::Error,
                      false,
                      true,
                      SourceRange::at(sources.file_begin(file)),
                      format_diagnostic_message<diag::VerifyNoDirectives>(),
                      {},
                      {}});
  }

  std::vector<Emitted> seen;
  for (const Diagnostic& d : emitted) flatten(sources, d, seen);

  for (Emitted& e : seen) {
    for (Directive& d : directives) {
      if (d.remaining == 0 || d.severity != e.severity) continue;
      if (!d.any_line && (!e.located || d.line != e.line)) continue;
      if (e.message.find(d.text) == std::string::npos) continue;
      --d.remaining;
      e.matched = true;
      break;
    }
  }

  for (Severity severity : {Severity::Error, Severity::Warning, Severity::Note}) {
    std::string missing;
    for (const Directive& d : directives) {
      if (d.severity != severity || d.remaining == 0) continue;
      std::string where = d.any_line ? "*" : std::to_string(d.line);
      for (uint32_t i = 0; i < d.remaining; ++i)
        missing += fmt::format("  File {} Line {}: {}\n", file_name, where, d.text);
    }
    if (!missing.empty()) {
      result.ok = false;
      result.report +=
          fmt::format("error: '{}' diagnostics expected but not seen:\n{}", severity_name(severity), missing);
    }
    std::string unexpected;
    for (const Emitted& e : seen) {
      if (e.severity != severity || e.matched) continue;
      std::string where = e.located ? std::to_string(e.line) : "*";
      unexpected += fmt::format("  File {} Line {}: {}\n", file_name, where, e.message);
    }
    if (!unexpected.empty()) {
      result.ok = false;
      result.report +=
          fmt::format("error: '{}' diagnostics seen but not expected:\n{}", severity_name(severity), unexpected);
    }
  }
  return result;
}

}  // namespace tessera
