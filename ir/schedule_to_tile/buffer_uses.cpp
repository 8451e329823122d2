#include "ir/schedule_to_tile/buffer_uses.h"

#include <set>
#include <vector>

namespace tessera::ir {

bool visit_buffer_uses_in_block(Value* buffer, Block& block,
                                const std::function<bool(Value* value, Operation* user, Operation* in_block)>& visit) {
  std::vector<Value*> work{buffer};
  std::set<Value*> seen;
  while (!work.empty()) {
    Value* v = work.back();
    work.pop_back();
    if (!seen.insert(v).second) continue;
    for (OpOperand* use : v->uses()) {
      Operation* user = use->owner();
      if (user->is(OpKind::Yield) || user->is(OpKind::Return) || user->is(OpKind::Call) ||
          user->is(OpKind::Condition) || user->num_regions() > 0)
        return false;
      if (user->is(OpKind::HostView)) work.push_back(user->result());
      Operation* in_block = user;
      while (in_block && in_block->block() != &block) in_block = in_block->parent_op();
      if (!in_block || !visit(v, user, in_block)) return false;
    }
  }
  return true;
}

}  // namespace tessera::ir
