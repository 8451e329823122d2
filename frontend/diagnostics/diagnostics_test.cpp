#include "frontend/diagnostics/diagnostics.h"

#include <doctest/doctest.h>

#include <set>

#include "frontend/diagnostics/verify.h"

namespace tessera {
namespace {

struct Fixture {
  SourceManager sources;
  CollectingDiagnosticConsumer consumer;
  DiagnosticEngine diags{sources, consumer};
  FileId file = sources.add_file("t.tsr", "x = (1 +\ny = 2  # expected-error {{bad}}\n");
  SourceOffset at(uint32_t offset) const { return sources.file_begin(file) + offset; }
};

TEST_CASE("typed emission formats the registry's message") {
  Fixture f;
  f.diags.emit<diag::LexUnclosedBracket>(SourceRange{f.at(4), f.at(5)}, std::string("("));
  f.diags.flush();
  REQUIRE(f.consumer.diagnostics.size() == 1);
  CHECK(f.consumer.diagnostics[0].message == "'(' was never closed");
  CHECK(f.consumer.diagnostics[0].severity == Severity::Error);
  CHECK(f.diags.error_count() == 1);
}

TEST_CASE("diagnostics are flushed sorted by location, global ones first") {
  Fixture f;
  f.diags.emit<diag::LexStrayBackslash>(SourceRange::at(f.at(9)));
  f.diags.emit<diag::LexStrayBackslash>(SourceRange::at(f.at(2)));
  f.diags.emit_global<diag::DriverCannotOpenInput>(std::string("a"), std::string("b"));
  f.diags.flush();
  REQUIRE(f.consumer.diagnostics.size() == 3);
  CHECK_FALSE(f.consumer.diagnostics[0].has_location);
  CHECK(f.consumer.diagnostics[1].range.begin == f.at(2));
  CHECK(f.consumer.diagnostics[2].range.begin == f.at(9));
}

TEST_CASE("-Werror promotes and -w suppresses warnings") {
  Fixture f;
  f.diags.options().warnings_as_errors = true;
  f.diags.emit<diag::LexUnknownEscape>(SourceRange::at(f.at(0)), std::string("q"));
  f.diags.flush();
  REQUIRE(f.consumer.diagnostics.size() == 1);
  CHECK(f.consumer.diagnostics[0].severity == Severity::Error);
  CHECK(f.consumer.diagnostics[0].promoted);

  Fixture g;
  g.diags.options().suppress_warnings = true;
  g.diags.emit<diag::LexUnknownEscape>(SourceRange::at(g.at(0)), std::string("q"));
  g.diags.flush();
  CHECK(g.consumer.diagnostics.empty());
}

TEST_CASE("the error limit stops with one final diagnostic") {
  Fixture f;
  f.diags.options().error_limit = 2;
  for (int i = 0; i < 5; ++i) f.diags.emit<diag::LexStrayBackslash>(SourceRange::at(f.at(0)));
  f.diags.flush();
  CHECK(f.diags.should_stop());
  REQUIRE(f.consumer.diagnostics.size() == 3);
  CHECK(f.consumer.diagnostics.back().kind == diag::DriverTooManyErrors);
}

TEST_CASE("rendering: location, kind, source line, caret, range, notes and fix-its") {
  Fixture f;
  Diagnostic d{diag::LexUnclosedBracket,
               Severity::Error,
               false,
               true,
               SourceRange{f.at(4), f.at(7)},
               "'(' was never closed",
               {{SourceRange::at(f.at(8)), ")"}},
               {}};
  d.notes.push_back(Diagnostic{diag::NoteOpeningBracketHere,
                               Severity::Note,
                               false,
                               true,
                               SourceRange{f.at(4), f.at(5)},
                               "opening '(' is here",
                               {},
                               {}});
  TextDiagnosticPrinter printer(f.sources, stderr);
  CHECK(printer.render(d) ==
        "t.tsr:1:5: error: '(' was never closed [lex.unclosed-bracket]\n"
        "x = (1 +\n"
        "    ^~~\n"
        "        )\n"
        "t.tsr:1:5: note: opening '(' is here [note.opening-bracket]\n"
        "x = (1 +\n"
        "    ^\n");
}

TEST_CASE("colour only when asked") {
  Fixture f;
  Diagnostic d{diag::LexStrayBackslash, Severity::Error, false, true, SourceRange::at(f.at(0)), "m", {}, {}};
  CHECK(TextDiagnosticPrinter(f.sources, stderr, {true}).render(d).find("\033[") != std::string::npos);
  CHECK(TextDiagnosticPrinter(f.sources, stderr, {false}).render(d).find("\033[") == std::string::npos);
}

TEST_CASE("every registered kind has a unique id and a severity") {
  std::set<std::string_view> ids;
  for (const DiagnosticKindInfo& info : all_diagnostic_kinds()) {
    CHECK(ids.insert(info.id).second);
    CHECK(info.id.find('.') != std::string_view::npos);
  }
  CHECK(diagnostic_info(diag::ParseSyntaxError).id == "parse.syntax");
}

TEST_CASE("-verify matches directives by severity, line and text") {
  Fixture f;
  SourceOffset comment_begin = f.at(static_cast<uint32_t>(std::string_view("x = (1 +\ny = 2  ").size()));
  std::vector<SourceRange> comments{SourceRange{comment_begin, comment_begin + 24}};
  Diagnostic match{diag::LexStrayBackslash,   Severity::Error, false, true,
                   SourceRange::at(f.at(10)), "a bad thing",   {},    {}};
  CHECK(verify_diagnostics(f.sources, f.file, comments, {match}).ok);
  Diagnostic other_line = match;
  other_line.range = SourceRange::at(f.at(0));
  VerifyResult result = verify_diagnostics(f.sources, f.file, comments, {other_line});
  CHECK_FALSE(result.ok);
  CHECK(result.report.find("expected but not seen") != std::string::npos);
  CHECK(result.report.find("seen but not expected") != std::string::npos);
}

}  // namespace
}  // namespace tessera
