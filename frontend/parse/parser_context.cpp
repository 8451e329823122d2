#include "frontend/parse/parser_context.h"

#include <algorithm>
#include <unordered_map>

#include "frontend/parse/parse.h"

namespace tessera::parse {

NodeId ParserContext::rebuild(NodeId id, std::span<const NodeId> children) {
  Node copy = ast_.node(id);
  return ast_.add(copy.kind, copy.range, children, copy.payload, copy.op, copy.flags);
}

ListRef ParserContext::list_new() {
  if (!free_lists_.empty()) {
    uint32_t index = free_lists_.back();
    free_lists_.pop_back();
    lists_[index].clear();
    return ListRef{index};
  }
  lists_.emplace_back();
  return ListRef{static_cast<uint32_t>(lists_.size() - 1)};
}

ListRef ParserContext::list_prepend(NodeId id, ListRef list) {
  auto& items = lists_[list.index];
  items.insert(items.begin(), id);
  return list;
}

ListRef ParserContext::list_extend(ListRef list, ListRef more) {
  auto& items = lists_[list.index];
  const auto& extra = lists_[more.index];
  items.insert(items.end(), extra.begin(), extra.end());
  list_release(more);
  return list;
}

void ParserContext::list_release(ListRef list) {
  free_lists_.push_back(list.index);
}

NodeId ParserContext::add_list(NodeKind kind, SourceRange range, ListRef list, uint32_t payload, uint8_t op,
                               uint16_t flags) {
  NodeId id = ast_.add(kind, range, view(list), payload, op, flags);
  list_release(list);
  return id;
}

ClauseListRef ParserContext::clauses_new(SourceRange range, NodeId target, NodeId iterable) {
  uint32_t index;
  if (!free_clause_lists_.empty()) {
    index = free_clause_lists_.back();
    free_clause_lists_.pop_back();
    clause_lists_[index].clear();
  } else {
    clause_lists_.emplace_back();
    index = static_cast<uint32_t>(clause_lists_.size() - 1);
  }
  return clauses_add(ClauseListRef{index}, range, target, iterable);
}

ClauseListRef ParserContext::clauses_add(ClauseListRef clauses, SourceRange range, NodeId target, NodeId iterable) {
  clause_lists_[clauses.index].push_back(ComprehensionClause{range, {target, iterable}});
  return clauses;
}

ClauseListRef ParserContext::clauses_condition(ClauseListRef clauses, SourceRange range, NodeId condition) {
  ComprehensionClause& last = clause_lists_[clauses.index].back();
  last.parts.push_back(condition);
  last.range.end = range.end;
  return clauses;
}

void ParserContext::clauses_release(ClauseListRef clauses) {
  free_clause_lists_.push_back(clauses.index);
}

NodeId ParserContext::make_tuple_or_single(SourceRange range, ListRef items, bool trailing_comma) {
  if (view(items).size() == 1 && !trailing_comma) {
    NodeId single = view(items)[0];
    list_release(items);
    return single;
  }
  return add_list(NodeKind::Tuple, range, items);
}

NodeId ParserContext::make_parenthesized(SourceRange range, ListRef items) {
  if (view(items).size() == 1) {
    NodeId single = view(items)[0];
    list_release(items);
    ast_.mutable_node(single).flags |= kParenthesizedFlag;
    return single;
  }
  return add_list(NodeKind::Tuple, range, items, UINT32_MAX, 0, 1);
}

NodeId ParserContext::make_call(SourceRange range, NodeId callee, ListRef argument_list) {
  std::span<const NodeId> arguments = view(argument_list);
  if (arguments.size() > 1) {
    for (NodeId argument : arguments) {
      if (ast_.kind(argument) == NodeKind::GeneratorExp && !(ast_.node(argument).flags & 1)) {
        diags_.emit<diag::ParseUnparenthesizedGenerator>(ast_.range(argument));
      }
    }
  }
  bool seen_keyword = false;
  std::vector<std::pair<uint32_t, NodeId>> keywords;  // few per call: a vector beats a map
  for (NodeId argument : arguments) {
    NodeKind kind = ast_.kind(argument);
    if (kind == NodeKind::KeywordArgument || kind == NodeKind::DoubleStarArgument) {
      seen_keyword = true;
      if (kind == NodeKind::KeywordArgument) {
        uint32_t name = ast_.node(argument).payload;
        auto previous = std::find_if(keywords.begin(), keywords.end(), [&](auto& k) { return k.first == name; });
        if (previous != keywords.end()) {
          std::string text(identifier(name));
          diags_.emit<diag::ParseDuplicateKeywordArgument>(ast_.range(argument), text)
              .note<diag::NotePreviousDefinition>(ast_.range(previous->second), text);
        } else {
          keywords.emplace_back(name, argument);
        }
      }
    } else if (seen_keyword && kind != NodeKind::StarArgument && kind != NodeKind::ErrorExpr) {
      diags_.emit<diag::ParsePositionalAfterKeyword>(ast_.range(argument));
    }
  }
  return add_list(NodeKind::Call, range, list_prepend(callee, argument_list));
}

NodeId ParserContext::make_compare(SourceRange range, NodeId lhs, NodeId rhs, CompareOperator op) {
  const Node& left = ast_.node(lhs);
  bool chained = left.kind == NodeKind::Compare && !(left.flags & kParenthesizedFlag);
  return add(NodeKind::Compare, range, {lhs, rhs}, UINT32_MAX, static_cast<uint8_t>(op), chained ? 1 : 0);
}

NodeId ParserContext::make_keyword_argument(SourceRange range, NodeId name, NodeId value) {
  if (ast_.kind(name) != NodeKind::Name) {
    diags_.emit<diag::ParseInvalidKeywordArgument>(ast_.range(name));
    return add(NodeKind::ErrorExpr, range);
  }
  return add(NodeKind::KeywordArgument, range, {value}, ast_.node(name).payload);
}

NodeId ParserContext::make_parameters(SourceRange range, ListRef parameter_list) {
  std::span<const NodeId> parameters = view(parameter_list);
  bool seen_default = false;
  bool seen_star = false;
  NodeId star_marker;
  bool named_after_marker = false;
  NodeId kwargs;
  std::unordered_map<uint32_t, NodeId> names;
  for (NodeId id : parameters) {
    Node& parameter = ast_.mutable_node(id);
    auto kind = static_cast<ParameterKind>(parameter.op);
    if (kwargs.valid()) {
      diags_.emit<diag::ParseParameterAfterKwargs>(parameter.range, std::string(identifier(ast_.node(kwargs).payload)));
    }
    if (parameter.payload != UINT32_MAX) {
      auto [it, inserted] = names.emplace(parameter.payload, id);
      if (!inserted) {
        std::string text(identifier(parameter.payload));
        diags_.emit<diag::ParseDuplicateParameter>(parameter.range, text)
            .note<diag::NotePreviousDefinition>(ast_.range(it->second), text);
      }
    }
    switch (kind) {
      case ParameterKind::KeywordMarker:
      case ParameterKind::VarPositional:
        if (seen_star) diags_.emit<diag::ParseDuplicateStarParameter>(parameter.range);
        seen_star = true;
        if (kind == ParameterKind::KeywordMarker) star_marker = id;
        break;
      case ParameterKind::VarKeyword:
        kwargs = id;
        break;
      case ParameterKind::Normal:
      case ParameterKind::KeywordOnly: {
        bool has_default = ast_.child(id, 1).valid();
        if (seen_star) {
          parameter.op = static_cast<uint8_t>(ParameterKind::KeywordOnly);
          named_after_marker = true;
        } else if (has_default) {
          seen_default = true;
        } else if (seen_default) {
          diags_.emit<diag::ParseNonDefaultAfterDefault>(parameter.range, std::string(identifier(parameter.payload)));
        }
        break;
      }
    }
  }
  if (star_marker.valid() && !named_after_marker) {
    diags_.emit<diag::ParseBareStarWithoutNamed>(ast_.range(star_marker));
  }
  return add_list(NodeKind::Parameters, range, parameter_list);
}

NodeId ParserContext::make_strings(SourceRange range, ListRef piece_list) {
  // Copied: making nodes below may reuse the pool's vectors.
  std::vector<NodeId> pieces(view(piece_list).begin(), view(piece_list).end());
  list_release(piece_list);
  if (pieces.size() == 1) return pieces[0];
  bool all_plain =
      std::all_of(pieces.begin(), pieces.end(), [&](NodeId id) { return ast_.kind(id) == NodeKind::StringLiteral; });
  if (all_plain) {
    std::string joined;
    for (NodeId id : pieces) joined += values_.strings[ast_.node(id).payload];
    return add(NodeKind::StringLiteral, range, {}, values_.add_string(std::move(joined)));
  }
  std::vector<NodeId> parts;
  for (NodeId id : pieces) {
    if (ast_.kind(id) == NodeKind::StringLiteral) {
      parts.push_back(add(NodeKind::FStringText, ast_.range(id), {}, ast_.node(id).payload));
    } else {
      auto children = ast_.children(id);
      parts.insert(parts.end(), children.begin(), children.end());
    }
  }
  return add(NodeKind::FString, range, parts);
}

NodeId ParserContext::make_fstring(SourceRange range, uint32_t payload) {
  // Copy: parsing a field may add f-strings to the table and move it.
  FStringValue value = values_.fstrings[payload];
  std::vector<NodeId> parts;
  for (FStringPart& part : value.parts) {
    if (!part.is_expression) {
      parts.push_back(add(NodeKind::FStringText, range, {}, values_.add_string(std::move(part.text))));
      continue;
    }
    NodeId expression = parse_expression_fragment(part.expression, ast_, values_, diags_);
    if (!expression.valid()) expression = add(NodeKind::ErrorExpr, part.expression);
    uint32_t spec = part.format_spec.empty() ? UINT32_MAX : values_.add_string(std::move(part.format_spec));
    parts.push_back(
        add(NodeKind::FormattedValue, part.expression, {expression}, spec, static_cast<uint8_t>(part.conversion)));
  }
  return add(NodeKind::FString, range, parts);
}

NodeId ParserContext::make_comprehension_expr(NodeKind kind, SourceRange range, NodeId element,
                                              ClauseListRef clause_list, uint16_t flags) {
  std::vector<NodeId> children{element};
  for (const ComprehensionClause& clause : clause_lists_[clause_list.index]) {
    children.push_back(add(NodeKind::Comprehension, clause.range, clause.parts));
  }
  clauses_release(clause_list);
  return add(kind, range, children, UINT32_MAX, 0, flags);
}

NodeId ParserContext::make_policy(SourceRange range, NodeId expression) {
  NodeKind kind = ast_.kind(expression);
  if (kind != NodeKind::Name && kind != NodeKind::Attribute && kind != NodeKind::Call) {
    diags_.emit<diag::ParseInvalidPolicy>(ast_.range(expression));
  }
  return add(NodeKind::Policy, range, {expression});
}

SourceOffset ParserContext::at_sign_before(SourceOffset after, SourceOffset before) const {
  std::span<const Token> all = tokens_.tokens();
  auto it = std::lower_bound(all.begin(), all.end(), after,
                             [](const Token& token, SourceOffset offset) { return token.range.begin < offset; });
  for (; it != all.end() && it->range.begin < before; ++it) {
    if (it->kind == TokenKind::At) return it->range.begin;
  }
  return after;
}

NodeId ParserContext::make_type(NodeId expression) {
  switch (ast_.kind(expression)) {
    case NodeKind::Subscript: {
      NodeId object = ast_.child(expression, 0);
      NodeId index = ast_.child(expression, 1);
      NodeId converted = make_type(index);
      if (converted == index) return expression;
      return rebuild(expression, std::vector<NodeId>{object, converted});
    }
    case NodeKind::Tuple: {
      std::vector<NodeId> elements(ast_.children(expression).begin(), ast_.children(expression).end());
      bool changed = false;
      for (NodeId& element : elements) {
        NodeId converted = make_type(element);
        changed |= converted != element;
        element = converted;
      }
      return changed ? rebuild(expression, elements) : expression;
    }
    case NodeKind::BinaryOp: {
      if (static_cast<BinaryOperator>(ast_.node(expression).op) != BinaryOperator::MatMul) return expression;
      // `T @p1 @p2` parsed left-associatively: peel the policies off the right.
      std::vector<NodeId> policies;
      NodeId base = expression;
      while (ast_.kind(base) == NodeKind::BinaryOp &&
             static_cast<BinaryOperator>(ast_.node(base).op) == BinaryOperator::MatMul) {
        NodeId rhs = ast_.child(base, 1);
        SourceRange at{at_sign_before(ast_.range(ast_.child(base, 0)).end, ast_.range(rhs).begin), ast_.range(rhs).end};
        policies.push_back(make_policy(at, rhs));
        base = ast_.child(base, 0);
      }
      std::reverse(policies.begin(), policies.end());
      std::vector<NodeId> children{make_type(base)};
      children.insert(children.end(), policies.begin(), policies.end());
      return add(NodeKind::PolicyType, ast_.range(expression), children);
    }
    default:
      return expression;
  }
}

bool ParserContext::check_type_alias_head(uint32_t keyword, SourceRange name_range, uint32_t name) {
  if (identifier(keyword) == "type") return true;
  diags_.emit<diag::ParseJuxtaposedNames>(name_range, std::string(identifier(name)), std::string(identifier(keyword)));
  return false;
}

void ParserContext::check_assign_target(NodeId target) {
  auto describe = [&](NodeKind kind) -> std::string {
    switch (kind) {
      case NodeKind::Call:
        return "a function call";
      case NodeKind::IntLiteral:
      case NodeKind::SizeLiteral:
      case NodeKind::FloatLiteral:
      case NodeKind::StringLiteral:
      case NodeKind::FString:
      case NodeKind::BoolLiteral:
      case NodeKind::NoneLiteral:
      case NodeKind::EllipsisLiteral:
        return "a literal";
      case NodeKind::Compare:
        return "a comparison";
      case NodeKind::BoolOp:
      case NodeKind::UnaryOp:
      case NodeKind::BinaryOp:
        return "an operator expression";
      case NodeKind::IfExp:
        return "a conditional expression";
      case NodeKind::Lambda:
        return "a lambda";
      case NodeKind::Dict:
        return "a dict literal";
      case NodeKind::ListComp:
      case NodeKind::GeneratorExp:
        return "a comprehension";
      default:
        return "this expression";
    }
  };
  switch (ast_.kind(target)) {
    case NodeKind::Name:
    case NodeKind::Attribute:
    case NodeKind::Subscript:
    case NodeKind::ErrorExpr:
      return;
    case NodeKind::Tuple:
    case NodeKind::List:
      for (NodeId element : ast_.children(target)) check_assign_target(element);
      return;
    default:
      diags_.emit<diag::ParseInvalidAssignmentTarget>(ast_.range(target), describe(ast_.kind(target)));
      return;
  }
}

void ParserContext::check_augmented_target(NodeId target) {
  NodeKind kind = ast_.kind(target);
  if (kind == NodeKind::Tuple || kind == NodeKind::List) {
    diags_.emit<diag::ParseInvalidAssignmentTarget>(
        ast_.range(target), std::string(kind == NodeKind::Tuple ? "a tuple" : "a list") + " in an augmented assignment");
    return;
  }
  check_assign_target(target);
}

void ParserContext::check_annotated_target(NodeId target) {
  NodeKind kind = ast_.kind(target);
  if (kind == NodeKind::Tuple || kind == NodeKind::List) {
    diags_.emit<diag::ParseInvalidAnnotationTarget>(ast_.range(target),
                                                    std::string(kind == NodeKind::Tuple ? "a tuple" : "a list"));
    return;
  }
  check_assign_target(target);
}

namespace {

bool starts_expression(TokenKind kind) {
  switch (kind) {
    case TokenKind::Invalid:
    case TokenKind::Identifier:
    case TokenKind::IntLiteral:
    case TokenKind::FloatLiteral:
    case TokenKind::SizeLiteral:
    case TokenKind::StringLiteral:
    case TokenKind::FStringLiteral:
    case TokenKind::LParen:
    case TokenKind::LBracket:
    case TokenKind::LBrace:
    case TokenKind::Minus:
    case TokenKind::Plus:
    case TokenKind::Tilde:
    case TokenKind::KwNot:
    case TokenKind::KwLambda:
    case TokenKind::KwTrue:
    case TokenKind::KwFalse:
    case TokenKind::KwNone:
    case TokenKind::Ellipsis:
    case TokenKind::Question:
      return true;
    default:
      return false;
  }
}

// Tokens worth naming when many are possible: the ones that close or
// separate constructs.
bool is_structural(TokenKind kind) {
  switch (kind) {
    case TokenKind::RParen:
    case TokenKind::RBracket:
    case TokenKind::RBrace:
    case TokenKind::Colon:
    case TokenKind::Comma:
    case TokenKind::Equal:
    case TokenKind::Newline:
    case TokenKind::KwIn:
    case TokenKind::KwImport:
    case TokenKind::KwElse:
    case TokenKind::Arrow:
    case TokenKind::Indent:
      return true;
    default:
      return false;
  }
}

std::string join_alternatives(const std::vector<std::string>& items) {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out += i + 1 == items.size() ? " or " : ", ";
    out += items[i];
  }
  return out;
}

}  // namespace

