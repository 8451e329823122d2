#include "frontend/ast/ast.h"

#include <fmt/format.h>

#include <algorithm>

#include "support/diagnostics/internal_error.h"
#include "support/source/escape.h"

namespace tessera {

std::string_view node_kind_name(NodeKind kind) {
  switch (kind) {
#define TESSERA_AST_NODE(Name, Roles) \
  case NodeKind::Name:                \
    return #Name;
#include "frontend/ast/node_kind.def"
  }
  return "?";
}

std::string_view node_kind_roles(NodeKind kind) {
  switch (kind) {
#define TESSERA_AST_NODE(Name, Roles) \
  case NodeKind::Name:                \
    return Roles;
#include "frontend/ast/node_kind.def"
  }
  return "";
}

std::string_view operator_spelling(BinaryOperator op) {
  switch (op) {
    case BinaryOperator::Add:
      return "+";
    case BinaryOperator::Sub:
      return "-";
    case BinaryOperator::Mul:
      return "*";
    case BinaryOperator::MatMul:
      return "@";
    case BinaryOperator::Div:
      return "/";
    case BinaryOperator::FloorDiv:
      return "//";
    case BinaryOperator::Mod:
      return "%";
    case BinaryOperator::Pow:
      return "**";
    case BinaryOperator::LShift:
      return "<<";
    case BinaryOperator::RShift:
      return ">>";
    case BinaryOperator::BitAnd:
      return "&";
    case BinaryOperator::BitOr:
      return "|";
    case BinaryOperator::BitXor:
      return "^";
  }
  return "?";
}

std::string_view operator_spelling(UnaryOperator op) {
  switch (op) {
    case UnaryOperator::Neg:
      return "-";
    case UnaryOperator::Pos:
      return "+";
    case UnaryOperator::Invert:
      return "~";
    case UnaryOperator::Not:
      return "not";
  }
  return "?";
}

std::string_view operator_spelling(BoolOperator op) {
  switch (op) {
    case BoolOperator::And:
      return "and";
    case BoolOperator::Or:
      return "or";
  }
  return "?";
}

std::string_view operator_spelling(CompareOperator op) {
  switch (op) {
    case CompareOperator::Lt:
      return "<";
    case CompareOperator::Gt:
      return ">";
    case CompareOperator::Le:
      return "<=";
    case CompareOperator::Ge:
      return ">=";
    case CompareOperator::Eq:
      return "==";
    case CompareOperator::Ne:
      return "!=";
    case CompareOperator::In:
      return "in";
    case CompareOperator::NotIn:
      return "not in";
    case CompareOperator::Is:
      return "is";
    case CompareOperator::IsNot:
      return "is not";
  }
  return "?";
}

std::string_view parameter_kind_name(ParameterKind kind) {
  switch (kind) {
    case ParameterKind::Normal:
      return "normal";
    case ParameterKind::KeywordOnly:
      return "keyword-only";
    case ParameterKind::VarPositional:
      return "*args";
    case ParameterKind::VarKeyword:
      return "**kwargs";
    case ParameterKind::KeywordMarker:
      return "*";
  }
  return "?";
}

NodeId Ast::add(NodeKind kind, SourceRange range, std::span<const NodeId> children, uint32_t payload, uint8_t op,
                uint16_t flags) {
  internal_check(nodes_.size() < UINT32_MAX - 1, "parse", "too many AST nodes");
  uint32_t height = 0;
  for (NodeId child : children) {
    if (child.valid()) height = std::max<uint32_t>(height, depths_[child.index]);
  }
  if (height >= kMaxNestingDepth && kind != NodeKind::Module) {
    bool statement = kind <= NodeKind::ErrorStmt;
    too_deep_.push_back(TooDeep{nodes_.size(), range, statement});
    kind = statement ? NodeKind::ErrorStmt : NodeKind::ErrorExpr;
    children = {};
    payload = UINT32_MAX;
    op = 0;
    flags = 0;
    height = 0;
  }
  depths_.push_back(static_cast<uint16_t>(height + 1));
  Node node{kind,   op, flags, range, static_cast<uint32_t>(children_.size()), static_cast<uint32_t>(children.size()),
            payload};
  children_.insert(children_.end(), children.begin(), children.end());
  nodes_.push_back(node);
  return NodeId{static_cast<uint32_t>(nodes_.size() - 1)};
}

std::optional<SourceRange> Ast::take_too_deep() {
  // Report the cut that starts first in the source (for `- - - ... 1`, the
  // outermost one), preferring an expression to the statement around it.
  const TooDeep* best = nullptr;
  for (const TooDeep& cut : too_deep_) {
    if (best == nullptr || (best->statement && !cut.statement) ||
        (best->statement == cut.statement && cut.range.begin < best->range.begin)) {
      best = &cut;
    }
  }
  std::optional<SourceRange> range;
  if (best != nullptr) range = best->range;
  too_deep_.clear();
  return range;
}

namespace {

class AstDumper {
 public:
  AstDumper(const Ast& ast, const SourceManager& sources, const ValueStores& values,
            const std::function<std::string(NodeId)>& annotate)
      : ast_(ast), sources_(sources), values_(values), annotate_(annotate) {}

  std::string run() {
    if (ast_.root().valid()) dump(ast_.root());
    return std::move(out_);
  }

