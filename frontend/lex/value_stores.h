// Interned identifiers and literal values, shared by the lexer, the parser and
// later phases. Tokens and AST nodes refer to entries by dense ids.
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "support/source/source_manager.h"

namespace tessera {

struct IdentifierId {
  uint32_t index = UINT32_MAX;
  bool valid() const { return index != UINT32_MAX; }
  friend bool operator==(IdentifierId, IdentifierId) = default;
};

// FNV-1a: identifiers are short, so a simple byte hash beats the standard one.
struct IdentifierHash {
  size_t operator()(std::string_view text) const {
    uint64_t hash = 1469598103934665603ull;
    for (unsigned char c : text) hash = (hash ^ c) * 1099511628211ull;
    return static_cast<size_t>(hash);
  }
};

class IdentifierTable {
 public:
  IdentifierId intern(std::string_view spelling) {
    auto it = ids_.find(spelling);
    if (it != ids_.end()) return it->second;
    names_.emplace_back(spelling);  // deque: stable addresses for the map's keys
    IdentifierId id{static_cast<uint32_t>(names_.size() - 1)};
    ids_.emplace(names_.back(), id);
    return id;
  }
  std::string_view name(IdentifierId id) const { return names_[id.index]; }
  size_t size() const { return names_.size(); }

 private:
  std::deque<std::string> names_;
  std::unordered_map<std::string_view, IdentifierId, IdentifierHash> ids_;
};

// One piece of an f-string: literal text, or an embedded expression whose
// source text lies at `expression` (with an optional `!r`/`!s`/`!a`
// conversion and a format spec, kept as written).
struct FStringPart {
  bool is_expression = false;
  std::string text;         // decoded literal text (is_expression == false)
  SourceRange expression;   // source of the expression (is_expression == true)
  char conversion = 0;      // 'r', 's', 'a' or 0
  std::string format_spec;  // text after ':' (may itself hold {..}; kept verbatim)
};

struct FStringValue {
  std::vector<FStringPart> parts;
};

struct ValueStores {
  IdentifierTable identifiers;
  std::vector<uint64_t> integers;      // IntLiteral and SizeLiteral payloads (bytes for sizes)
  std::vector<double> reals;           // FloatLiteral payloads
  std::vector<std::string> strings;    // StringLiteral payloads, escapes decoded
  std::vector<FStringValue> fstrings;  // FStringLiteral payloads

  uint32_t add_integer(uint64_t value) { return push(integers, value); }
  uint32_t add_real(double value) { return push(reals, value); }
  uint32_t add_string(std::string value) { return push(strings, std::move(value)); }
  uint32_t add_fstring(FStringValue value) { return push(fstrings, std::move(value)); }

 private:
  template <typename T, typename V>
  static uint32_t push(std::vector<T>& table, V&& value) {
    table.push_back(std::forward<V>(value));
    return static_cast<uint32_t>(table.size() - 1);
  }
};

}  // namespace tessera
