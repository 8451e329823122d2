// The diagnostics engine.
//
// Every message tesserac prints to a user is a `Diagnostic` of a registered
// kind (diagnostic_kinds.def). Code emits one with typed arguments:
//
//   diags.emit<diag::LexUnclosedBracket>(range, "(")
//       .note<diag::NoteOpeningBracketHere>(open_range, "(")
//       .fix_it_insert(offset, ")");
//
// The engine buffers diagnostics and hands them, sorted by location, to a
// consumer on `flush()`: the text printer (clang-style rendering) or the
// -verify checker. It applies -Werror, -w and the error limit.
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "support/source/source_manager.h"

namespace tessera {

enum class Severity : uint8_t { Note, Warning, Error };

enum class DiagnosticKind : uint16_t {
#define TESSERA_DIAGNOSTIC(Name, Sev, Id, Format, ...) Name,
#include "support/diagnostics/diagnostic_kinds.def"
#undef TESSERA_DIAGNOSTIC
};

namespace diag {
#define TESSERA_DIAGNOSTIC(Name, Sev, Id, Format, ...) inline constexpr DiagnosticKind Name = DiagnosticKind::Name;
#include "support/diagnostics/diagnostic_kinds.def"
#undef TESSERA_DIAGNOSTIC
}  // namespace diag

struct DiagnosticKindInfo {
  DiagnosticKind kind;
  Severity severity;
  std::string_view id;      // stable name printed in brackets
  std::string_view format;  // fmt format string
};

const DiagnosticKindInfo& diagnostic_info(DiagnosticKind kind);
const std::vector<DiagnosticKindInfo>& all_diagnostic_kinds();
std::string_view severity_name(Severity severity);

// The argument types a kind takes, from the registry.
template <DiagnosticKind K>
struct DiagnosticArgs;
#define TESSERA_DIAGNOSTIC(Name, Sev, Id, Format, ...) \
  template <>                                          \
  struct DiagnosticArgs<DiagnosticKind::Name> {        \
    using Types = std::tuple<__VA_ARGS__>;             \
  };
#include "support/diagnostics/diagnostic_kinds.def"
#undef TESSERA_DIAGNOSTIC

struct FixIt {
  SourceRange range;  // replaced text; empty for an insertion
  std::string replacement;
};

struct Diagnostic {
  DiagnosticKind kind;
  Severity severity;  // after -Werror promotion
  bool promoted = false;
  bool has_location = true;
  SourceRange range;  // caret at range.begin, underline to range.end
  std::string message;
  std::vector<FixIt> fix_its;
  std::vector<Diagnostic> notes;
};

class DiagnosticConsumer {
 public:
  virtual ~DiagnosticConsumer() = default;
  virtual void handle(const Diagnostic& diagnostic) = 0;
};

struct DiagnosticOptions {
  bool warnings_as_errors = false;
  bool suppress_warnings = false;
  uint32_t error_limit = 20;  // 0: unlimited
};

class DiagnosticEngine;

// Collects notes and fix-its for one diagnostic; the diagnostic is committed
// to the engine when the builder goes out of scope.
class DiagnosticBuilder {
 public:
  DiagnosticBuilder(DiagnosticEngine* engine, Diagnostic diagnostic)
      : engine_(engine), diagnostic_(std::move(diagnostic)) {}
  DiagnosticBuilder(const DiagnosticBuilder&) = delete;
  DiagnosticBuilder& operator=(const DiagnosticBuilder&) = delete;
  DiagnosticBuilder(DiagnosticBuilder&& other) noexcept
      : engine_(std::exchange(other.engine_, nullptr)), diagnostic_(std::move(other.diagnostic_)) {}
  ~DiagnosticBuilder();

  template <DiagnosticKind K, typename... Args>
  DiagnosticBuilder& note(SourceRange range, Args&&... args);
  DiagnosticBuilder& fix_it_replace(SourceRange range, std::string replacement) {
    diagnostic_.fix_its.push_back({range, std::move(replacement)});
    return *this;
  }
  // A fix-it of the last note added (shown under the note's line).
  DiagnosticBuilder& note_fix_it_insert(SourceOffset offset, std::string text) {
    if (!diagnostic_.notes.empty()) diagnostic_.notes.back().fix_its.push_back({SourceRange::at(offset), std::move(text)});
    return *this;
  }
  DiagnosticBuilder& fix_it_insert(SourceOffset offset, std::string text) {
    return fix_it_replace(SourceRange::at(offset), std::move(text));
  }

