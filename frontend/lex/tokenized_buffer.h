// The output of the lexer: a dense array of tokens indexed by `TokenId`, plus
// the comment ranges (kept for -verify directives and future doc tooling).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "frontend/lex/token_kind.h"
#include "frontend/lex/value_stores.h"
#include "support/source/huge_pages.h"
#include "support/source/source_manager.h"

namespace tessera {

struct TokenId {
  uint32_t index = UINT32_MAX;
  bool valid() const { return index != UINT32_MAX; }
};

struct Token {
  TokenKind kind;
  SourceRange range;
  // Identifier: IdentifierId index; IntLiteral/SizeLiteral: integers index;
  // FloatLiteral: reals index; StringLiteral: strings index; FStringLiteral:
  // fstrings index; otherwise unused.
  uint32_t payload = 0;
};

class TokenizedBuffer {
 public:
  explicit TokenizedBuffer(FileId file) : file_(file) {}

  TokenId add(Token token) {
    tokens_.push_back(token);
    return TokenId{static_cast<uint32_t>(tokens_.size() - 1)};
  }
  void add_comment(SourceRange range) { comments_.push_back(range); }
  void reserve(size_t tokens) { tokens_.reserve(tokens); }

  const Token& operator[](TokenId id) const { return tokens_[id.index]; }
  std::span<const Token> tokens() const { return tokens_; }
  const std::vector<SourceRange>& comments() const { return comments_; }
  size_t size() const { return tokens_.size(); }
  FileId file() const { return file_; }

 private:
  FileId file_;
  std::vector<Token, HugePageAllocator<Token>> tokens_;  // huge pages: see huge_pages.h
  std::vector<SourceRange> comments_;
};

// `--emit=tokens`: one token per line, "line:col Kind 'spelling' [value]".
std::string dump_tokens(const TokenizedBuffer& tokens, const SourceManager& sources, const ValueStores& values);

}  // namespace tessera
