// Where a lane is (emitter.h): the ids and sizes of lanes, warps, groups
// and the grid, and the kernels' grid_rank.
#include "codegen/emitter/emitter.h"

namespace tessera::codegen::emitter {

// tid / ntid / ctaid / nctaid of one axis; on the CPU from the launch
// context and the lane (lane = x + group[0] * (y + group[1] * z)).
llvm::Value* Emitter::axis_sreg(const llvm::Intrinsic::ID (&ids)[3], int64_t axis) {
  // A kernel declared with grid_rank=N runs only on grids of N axes (its
  // entry checks it): group ids past them are 0 and their counts 1, so
  // tile.linear_id() and friends flatten N axes (fewer registers).
  if ((&ids == &kCtaid || &ids == &kNctaid) && current_ir_function_ && axis >= grid_rank(current_ir_function_))
    return builder_.getInt64(&ids == &kCtaid ? 0 : 1);
  // A kernel runs only with its declared group shape (every launcher checks
  // it), so the group's sizes are constants and ids past its rank are 0:
  // fewer special-register reads and registers than %ntid / %tid.y.
  if (ir::Attribute g = current_ir_function_ ? current_ir_function_->attr("group_shape") : ir::Attribute{}) {
    std::vector<int64_t> shape = g.int_array();
    bool inside = axis < static_cast<int64_t>(shape.size());
    if (&ids == &kNtid) return builder_.getInt64(static_cast<uint64_t>(inside ? shape[static_cast<size_t>(axis)] : 1));
    if (&ids == &kTid && !inside) return builder_.getInt64(0);
  }
  if (!host_) return sreg(ids[axis]);
  if (&ids == &kNtid) return context_u32(cpu_context::kGroup, axis);
  if (&ids == &kCtaid) return context_u32(cpu_context::kGroupId, axis);
  if (&ids == &kNctaid) return context_u32(cpu_context::kGrid, axis);
  llvm::Value* nx = context_u32(cpu_context::kGroup, 0);
  if (axis == 0) return builder_.CreateURem(lane_, nx);
  llvm::Value* ny = context_u32(cpu_context::kGroup, 1);
  if (axis == 1) return builder_.CreateURem(builder_.CreateUDiv(lane_, nx), ny);
  return builder_.CreateUDiv(lane_, builder_.CreateMul(nx, ny));
}

int64_t Emitter::grid_rank(Operation* f) {
  ir::Attribute r = f->attr("grid_rank");
  return r ? r.int_value() : 3;
}

// The product of the grid's sizes past the kernel's grid_rank (i64): 1 for
// a launch the kernel accepts.
llvm::Value* Emitter::grid_sizes_past_rank(Operation* f) {
  llvm::Value* product = builder_.getInt64(1);
  for (int64_t axis = grid_rank(f); axis < 3; ++axis)
    product = builder_.CreateMul(product, host_ ? context_u32(cpu_context::kGrid, axis) : sreg(kNctaid[axis]));
  return product;
}

// grid_rank=N on the GPU: a launch on a grid with more axes traps (the
// launch fails) instead of computing ids from N axes. A trap, not CUDA's
// assert with a message: a call costs registers in every such kernel
// (block_reduce: 24 instead of 10). The CPU target checks in
// emit_host_entries, with a message.
void Emitter::check_grid_rank(Operation* f) {
  if (grid_rank(f) >= 3) return;
  auto* fail = llvm::BasicBlock::Create(context_, "grid_rank_exceeded", current_function_);
  auto* next = llvm::BasicBlock::Create(context_, "grid_rank_ok", current_function_);
  builder_.CreateCondBr(builder_.CreateICmpEQ(grid_sizes_past_rank(f), builder_.getInt64(1)), next, fail);
  builder_.SetInsertPoint(fail);
  intrinsic(llvm::Intrinsic::trap);
  builder_.CreateUnreachable();
  builder_.SetInsertPoint(next);
}

std::string Emitter::grid_rank_message(Operation* f) {
  int64_t rank = grid_rank(f);
  return "kernel '" + std::string(f->symbol_name()) + "' declares grid_rank=" + std::to_string(rank) +
         " but was launched on a grid with more axes (a size other than 1 past axis " + std::to_string(rank - 1) + ")";
}

llvm::Value* Emitter::local_linear() {
  if (host_) return lane_;
  llvm::Value* x = sreg(kTid[0]);
  if (group_rank() == 1) return x;
  llvm::Value* nx = axis_sreg(kNtid, 0);
  llvm::Value* id = builder_.CreateAdd(x, builder_.CreateMul(sreg(kTid[1]), nx));
  if (group_rank() == 2) return id;
  return builder_.CreateAdd(id, builder_.CreateMul(sreg(kTid[2]), builder_.CreateMul(nx, axis_sreg(kNtid, 1))));
}

llvm::Value* Emitter::group_lanes() {
  llvm::Value* n = axis_sreg(kNtid, 0);
  for (size_t a = 1; a < group_rank(); ++a) n = builder_.CreateMul(n, axis_sreg(kNtid, static_cast<int64_t>(a)));
  return n;
}

size_t Emitter::group_rank() {
  ir::Attribute g = current_ir_function_->attr("group_shape");
  return g ? g.size() : 3;
}

void Emitter::emit_linear_id(Operation* op) {
  // (flattened group id) * lanes per group + flattened local id.
  llvm::Value* group = axis_sreg(kCtaid, 0);
  llvm::Value* groups_x = axis_sreg(kNctaid, 0);
  group = builder_.CreateAdd(group, builder_.CreateMul(axis_sreg(kCtaid, 1), groups_x));
  group = builder_.CreateAdd(group, builder_.CreateMul(axis_sreg(kCtaid, 2), builder_.CreateMul(groups_x, axis_sreg(kNctaid, 1))));
  set(op->result(), builder_.CreateAdd(builder_.CreateMul(group, group_lanes()), local_linear()));
}

void Emitter::emit_lane_id(Operation* op) {
  if (host_) return set(op->result(), builder_.CreateAnd(lane_, builder_.getInt64(31)));
  set(op->result(), sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_laneid));
}

void Emitter::emit_warp_id(Operation* op) {
  set(op->result(), builder_.CreateUDiv(local_linear(), builder_.getInt64(32)));
}

}  // namespace tessera::codegen::emitter
