// State shared by the Bison parser's actions: the token stream it reads, the
// AST it builds, and the checks that the grammar leaves to actions (assignment
// targets, parameter order, keyword arguments, type annotations).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "frontend/ast/ast.h"
#include "frontend/diagnostics/diagnostics.h"
#include "frontend/lex/tokenized_buffer.h"

namespace tessera::parse {

// Which grammar the parser starts from: a whole file, one type (dtype
// strings), or one expression (f-string fields).
enum class StartSymbol { File, Type, Expression };

// One `for ... in ... if ...` clause of a comprehension, built up by the grammar.
struct ComprehensionClause {
  SourceRange range;
  std::vector<NodeId> parts;  // target, iterable, conditions...
};

class ParserContext {
 public:
  ParserContext(const TokenizedBuffer& tokens, Ast& ast, ValueStores& values, DiagnosticEngine& diags,
                StartSymbol start)
      : tokens_(tokens), ast_(ast), values_(values), diags_(diags), start_(start) {}

  Ast& ast() { return ast_; }
  ValueStores& values() { return values_; }
  DiagnosticEngine& diags() { return diags_; }
  const SourceManager& sources() const { return diags_.sources(); }

  // The next token for Bison (defined in parser_context.cpp, which sees the
  // generated parser); the very first one selects the start symbol.
  size_t take_token_index() { return next_ < tokens_.size() ? next_++ : tokens_.size() - 1; }
  const TokenizedBuffer& tokens() const { return tokens_; }
  // An empty range at the start of the lookahead token (for empty rules that
  // should sit before what follows them rather than after what precedes them).
  SourceRange next_token_start() const {
    size_t index = next_ == 0 ? 0 : next_ - 1;
    return SourceRange::at(tokens_[TokenId{static_cast<uint32_t>(index)}].range.begin);
  }
  StartSymbol start() const { return start_; }
  bool start_sent = false;

  NodeId result;  // set by the start rule

  // --- builders used by grammar actions ---
  NodeId add(NodeKind kind, SourceRange range, std::span<const NodeId> children = {}, uint32_t payload = UINT32_MAX,
             uint8_t op = 0, uint16_t flags = 0) {
    return ast_.add(kind, range, children, payload, op, flags);
  }
  NodeId add(NodeKind kind, SourceRange range, std::initializer_list<NodeId> children, uint32_t payload = UINT32_MAX,
             uint8_t op = 0, uint16_t flags = 0) {
    return ast_.add(kind, range, children, payload, op, flags);
  }
  std::string_view identifier(uint32_t payload) const { return values_.identifiers.name(IdentifierId{payload}); }

  NodeId make_tuple_or_single(SourceRange range, std::vector<NodeId> items, bool trailing_comma);
  NodeId make_call(SourceRange range, NodeId callee, const std::vector<NodeId>& arguments);
  NodeId make_keyword_argument(SourceRange range, NodeId name, NodeId value);
  NodeId make_parameters(SourceRange range, std::vector<NodeId> parameters);
  NodeId make_strings(SourceRange range, const std::vector<NodeId>& pieces);
  NodeId make_fstring(SourceRange range, uint32_t payload);
  NodeId make_comprehension_expr(NodeKind kind, SourceRange range, NodeId element,
                                 const std::vector<ComprehensionClause>& clauses);
  NodeId make_policy(SourceRange range, NodeId expression);
  // Annotation positions: a subscript argument written `T @accum(f32)` is a
  // policy type, not a matrix product.
  NodeId make_type(NodeId expression);
  // `type Name = ...`: false (after reporting) when the first name is not `type`.
  bool check_type_alias_head(SourceRange keyword_range, uint32_t keyword, SourceRange name_range, uint32_t name);
  // Checks that `target` can be assigned to (names, attributes, subscripts and
  // tuples/lists of them); reports an error otherwise.
  void check_assign_target(NodeId target);

  void report_syntax_error(SourceRange location, std::optional<TokenKind> lookahead,
                           const std::vector<TokenKind>& expected);

 private:
  NodeId rebuild(NodeId id, std::span<const NodeId> children);

  const TokenizedBuffer& tokens_;
  Ast& ast_;
  ValueStores& values_;
  DiagnosticEngine& diags_;
  StartSymbol start_;
  size_t next_ = 0;
};

}  // namespace tessera::parse