 private:
  DiagnosticEngine* engine_;
  Diagnostic diagnostic_;
};

template <DiagnosticKind K, typename... Args>
std::string format_diagnostic_message(Args&&... args) {
  using Expected = typename DiagnosticArgs<K>::Types;
  static_assert(std::tuple_size_v<Expected> == sizeof...(Args), "wrong number of diagnostic arguments");
  static_assert(std::is_constructible_v<Expected, Args&&...>, "diagnostic argument types do not match the registry");
  Expected typed(std::forward<Args>(args)...);
  return std::apply(
      [](const auto&... values) { return fmt::format(fmt::runtime(diagnostic_info(K).format), values...); }, typed);
}

class DiagnosticEngine {
 public:
  DiagnosticEngine(const SourceManager& sources, DiagnosticConsumer& consumer, DiagnosticOptions options = {})
      : sources_(sources), consumer_(&consumer), options_(options) {}

  template <DiagnosticKind K, typename... Args>
  DiagnosticBuilder emit(SourceRange range, Args&&... args) {
    Diagnostic d{K,     diagnostic_info(K).severity,
                 false, true,
                 range, format_diagnostic_message<K>(std::forward<Args>(args)...),
                 {},    {}};
    return DiagnosticBuilder(this, std::move(d));
  }
  // A diagnostic about the invocation rather than a place in a file.
  template <DiagnosticKind K, typename... Args>
  DiagnosticBuilder emit_global(Args&&... args) {
    Diagnostic d{
        K, diagnostic_info(K).severity, false, false, {}, format_diagnostic_message<K>(std::forward<Args>(args)...), {},
        {}};
    return DiagnosticBuilder(this, std::move(d));
  }

  // Reports a diagnostic built elsewhere (replaying one collected by another
  // engine), applying this engine's options.
  void report(Diagnostic diagnostic) { commit(std::move(diagnostic)); }

  // A note attached to every error and warning reported until it is popped,
  // innermost first (clang's "in instantiation of ... requested here"): the
  // diagnostics are sorted by location when flushed, so a note reported on
  // its own could land after another statement's error.
  template <DiagnosticKind K, typename... Args>
  void push_context(SourceRange range, Args&&... args) {
    context_.push_back(
        Diagnostic{K, Severity::Note, false, true, range, format_diagnostic_message<K>(std::forward<Args>(args)...), {}, {}});
  }
  void pop_context() { context_.pop_back(); }

  // Sends the buffered diagnostics, sorted by location, to the consumer.
  void flush();

  uint32_t error_count() const { return error_count_; }
  uint32_t warning_count() const { return warning_count_; }
  bool has_errors() const { return error_count_ > 0; }
  // True once the error limit is reached: phases should wind down.
  bool should_stop() const { return limit_reached_; }

  const SourceManager& sources() const { return sources_; }
  DiagnosticOptions& options() { return options_; }
  const DiagnosticOptions& options() const { return options_; }
  void set_consumer(DiagnosticConsumer& consumer) { consumer_ = &consumer; }

 private:
  friend class DiagnosticBuilder;
  void commit(Diagnostic diagnostic);

  const SourceManager& sources_;
  DiagnosticConsumer* consumer_;
  DiagnosticOptions options_;
  std::vector<Diagnostic> pending_;
  std::vector<Diagnostic> context_;
  uint32_t error_count_ = 0;
  uint32_t warning_count_ = 0;
  bool limit_reached_ = false;
};

template <DiagnosticKind K, typename... Args>
DiagnosticBuilder& DiagnosticBuilder::note(SourceRange range, Args&&... args) {
  Diagnostic n{K, Severity::Note, false, true, range, format_diagnostic_message<K>(std::forward<Args>(args)...), {},
               {}};
  diagnostic_.notes.push_back(std::move(n));
  return *this;
}

// Clang-style rendering:
//   file:line:col: error: message [kind]
//     source line
//         ^~~~
struct TextPrinterOptions {
  bool color = false;
};

class TextDiagnosticPrinter : public DiagnosticConsumer {
 public:
  TextDiagnosticPrinter(const SourceManager& sources, std::FILE* out, TextPrinterOptions options = {})
      : sources_(sources), out_(out), options_(options) {}
  void handle(const Diagnostic& diagnostic) override;
  std::string render(const Diagnostic& diagnostic) const;

 private:
  void render_one(std::string& out, const Diagnostic& diagnostic) const;
  const SourceManager& sources_;
  std::FILE* out_;
  TextPrinterOptions options_;
};

// Collects diagnostics in memory (tests, -verify).
class CollectingDiagnosticConsumer : public DiagnosticConsumer {
 public:
  void handle(const Diagnostic& diagnostic) override { diagnostics.push_back(diagnostic); }
  std::vector<Diagnostic> diagnostics;
};

// Appends the id of every diagnostic it sees to the file named by the
// environment variable TESSERA_DIAGNOSTIC_LOG, when set; the test suite uses
// it to prove that every registered kind is exercised.
void log_diagnostic_kind_for_coverage(const Diagnostic& diagnostic);

}  // namespace tessera
