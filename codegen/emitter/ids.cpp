// Where a lane is (emitter.h): the ids and sizes of lanes, warps, groups
// and the grid, and the kernels' grid_rank. The targets read them
// (TargetHooks::read_group_quantity: special registers on the GPU, the
// launch context on the CPU); what a kernel's declaration makes constant is
// decided here, the same for both.
#include "codegen/emitter/emitter.h"

namespace tessera::codegen::emitter {

llvm::Value* Emitter::group_quantity(GroupQuantity quantity, int64_t axis) {
  // A kernel declared with grid_rank=N runs only on grids of N axes (its
  // entry checks it): group ids past them are 0 and their counts 1, so
  // tile.linear_id() and friends flatten N axes (fewer registers).
  bool grid = quantity == GroupQuantity::GroupId || quantity == GroupQuantity::NumGroups;
  if (grid && current_ir_function_ && axis >= grid_rank(current_ir_function_))
    return builder_.getInt64(quantity == GroupQuantity::GroupId ? 0 : 1);
  // A kernel runs only with its declared group shape (every launcher checks
  // it), so the group's sizes are constants and ids past its rank are 0:
  // fewer special-register reads and registers than %ntid / %tid.y.
  if (ir::Attribute g = current_ir_function_ ? current_ir_function_->attr("group_shape") : ir::Attribute{}) {
    std::vector<int64_t> shape = g.int_array();
    bool inside = axis < static_cast<int64_t>(shape.size());
    if (quantity == GroupQuantity::GroupSize)
      return builder_.getInt64(static_cast<uint64_t>(inside ? shape[static_cast<size_t>(axis)] : 1));
    if (quantity == GroupQuantity::LocalId && !inside) return builder_.getInt64(0);
  }
  return target_->read_group_quantity(quantity, axis);
}

int64_t Emitter::grid_rank(Operation* f) {
  ir::Attribute r = f->attr("grid_rank");
  return r ? r.int_value() : 3;
}

// The product of the grid's sizes past the kernel's grid_rank (i64): 1 for
// a launch the kernel accepts (each target's check: NvptxHooks::begin_body,
// CpuHooks' entries).
llvm::Value* Emitter::grid_sizes_past_rank(Operation* f) {
  llvm::Value* product = builder_.getInt64(1);
  for (int64_t axis = grid_rank(f); axis < 3; ++axis)
    product = builder_.CreateMul(product, target_->read_group_quantity(GroupQuantity::NumGroups, axis));
  return product;
}

llvm::Value* Emitter::group_lanes() {
  llvm::Value* n = group_quantity(GroupQuantity::GroupSize, 0);
  for (size_t a = 1; a < group_rank(); ++a)
    n = builder_.CreateMul(n, group_quantity(GroupQuantity::GroupSize, static_cast<int64_t>(a)));
  return n;
}

size_t Emitter::group_rank() {
  ir::Attribute g = current_ir_function_->attr("group_shape");
  return g ? g.size() : 3;
}

void Emitter::emit_group_quantity(Operation* op, GroupQuantity quantity) {
  set(op->result(), group_quantity(quantity, op->int_attr("axis")));
}

void Emitter::emit_linear_id(Operation* op) {
  // (flattened group id) * lanes per group + flattened local id.
  llvm::Value* group = group_quantity(GroupQuantity::GroupId, 0);
  llvm::Value* groups_x = group_quantity(GroupQuantity::NumGroups, 0);
  group = builder_.CreateAdd(group, builder_.CreateMul(group_quantity(GroupQuantity::GroupId, 1), groups_x));
  group = builder_.CreateAdd(group, builder_.CreateMul(group_quantity(GroupQuantity::GroupId, 2),
                                                       builder_.CreateMul(groups_x, group_quantity(GroupQuantity::NumGroups, 1))));
  set(op->result(), builder_.CreateAdd(builder_.CreateMul(group, target_->linear_id_lanes(group_lanes())), local_linear()));
}

void Emitter::emit_lane_id(Operation* op) { set(op->result(), target_->lane_in_warp()); }

void Emitter::emit_warp_id(Operation* op) {
  set(op->result(), builder_.CreateUDiv(local_linear(), builder_.getInt64(32)));
}

}  // namespace tessera::codegen::emitter
