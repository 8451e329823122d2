// Definite assignment: a local of a kernel or of a helper it calls must be
// assigned on every path to each of its uses (sema.maybe-unassigned), as
// Python raises UnboundLocalError otherwise; the IR has no undefined value
// to give it. Also the name sets that the lowering merges control flow with
// (definite_assignment.h).
#include "sema/definite_assignment.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "sema/checker.h"

namespace tessera::sema {

namespace {

void add_target_name(std::vector<uint32_t>& out, uint32_t name) {
  if (std::find(out.begin(), out.end(), name) == out.end()) out.push_back(name);
}

}  // namespace

void target_names(const Ast& ast, NodeId target, std::vector<uint32_t>& out) {
  if (!target.valid()) return;
  switch (ast.kind(target)) {
    case NodeKind::Name:
      if (std::find(out.begin(), out.end(), ast.node(target).payload) == out.end())
        out.push_back(ast.node(target).payload);
      return;
    case NodeKind::Tuple:
    case NodeKind::List:
      for (NodeId element : ast.children(target)) target_names(ast, element, out);
      return;
    default: return;  // subscripts and attributes write memory, not names
  }
}

void assigned_names(const Ast& ast, NodeId node, std::vector<uint32_t>& out) {
  if (!node.valid()) return;
  auto children = ast.children(node);
  switch (ast.kind(node)) {
    case NodeKind::Suite:
      for (NodeId statement : children) assigned_names(ast, statement, out);
      return;
    case NodeKind::Assign:
      for (size_t i = 0; i + 1 < children.size(); ++i) target_names(ast, children[i], out);
      return;
    case NodeKind::AugAssign:
    case NodeKind::AnnAssign: target_names(ast, children[0], out); return;
    case NodeKind::For:
      target_names(ast, children[0], out);
      assigned_names(ast, children[2], out);
      return;
    case NodeKind::While: assigned_names(ast, children[1], out); return;
    case NodeKind::If:
      assigned_names(ast, children[1], out);
      assigned_names(ast, children[2], out);
      return;
    case NodeKind::With:
      for (NodeId item : children.first(children.size() - 1)) target_names(ast, ast.child(item, 1), out);
      assigned_names(ast, children.back(), out);
      return;
    default: return;
  }
}

bool definitely_assigned_names(const Ast& ast, NodeId node, std::vector<uint32_t>& out) {
  if (!node.valid()) return true;
  auto children = ast.children(node);
  switch (ast.kind(node)) {
    case NodeKind::Suite:
      for (NodeId statement : children)
        if (!definitely_assigned_names(ast, statement, out)) return false;
      return true;
    case NodeKind::Assign:
      for (size_t i = 0; i + 1 < children.size(); ++i) target_names(ast, children[i], out);
      return true;
    case NodeKind::AugAssign: target_names(ast, children[0], out); return true;
    case NodeKind::AnnAssign:
      if (children[2].valid()) target_names(ast, children[0], out);  // `x: f32` alone declares, binds nothing
      return true;
    case NodeKind::If: {
      std::vector<uint32_t> then_names, else_names;
      bool then_ends = definitely_assigned_names(ast, children[1], then_names);
      bool else_ends = !children[2].valid() || definitely_assigned_names(ast, children[2], else_names);
      if (!then_ends && !else_ends) return false;
      if (!then_ends || !else_ends) {
        for (uint32_t name : then_ends ? then_names : else_names) add_target_name(out, name);
        return true;
      }
      for (uint32_t name : then_names)
        if (std::find(else_names.begin(), else_names.end(), name) != else_names.end()) add_target_name(out, name);
      return true;
    }
    case NodeKind::With:
      for (NodeId item : children.first(children.size() - 1)) target_names(ast, ast.child(item, 1), out);
      return definitely_assigned_names(ast, children.back(), out);
    case NodeKind::Return:
    case NodeKind::Break:
    case NodeKind::Continue: return false;
    default: return true;  // loops may not run; other statements bind nothing
  }
}

namespace {

// Whether a subtree holds a `return` (one with a value, when `with_value`),
// nested function bodies excluded.
bool holds_return(const Ast& ast, NodeId node, bool with_value) {
  if (!node.valid()) return false;
  NodeKind kind = ast.kind(node);
  if (kind == NodeKind::FunctionDef || kind == NodeKind::ClassDef || kind == NodeKind::Lambda) return false;
  if (kind == NodeKind::Return) return !with_value || ast.child(node, 0).valid();
  for (NodeId child : ast.children(node))
    if (holds_return(ast, child, with_value)) return true;
  return false;
}

}  // namespace

bool returns_value(const Ast& ast, NodeId node) { return holds_return(ast, node, true); }

bool always_returns(const Ast& ast, NodeId node) {
  if (!node.valid()) return false;
  auto children = ast.children(node);
  switch (ast.kind(node)) {
    case NodeKind::Suite:
      return std::any_of(children.begin(), children.end(), [&](NodeId s) { return always_returns(ast, s); });
    case NodeKind::Return: return true;
    case NodeKind::If: return always_returns(ast, children[1]) && always_returns(ast, children[2]);
    case NodeKind::With: return always_returns(ast, children.back());
    case NodeKind::For:
    case NodeKind::While: return holds_return(ast, node, false);
    default: return false;
  }
}

namespace {

// The check: a walk in execution order with the set of names assigned on
// every path so far.
class DefiniteAssignment {
 public:
  DefiniteAssignment(Checker& checker, const FunctionInfo& function) : c_(checker), ast_(checker.ast_) {
    NodeId body = ast_.child(function.def, 3);
    std::vector<uint32_t> locals;
    assigned_names(ast_, body, locals);
    locals_.insert(locals.begin(), locals.end());
    // Parameters (and the symbolic dimensions and autotune constants that
    // come with them) are assigned on entry.
    for (NodeId parameter : ast_.children(ast_.child(function.def, 1))) locals_.erase(ast_.node(parameter).payload);
    for (TypeId type : function.parameter_types) {
      if (c_.types_.kind(type) != TypeKind::Tensor) continue;
      for (DimId dim : c_.types_.dims(type))
        if (c_.types_.dim(dim).kind == DimKind::Symbol) locals_.erase(c_.types_.dim(dim).symbol.index);
    }
    for (const AutotuneParameter& parameter : function.autotune) locals_.erase(parameter.name.index);
    // The first assignment of each local, for the note.
    find_assignments(body);
  }

