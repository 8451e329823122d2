#include "support/diagnostics/diagnostics.h"
#include "support/source/escape.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

namespace tessera {

namespace {

std::vector<DiagnosticKindInfo> build_registry() {
  return {
#define TESSERA_DIAGNOSTIC(Name, Sev, Id, Format, ...) {DiagnosticKind::Name, Severity::Sev, Id, Format},
#include "support/diagnostics/diagnostic_kinds.def"
#undef TESSERA_DIAGNOSTIC
  };
}

}  // namespace

const std::vector<DiagnosticKindInfo>& all_diagnostic_kinds() {
  static const std::vector<DiagnosticKindInfo> registry = build_registry();
  return registry;
}

const DiagnosticKindInfo& diagnostic_info(DiagnosticKind kind) {
  return all_diagnostic_kinds()[static_cast<size_t>(kind)];
}

std::string_view severity_name(Severity severity) {
  switch (severity) {
    case Severity::Note:
      return "note";
    case Severity::Warning:
      return "warning";
    case Severity::Error:
      return "error";
  }
  return "error";
}

DiagnosticBuilder::~DiagnosticBuilder() {
  if (engine_ != nullptr) engine_->commit(std::move(diagnostic_));
}

void DiagnosticEngine::commit(Diagnostic diagnostic) {
  if (diagnostic.severity != Severity::Note)
    for (auto note = context_.rbegin(); note != context_.rend(); ++note) diagnostic.notes.push_back(*note);
  // The same diagnostic twice (one construct checked or lowered twice, as a
  // @jit function is for its entry and for each call of it) is shown once,
  // as first reported (the context notes of a later check may differ).
  for (const Diagnostic& seen : pending_)
    if (seen.kind == diagnostic.kind && seen.has_location == diagnostic.has_location &&
        seen.range.begin == diagnostic.range.begin && seen.range.end == diagnostic.range.end &&
        seen.message == diagnostic.message)
      return;
  if (diagnostic.severity == Severity::Warning) {
    if (options_.suppress_warnings) return;
    if (options_.warnings_as_errors) {
      diagnostic.severity = Severity::Error;
      diagnostic.promoted = true;
    }
  }
  if (diagnostic.severity == Severity::Error) {
    if (limit_reached_) return;
    if (options_.error_limit != 0 && error_count_ >= options_.error_limit) {
      limit_reached_ = true;
      Diagnostic stop{diag::DriverTooManyErrors,
                      Severity::Error,
                      false,
                      false,
                      {},
                      format_diagnostic_message<diag::DriverTooManyErrors>(),
                      {},
                      {}};
      // Printed after everything else, whatever its location.
      stop.range = SourceRange::at(UINT32_MAX);
      pending_.push_back(std::move(stop));
      return;
    }
    ++error_count_;
  } else if (diagnostic.severity == Severity::Warning) {
    ++warning_count_;
  }
  pending_.push_back(std::move(diagnostic));
}

void DiagnosticEngine::flush() {
  // Global diagnostics first, then by position; stable so that diagnostics at
  // one position keep their emission order.
  // The "too many errors" diagnostic has offset UINT32_MAX and so sorts last.
  auto key = [](const Diagnostic& d) { return d.has_location || d.range.begin == UINT32_MAX ? d.range.begin : 0u; };
  std::stable_sort(pending_.begin(), pending_.end(),
                   [&](const Diagnostic& a, const Diagnostic& b) { return key(a) < key(b); });
  for (const Diagnostic& d : pending_) {
    log_diagnostic_kind_for_coverage(d);
    consumer_->handle(d);
  }
  pending_.clear();
}

void log_diagnostic_kind_for_coverage(const Diagnostic& diagnostic) {
  static const char* path = std::getenv("TESSERA_DIAGNOSTIC_LOG");
  if (path == nullptr || *path == '\0') return;
  if (std::FILE* log = std::fopen(path, "a")) {
    std::string line = std::string(diagnostic_info(diagnostic.kind).id) + "\n";
    for (const Diagnostic& note : diagnostic.notes) line += std::string(diagnostic_info(note.kind).id) + "\n";
    std::fwrite(line.data(), 1, line.size(), log);
    std::fclose(log);
  }
}

namespace {

constexpr const char* kReset = "\033[0m";
constexpr const char* kBold = "\033[1m";
constexpr const char* kRed = "\033[1;31m";
constexpr const char* kMagenta = "\033[1;35m";
constexpr const char* kCyan = "\033[1;36m";
constexpr const char* kGreen = "\033[1;32m";

}  // namespace

std::string TextDiagnosticPrinter::render(const Diagnostic& diagnostic) const {
  std::string out;
  render_one(out, diagnostic);
  for (const Diagnostic& note : diagnostic.notes) render_one(out, note);
  return out;
}

void TextDiagnosticPrinter::render_one(std::string& out, const Diagnostic& d) const {
  const bool color = options_.color;
  auto paint = [&](const char* code, std::string_view text) {
    if (color) {
      out += code;
      out += text;
      out += kReset;
    } else {
      out += text;
    }
  };

  const bool located = d.has_location && d.range.begin != UINT32_MAX;
  if (located) {
    PresumedLocation loc = sources_.presumed(d.range.begin);
    paint(kBold, fmt::format("{}:{}:{}: ", loc.file_name, loc.line, loc.column));
  } else {
    paint(kBold, "tesserac: ");
  }
  switch (d.severity) {
    case Severity::Error:
      paint(kRed, "error: ");
      break;
    case Severity::Warning:
      paint(kMagenta, "warning: ");
      break;
    case Severity::Note:
      paint(kCyan, "note: ");
      break;
  }
  std::string id(diagnostic_info(d.kind).id);
  if (d.promoted) id += ", -Werror";
  paint(kBold, display_text(d.message));
  out += " [" + id + "]\n";
  if (!located) return;

  PresumedLocation loc = sources_.presumed(d.range.begin);
  std::string_view line = sources_.line_text(d.range.begin);
  SourceOffset line_begin = sources_.line_start(loc.file, loc.line);
  SourceOffset line_end = line_begin + static_cast<SourceOffset>(line.size());
  out += display_text(line);
  out += "\n";

  // Caret at the start, tildes over the rest of the range on this line,
  // counted in the columns of the line as displayed (an invalid byte shown
  // as <XX> takes four).
  std::string_view before(sources_.pointer(line_begin), std::min(d.range.begin, line_end) - line_begin);
  std::string marker(display_width(before), ' ');
  marker += '^';
  SourceOffset underline_end = std::min(std::max(d.range.end, d.range.begin), line_end);
  if (underline_end > d.range.begin + 1) {
    std::string_view covered(sources_.pointer(d.range.begin), underline_end - d.range.begin);
    uint32_t width = display_width(covered);
    if (width > 1) marker += std::string(width - 1, '~');
  }
  paint(kGreen, marker);
  out += "\n";

  // Fix-its on this line: the replacement text printed under where it goes.
  for (const FixIt& fix : d.fix_its) {
    if (fix.range.begin < line_begin || fix.range.begin > line_end) continue;
    // Multi-line and whitespace-only replacements would print as nothing useful.
    if (fix.replacement.find('\n') != std::string::npos) continue;
    if (fix.replacement.find_first_not_of(" \t") == std::string::npos) continue;
    std::string_view prefix(sources_.pointer(line_begin), fix.range.begin - line_begin);
    std::string text(display_width(prefix), ' ');
    text += display_text(fix.replacement);
    paint(kGreen, text);
    out += "\n";
  }
}

void TextDiagnosticPrinter::handle(const Diagnostic& diagnostic) {
  std::string text = render(diagnostic);
  std::fwrite(text.data(), 1, text.size(), out_);
  std::fflush(out_);
}

}  // namespace tessera
