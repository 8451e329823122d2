// cse: common-subexpression elimination with scoping (docs/ir/passes.md).
//
// Two operations are equivalent when they have the same kind, operands,
// attributes (interned: compared by handle) and result types. A Pure
// operation is replaced by an equivalent one that dominates it: earlier in
// the same block, or in an enclosing block of the same function (a value
// from outside may flow into a nested region, never the other way). Pure
// Convergent operations (shuffles, warp reductions) are only merged within
// one block. ReadOnly operations (loads) are merged only within one block and
// only when no operation between them may write memory.
#include <map>
#include <tuple>
#include <vector>

#include "ir/passes/passes.h"

namespace tessera::ir {
namespace {

struct Key {
  OpKind kind;
  std::vector<Value*> operands;
  std::vector<std::pair<std::string, const AttributeStorage*>> attributes;
  std::vector<const TypeStorage*> result_types;
  Block* block = nullptr;  // set for operations merged only within one block
  unsigned generation = 0;  // loads: the number of writes seen in the block so far
  friend bool operator<(const Key& a, const Key& b) {
    return std::tie(a.kind, a.operands, a.attributes, a.result_types, a.block, a.generation) <
           std::tie(b.kind, b.operands, b.attributes, b.result_types, b.block, b.generation);
  }
};

Key key_of(Operation* op) {
  Key k{op->kind(), op->operands(), {}, {}};
  for (const NamedAttribute& a : op->attributes()) k.attributes.emplace_back(a.name, a.value.storage());
  for (Type t : op->result_types()) k.result_types.push_back(t.storage());
  return k;
}

// True when `op` (or anything nested in it) may write memory or synchronise.
bool may_write(Operation* op) {
  bool writes = false;
  op->walk([&](Operation* nested) {
    if (!nested->has_trait(trait::Pure) && !nested->has_trait(trait::ReadOnly) && !nested->is(OpKind::Func))
      writes = true;
    if (nested->has_trait(trait::Convergent) && !nested->has_trait(trait::Pure)) writes = true;
  });
  return writes;
}

class CSE {
 public:
  // Processes a block with the equivalences of its enclosing blocks in scope.
  void run_block(Block& block) {
    std::vector<Key> added;
    unsigned generation = 0;
    for (Operation* op : block) {
      if (op->has_trait(trait::IsolatedFromAbove)) {
        CSE inner;  // nothing from outside is visible
        for (unsigned r = 0; r < op->num_regions(); ++r)
          for (size_t b = 0; b < op->region(r).num_blocks(); ++b) inner.run_block(op->region(r).block(b));
        continue;
      }
      if (candidate(op)) {
        Key k = key_of(op);
        if (op->has_trait(trait::ReadOnly)) {
          k.block = &block;
          k.generation = generation;
        } else if (op->has_trait(trait::Convergent)) {
          k.block = &block;
        }
        auto it = table_.find(k);
        if (it != table_.end()) {
          for (unsigned i = 0; i < op->num_results(); ++i) op->result(i)->replace_all_uses_with(it->second->result(i));
          op->erase();
          continue;
        }
        table_.emplace(k, op);
        added.push_back(std::move(k));
      }
      for (unsigned r = 0; r < op->num_regions(); ++r)
        for (size_t b = 0; b < op->region(r).num_blocks(); ++b) run_block(op->region(r).block(b));
      if (may_write(op)) ++generation;
    }
    for (const Key& k : added) table_.erase(k);
  }

 private:
  static bool candidate(Operation* op) {
    if (op->num_regions() != 0 || op->num_results() == 0 || op->has_trait(trait::Terminator)) return false;
    if (op->has_trait(trait::Pure)) return true;
    // Loads; mma is ReadOnly but Convergent and a tile computation: left alone.
    return op->has_trait(trait::ReadOnly) && !op->has_trait(trait::Convergent);
  }

  std::map<Key, Operation*> table_;
};

}  // namespace

void run_cse_pass(Operation* module, PassContext&) {
  CSE cse;
  cse.run_block(module->region(0).front());
}

}  // namespace tessera::ir
