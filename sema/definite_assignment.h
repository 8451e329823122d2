// Which names a piece of code assigns: anywhere (the locals of a function,
// the values a loop carries), and on every path (what is defined after an
// `if`). Sema's definite-assignment check and the lowering's merging of
// control flow both use these, so that what sema accepts lowers.
#pragma once

#include <cstdint>
#include <vector>

#include "frontend/ast/ast.h"

namespace tessera::sema {

// The names an assignment target binds (`x`, `a, (b, c)`; not subscripts or
// attributes, which write memory), added to `out` once each.
void target_names(const Ast& ast, NodeId target, std::vector<uint32_t>& out);

// The names a statement subtree assigns anywhere, in order of first
// assignment (nested function bodies excluded).
void assigned_names(const Ast& ast, NodeId node, std::vector<uint32_t>& out);

// The names that every path through a statement or suite assigns before
// it ends normally, added to `out` (a path that returns, breaks or
// continues never ends normally, so it constrains nothing). A loop's body
// may not run: a loop assigns nothing for certain. Returns false when no
// path ends normally.
bool definitely_assigned_names(const Ast& ast, NodeId node, std::vector<uint32_t>& out);

// Whether every path through a function body ends in a `return` (a loop
// that holds a `return` counts as one, since whether it runs to it is known
// only when its trip count is: the lowering decides). And whether the body
// returns a value anywhere (nested function bodies excluded).
bool always_returns(const Ast& ast, NodeId node);
bool returns_value(const Ast& ast, NodeId node);

}  // namespace tessera::sema
