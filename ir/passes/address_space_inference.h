// Memory roots: which allocations and arguments a memref value may view.
//
// A memref value is a view of memory that starts at a root: a
// `tile.alloc_shared` / `tile.alloc_local` result, or a function argument.
// Views (`tile.subview`), the results and block arguments of scf.if /
// scf.for / scf.while, and helper arguments (through every `func.call` of the
// module) pass roots along. The address space of a value is the space of its
// roots; a value whose roots disagree would need a generic pointer.
#pragma once

#include <optional>
#include <set>
#include <unordered_map>
#include <vector>

#include "ir/core/ir.h"

namespace tessera::ir {

class MemoryRootAnalysis {
 public:
  // Analyses every function of `module` together (calls pass roots on).
  explicit MemoryRootAnalysis(Operation* module);

  // The roots of a memref value, in a deterministic order (by first
  // discovery); empty for a value no root reaches (an unused helper's
  // argument).
  const std::vector<Value*>& roots(Value* v) const;
  // The one address space of every root of `v`, or nullopt when `v` has no
  // root or roots in several spaces.
  std::optional<MemorySpace> inferred_space(Value* v) const;

 private:
  bool add_roots(Value* to, Value* from);
  bool add_root(Value* to, Value* root);
  bool propagate(Operation* module);

  std::unordered_map<const Value*, std::vector<Value*>> roots_;
  std::unordered_map<const Value*, std::set<Value*>> seen_;
};

}  // namespace tessera::ir
