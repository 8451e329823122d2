// State shared by the Bison parser's actions: the token stream it reads, the
// AST it builds, and the checks that the grammar leaves to actions (assignment
// targets, parameter order, keyword arguments, type annotations).
#pragma once

#include <optional>
#include <span>
#include <string>
#include <vector>

#include "frontend/ast/ast.h"
#include "support/diagnostics/diagnostics.h"
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

// Semantic values of the parser are trivially copyable (Bison's %union):
// node ids, and references to lists held in pools by the ParserContext.
struct NodeRef {
  uint32_t index;
  operator NodeId() const { return NodeId{index}; }  // NOLINT(google-explicit-constructor)
  NodeRef& operator=(NodeId id) {
    index = id.index;
    return *this;
  }
};
struct ListRef {
  uint32_t index;
};
struct ClauseListRef {
  uint32_t index;
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
  uint32_t syntax_errors = 0;  // counted by both generated parsers

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

  // --- list pools: vectors are reused, so the parser allocates almost nothing ---
  ListRef list_new();
  ListRef list_one(NodeId id) { return list_append(list_new(), id); }
  ListRef list_append(ListRef list, NodeId id) {
    lists_[list.index].push_back(id);
    return list;
  }
  ListRef list_prepend(NodeId id, ListRef list);
  ListRef list_extend(ListRef list, ListRef more);  // releases `more`
  std::span<const NodeId> view(ListRef list) const { return lists_[list.index]; }
  void list_release(ListRef list);
  // Adds a node whose children are the list, and releases the list.
  NodeId add_list(NodeKind kind, SourceRange range, ListRef list, uint32_t payload = UINT32_MAX, uint8_t op = 0,
                  uint16_t flags = 0);

  ClauseListRef clauses_new(SourceRange range, NodeId target, NodeId iterable);
  ClauseListRef clauses_add(ClauseListRef clauses, SourceRange range, NodeId target, NodeId iterable);
  ClauseListRef clauses_condition(ClauseListRef clauses, SourceRange range, NodeId condition);
  void clauses_release(ClauseListRef clauses);

  NodeId make_tuple_or_single(SourceRange range, ListRef items, bool trailing_comma);
  NodeId make_parenthesized(SourceRange range, ListRef items);  // (x) is x; (x, y) a tuple
  NodeId make_call(SourceRange range, NodeId callee, ListRef arguments);
  NodeId make_keyword_argument(SourceRange range, NodeId name, NodeId value);
  NodeId make_compare(SourceRange range, NodeId lhs, NodeId rhs, CompareOperator op);
  NodeId make_parameters(SourceRange range, ListRef parameters);
  NodeId make_strings(SourceRange range, ListRef pieces);
  NodeId make_fstring(SourceRange range, uint32_t payload);
  // flags: 1 on a generator expression written in its own parentheses.
  NodeId make_comprehension_expr(NodeKind kind, SourceRange range, NodeId element, ClauseListRef clauses,
                                 uint16_t flags = 0);
  NodeId make_policy(SourceRange range, NodeId expression);
  // Annotation positions: a subscript argument written `T @accum(f32)` is a
  // policy type, not a matrix product.
  NodeId make_type(NodeId expression);
  // `type Name = ...`: false (after reporting) when the first name is not `type`.
  bool check_type_alias_head(uint32_t keyword, SourceRange name_range, uint32_t name);
  // Checks that `target` can be assigned to (names, attributes, subscripts and
  // tuples/lists of them); reports an error otherwise.
  void check_assign_target(NodeId target);
  // `a, b += 1` and `a, b: T = ...` need one target (Python's rule).
  void check_augmented_target(NodeId target);
  void check_annotated_target(NodeId target);

  void report_syntax_error(SourceRange location, std::optional<TokenKind> lookahead,
                           const std::vector<TokenKind>& expected);

 private:
  NodeId rebuild(NodeId id, std::span<const NodeId> children);
  // The offset of the first '@' token in [after, before) (`after` if none):
  // where a policy parsed as the right operand of a matrix product starts.
  SourceOffset at_sign_before(SourceOffset after, SourceOffset before) const;

  const TokenizedBuffer& tokens_;
  Ast& ast_;
  ValueStores& values_;
  DiagnosticEngine& diags_;
  StartSymbol start_;
  size_t next_ = 0;
  std::vector<std::vector<NodeId>> lists_;
  std::vector<uint32_t> free_lists_;
  std::vector<std::vector<ComprehensionClause>> clause_lists_;
  std::vector<uint32_t> free_clause_lists_;
};

// The two parsers generated from parser.yy: with lookahead correction (exact
// expected-token lists in syntax errors) and without (faster). Both return
// Bison's status: 0 when the input was accepted (possibly after recovery).
int run_checked_parser(ParserContext& context);
int run_fast_parser(ParserContext& context);

}  // namespace tessera::parse