void ParserContext::report_syntax_error(SourceRange location, std::optional<TokenKind> lookahead,
                                        const std::vector<TokenKind>& expected) {
  // At or right after a character the lexer rejected, the lexer's error says
  // it all (`x = a $ b`, `f(x))`); the parser only recovers.
  if (next_ > 0 && (tokens_[TokenId{static_cast<uint32_t>(next_ - 1)}].kind == TokenKind::Invalid ||
                    (next_ > 1 && tokens_[TokenId{static_cast<uint32_t>(next_ - 2)}].kind == TokenKind::Invalid))) {
    return;
  }
  if (lookahead == TokenKind::Indent) {
    diags_.emit<diag::ParseUnexpectedIndent>(location);
    return;
  }
  if (expected.size() == 1 && expected[0] == TokenKind::Indent) {
    diags_.emit<diag::ParseExpectedIndentedBlock>(location);
    return;
  }
  if (lookahead && is_reserved_unsupported_keyword(*lookahead)) {
    std::string spelling = token_kind_description(*lookahead);
    diags_.emit<diag::ParseUnsupportedKeyword>(location, spelling.substr(1, spelling.size() - 2));
    return;
  }

  auto contains = [&](TokenKind wanted) {
    return std::find(expected.begin(), expected.end(), wanted) != expected.end();
  };
  std::vector<std::string> items;
  if (contains(TokenKind::KwPass) && contains(TokenKind::KwDef)) {
    // Where any statement may start, naming them all helps nobody.
    std::string found_text = lookahead ? token_kind_description(*lookahead) : "this token";
    diags_.emit<diag::ParseSyntaxError>(location, fmt::format("expected a statement, found {}", found_text));
    return;
  }
  bool expression =
      std::any_of(expected.begin(), expected.end(), [](TokenKind k) { return k == TokenKind::Identifier; }) &&
      std::any_of(expected.begin(), expected.end(), [](TokenKind k) { return k == TokenKind::IntLiteral; });
  if (expression) items.push_back("expression");
  std::vector<std::string> others;
  for (TokenKind kind : expected) {
    if (expression && starts_expression(kind)) continue;
    others.push_back(kind == TokenKind::Newline ? "end of line" : token_kind_description(kind));
  }
  if (items.size() + others.size() > 4) {
    others.clear();
    for (TokenKind kind : expected) {
      // 'in' closes a for-target; where comparisons are possible it is just
      // one more operator.
      if (kind == TokenKind::KwIn && contains(TokenKind::Less)) continue;
      if (is_structural(kind))
        others.push_back(kind == TokenKind::Newline ? "end of line" : token_kind_description(kind));
    }
  }
  items.insert(items.end(), others.begin(), others.end());

  std::string found;
  if (!lookahead) {
    found = "this token";
  } else if (*lookahead == TokenKind::EndOfFile && start_ != StartSymbol::File) {
    found = start_ == StartSymbol::Type ? "end of the type" : "end of the f-string field";
  } else if (*lookahead == TokenKind::Newline) {
    found = "end of line";
  } else if (*lookahead == TokenKind::Identifier || *lookahead == TokenKind::IntLiteral ||
             *lookahead == TokenKind::FloatLiteral || *lookahead == TokenKind::SizeLiteral) {
    std::string_view spelling(sources().pointer(location.begin), location.end - location.begin);
    found = fmt::format("{} '{}'", token_kind_description(*lookahead), spelling);
  } else {
    found = token_kind_description(*lookahead);
  }
  std::string message = items.empty() ? fmt::format("unexpected {}", found)
                                      : fmt::format("expected {}, found {}", join_alternatives(items), found);
  diags_.emit<diag::ParseSyntaxError>(location, message);
}

}  // namespace tessera::parse
