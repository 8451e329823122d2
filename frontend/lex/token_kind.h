#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace tessera {

enum class TokenKind : uint8_t {
#define TESSERA_TOKEN(Name, Text) Name,
#include "frontend/lex/token_kind.def"
};

// The kind's name in the token dump ("Identifier", "KwDef", "Plus").
std::string_view token_kind_name(TokenKind kind);
// How a diagnostic names the kind: "identifier", "'def'", "'+'", "newline".
std::string token_kind_description(TokenKind kind);
bool is_keyword(TokenKind kind);
bool is_reserved_unsupported_keyword(TokenKind kind);
// Keyword for an identifier spelling, if it is one.
std::optional<TokenKind> keyword_for(std::string_view spelling);

}  // namespace tessera
