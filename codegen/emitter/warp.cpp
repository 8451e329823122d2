// Lanes working together (emitter.h): barriers, warp shuffles and
// reductions, atomics. Barriers and shuffles are the targets' own
// (TargetHooks: bar.sync and shfl.sync on the GPU, the runtime's fibers on
// the CPU); warp reductions are butterflies of shuffles on both.
#include "codegen/emitter/emitter.h"

namespace tessera::codegen::emitter {

llvm::Value* Emitter::combine(ir::WarpReduceKind kind, llvm::Value* a, llvm::Value* b, Type t) {
  bool f = is_float(t);
  bool max = false;
  switch (kind) {
    case ir::WarpReduceKind::Sum: return f ? builder_.CreateFAdd(a, b) : builder_.CreateAdd(a, b);
    case ir::WarpReduceKind::Max: max = true; break;
    case ir::WarpReduceKind::Min: break;
  }
  // NaN propagates, as through arith.maxf/minf (docs/ir/core.md).
  if (f) return intrinsic(max ? llvm::Intrinsic::maximum : llvm::Intrinsic::minimum, {a, b}, {a->getType()});
  bool s = is_signed(t);
  llvm::Intrinsic::ID id = max ? (s ? llvm::Intrinsic::smax : llvm::Intrinsic::umax)
                               : (s ? llvm::Intrinsic::smin : llvm::Intrinsic::umin);
  return intrinsic(id, {a, b}, {a->getType()});
}

void Emitter::emit_barrier(Operation*) { target_->barrier(); }

int64_t Emitter::partial_warp_lanes() {
  if (!current_ir_function_ || !current_ir_function_->has_attr("group_shape")) return 0;
  return group_size_static() % ir::kWarpLanes;
}

// PTX's source lane of shfl.sync with the clamps this backend passes (31
// for down, xor and idx, 0 for up): a source outside the warp is the lane
// itself.
llvm::Value* Emitter::shuffle_source(llvm::Value* in_warp, llvm::Value* offset, ir::ShuffleMode mode) {
  llvm::Value* b = builder_.CreateZExt(builder_.CreateIntCast(offset, builder_.getInt32Ty(), false), builder_.getInt64Ty());
  switch (mode) {
    case ir::ShuffleMode::Up:
      return builder_.CreateSelect(builder_.CreateICmpUGE(in_warp, b), builder_.CreateSub(in_warp, b), in_warp);
    case ir::ShuffleMode::Down: {
      llvm::Value* j = builder_.CreateAdd(in_warp, b);
      return builder_.CreateSelect(builder_.CreateICmpULE(j, builder_.getInt64(31)), j, in_warp);
    }
    case ir::ShuffleMode::Xor: {
      llvm::Value* j = builder_.CreateXor(in_warp, b);
      return builder_.CreateSelect(builder_.CreateICmpULE(j, builder_.getInt64(31)), j, in_warp);
    }
    case ir::ShuffleMode::Idx: return builder_.CreateAnd(b, builder_.getInt64(31));
  }
  return in_warp;
}

void Emitter::emit_shuffle(Operation* op) {
  set(op->result(), target_->shuffle(get(op->operand(0)), get(op->operand(1)), ir::shuffle_mode(*op)));
}

// A butterfly: after log2(32) exchanges every lane holds the result. A group
// whose lane count is not a multiple of 32 ends with a partial warp of w
// lanes, where the butterfly would read lanes that do not exist: its lanes
// reduce by a tree instead (lane j combines lane j + offset for offsets 16,
// 8, 4, 2, 1 while that lane exists) and take lane 0's result, on every
// target (the CPU's lane loops do the same, cpu_lane_loops.cpp).
void Emitter::emit_warp_reduce(Operation* op) {
  reject_narrow_codes(op);
  ir::WarpReduceKind kind = ir::warp_reduce_kind(*op);
  Type t = op->operand(0)->type();
  llvm::Value* v = get(op->operand(0));
  auto butterfly = [&](llvm::Value* x) {
    for (int offset = 16; offset > 0; offset /= 2)
      x = combine(kind, x, target_->shuffle(x, builder_.getInt32(offset), ir::ShuffleMode::Xor), t);
    return x;
  };
  int64_t partial = partial_warp_lanes();
  if (partial == 0) return set(op->result(), butterfly(v));
  int64_t lanes = group_size_static();
  llvm::Value* in_partial = builder_.CreateICmpUGE(local_linear(), builder_.getInt64(static_cast<uint64_t>(lanes - partial)));
  auto* tree_block = llvm::BasicBlock::Create(context_, "warp_reduce.partial", current_function_);
  auto* full_block = llvm::BasicBlock::Create(context_, "warp_reduce.full", current_function_);
  auto* merge = llvm::BasicBlock::Create(context_, "warp_reduce.end", current_function_);
  builder_.CreateCondBr(in_partial, tree_block, full_block);
  builder_.SetInsertPoint(full_block);
  llvm::Value* full = butterfly(v);
  llvm::BasicBlock* full_end = builder_.GetInsertBlock();
  builder_.CreateBr(merge);
  builder_.SetInsertPoint(tree_block);
  llvm::Value* x = v;
  llvm::Value* in_warp = warp_lane();
  for (int offset = 16; offset > 0; offset /= 2) {
    llvm::Value* other = target_->shuffle(x, builder_.getInt32(offset), ir::ShuffleMode::Down);
    llvm::Value* exists = builder_.CreateICmpULT(builder_.CreateAdd(in_warp, builder_.getInt64(static_cast<uint64_t>(offset))),
                                                 builder_.getInt64(static_cast<uint64_t>(partial)));
    x = builder_.CreateSelect(exists, combine(kind, x, other, t), x);
  }
  llvm::Value* tree = target_->shuffle(x, builder_.getInt32(0), ir::ShuffleMode::Idx);
  llvm::BasicBlock* tree_end = builder_.GetInsertBlock();
  builder_.CreateBr(merge);
  builder_.SetInsertPoint(merge);
  llvm::PHINode* result = builder_.CreatePHI(v->getType(), 2);
  result->addIncoming(full, full_end);
  result->addIncoming(tree, tree_end);
  set(op->result(), result);
}

void Emitter::emit_atomic(Operation* op) {
  reject_narrow_codes(op);
  Type elem = op->operand(0)->type();
  bool f = is_float(elem), s = is_signed(elem);
  using B = llvm::AtomicRMWInst::BinOp;
  B code = B::BAD_BINOP;
  switch (ir::atomic_kind(*op)) {
    case ir::AtomicKind::Add: code = f ? B::FAdd : B::Add; break;
    // Float max/min propagate NaN, as arith.maxf/minf do (LLVM's fmaximum:
    // a compare-and-swap loop on both targets, neither has it in hardware).
    case ir::AtomicKind::Max: code = f ? B::FMaximum : s ? B::Max : B::UMax; break;
    case ir::AtomicKind::Min: code = f ? B::FMinimum : s ? B::Min : B::UMin; break;
    case ir::AtomicKind::Exch: code = B::Xchg; break;
    case ir::AtomicKind::And: code = B::And; break;
    case ir::AtomicKind::Or: code = B::Or; break;
    case ir::AtomicKind::Xor: code = B::Xor; break;
  }
  llvm::Value* address = address_of(op, 0, 1);
  llvm::Value* value = get(op->operand(op->num_operands() - 1));
  set(op->result(), builder_.CreateAtomicRMW(code, address, value, llvm::MaybeAlign(), llvm::AtomicOrdering::Monotonic));
}

void Emitter::emit_atomic_cas(Operation* op) {
  reject_narrow_codes(op);
  llvm::Value* address = address_of(op, 0, 1);
  llvm::Value* compare = get(op->operand(op->num_operands() - 2));
  llvm::Value* desired = get(op->operand(op->num_operands() - 1));
  llvm::Type* t = compare->getType();
  if (t->isFloatingPointTy()) {
    llvm::Type* bits = builder_.getIntNTy(t->getPrimitiveSizeInBits());
    compare = builder_.CreateBitCast(compare, bits);
    desired = builder_.CreateBitCast(desired, bits);
  }
  auto* cas = builder_.CreateAtomicCmpXchg(address, compare, desired, llvm::MaybeAlign(),
                                           llvm::AtomicOrdering::Monotonic, llvm::AtomicOrdering::Monotonic);
  llvm::Value* old = builder_.CreateExtractValue(cas, {0});
  set(op->result(), t->isFloatingPointTy() ? builder_.CreateBitCast(old, t) : old);
}

}  // namespace tessera::codegen::emitter