  void run(NodeId body) {
    std::unordered_set<uint32_t> assigned;
    visit_block(body, assigned);
  }

 private:
  using Set = std::unordered_set<uint32_t>;

  void find_assignments(NodeId node) {
    if (!node.valid()) return;
    NodeKind kind = ast_.kind(node);
    if (kind == NodeKind::FunctionDef || kind == NodeKind::Lambda || kind == NodeKind::ClassDef) return;
    std::vector<uint32_t> names;
    auto children = ast_.children(node);
    auto record = [&](NodeId target) {
      if (!target.valid()) return;
      if (ast_.kind(target) == NodeKind::Name) {
        first_assignment_.emplace(ast_.node(target).payload, target);
      } else if (ast_.kind(target) == NodeKind::Tuple || ast_.kind(target) == NodeKind::List) {
        for (NodeId element : ast_.children(target))
          if (ast_.kind(element) == NodeKind::Name) first_assignment_.emplace(ast_.node(element).payload, element);
      }
    };
    switch (kind) {
      case NodeKind::Assign:
        for (size_t i = 0; i + 1 < children.size(); ++i) record(children[i]);
        return;
      case NodeKind::AnnAssign:
      case NodeKind::AugAssign: record(children[0]); return;
      case NodeKind::For: record(children[0]); break;
      default: break;
    }
    for (NodeId child : children) find_assignments(child);
  }

