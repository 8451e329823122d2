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

}  // namespace
}  // namespace tessera
