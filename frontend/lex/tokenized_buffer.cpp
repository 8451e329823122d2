#include "frontend/lex/tokenized_buffer.h"

#include <fmt/format.h>

#include "support/source/escape.h"

namespace tessera {

std::string dump_tokens(const TokenizedBuffer& tokens, const SourceManager& sources, const ValueStores& values) {
  std::string out;
  for (const Token& token : tokens.tokens()) {
    PresumedLocation loc = sources.presumed(token.range.begin);
    out += fmt::format("{}:{} {}", loc.line, loc.column, token_kind_name(token.kind));
    std::string_view spelling(sources.pointer(token.range.begin), token.range.end - token.range.begin);
    switch (token.kind) {
      case TokenKind::Identifier:
        out += fmt::format(" {}", values.identifiers.name(IdentifierId{token.payload}));
        break;
      case TokenKind::IntLiteral:
      case TokenKind::SizeLiteral:
        out += fmt::format(" {} value={}", spelling, values.integers[token.payload]);
        break;
      case TokenKind::FloatLiteral:
        out += fmt::format(" {} value={}", spelling, values.reals[token.payload]);
        break;
      case TokenKind::StringLiteral:
        out += fmt::format(" value={}", quote_for_display(values.strings[token.payload]));
        break;
      case TokenKind::FStringLiteral:
        for (const FStringPart& part : values.fstrings[token.payload].parts) {
          if (part.is_expression) {
            std::string_view expr(sources.pointer(part.expression.begin), part.expression.end - part.expression.begin);
            out += fmt::format(" {{{}}}", expr);
          } else {
            out += fmt::format(" {}", quote_for_display(part.text));
          }
        }
        break;
      default:
        if (is_keyword(token.kind) || !spelling.empty()) {
          if (token.kind != TokenKind::Indent) out += fmt::format(" '{}'", spelling);
        }
        break;
    }
    out += "\n";
  }
  return out;
}

}  // namespace tessera
