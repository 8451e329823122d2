// The abstract syntax tree.
//
// Nodes live in one dense array and are named by `NodeId`; a node's children
// are a contiguous slice of a second array, in the fixed order that
// node_kind.def documents (optional children are invalid ids). Nodes are
// created bottom-up by the parser and never change kind afterwards; later
// phases attach what they learn in side tables keyed by NodeId.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "frontend/lex/value_stores.h"
#include "support/source/huge_pages.h"
#include "support/source/source_manager.h"

namespace tessera {

enum class NodeKind : uint8_t {
#define TESSERA_AST_NODE(Name, Roles) Name,
#include "frontend/ast/node_kind.def"
};

std::string_view node_kind_name(NodeKind kind);
// The role names of the children ("lhs", "rhs"); a trailing "..." role is variadic.
std::string_view node_kind_roles(NodeKind kind);

enum class BinaryOperator : uint8_t {
  Add,
  Sub,
  Mul,
  MatMul,
  Div,
  FloorDiv,
  Mod,
  Pow,
  LShift,
  RShift,
  BitAnd,
  BitOr,
  BitXor
};
enum class UnaryOperator : uint8_t { Neg, Pos, Invert, Not };
enum class BoolOperator : uint8_t { And, Or };
enum class CompareOperator : uint8_t { Lt, Gt, Le, Ge, Eq, Ne, In, NotIn, Is, IsNot };
enum class ParameterKind : uint8_t {
  Normal,         // x, x: T, x=1
  KeywordOnly,    // a parameter after `*` or `*args`
  VarPositional,  // *args
  VarKeyword,     // **kwargs
  KeywordMarker,  // bare `*`
};

std::string_view operator_spelling(BinaryOperator op);
std::string_view operator_spelling(UnaryOperator op);
std::string_view operator_spelling(BoolOperator op);
std::string_view operator_spelling(CompareOperator op);
std::string_view parameter_kind_name(ParameterKind kind);

struct NodeId {
  uint32_t index = UINT32_MAX;
  bool valid() const { return index != UINT32_MAX; }
  friend bool operator==(NodeId, NodeId) = default;
};

// Set on an expression written inside parentheses (`(a < b) < c` is no chain).
inline constexpr uint16_t kParenthesizedFlag = 0x8000;

// The deepest tree the frontend builds: every later phase walks the tree
// recursively, and this keeps them well inside an 8 MiB stack (sema needs
// about 5.5 KiB a level in the AddressSanitizer build). Clang's default
// bracket depth is 256; CPython allows 200 nested parentheses.
inline constexpr uint32_t kMaxNestingDepth = 500;

struct Node {
  NodeKind kind;
  uint8_t op = 0;
  uint16_t flags = 0;
  SourceRange range;
  uint32_t children_begin = 0;
  uint32_t children_count = 0;
  uint32_t payload = UINT32_MAX;
};

class Ast {
 public:
  NodeId add(NodeKind kind, SourceRange range, std::span<const NodeId> children = {}, uint32_t payload = UINT32_MAX,
             uint8_t op = 0, uint16_t flags = 0);
  NodeId add(NodeKind kind, SourceRange range, std::initializer_list<NodeId> children, uint32_t payload = UINT32_MAX,
             uint8_t op = 0, uint16_t flags = 0) {
    return add(kind, range, std::span<const NodeId>(children.begin(), children.size()), payload, op, flags);
  }

  void reserve(size_t nodes) {
    nodes_.reserve(nodes);
    children_.reserve(nodes);
    depths_.reserve(nodes);
  }

  const Node& node(NodeId id) const { return nodes_[id.index]; }
  Node& mutable_node(NodeId id) { return nodes_[id.index]; }
  NodeKind kind(NodeId id) const { return nodes_[id.index].kind; }
  SourceRange range(NodeId id) const { return nodes_[id.index].range; }
  std::span<const NodeId> children(NodeId id) const {
    const Node& n = nodes_[id.index];
    return std::span<const NodeId>(children_.data() + n.children_begin, n.children_count);
  }
  NodeId child(NodeId id, size_t i) const { return children(id)[i]; }
  size_t size() const { return nodes_.size(); }

  // Undo support: everything added after a mark can be dropped again.
  struct Mark {
    size_t nodes;
    size_t children;
  };
  Mark mark() const { return {nodes_.size(), children_.size()}; }
  void rollback(Mark mark) {
    nodes_.resize(mark.nodes);
    children_.resize(mark.children);
    depths_.resize(mark.nodes);
    std::erase_if(too_deep_, [&](const TooDeep& cut) { return cut.node >= mark.nodes; });
  }

  // Nesting limit: `add` never makes a tree deeper than kMaxNestingDepth.
  // A node that would be deeper is added as an ErrorStmt or ErrorExpr
  // without children instead, and the parser reports one of these cuts
  // (take_too_deep returns its range and forgets them all).
  std::optional<SourceRange> take_too_deep();

  NodeId root() const { return root_; }
  void set_root(NodeId root) { root_ = root; }

 private:
  // Huge pages: see huge_pages.h (a 100,000-line file has about a million nodes).
  std::vector<Node, HugePageAllocator<Node>> nodes_;
  std::vector<NodeId, HugePageAllocator<NodeId>> children_;
  std::vector<uint16_t, HugePageAllocator<uint16_t>> depths_;  // height of each node's subtree, 1 for a leaf
  struct TooDeep {
    size_t node;
    SourceRange range;
    bool statement;
  };
  std::vector<TooDeep> too_deep_;
  NodeId root_;
};

// `--emit=ast`: one node per line, indented by depth, with the child's role,
// kind, kind-specific details and source range "[line:col-line:col]".
// `annotate`, when given, appends text to a node's line (sema adds types).
std::string dump_ast(const Ast& ast, const SourceManager& sources, const ValueStores& values,
                     const std::function<std::string(NodeId)>& annotate = {});

}  // namespace tessera
