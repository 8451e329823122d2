// Lanes working together (emitter.h): barriers, warp shuffles and
// reductions, atomics.
#include "codegen/emitter/emitter.h"

namespace tessera::codegen::emitter {

// A warp exchange through the runtime (tessCpuLaunchContext::shuffle): the
// source lane in the warp by PTX's rules for shfl.sync with the clamps this
// backend uses; a source outside the warp returns the lane's own value.
llvm::Value* Emitter::host_shuffle(llvm::Value* v, llvm::Value* offset, ir::ShuffleMode mode) {
  llvm::Type* t = v->getType();
  unsigned bits = static_cast<unsigned>(module_->getDataLayout().getTypeSizeInBits(t));
  llvm::Value* in_warp = builder_.CreateAnd(lane_, builder_.getInt64(31));
  llvm::Value* b = builder_.CreateZExt(builder_.CreateIntCast(offset, builder_.getInt32Ty(), false), builder_.getInt64Ty());
  llvm::Value* source = nullptr;
  switch (mode) {
    case ir::ShuffleMode::Up:
      source = builder_.CreateSelect(builder_.CreateICmpUGE(in_warp, b), builder_.CreateSub(in_warp, b), in_warp);
      break;
    case ir::ShuffleMode::Down: {
      llvm::Value* j = builder_.CreateAdd(in_warp, b);
      source = builder_.CreateSelect(builder_.CreateICmpULE(j, builder_.getInt64(31)), j, in_warp);
      break;
    }
    case ir::ShuffleMode::Xor: {
      llvm::Value* j = builder_.CreateXor(in_warp, b);
      source = builder_.CreateSelect(builder_.CreateICmpULE(j, builder_.getInt64(31)), j, in_warp);
      break;
    }
    case ir::ShuffleMode::Idx: source = builder_.CreateAnd(b, builder_.getInt64(31)); break;
  }
  llvm::Value* bits_value = builder_.CreateBitCast(v, builder_.getIntNTy(bits));
  llvm::Value* wide = builder_.CreateZExt(bits_value, builder_.getInt64Ty());
  llvm::Type* ptr = builder_.getPtrTy();
  auto* type = llvm::FunctionType::get(builder_.getInt64Ty(), {ptr, builder_.getInt64Ty(), builder_.getInt32Ty()}, false);
  llvm::Value* r = builder_.CreateCall(type, context_field(cpu_context::kShuffle, ptr),
                                       {launch_context_, wide, builder_.CreateTrunc(source, builder_.getInt32Ty())});
  return builder_.CreateBitCast(builder_.CreateTrunc(r, builder_.getIntNTy(bits)), t);
}

llvm::Value* Emitter::shuffle(llvm::Value* v, llvm::Value* offset, ir::ShuffleMode mode, Operation* op) {
  if (host_) return host_shuffle(v, offset, mode);
  llvm::Type* t = v->getType();
  unsigned bits = t->getPrimitiveSizeInBits();
  if (bits == 64) {
    llvm::Value* i = builder_.CreateBitCast(v, builder_.getInt64Ty());
    llvm::Value* lo = shuffle(builder_.CreateTrunc(i, builder_.getInt32Ty()), offset, mode, op);
    llvm::Value* hi = shuffle(builder_.CreateTrunc(builder_.CreateLShr(i, 32), builder_.getInt32Ty()), offset, mode, op);
    llvm::Value* joined = builder_.CreateOr(builder_.CreateZExt(lo, builder_.getInt64Ty()),
                                            builder_.CreateShl(builder_.CreateZExt(hi, builder_.getInt64Ty()), 32));
    return builder_.CreateBitCast(joined, t);
  }
  bool f32 = t->isFloatTy();
  llvm::Value* x = v;
  if (!f32) {
    x = builder_.CreateBitCast(v, builder_.getIntNTy(bits));
    if (bits < 32) x = builder_.CreateZExt(x, builder_.getInt32Ty());
  }
  llvm::Intrinsic::ID id = llvm::Intrinsic::not_intrinsic;
  int clamp = 0x1f;
  switch (mode) {
    case ir::ShuffleMode::Down:
      id = f32 ? llvm::Intrinsic::nvvm_shfl_sync_down_f32 : llvm::Intrinsic::nvvm_shfl_sync_down_i32;
      break;
    case ir::ShuffleMode::Up:
      id = f32 ? llvm::Intrinsic::nvvm_shfl_sync_up_f32 : llvm::Intrinsic::nvvm_shfl_sync_up_i32, clamp = 0;
      break;
    case ir::ShuffleMode::Xor:
      id = f32 ? llvm::Intrinsic::nvvm_shfl_sync_bfly_f32 : llvm::Intrinsic::nvvm_shfl_sync_bfly_i32;
      break;
    case ir::ShuffleMode::Idx:
      id = f32 ? llvm::Intrinsic::nvvm_shfl_sync_idx_f32 : llvm::Intrinsic::nvvm_shfl_sync_idx_i32;
      break;
  }
  llvm::Value* lane = builder_.CreateIntCast(offset, builder_.getInt32Ty(), false);
  llvm::Value* r = intrinsic(id, {builder_.getInt32(0xffffffffu), x, lane, builder_.getInt32(clamp)});
  if (f32) return r;
  if (bits < 32) r = builder_.CreateTrunc(r, builder_.getIntNTy(bits));
  return builder_.CreateBitCast(r, t);
}

llvm::Value* Emitter::combine(ir::WarpReduceKind kind, llvm::Value* a, llvm::Value* b, Type t) {
  bool f = is_float(t);
  bool max = false;
  switch (kind) {
    case ir::WarpReduceKind::Sum: return f ? builder_.CreateFAdd(a, b) : builder_.CreateAdd(a, b);
    case ir::WarpReduceKind::Max: max = true; break;
    case ir::WarpReduceKind::Min: break;
  }
  if (f) return intrinsic(max ? llvm::Intrinsic::maxnum : llvm::Intrinsic::minnum, {a, b}, {a->getType()});
  bool s = is_signed(t);
  llvm::Intrinsic::ID id = max ? (s ? llvm::Intrinsic::smax : llvm::Intrinsic::umax)
                               : (s ? llvm::Intrinsic::smin : llvm::Intrinsic::umin);
  return intrinsic(id, {a, b}, {a->getType()});
}

void Emitter::emit_barrier(Operation*) {
  if (host_) {
    llvm::Type* ptr = builder_.getPtrTy();
    builder_.CreateCall(llvm::FunctionType::get(builder_.getVoidTy(), {ptr}, false),
                        context_field(cpu_context::kBarrier, ptr), {launch_context_});
    return;
  }
  intrinsic(llvm::Intrinsic::nvvm_barrier_cta_sync_aligned_all, {builder_.getInt32(0)});
}

void Emitter::emit_shuffle(Operation* op) {
  set(op->result(), shuffle(get(op->operand(0)), get(op->operand(1)), ir::shuffle_mode(*op), op));
}

void Emitter::emit_warp_reduce(Operation* op) {
  // A butterfly: after log2(32) exchanges every lane holds the result.
  ir::WarpReduceKind kind = ir::warp_reduce_kind(*op);
  llvm::Value* v = get(op->operand(0));
  for (int offset = 16; offset > 0; offset /= 2)
    v = combine(kind, v, shuffle(v, builder_.getInt32(offset), ir::ShuffleMode::Xor, op), op->operand(0)->type());
  set(op->result(), v);
}

void Emitter::emit_atomic(Operation* op) {
  Type elem = op->operand(0)->type();
  bool f = is_float(elem), s = is_signed(elem);
  using B = llvm::AtomicRMWInst::BinOp;
  B code = B::BAD_BINOP;
  switch (ir::atomic_kind(*op)) {
    case ir::AtomicKind::Add: code = f ? B::FAdd : B::Add; break;
    case ir::AtomicKind::Max: code = f ? B::FMax : s ? B::Max : B::UMax; break;
    case ir::AtomicKind::Min: code = f ? B::FMin : s ? B::Min : B::UMin; break;
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
