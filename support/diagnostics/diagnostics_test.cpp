#include "support/diagnostics/diagnostics.h"

#include <doctest/doctest.h>

#include <set>

#include "support/diagnostics/verify.h"
#include "support/source/escape.h"

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

TEST_CASE("the same diagnostic twice is shown and counted once") {
  Fixture f;
  f.diags.emit<diag::LexUnclosedBracket>(SourceRange{f.at(4), f.at(5)}, std::string("("));
  f.diags.emit<diag::LexUnclosedBracket>(SourceRange{f.at(4), f.at(5)}, std::string("("));
  f.diags.emit<diag::LexUnclosedBracket>(SourceRange{f.at(4), f.at(6)}, std::string("("));  // another range
  f.diags.flush();
  CHECK(f.consumer.diagnostics.size() == 2);
  CHECK(f.diags.error_count() == 2);
}

TEST_CASE("context notes follow each error and warning reported while pushed, innermost first") {
  Fixture f;
  f.diags.push_context<diag::NoteJitInstance>(SourceRange::at(f.at(9)), std::string("outer"), std::string("f32"));
  f.diags.push_context<diag::NoteJitInstance>(SourceRange::at(f.at(2)), std::string("inner"), std::string("f32"));
  f.diags.emit<diag::LexStrayBackslash>(SourceRange::at(f.at(1)));
  f.diags.pop_context();
  f.diags.emit<diag::LexUnknownEscape>(SourceRange::at(f.at(3)), std::string("q"));
  f.diags.pop_context();
  f.diags.emit<diag::LexStrayBackslash>(SourceRange::at(f.at(5)));
  // The same error again under another context: shown once, as first seen.
  f.diags.push_context<diag::NoteJitInstance>(SourceRange::at(f.at(9)), std::string("again"), std::string("i32"));
  f.diags.emit<diag::LexStrayBackslash>(SourceRange::at(f.at(1)));
  f.diags.pop_context();
  f.diags.flush();
  REQUIRE(f.consumer.diagnostics.size() == 3);
  const Diagnostic& inner = f.consumer.diagnostics[0];
  REQUIRE(inner.notes.size() == 2);
  CHECK(inner.notes[0].message == "in 'inner' instantiated for (f32) here");
  CHECK(inner.notes[1].message == "in 'outer' instantiated for (f32) here");
  REQUIRE(f.consumer.diagnostics[1].notes.size() == 1);  // the warning, under 'outer' alone
  CHECK(f.consumer.diagnostics[1].notes[0].message == "in 'outer' instantiated for (f32) here");
  CHECK(f.consumer.diagnostics[2].notes.empty());
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
  for (uint32_t i = 0; i < 5; ++i) f.diags.emit<diag::LexStrayBackslash>(SourceRange::at(f.at(i)));
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

// A fixture with its own text, for rendering tests.
struct Rendered {
  SourceManager sources;
  FileId file;
  explicit Rendered(std::string text) : file(sources.add_file("r.tsr", std::move(text))) {}
  SourceOffset at(uint32_t offset) const { return sources.file_begin(file) + offset; }
  std::string render(const Diagnostic& d) const { return TextDiagnosticPrinter(sources, stderr).render(d); }
};

Diagnostic make(DiagnosticKind kind, Severity severity, SourceRange range, std::string message) {
  return Diagnostic{kind, severity, false, true, range, std::move(message), {}, {}};
}

TEST_CASE("typed emission formats every argument in order") {
  Fixture f;
  f.diags.emit<diag::LexInvalidNumber>(SourceRange{f.at(4), f.at(5)}, std::string("octal"), std::string("0o9"),
                                       std::string("bad digit"));
  f.diags.emit<diag::LexInvalidUtf8>(SourceRange::at(f.at(6)), 0xABu);
  f.diags.flush();
  REQUIRE(f.consumer.diagnostics.size() == 2);
  CHECK(f.consumer.diagnostics[0].message == "invalid octal literal '0o9': bad digit");
  CHECK(f.consumer.diagnostics[0].kind == diag::LexInvalidNumber);
  CHECK(f.consumer.diagnostics[0].range == SourceRange{f.at(4), f.at(5)});
  CHECK(f.consumer.diagnostics[1].message == "invalid UTF-8 byte 0xAB in source");
  CHECK(format_diagnostic_message<diag::DriverTooManyErrors>() ==
        "too many errors emitted, stopping now (use -ferror-limit=0 to see all)");
}

TEST_CASE("the builder commits once, with its notes and fix-its, when it goes out of scope") {
  Fixture f;
  {
    DiagnosticBuilder builder = f.diags.emit<diag::ParseDuplicateParameter>(SourceRange::at(f.at(9)), std::string("y"));
    builder.note<diag::NotePreviousDefinition>(SourceRange::at(f.at(0)), std::string("y"));
    builder.fix_it_replace(SourceRange{f.at(9), f.at(10)}, "z");
    DiagnosticBuilder moved = std::move(builder);
    moved.fix_it_insert(f.at(11), "!");
    f.diags.flush();
    CHECK(f.consumer.diagnostics.empty());  // not committed yet
  }
  f.diags.flush();
  REQUIRE(f.consumer.diagnostics.size() == 1);
  const Diagnostic& d = f.consumer.diagnostics[0];
  REQUIRE(d.notes.size() == 1);
  CHECK(d.notes[0].severity == Severity::Note);
  CHECK(d.notes[0].message == "'y' first appears here");
  REQUIRE(d.fix_its.size() == 2);
  CHECK(d.fix_its[0].replacement == "z");
  CHECK(d.fix_its[1].range.empty());
  CHECK(f.diags.error_count() == 1);
}

TEST_CASE("counts of errors and warnings; notes count as neither") {
  Fixture f;
  CHECK_FALSE(f.diags.has_errors());
  f.diags.emit<diag::LexUnknownEscape>(SourceRange::at(f.at(0)), std::string("q"));
  CHECK(f.diags.warning_count() == 1);
  CHECK_FALSE(f.diags.has_errors());
  f.diags.emit<diag::LexMismatchedBracket>(SourceRange::at(f.at(1)), std::string(")"), std::string("["))
      .note<diag::NoteOpeningBracketHere>(SourceRange::at(f.at(0)), std::string("["));
  CHECK(f.diags.error_count() == 1);
  CHECK(f.diags.warning_count() == 1);
  CHECK(f.diags.has_errors());
}

TEST_CASE("flush keeps emission order at one position and empties the buffer") {
  Fixture f;
  f.diags.emit<diag::LexStrayBackslash>(SourceRange::at(f.at(5)));
  f.diags.emit<diag::LexUnknownEscape>(SourceRange::at(f.at(5)), std::string("a"));
  f.diags.emit<diag::LexUnknownEscape>(SourceRange::at(f.at(5)), std::string("b"));
  f.diags.emit<diag::LexUnknownEscape>(SourceRange::at(f.at(1)), std::string("c"));
  f.diags.flush();
  REQUIRE(f.consumer.diagnostics.size() == 4);
  CHECK(f.consumer.diagnostics[0].message.find("'\\c'") != std::string::npos);
  CHECK(f.consumer.diagnostics[1].kind == diag::LexStrayBackslash);
  CHECK(f.consumer.diagnostics[2].message.find("'\\a'") != std::string::npos);
  CHECK(f.consumer.diagnostics[3].message.find("'\\b'") != std::string::npos);
  f.diags.flush();
  CHECK(f.consumer.diagnostics.size() == 4);  // nothing sent twice
}

TEST_CASE("diagnostics in several files sort by file, then position") {
  SourceManager sources;
  CollectingDiagnosticConsumer consumer;
  DiagnosticEngine diags(sources, consumer);
  FileId a = sources.add_file("a.tsr", "aaaa");
  FileId b = sources.add_file("b.tsr", "bbbb");
  diags.emit<diag::LexStrayBackslash>(SourceRange::at(sources.file_begin(b)));
  diags.emit<diag::LexStrayBackslash>(SourceRange::at(sources.file_begin(a) + 3));
  diags.flush();
  REQUIRE(consumer.diagnostics.size() == 2);
  CHECK(sources.file_containing(consumer.diagnostics[0].range.begin) == a);
  CHECK(sources.file_containing(consumer.diagnostics[1].range.begin) == b);
}

TEST_CASE("-Werror promotion counts as an error and -w only drops warnings") {
  Fixture f;
  f.diags.options().warnings_as_errors = true;
  f.diags.emit<diag::LexFloatOutOfRange>(SourceRange::at(f.at(0)), std::string("1e999"), std::string("infinity"));
  CHECK(f.diags.error_count() == 1);
  CHECK(f.diags.warning_count() == 0);
  f.diags.flush();
  REQUIRE(f.consumer.diagnostics.size() == 1);
  CHECK(f.consumer.diagnostics[0].kind == diag::LexFloatOutOfRange);  // the kind is kept

  Fixture g;
  g.diags.options().suppress_warnings = true;
  g.diags.options().warnings_as_errors = true;  // -w wins: nothing left to promote
  g.diags.emit<diag::LexUnknownEscape>(SourceRange::at(g.at(0)), std::string("q"));
  g.diags.emit<diag::LexStrayBackslash>(SourceRange::at(g.at(1)));
  g.diags.flush();
  REQUIRE(g.consumer.diagnostics.size() == 1);
  CHECK(g.consumer.diagnostics[0].kind == diag::LexStrayBackslash);
  CHECK(g.diags.warning_count() == 0);
  CHECK(g.diags.error_count() == 1);
}

TEST_CASE("report() replays a diagnostic under this engine's options") {
  Fixture f;
  f.diags.options().warnings_as_errors = true;
  f.diags.report(make(diag::LexUnknownEscape, Severity::Warning, SourceRange::at(f.at(0)), "m"));
  f.diags.flush();
  REQUIRE(f.consumer.diagnostics.size() == 1);
  CHECK(f.consumer.diagnostics[0].severity == Severity::Error);
  CHECK(f.consumer.diagnostics[0].promoted);
}

TEST_CASE("error limit: exactly N errors, then one global stop diagnostic, sorted last") {
  Fixture f;
  f.diags.options().error_limit = 3;
  for (uint32_t i = 0; i < 6; ++i) {
    f.diags.emit<diag::LexStrayBackslash>(SourceRange::at(f.at(10 - i)))
        .note<diag::NoteOpeningBracketHere>(SourceRange::at(f.at(0)), std::string("("));
    CHECK(f.diags.should_stop() == (i >= 3));
  }
  f.diags.emit_global<diag::DriverCannotWriteOutput>(std::string("o"), std::string("r"));  // dropped too
  f.diags.flush();
  REQUIRE(f.consumer.diagnostics.size() == 4);
  for (int i = 0; i < 3; ++i) CHECK(f.consumer.diagnostics[i].kind == diag::LexStrayBackslash);
  const Diagnostic& stop = f.consumer.diagnostics[3];
  CHECK(stop.kind == diag::DriverTooManyErrors);
  CHECK_FALSE(stop.has_location);
  CHECK(stop.notes.empty());
  CHECK(f.diags.error_count() == 3);
  CHECK(Rendered("").render(stop) ==
        "tesserac: error: too many errors emitted, stopping now (use -ferror-limit=0 to see all) "
        "[driver.too-many-errors]\n");
}

TEST_CASE("an error limit of 0 means no limit") {
  Fixture f;
  f.diags.options().error_limit = 0;
  for (uint32_t i = 0; i < 40; ++i) f.diags.emit<diag::LexStrayBackslash>(SourceRange::at(f.at(i)));
  f.diags.flush();
  CHECK(f.consumer.diagnostics.size() == 40);
  CHECK_FALSE(f.diags.should_stop());
}

TEST_CASE("render: warning, with range") {
  Rendered r("s = \"\\q\"\n");
  Diagnostic d = make(diag::LexUnknownEscape, Severity::Warning, SourceRange{r.at(5), r.at(7)}, "unknown");
  CHECK(r.render(d) ==
        "r.tsr:1:6: warning: unknown [lex.unknown-escape]\n"
        "s = \"\\q\"\n"
        "     ^~\n");
}

TEST_CASE("render: a promoted warning names -Werror in the kind brackets") {
  Rendered r("x\n");
  Diagnostic d = make(diag::LexUnknownEscape, Severity::Error, SourceRange::at(r.at(0)), "m");
  d.promoted = true;
  CHECK(r.render(d) ==
        "r.tsr:1:1: error: m [lex.unknown-escape, -Werror]\n"
        "x\n"
        "^\n");
}

TEST_CASE("render: a diagnostic without a location names the tool") {
  Rendered r("");
  Diagnostic d = make(diag::DriverCannotOpenInput, Severity::Error, {}, "cannot open input file 'f': gone");
  d.has_location = false;
  CHECK(r.render(d) == "tesserac: error: cannot open input file 'f': gone [driver.cannot-open-input]\n");
}

TEST_CASE("render: the underline stops at the end of the first line of a range") {
  Rendered r("ab(cd\nef)\n");
  Diagnostic d = make(diag::ParseSyntaxError, Severity::Error, SourceRange{r.at(2), r.at(9)}, "m");
  CHECK(r.render(d) ==
        "r.tsr:1:3: error: m [parse.syntax]\n"
        "ab(cd\n"
        "  ^~~\n");
}

TEST_CASE("render: columns and underlines count code points; tabs show as one space") {
  Rendered r("\xC3\xA9\t\xE2\x86\x92\xE2\x86\x92 x\n");  // "é<TAB>→→ x"
  Diagnostic d = make(diag::ParseSyntaxError, Severity::Error, SourceRange{r.at(3), r.at(9)}, "m");
  CHECK(r.render(d) ==
        "r.tsr:1:3: error: m [parse.syntax]\n"
        "\xC3\xA9 \xE2\x86\x92\xE2\x86\x92 x\n"
        "  ^~\n");
}

TEST_CASE("render: a CRLF line is shown without its CR") {
  Rendered r("ab\r\ncd\r\n");
  Diagnostic d = make(diag::ParseSyntaxError, Severity::Error, SourceRange{r.at(4), r.at(6)}, "m");
  CHECK(r.render(d) ==
        "r.tsr:2:1: error: m [parse.syntax]\n"
        "cd\n"
        "^~\n");
}

TEST_CASE("render: fix-its on the line print under the caret; others are left out") {
  Rendered r("def f(x):\n    x[0] = 1\n");
  Diagnostic d = make(diag::ParseSyntaxError, Severity::Error, SourceRange{r.at(6), r.at(7)}, "m");
  d.fix_its.push_back({SourceRange::at(r.at(6)), "mut "});    // insertion
  d.fix_its.push_back({SourceRange{r.at(4), r.at(5)}, "g"});  // replacement
  d.fix_its.push_back({SourceRange::at(r.at(9)), ""});        // empty text: nothing to show
  d.fix_its.push_back({SourceRange::at(r.at(9)), "  "});      // whitespace only: nothing to show
  d.fix_its.push_back({SourceRange::at(r.at(6)), "a\nb"});    // several lines: left out
  d.fix_its.push_back({SourceRange::at(r.at(14)), "mut"});    // on another line: left out
  CHECK(r.render(d) ==
        "r.tsr:1:7: error: m [parse.syntax]\n"
        "def f(x):\n"
        "      ^\n"
        "      mut \n"
        "    g\n");
}

TEST_CASE("render: a fix-it at the very end of the line is shown") {
  Rendered r("f(a\n");
  Diagnostic d = make(diag::LexUnclosedBracket, Severity::Error, SourceRange{r.at(1), r.at(2)}, "m");
  d.fix_its.push_back({SourceRange::at(r.at(3)), ")"});
  CHECK(r.render(d) ==
        "r.tsr:1:2: error: m [lex.unclosed-bracket]\n"
        "f(a\n"
        " ^\n"
        "   )\n");
}

TEST_CASE("render: a diagnostic at the end of the file") {
  Rendered r("x = (");
  Diagnostic d = make(diag::ParseSyntaxError, Severity::Error, SourceRange::at(r.sources.file_end(r.file)), "m");
  CHECK(r.render(d) ==
        "r.tsr:1:6: error: m [parse.syntax]\n"
        "x = (\n"
        "     ^\n");
}

TEST_CASE("render: notes from another file use that file's name and line") {
  SourceManager sources;
  FileId a = sources.add_file("a.tsr", "one\n");
  FileId b = sources.add_file("b.tsr", "x\ntwo\n");
  Diagnostic d = make(diag::ParseDuplicateParameter, Severity::Error, SourceRange::at(sources.file_begin(a)), "dup");
  d.notes.push_back(
      make(diag::NotePreviousDefinition, Severity::Note, SourceRange::at(sources.file_begin(b) + 2), "first"));
  CHECK(TextDiagnosticPrinter(sources, stderr).render(d) ==
        "a.tsr:1:1: error: dup [parse.duplicate-parameter]\n"
        "one\n"
        "^\n"
        "b.tsr:2:1: note: first [note.previous-definition]\n"
        "two\n"
        "^\n");
}

TEST_CASE("render with colour: bold location, red error, green caret") {
  Rendered r("x\n");
  Diagnostic d = make(diag::LexStrayBackslash, Severity::Error, SourceRange::at(r.at(0)), "m");
  std::string text = TextDiagnosticPrinter(r.sources, stderr, {true}).render(d);
  CHECK(text ==
        "\033[1mr.tsr:1:1: \033[0m\033[1;31merror: \033[0m\033[1mm\033[0m [lex.stray-backslash]\n"
        "x\n"
        "\033[1;32m^\033[0m\n");
}

TEST_CASE("the registry: severities and ids of the frontend kinds") {
  CHECK(diagnostic_info(diag::LexUnknownEscape).severity == Severity::Warning);
  CHECK(diagnostic_info(diag::LexFloatOutOfRange).severity == Severity::Warning);
  CHECK(diagnostic_info(diag::NoteOpeningBracketHere).severity == Severity::Note);
  CHECK(diagnostic_info(diag::DriverTooManyErrors).severity == Severity::Error);
  CHECK(diagnostic_info(diag::VerifyNoDirectives).id == "verify.no-directives");
  CHECK(severity_name(Severity::Note) == "note");
  CHECK(severity_name(Severity::Warning) == "warning");
  CHECK(severity_name(Severity::Error) == "error");
  for (const DiagnosticKindInfo& info : all_diagnostic_kinds()) {
    CHECK(&diagnostic_info(info.kind) == &info);
    CHECK_FALSE(info.format.empty());
  }
}

// -verify, driven directly.
struct Verify {
  SourceManager sources;
  FileId file;
  std::vector<SourceRange> comments;
  explicit Verify(std::string text) : file(sources.add_file("v.tsr", text)) {
    // Every '#' starts a comment that runs to the end of its line.
    SourceOffset base = sources.file_begin(file);
    for (size_t i = 0; i < text.size(); ++i) {
      if (text[i] != '#') continue;
      size_t end = text.find('\n', i);
      if (end == std::string::npos) end = text.size();
      comments.push_back(SourceRange{base + static_cast<SourceOffset>(i), base + static_cast<SourceOffset>(end)});
      i = end;
    }
  }
  SourceOffset line(uint32_t n) const { return sources.line_start(file, n); }
  Diagnostic error_on(uint32_t n, std::string message) const {
    return make(diag::ParseSyntaxError, Severity::Error, SourceRange::at(line(n)), std::move(message));
  }
  VerifyResult run(std::vector<Diagnostic> emitted) const {
    return verify_diagnostics(sources, file, comments, emitted);
  }
};

TEST_CASE("-verify: relative, absolute and any-line directives") {
  Verify v(
      "# expected-error@+1 {{one}}\nx\ny  # expected-error@-1 {{two}}\n# expected-error@1 {{three}}\n"
      "# expected-error@* {{four}}\n");
  VerifyResult ok =
      v.run({v.error_on(2, "one!"), v.error_on(2, "two!"), v.error_on(1, "three"), v.error_on(5, "four")});
  CHECK(ok.ok);
  CHECK(ok.report.empty());
}

TEST_CASE("-verify: @* also matches a diagnostic without a location") {
  Verify v("# expected-error@* {{gone}}\n");
  Diagnostic global = make(diag::DriverCannotOpenInput, Severity::Error, {}, "it is gone");
  global.has_location = false;
  CHECK(v.run({global}).ok);
}

TEST_CASE("-verify: counts, notes and severities") {
  Verify v("x  # expected-error 2 {{e}} expected-note {{n}} expected-warning {{w}}\n");
  Diagnostic error = v.error_on(1, "e");
  error.notes.push_back(make(diag::NotePreviousDefinition, Severity::Note, SourceRange::at(v.line(1)), "n"));
  Diagnostic warning = make(diag::LexUnknownEscape, Severity::Warning, SourceRange::at(v.line(1)), "w");
  CHECK(v.run({error, v.error_on(1, "e"), warning}).ok);

  VerifyResult too_few = v.run({error, warning});
  CHECK_FALSE(too_few.ok);
  CHECK(too_few.report == "error: 'error' diagnostics expected but not seen:\n  File v.tsr Line 1: e\n");

  // A warning does not satisfy an error directive, nor the other way round.
  Diagnostic as_error = warning;
  as_error.severity = Severity::Error;
  VerifyResult wrong = v.run({error, v.error_on(1, "e"), as_error});
  CHECK_FALSE(wrong.ok);
  CHECK(wrong.report.find("'warning' diagnostics expected but not seen") != std::string::npos);
  CHECK(wrong.report.find("'error' diagnostics seen but not expected:\n  File v.tsr Line 1: w\n") != std::string::npos);
}

TEST_CASE("-verify: expected-no-diagnostics") {
  Verify v("# expected-no-diagnostics\nx\n");
  CHECK(v.run({}).ok);
  VerifyResult result = v.run({v.error_on(2, "surprise")});
  CHECK_FALSE(result.ok);
  CHECK(result.report == "error: 'error' diagnostics seen but not expected:\n  File v.tsr Line 2: surprise\n");
}

TEST_CASE("-verify: no directive at all is an error at the start of the file") {
  Verify v("x = 1  # just a comment\n");
  VerifyResult result = v.run({});
  CHECK_FALSE(result.ok);
  CHECK(result.report.find("v.tsr:1:1: error: no expected-error/warning/note directives found") == 0);
  CHECK(result.report.find("[verify.no-directives]") != std::string::npos);
}

TEST_CASE("-verify: malformed directives are reported at their comment") {
  for (const char* text : {"x  # expected-eror {{a}}\n", "x  # expected-error {{a\n", "x  # expected-error a\n",
                           "x  # expected-error@ {{a}}\n", "x  # expected-error@-5 {{a}}\n"}) {
    CAPTURE(text);
    Verify v(text);
    VerifyResult result = v.run({});
    CHECK_FALSE(result.ok);
    CHECK(result.report.find("v.tsr:1:4: error: malformed -verify directive: ") == 0);
    CHECK(result.report.find("[verify.malformed-directive]") != std::string::npos);
  }
}

TEST_CASE("-verify: a directive must start a word") {
  Verify v("# see parse.unexpected-indent or x_expected-error {{a}}\n# expected-no-diagnostics\n");
  CHECK(v.run({}).ok);
}

TEST_CASE("display text: invalid UTF-8 bytes as <XX>, tabs as spaces, widths in displayed columns") {
  CHECK(display_text("caf\xc3\xa9") == "caf\xc3\xa9");  // valid UTF-8 passes through
  CHECK(display_text("a\tb") == "a b");
  CHECK(display_text("caf\xe9 \xff") == "caf<E9> <FF>");
  CHECK(display_text("\xc0\xaf") == "<C0><AF>");          // an overlong '/'
  CHECK(display_text("\xed\xa0\x80") == "<ED><A0><80>");  // a surrogate
  CHECK(display_text("\xe2\x82") == "<E2><82>");          // truncated
  CHECK(display_width("caf\xc3\xa9") == 4);
  CHECK(display_width("caf\xe9 \xff") == 12);
  CHECK(display_width("\xf0\x9f\x98\x80x") == 2);
}

}  // namespace
}  // namespace tessera