  // The uses of names in an expression.
  void read(NodeId node, const Set& assigned) {
    if (!node.valid()) return;
    const Node& n = ast_.node(node);
    switch (n.kind) {
      case NodeKind::Name:
        // (A name sema could not resolve at all was reported as undefined.)
        if (locals_.count(n.payload) && !assigned.count(n.payload) && !c_.types_.is_error(c_.out_.node_types[node.index]) &&
            reported_.insert(n.payload).second) {
          std::string name = c_.name_of(n.payload);
          auto builder = c_.diags_.emit<diag::SemaMaybeUnassigned>(n.range, name);
          if (auto it = first_assignment_.find(n.payload); it != first_assignment_.end())
            builder.note<diag::NoteAssignedHere>(ast_.range(it->second), name);
        }
        return;
      case NodeKind::Lambda:
      case NodeKind::ListComp:
      case NodeKind::GeneratorExp: return;  // scopes of their own (not allowed in kernels)
      default:
        for (NodeId child : ast_.children(node)) read(child, assigned);
    }
  }

  // An assignment target: names are bound (after the value was read); the
  // objects and indices of subscripts are read.
  void bind(NodeId target, Set& assigned) {
    if (!target.valid()) return;
    switch (ast_.kind(target)) {
      case NodeKind::Name: assigned.insert(ast_.node(target).payload); return;
      case NodeKind::Tuple:
      case NodeKind::List:
        for (NodeId element : ast_.children(target)) bind(element, assigned);
        return;
      default: read(target, assigned); return;
    }
  }

  // False when no path through the suite ends normally.
  bool visit_block(NodeId suite, Set& assigned) {
    for (NodeId statement : ast_.children(suite))
      if (!visit(statement, assigned)) return false;
    return true;
  }

  bool visit(NodeId statement, Set& assigned) {
    auto children = ast_.children(statement);
    switch (ast_.kind(statement)) {
      case NodeKind::Assign:
        read(children.back(), assigned);
        for (NodeId target : children.first(children.size() - 1)) bind(target, assigned);
        return true;
      case NodeKind::AugAssign:
        read(children[0], assigned);  // `x += v` reads x
        read(children[1], assigned);
        bind(children[0], assigned);
        return true;
      case NodeKind::AnnAssign:
        if (children[2].valid()) {
          read(children[2], assigned);
          bind(children[0], assigned);
        }
        return true;
      case NodeKind::If: {
        read(children[0], assigned);
        Set then_set = assigned, else_set = assigned;
        bool then_ends = visit_block(children[1], then_set);
        bool else_ends = true;
        if (children[2].valid())
          else_ends = ast_.kind(children[2]) == NodeKind::If ? visit(children[2], else_set)
                                                             : visit_block(children[2], else_set);
        if (!then_ends && !else_ends) return false;
        if (!then_ends || !else_ends) {
          assigned = then_ends ? then_set : else_set;
          return true;
        }
        for (uint32_t name : then_set)
          if (else_set.count(name)) assigned.insert(name);
        return true;
      }
      case NodeKind::While: {
        read(children[0], assigned);
        Set body = assigned;  // the body may not run: what it assigns is not certain after it
        visit_block(children[1], body);
        return true;
      }
      case NodeKind::For: {
        read(children[1], assigned);
        Set body = assigned;
        bind(children[0], body);
        visit_block(children[2], body);
        return true;
      }
      case NodeKind::With:
        for (NodeId item : children.first(children.size() - 1)) {
          read(ast_.child(item, 0), assigned);
          bind(ast_.child(item, 1), assigned);
        }
        return visit_block(children.back(), assigned);
      case NodeKind::Return:
        read(children[0], assigned);
        return false;
      case NodeKind::Break:
      case NodeKind::Continue: return false;
      case NodeKind::FunctionDef:
      case NodeKind::ClassDef: return true;
      default:
        for (NodeId child : children) read(child, assigned);
        return true;
    }
  }

  Checker& c_;
  const Ast& ast_;
  Set locals_;
  Set reported_;
  std::unordered_map<uint32_t, NodeId> first_assignment_;
};

}  // namespace

void Checker::check_definite_assignment(const FunctionInfo& info) {
  DefiniteAssignment(*this, info).run(ast_.child(info.def, 3));
}

}  // namespace tessera::sema