 private:
  std::string details(NodeId id) const {
    const Node& n = ast_.node(id);
    auto ident = [&] { return std::string(values_.identifiers.name(IdentifierId{n.payload})); };
    switch (n.kind) {
      case NodeKind::FunctionDef:
      case NodeKind::ClassDef:
      case NodeKind::TypeAlias:
      case NodeKind::Name:
      case NodeKind::Attribute:
      case NodeKind::KeywordArgument:
        return fmt::format(" {}", ident());  // not " " + ...: GCC 12 warns falsely (-Wrestrict)
      case NodeKind::ImportAlias:
        return n.payload == UINT32_MAX ? "" : " as " + ident();
      case NodeKind::Parameter:
        // A bare `*` marker has no name.
        return fmt::format(" {} ({})", n.payload == UINT32_MAX ? std::string("*") : ident(),
                           parameter_kind_name(static_cast<ParameterKind>(n.op)));
      case NodeKind::IntLiteral:
        return fmt::format(" {}", values_.integers[n.payload]);
      case NodeKind::SizeLiteral:
        return fmt::format(" {} bytes", values_.integers[n.payload]);
      case NodeKind::FloatLiteral:
        return fmt::format(" {}", values_.reals[n.payload]);
      case NodeKind::StringLiteral:
      case NodeKind::FStringText:
        return fmt::format(" {}", quote_for_display(values_.strings[n.payload]));
      case NodeKind::FormattedValue: {
        std::string text;
        if (n.op != 0) text += fmt::format(" !{}", static_cast<char>(n.op));
        if (n.payload != UINT32_MAX) text += " :" + quote_for_display(values_.strings[n.payload]);
        return text;
      }
      case NodeKind::BoolLiteral:
        return (n.flags & 1) ? " True" : " False";
      case NodeKind::BinaryOp:
      case NodeKind::AugAssign:
        return fmt::format(" '{}'", operator_spelling(static_cast<BinaryOperator>(n.op)));
      case NodeKind::UnaryOp:
        return fmt::format(" '{}'", operator_spelling(static_cast<UnaryOperator>(n.op)));
      case NodeKind::BoolOp:
        return fmt::format(" '{}'", operator_spelling(static_cast<BoolOperator>(n.op)));
      case NodeKind::Compare:
        return fmt::format(" '{}'{}", operator_spelling(static_cast<CompareOperator>(n.op)),
                           (n.flags & 1) ? " chained" : "");
      case NodeKind::Tuple:
        return (n.flags & 1) ? " parenthesized" : "";
      default:
        return "";
    }
  }

  std::string location(SourceRange range) const {
    PresumedLocation b = sources_.presumed(range.begin);
    PresumedLocation e = sources_.presumed(range.end);
    return fmt::format("[{}:{}-{}:{}]", b.line, b.column, e.line, e.column);
  }

  // Iterative (an explicit stack, not recursion), so that no tree is too deep
  // to print, whatever the nesting limit.
  void dump(NodeId root) {
    struct Pending {
      NodeId id;
      std::string_view role;
      size_t depth;
    };
    std::vector<Pending> stack{{root, {}, 0}};
    std::vector<std::string_view> roles;
    std::vector<Pending> children_in_order;
    while (!stack.empty()) {
      Pending item = stack.back();
      stack.pop_back();
      std::string indent(item.depth * 2, ' ');
      std::string prefix = item.role.empty() ? "" : std::string(item.role) + ": ";
      if (!item.id.valid()) {
        out_ += indent + prefix + "<none>\n";
        continue;
      }
      const Node& n = ast_.node(item.id);
      std::string extra = annotate_ ? annotate_(item.id) : std::string();
      out_ += fmt::format("{}{}{}{} {}{}\n", indent, prefix, node_kind_name(n.kind), details(item.id),
                          location(n.range), extra);

      // Split the role list; the last role may be variadic ("args...").
      roles.clear();
      std::string_view all = node_kind_roles(n.kind);
      while (!all.empty()) {
        size_t comma = all.find(',');
        roles.push_back(all.substr(0, comma));
        all = comma == std::string_view::npos ? std::string_view() : all.substr(comma + 1);
      }
      // A node that is only a list ("statements...") prints its items unlabelled.
      if (roles.size() == 1 && roles[0].ends_with("...")) roles.clear();
      auto children = ast_.children(item.id);
      children_in_order.clear();
      for (size_t i = 0; i < children.size(); ++i) {
        std::string_view child_role;
        if (!roles.empty()) {
          std::string_view r = i < roles.size() ? roles[i] : roles.back();
          if (r.ends_with("...")) {
            r.remove_suffix(3);
          } else {
            internal_check(i < roles.size(), "ast-dump", "node has more children than its roles");
          }
          child_role = r;
        }
        children_in_order.push_back({children[i], child_role, item.depth + 1});
      }
      stack.insert(stack.end(), children_in_order.rbegin(), children_in_order.rend());
    }
  }

  const Ast& ast_;
  const SourceManager& sources_;
  const ValueStores& values_;
  const std::function<std::string(NodeId)>& annotate_;
  std::string out_;
};

}  // namespace

std::string dump_ast(const Ast& ast, const SourceManager& sources, const ValueStores& values,
                     const std::function<std::string(NodeId)>& annotate) {
  return AstDumper(ast, sources, values, annotate).run();
}

}  // namespace tessera
