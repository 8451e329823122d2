// Type aliases: `type Vector = f32[n]`, and a module-level assignment whose
// right-hand side is a dtype (`T = f32`, `T = ts.bf16`, `ACC = T`,
// `T = fp8_e4m3 @accum(f32)`), which makes the name a type alias usable
// wherever a dtype is: parameter annotations (`x: T[n]`,
// `Tensor["M", "K", T]`), `tile.alloc_shared(shape, T)`, `cast(x, T)`,
// `tshared.alloc[T]`, `@accum(T)`. Kernels are written once against such
// aliases and instantiated per dtype by changing the alias line
// (docs/language/types.md, "Type aliases").
#include "sema/checker.h"

namespace tessera::sema {

std::string dotted_path_of(const Ast& ast, const ValueStores& values, NodeId node);  // resolve_type.cpp

// Whether a module-level expression names a dtype: a dtype name (`f32`,
// `ts.bf16`), an earlier alias, or either with policies attached by `@`
// (parsed as matrix multiplication in a value position). Syntactic: it is
// decided while module symbols are collected, before anything is typed.
bool Checker::denotes_dtype(NodeId expression) const {
  switch (ast_.kind(expression)) {
    case NodeKind::Name: {
      auto symbol = module_symbols_.find(ast_.node(expression).payload);
      if (symbol != module_symbols_.end()) return symbol->second.kind == ModuleSymbol::Kind::TypeAlias;
      [[fallthrough]];
    }
    case NodeKind::Attribute: {
      std::string path = dotted_path_of(ast_, values_, expression);
      return !path.empty() && lookup_dtype(path).has_value();
    }
    case NodeKind::BinaryOp:
      return static_cast<BinaryOperator>(ast_.node(expression).op) == BinaryOperator::MatMul &&
             denotes_dtype(ast_.child(expression, 0));
    case NodeKind::Subscript: {
      // `fp8[e5m2]`: a format written as a subscript.
      NodeId object = ast_.child(expression, 0), index = ast_.child(expression, 1);
      if (ast_.kind(object) != NodeKind::Name || ast_.kind(index) != NodeKind::Name) return false;
      std::string family = dotted_path_of(ast_, values_, object);
      return (family == "fp8" || family == "fp6" || family == "fp4") &&
             lookup_dtype(family + "_" + dotted_path_of(ast_, values_, index)).has_value();
    }
    default:
      return false;
  }
}

NodeId Checker::alias_type_node(const ModuleSymbol& alias) const {
  // `type X = T` keeps T as its first child; `X = T` as its second.
  return ast_.kind(alias.node) == NodeKind::Assign ? ast_.child(alias.node, 1) : ast_.child(alias.node, 0);
}

bool Checker::binds_type_alias(NodeId statement) const {
  if (ast_.kind(statement) != NodeKind::Assign || ast_.children(statement).size() != 2) return false;
  NodeId target = ast_.child(statement, 0);
  if (ast_.kind(target) != NodeKind::Name) return false;
  auto symbol = module_symbols_.find(ast_.node(target).payload);
  return symbol != module_symbols_.end() && symbol->second.kind == ModuleSymbol::Kind::TypeAlias;
}

bool Checker::defines_type_alias(NodeId statement) const {
  if (!binds_type_alias(statement)) return false;
  return module_symbols_.at(ast_.node(ast_.child(statement, 0)).payload).node.index == statement.index;
}

std::optional<TypeId> Checker::alias_type(NodeId name) {
  if (ast_.kind(name) != NodeKind::Name) return std::nullopt;
  auto symbol = module_symbols_.find(ast_.node(name).payload);
  if (symbol == module_symbols_.end() || symbol->second.kind != ModuleSymbol::Kind::TypeAlias) return std::nullopt;
  NodeId aliased = alias_type_node(symbol->second);
  TypeId known = out_.node_types[aliased.index];
  return known.valid() ? known : resolve_type(aliased);
}

}  // namespace tessera::sema
