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
  if (f) return intrinsic(max ? llvm::Intrinsic::maxnum : llvm::Intrinsic::minnum, {a, b}, {a->getType()});
  bool s = is_signed(t);
  llvm::Intrinsic::ID id = max ? (s ? llvm::Intrinsic::smax : llvm::Intrinsic::umax)
                               : (s ? llvm::Intrinsic::smin : llvm::Intrinsic::umin);
  return intrinsic(id, {a, b}, {a->getType()});
}

void Emitter::emit_barrier(Operation*) { target_->barrier(); }

void Emitter::emit_shuffle(Operation* op) {
  set(op->result(), target_->shuffle(get(op->operand(0)), get(op->operand(1)), ir::shuffle_mode(*op)));
}

void Emitter::emit_warp_reduce(Operation* op) {
  reject_narrow_codes(op);
  // A butterfly: after log2(32) exchanges every lane holds the result.
  ir::WarpReduceKind kind = ir::warp_reduce_kind(*op);
  llvm::Value* v = get(op->operand(0));
  for (int offset = 16; offset > 0; offset /= 2)
    v = combine(kind, v, target_->shuffle(v, builder_.getInt32(offset), ir::ShuffleMode::Xor), op->operand(0)->type());
  set(op->result(), v);
}

void Emitter::emit_atomic(Operation* op) {
  reject_narrow_codes(op);
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
