#include "frontend/lex/tokenized_buffer.h"

#include <fmt/format.h>

namespace tessera {

namespace {

// Escapes a string for one-line display in dumps.
std::string quoted(std::string_view text) {
  std::string out = "\"";
  for (unsigned char c : text) {
    switch (c) {
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\r':
        out += "\\r";
        break;
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      default:
        if (c < 0x20 || c == 0x7F) {
          out += fmt::format("\\x{:02x}", c);
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  return out + "\"";
}

}  // namespace

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
        out += fmt::format(" value={}", quoted(values.strings[token.payload]));
        break;
      case TokenKind::FStringLiteral:
        for (const FStringPart& part : values.fstrings[token.payload].parts) {
          if (part.is_expression) {
            std::string_view expr(sources.pointer(part.expression.begin), part.expression.end - part.expression.begin);
            out += fmt::format(" {{{}}}", expr);
          } else {
            out += fmt::format(" {}", quoted(part.text));
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
