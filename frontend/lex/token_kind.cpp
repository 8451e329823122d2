#include "frontend/lex/token_kind.h"

#include <string>
#include <unordered_map>

namespace tessera {

std::string_view token_kind_name(TokenKind kind) {
  switch (kind) {
#define TESSERA_TOKEN(Name, Text) \
  case TokenKind::Name:           \
    return #Name;
#include "frontend/lex/token_kind.def"
  }
  return "?";
}

std::string token_kind_description(TokenKind kind) {
  switch (kind) {
#define TESSERA_TOKEN_SPECIAL(Name, Text) \
  case TokenKind::Name:                   \
    return Text;
#define TESSERA_TOKEN_LITERAL(Name, Text) \
  case TokenKind::Name:                   \
    return Text;
#define TESSERA_TOKEN(Name, Text) \
  case TokenKind::Name:           \
    return std::string("'") + (Text) + "'";
#include "frontend/lex/token_kind.def"
  }
  return "?";
}

bool is_keyword(TokenKind kind) {
  switch (kind) {
#define TESSERA_TOKEN(Name, Text) \
  case TokenKind::Name:           \
    return false;
#define TESSERA_TOKEN_KEYWORD(Name, Text) \
  case TokenKind::Name:                   \
    return true;
#include "frontend/lex/token_kind.def"
  }
  return false;
}

bool is_reserved_unsupported_keyword(TokenKind kind) {
  switch (kind) {
#define TESSERA_TOKEN(Name, Text) \
  case TokenKind::Name:           \
    return false;
#define TESSERA_TOKEN_RESERVED(Name, Text) \
  case TokenKind::Name:                    \
    return true;
#include "frontend/lex/token_kind.def"
  }
  return false;
}

std::optional<TokenKind> keyword_for(std::string_view spelling) {
  static const std::unordered_map<std::string_view, TokenKind> keywords = {
#define TESSERA_TOKEN(Name, Text)
#define TESSERA_TOKEN_KEYWORD(Name, Text) {Text, TokenKind::Name},
#include "frontend/lex/token_kind.def"
  };
  auto it = keywords.find(spelling);
  if (it == keywords.end()) return std::nullopt;
  return it->second;
}

}  // namespace tessera
