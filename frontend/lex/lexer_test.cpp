#include "frontend/lex/lexer.h"

#include <doctest/doctest.h>

#include <algorithm>

namespace tessera {
namespace {

struct Lexed {
  SourceManager sources;
  CollectingDiagnosticConsumer consumer;
  DiagnosticEngine diags{sources, consumer};
  ValueStores values;
  TokenizedBuffer tokens{FileId{}};

  explicit Lexed(std::string text) {
    FileId file = sources.add_file("t.tsr", std::move(text));
    tokens = lex_file(file, sources, values, diags);
    diags.flush();
  }
  std::vector<TokenKind> kinds() const {
    std::vector<TokenKind> out;
    for (const Token& t : tokens.tokens()) out.push_back(t.kind);
    return out;
  }
};

using K = TokenKind;

TEST_CASE("a simple statement ends with Newline and EndOfFile") {
  Lexed l("x = 1");
  CHECK(l.kinds() == std::vector<K>{K::Identifier, K::Equal, K::IntLiteral, K::Newline, K::EndOfFile});
  CHECK(l.values.identifiers.name(IdentifierId{l.tokens.tokens()[0].payload}) == "x");
  CHECK(l.values.integers[l.tokens.tokens()[2].payload] == 1);
  CHECK(l.consumer.diagnostics.empty());
}

TEST_CASE("indentation produces Indent and Dedent; blank and comment lines do not") {
  Lexed l("if a:\n\n    # c\n    if b:\n        x\ny\n");
  CHECK(l.kinds() == std::vector<K>{K::KwIf, K::Identifier, K::Colon, K::Newline, K::Indent, K::KwIf, K::Identifier,
                                    K::Colon, K::Newline, K::Indent, K::Identifier, K::Newline, K::Dedent, K::Dedent,
                                    K::Identifier, K::Newline, K::EndOfFile});
  CHECK(l.tokens.comments().size() == 1);
}

TEST_CASE("brackets and backslashes join lines") {
  Lexed l("x = (1,\n  2)\ny = 1 + \\\n  2\n");
  std::vector<K> kinds = l.kinds();
  CHECK(std::count(kinds.begin(), kinds.end(), K::Newline) == 2);
  CHECK(std::count(kinds.begin(), kinds.end(), K::Indent) == 0);
}

TEST_CASE("numbers: separators, bases, floats and sizes") {
  Lexed l("1_000 0x1F 0o17 0b11 2.5e3 16_KiB 4MiB");
  const auto& t = l.tokens.tokens();
  CHECK(l.values.integers[t[0].payload] == 1000);
  CHECK(l.values.integers[t[1].payload] == 31);
  CHECK(l.values.integers[t[2].payload] == 15);
  CHECK(l.values.integers[t[3].payload] == 3);
  CHECK(t[4].kind == K::FloatLiteral);
  CHECK(l.values.reals[t[4].payload] == 2500.0);
  CHECK(t[5].kind == K::SizeLiteral);
  CHECK(l.values.integers[t[5].payload] == 16384);
  CHECK(l.values.integers[t[6].payload] == 4u << 20);
}

TEST_CASE("strings decode escapes; f-strings split into parts") {
  Lexed l("'a\\tb' r'a\\tb' f'x{y!r:>4}z'");
  const auto& t = l.tokens.tokens();
  CHECK(l.values.strings[t[0].payload] == "a\tb");
  CHECK(l.values.strings[t[1].payload] == "a\\tb");
  REQUIRE(t[2].kind == K::FStringLiteral);
  const FStringValue& f = l.values.fstrings[t[2].payload];
  REQUIRE(f.parts.size() == 3);
  CHECK(f.parts[0].text == "x");
  CHECK(f.parts[1].is_expression);
  CHECK(f.parts[1].conversion == 'r');
  CHECK(f.parts[1].format_spec == ">4");
  CHECK(f.parts[2].text == "z");
}

TEST_CASE("keywords are identifiers after a dot") {
  Lexed l("a.global.if");
  CHECK(l.kinds() ==
        std::vector<K>{K::Identifier, K::Dot, K::Identifier, K::Dot, K::Identifier, K::Newline, K::EndOfFile});
}

TEST_CASE("lexing continues after errors and closes unclosed brackets") {
  Lexed l("x = $ + (1\n");
  REQUIRE(l.consumer.diagnostics.size() == 2);
  CHECK(l.consumer.diagnostics[0].kind == diag::LexInvalidCharacter);
  CHECK(l.consumer.diagnostics[1].kind == diag::LexUnclosedBracket);
  std::vector<K> kinds = l.kinds();
  CHECK(std::count(kinds.begin(), kinds.end(), K::RParen) == 1);  // synthesised closer
  CHECK(kinds.back() == K::EndOfFile);
}

TEST_CASE("lex_fragment lexes part of a file without layout tokens") {
  SourceManager sources;
  CollectingDiagnosticConsumer consumer;
  DiagnosticEngine diags(sources, consumer);
  ValueStores values;
  FileId file = sources.add_file("t.tsr", "dtype=\"bf16 @accum(f32)\"");
  SourceOffset begin = sources.file_begin(file) + 7;
  TokenizedBuffer tokens = lex_fragment(SourceRange{begin, begin + 16}, sources, values, diags);
  std::vector<K> kinds;
  for (const Token& t : tokens.tokens()) kinds.push_back(t.kind);
  CHECK(kinds ==
        std::vector<K>{K::Identifier, K::At, K::Identifier, K::LParen, K::Identifier, K::RParen, K::EndOfFile});
  CHECK(tokens.tokens()[0].range.begin == begin);
}

TEST_CASE("the scanner knows every keyword of token_kind.def") {
  for (int k = 0; k <= static_cast<int>(K::GreaterGreaterEqual); ++k) {
    auto kind = static_cast<K>(k);
    if (!is_keyword(kind)) continue;
    std::string spelling = token_kind_description(kind);
    spelling = spelling.substr(1, spelling.size() - 2);
    Lexed l(spelling);
    CHECK_MESSAGE(l.tokens.tokens()[0].kind == kind, spelling);
    Lexed dotted("a." + spelling);  // and is a plain name after a dot
    CHECK_MESSAGE(dotted.tokens.tokens()[2].kind == K::Identifier, spelling);
  }
}

TEST_CASE("every keyword of the table round-trips through keyword_for") {
  CHECK(keyword_for("def") == K::KwDef);
  CHECK(keyword_for("mut") == K::KwMut);
  CHECK(keyword_for("yield") == K::KwYield);
  CHECK(is_reserved_unsupported_keyword(K::KwYield));
  CHECK_FALSE(keyword_for("type").has_value());  // a soft keyword
  CHECK(token_kind_description(K::Plus) == "'+'");
  CHECK(token_kind_description(K::Identifier) == "identifier");
}

// The spelling of a token, from the source.
std::string_view spelling(const Lexed& l, const Token& t) {
  return std::string_view(l.sources.pointer(t.range.begin), t.range.end - t.range.begin);
}

TEST_CASE("every punctuation token of token_kind.def lexes to itself") {
  for (int k = 0; k <= static_cast<int>(K::GreaterGreaterEqual); ++k) {
    auto kind = static_cast<K>(k);
    std::string text = token_kind_description(kind);
    if (is_keyword(kind) || text.size() < 3 || text.front() != '\'') continue;
    text = text.substr(1, text.size() - 2);
    // Brackets are checked below: alone, an opener stays open and a closer is unmatched.
    if (kind == K::LParen || kind == K::LBracket || kind == K::LBrace || kind == K::RParen || kind == K::RBracket ||
        kind == K::RBrace) {
      continue;
    }
    CAPTURE(text);
    Lexed l("a " + text + " b");
    REQUIRE(l.tokens.size() == 5);
    CHECK(l.tokens.tokens()[1].kind == kind);
    CHECK(spelling(l, l.tokens.tokens()[1]) == text);
    CHECK(l.consumer.diagnostics.empty());
  }
  Lexed brackets("([{}])");
  CHECK(brackets.kinds() ==
        std::vector<K>{K::LParen, K::LBracket, K::LBrace, K::RBrace, K::RBracket, K::RParen, K::Newline, K::EndOfFile});
}

TEST_CASE("token ranges are the exact source spans") {
  Lexed l("abc  += 0x1F\n");
  const auto& t = l.tokens.tokens();
  SourceOffset base = l.sources.file_begin(FileId{0});
  CHECK(t[0].range == SourceRange{base + 0, base + 3});
  CHECK(t[1].range == SourceRange{base + 5, base + 7});
  CHECK(t[2].range == SourceRange{base + 8, base + 12});
  CHECK(t[3].kind == K::Newline);
  CHECK(t[3].range == SourceRange::at(base + 12));  // right after the last token
  CHECK(t[4].kind == K::EndOfFile);
  CHECK(t[4].range == SourceRange::at(l.sources.file_end(FileId{0})));
}

TEST_CASE("identifiers are interned: one id per spelling") {
  Lexed l("alpha beta alpha x.alpha");
  const auto& t = l.tokens.tokens();
  CHECK(t[0].payload == t[2].payload);
  CHECK(t[0].payload != t[1].payload);
  CHECK(t[5].payload == t[0].payload);  // also after a dot
  CHECK(l.values.identifiers.name(IdentifierId{t[1].payload}) == "beta");
}

TEST_CASE("literal payloads: integers, sizes, floats, strings") {
  Lexed l("0b1_01 0o777 0xFFFFFFFFFFFFFFFF 1GiB 2_MiB .25 1e-10 1. 'a\\x41\\u00e9\\101'");
  const auto& t = l.tokens.tokens();
  CHECK(l.values.integers[t[0].payload] == 5);
  CHECK(l.values.integers[t[1].payload] == 511);
  CHECK(l.values.integers[t[2].payload] == UINT64_MAX);
  CHECK(t[3].kind == K::SizeLiteral);
  CHECK(l.values.integers[t[3].payload] == (uint64_t{1} << 30));
  CHECK(l.values.integers[t[4].payload] == (uint64_t{2} << 20));
  CHECK(l.values.reals[t[5].payload] == 0.25);
  CHECK(l.values.reals[t[6].payload] == 1e-10);
  CHECK(l.values.reals[t[7].payload] == 1.0);
  CHECK(l.values.strings[t[8].payload] == "aA\xC3\xA9" + std::string("A"));
  CHECK(l.consumer.diagnostics.empty());
}

TEST_CASE("bad numbers are reported and still give one token each") {
  Lexed l("18446744073709551616 0x 16_KB 007");
  std::vector<K> kinds = l.kinds();
  CHECK(kinds == std::vector<K>{K::IntLiteral, K::IntLiteral, K::IntLiteral, K::IntLiteral, K::Newline, K::EndOfFile});
  REQUIRE(l.consumer.diagnostics.size() == 4);
  CHECK(l.consumer.diagnostics[0].kind == diag::LexIntegerTooLarge);
  CHECK(l.values.integers[l.tokens.tokens()[0].payload] == 0);
  CHECK(l.consumer.diagnostics[1].kind == diag::LexInvalidNumber);
  CHECK(l.consumer.diagnostics[2].kind == diag::LexInvalidNumberSuffix);
  CHECK(l.consumer.diagnostics[3].kind == diag::LexInvalidNumber);
}

TEST_CASE("strings: quotes, triple quotes, raw; adjacent literals stay separate tokens") {
  Lexed l("'a' \"b\" '''c\nd''' r'\\n' 'x' 'y'");
  const auto& t = l.tokens.tokens();
  CHECK(l.values.strings[t[0].payload] == "a");
  CHECK(l.values.strings[t[1].payload] == "b");
  CHECK(l.values.strings[t[2].payload] == "c\nd");
  CHECK(l.values.strings[t[3].payload] == "\\n");
  CHECK(t[4].kind == K::StringLiteral);
  CHECK(t[5].kind == K::StringLiteral);
  CHECK(t[6].kind == K::Newline);
}

TEST_CASE("f-string parts: text, expression ranges in the file, conversion and spec") {
  Lexed l("f'cuda:{i}{{x}}{a + b!r:>{w}}'");
  REQUIRE(l.tokens.tokens()[0].kind == K::FStringLiteral);
  const FStringValue& f = l.values.fstrings[l.tokens.tokens()[0].payload];
  REQUIRE(f.parts.size() == 4);
  CHECK_FALSE(f.parts[0].is_expression);
  CHECK(f.parts[0].text == "cuda:");
  CHECK(f.parts[1].is_expression);
  SourceOffset base = l.sources.file_begin(FileId{0});
  CHECK(f.parts[1].expression == SourceRange{base + 8, base + 9});
  CHECK(f.parts[1].conversion == 0);
  CHECK(f.parts[2].text == "{x}");
  CHECK(f.parts[3].expression == SourceRange{base + 16, base + 21});
  CHECK(f.parts[3].conversion == 'r');
  CHECK(f.parts[3].format_spec == ">{w}");
}

TEST_CASE("f-string self-documenting fields: the text with '=' first, then the expression without it") {
  Lexed l("f'{x=}{a + b = :.2f}{a==b}{c<=d}'");
  const FStringValue& f = l.values.fstrings[l.tokens.tokens()[0].payload];
  REQUIRE(f.parts.size() == 6);
  SourceOffset base = l.sources.file_begin(FileId{0});
  CHECK(f.parts[0].text == "x=");
  CHECK(f.parts[1].expression == SourceRange{base + 3, base + 4});
  CHECK(f.parts[2].text == "a + b = ");
  CHECK(f.parts[3].expression == SourceRange{base + 7, base + 13});
  CHECK(f.parts[3].format_spec == ".2f");
  CHECK(f.parts[4].is_expression);  // a comparison, not a self-documenting field
  CHECK(f.parts[5].is_expression);
}

TEST_CASE("indentation tokens: ranges and several dedents at once") {
  Lexed l("if a:\n    if b:\n        x\ny\n");
  std::vector<K> kinds = l.kinds();
  CHECK(kinds == std::vector<K>{K::KwIf, K::Identifier, K::Colon, K::Newline, K::Indent, K::KwIf, K::Identifier,
                                K::Colon, K::Newline, K::Indent, K::Identifier, K::Newline, K::Dedent, K::Dedent,
                                K::Identifier, K::Newline, K::EndOfFile});
  SourceOffset base = l.sources.file_begin(FileId{0});
  const auto& t = l.tokens.tokens();
  CHECK(t[4].range == SourceRange{base + 6, base + 10});  // the indentation itself
  CHECK(t[9].range == SourceRange{base + 16, base + 24});
  CHECK(t[12].range == SourceRange::at(base + 26));  // dedents sit where 'y' starts
  CHECK(t[13].range == SourceRange::at(base + 26));
}

TEST_CASE("open blocks are closed at the end of the file") {
  Lexed l("def f():\n    if a:\n        pass");
  std::vector<K> kinds = l.kinds();
  REQUIRE(kinds.size() >= 4);
  CHECK(std::vector<K>(kinds.end() - 4, kinds.end()) == std::vector<K>{K::Newline, K::Dedent, K::Dedent, K::EndOfFile});
}

TEST_CASE("an empty file and a comment-only file have only EndOfFile") {
  CHECK(Lexed("").kinds() == std::vector<K>{K::EndOfFile});
  Lexed comments("# one\n\n   # two\n");
  CHECK(comments.kinds() == std::vector<K>{K::EndOfFile});
  CHECK(comments.tokens.comments().size() == 2);
}

TEST_CASE("comments are recorded with their exact ranges, wherever they are") {
  Lexed l("# top\nx = (1,  # in brackets\n  2)  # trailing\n    # indented\n");
  const auto& comments = l.tokens.comments();
  REQUIRE(comments.size() == 4);
  std::vector<std::string_view> texts;
  for (SourceRange c : comments) texts.emplace_back(l.sources.pointer(c.begin), c.end - c.begin);
  CHECK(texts == std::vector<std::string_view>{"# top", "# in brackets", "# trailing", "# indented"});
}

TEST_CASE("a UTF-8 byte order mark at the start is skipped") {
  Lexed l("\xEF\xBB\xBFx = 1\n");
  CHECK(l.consumer.diagnostics.empty());
  CHECK(l.kinds().front() == K::Identifier);
}

TEST_CASE("lexing continues after a bad character, an invalid byte and a stray backslash") {
  // A rejected character or byte leaves an Invalid token in its place.
  Lexed l("a $ b\nc \xFF d\ne \\ f\n");
  CHECK(l.kinds() == std::vector<K>{K::Identifier, K::Invalid, K::Identifier, K::Newline, K::Identifier, K::Invalid,
                                    K::Identifier, K::Newline, K::Identifier, K::Identifier, K::Newline,
                                    K::EndOfFile});
  REQUIRE(l.consumer.diagnostics.size() == 3);
  CHECK(l.consumer.diagnostics[0].kind == diag::LexInvalidCharacter);
  CHECK(l.consumer.diagnostics[0].message == "invalid character U+0024 '$' in source");
  CHECK(l.consumer.diagnostics[1].kind == diag::LexInvalidUtf8);
  CHECK(l.consumer.diagnostics[2].kind == diag::LexStrayBackslash);
}

TEST_CASE("bracket errors: unmatched closer made Invalid, mismatched closer replaced, with a note") {
  Lexed l("x = [1)\ny = 2)\n");
  std::vector<K> kinds = l.kinds();
  CHECK(kinds == std::vector<K>{K::Identifier, K::Equal, K::LBracket, K::IntLiteral, K::RBracket, K::Newline,
                                K::Identifier, K::Equal, K::IntLiteral, K::Invalid, K::Newline, K::EndOfFile});
  REQUIRE(l.consumer.diagnostics.size() == 2);
  CHECK(l.consumer.diagnostics[0].kind == diag::LexMismatchedBracket);
  REQUIRE(l.consumer.diagnostics[0].notes.size() == 1);
  CHECK(l.consumer.diagnostics[0].notes[0].kind == diag::NoteOpeningBracketHere);
  CHECK(l.consumer.diagnostics[1].kind == diag::LexUnmatchedClosingBracket);
}

TEST_CASE("a tab in indentation is reported once, with a fix-it of spaces") {
  Lexed l("if a:\n\tx\n\ty\n");
  REQUIRE(l.consumer.diagnostics.size() == 1);
  const Diagnostic& d = l.consumer.diagnostics[0];
  CHECK(d.kind == diag::LexTabIndentation);
  REQUIRE(d.fix_its.size() == 1);
  CHECK(d.fix_its[0].replacement == std::string(8, ' '));
  // The block is still one block.
  std::vector<K> kinds = l.kinds();
  CHECK(std::count(kinds.begin(), kinds.end(), K::Indent) == 1);
}

TEST_CASE("an inconsistent dedent is reported with the 1-based column") {
  Lexed l("if a:\n    x\n  y\n");
  REQUIRE(l.consumer.diagnostics.size() == 1);
  CHECK(l.consumer.diagnostics[0].kind == diag::LexInconsistentDedent);
  CHECK(l.consumer.diagnostics[0].message == "unindent to column 3 does not match any outer indentation level");
}

TEST_CASE("an unterminated triple-quoted string has a note at its start") {
  Lexed l("s = '''abc\n");
  REQUIRE(l.consumer.diagnostics.size() == 1);
  CHECK(l.consumer.diagnostics[0].kind == diag::LexUnterminatedTripleString);
  REQUIRE(l.consumer.diagnostics[0].notes.size() == 1);
  CHECK(l.consumer.diagnostics[0].notes[0].kind == diag::NoteStringStartsHere);
  CHECK(l.kinds().back() == K::EndOfFile);
}

TEST_CASE("the lexer stops when the error limit is reached") {
  SourceManager sources;
  CollectingDiagnosticConsumer consumer;
  DiagnosticEngine diags(sources, consumer, DiagnosticOptions{false, false, 1});
  ValueStores values;
  FileId file = sources.add_file("t.tsr", "a $ b $ c $ d\ne = (\n");
  TokenizedBuffer tokens = lex_file(file, sources, values, diags);
  diags.flush();
  REQUIRE(consumer.diagnostics.size() == 2);
  CHECK(consumer.diagnostics[1].kind == diag::DriverTooManyErrors);
  CHECK(tokens.tokens().back().kind == K::EndOfFile);
}

TEST_CASE("lex_fragment: no layout tokens, even across lines") {
  SourceManager sources;
  CollectingDiagnosticConsumer consumer;
  DiagnosticEngine diags(sources, consumer);
  ValueStores values;
  FileId file = sources.add_file("t.tsr", "a +\n    b");
  TokenizedBuffer tokens =
      lex_fragment(SourceRange{sources.file_begin(file), sources.file_end(file)}, sources, values, diags);
  std::vector<K> kinds;
  for (const Token& t : tokens.tokens()) kinds.push_back(t.kind);
  CHECK(kinds == std::vector<K>{K::Identifier, K::Plus, K::Identifier, K::EndOfFile});
  CHECK(tokens.tokens()[2].range.begin == sources.file_begin(file) + 8);
}

TEST_CASE("the token dump format") {
  Lexed l("if x:\n    y = 'a' 16_KiB\n");
  CHECK(dump_tokens(l.tokens, l.sources, l.values) ==
        "1:1 KwIf 'if'\n"
        "1:4 Identifier x\n"
        "1:5 Colon ':'\n"
        "1:6 Newline\n"
        "2:1 Indent\n"
        "2:5 Identifier y\n"
        "2:7 Equal '='\n"
        "2:9 StringLiteral value=\"a\"\n"
        "2:13 SizeLiteral 16_KiB value=16384\n"
        "2:19 Newline\n"
        "3:1 Dedent\n"
        "3:1 EndOfFile\n");
}

// Only tabs in indentation are rejected by the language.
TEST_CASE("a tab between tokens is whitespace") {
  Lexed l("x =\t1\t# comment\ny = (1,\n\t2)\n");
  CHECK(l.consumer.diagnostics.empty());
}

TEST_CASE("NUL and invalid UTF-8 inside a string or a comment are reported; the value leaves them out") {
  static const char text[] = "s = 'a\xFF" "\xC3\xA9" "\0" "b'  # \xFE" " ok \0" " too\nt = 1\n";
  Lexed l(std::string(text, sizeof text - 1));
  REQUIRE(l.consumer.diagnostics.size() == 4);
  CHECK(l.consumer.diagnostics[0].kind == diag::LexInvalidUtf8);
  CHECK(l.consumer.diagnostics[1].kind == diag::LexInvalidCharacter);
  CHECK(l.consumer.diagnostics[2].kind == diag::LexInvalidUtf8);
  CHECK(l.consumer.diagnostics[3].kind == diag::LexInvalidCharacter);
  REQUIRE(l.tokens.tokens()[2].kind == K::StringLiteral);
  CHECK(l.values.strings[l.tokens.tokens()[2].payload] == "a\xC3\xA9" "b");
  // The comment runs to the end of its line: the next line is lexed as usual.
  CHECK(l.kinds() == std::vector<K>{K::Identifier, K::Equal, K::StringLiteral, K::Newline, K::Identifier, K::Equal,
                                    K::IntLiteral, K::Newline, K::EndOfFile});
}

TEST_CASE("f-string conversions other than !r, !s and !a are errors") {
  Lexed invalid("f'{x!z}'\n");
  REQUIRE(invalid.consumer.diagnostics.size() == 1);
  CHECK(invalid.consumer.diagnostics[0].kind == diag::LexFStringInvalidConversion);
  Lexed missing("f'{x!}'\n");
  REQUIRE(missing.consumer.diagnostics.size() == 1);
  CHECK(missing.consumer.diagnostics[0].kind == diag::LexFStringMissingConversion);
  Lexed fine("f'{x!r} {y!s:>4} {z!a}'\n");
  CHECK(fine.consumer.diagnostics.empty());
}

TEST_CASE("an inconsistent dedent does not open a block on the next line") {
  Lexed l("if a:\n    x\n  y\n  z\nw\n");
  REQUIRE(l.consumer.diagnostics.size() == 1);
  std::vector<K> kinds = l.kinds();
  CHECK(std::count(kinds.begin(), kinds.end(), K::Indent) == 1);
  CHECK(std::count(kinds.begin(), kinds.end(), K::Dedent) == 1);
}

TEST_CASE("a decimal digit glued to a binary or octal literal is an invalid digit") {
  Lexed l("a = 0b102 + 0o19 + 0b2 + 0o_8\n");
  REQUIRE(l.consumer.diagnostics.size() == 4);
  for (const Diagnostic& d : l.consumer.diagnostics) CHECK(d.kind == diag::LexInvalidDigit);
  CHECK(l.consumer.diagnostics[0].message == "invalid digit '2' in binary literal");
  CHECK(l.consumer.diagnostics[1].message == "invalid digit '9' in octal literal");
}

}  // namespace
}  // namespace tessera
