// Constants, integer and float arithmetic, comparisons, selects and the
// integer casts (emitter.h): one LLVM instruction or intrinsic each, the
// same on both targets.
#include "codegen/emitter/emitter.h"

namespace tessera::codegen::emitter {

void Emitter::emit_constant(Operation* op) {
  ir::Attribute a = op->attr("value");
  llvm::Type* t = value_type(op->result()->type(), op);
  if (a.is(ir::AttributeKind::Bool)) return set(op->result(), builder_.getInt1(a.bool_value()));
  if (a.is(ir::AttributeKind::Float)) {
    // A narrow-format constant is its code (the value rounded once: to odd
    // in f32, then encoded, numerics.hpp "Wider sources").
    if (const numerics::Format* format = narrow_float_format(op->result()->type().scalar()))
      return set(op->result(), llvm::ConstantInt::get(t, numerics::encode_bits(
                                                             *format, numerics::float_to_bits(numerics::f32_rounded_to_odd(a.float_value())),
                                                             numerics::Rounding::NearestEven, numerics::Overflow::Propagate)));
    return set(op->result(), llvm::ConstantFP::get(t, a.float_value()));
  }
  return set(op->result(), llvm::ConstantInt::get(t, static_cast<uint64_t>(a.int_value()), true));
}

void Emitter::emit_binary(Operation* op, llvm::Instruction::BinaryOps code) {
  set(op->result(), builder_.CreateBinOp(code, get(op->operand(0)), get(op->operand(1))));
}

void Emitter::emit_float_binary(Operation* op, llvm::Instruction::BinaryOps code) {
  reject_narrow_codes(op);
  emit_binary(op, code);
}

void Emitter::emit_intrinsic(Operation* op, llvm::Intrinsic::ID id) {
  std::vector<llvm::Value*> args;
  for (ir::Value* v : op->operands()) args.push_back(get(v));
  set(op->result(), intrinsic(id, args, {args[0]->getType()}));
}

void Emitter::emit_float_intrinsic(Operation* op, llvm::Intrinsic::ID id) {
  reject_narrow_codes(op);
  emit_intrinsic(op, id);
}

std::pair<llvm::Value*, llvm::Value*> Emitter::signed_div_rem(llvm::Value* a, llvm::Value* b) {
  // Divide by 1 instead of -1 and negate (wrapping: INT_MIN stays INT_MIN);
  // the remainder by 1 is 0, as by -1. A divisor that is a constant other
  // than -1 folds the selects away.
  llvm::Type* t = a->getType();
  llvm::Value* by_minus_one = builder_.CreateICmpEQ(b, llvm::Constant::getAllOnesValue(t));
  llvm::Value* divisor = builder_.CreateSelect(by_minus_one, llvm::ConstantInt::get(t, 1), b);
  llvm::Value* q = builder_.CreateSelect(by_minus_one, builder_.CreateNeg(a), builder_.CreateSDiv(a, divisor));
  return {q, builder_.CreateSRem(a, divisor)};
}

void Emitter::emit_signed_division(Operation* op) {
  llvm::Value *a = get(op->operand(0)), *b = get(op->operand(1));
  auto [q, r] = signed_div_rem(a, b);
  if (op->is(OpKind::DivSI)) return set(op->result(), q);
  if (op->is(OpKind::RemSI)) return set(op->result(), r);
  // floordivsi rounds toward negative infinity: q - (r != 0 && (r < 0) != (b < 0)).
  llvm::Value* zero = llvm::Constant::getNullValue(a->getType());
  llvm::Value* adjust = builder_.CreateAnd(builder_.CreateICmpNE(r, zero),
                                           builder_.CreateXor(builder_.CreateICmpSLT(r, zero), builder_.CreateICmpSLT(b, zero)));
  set(op->result(), builder_.CreateSub(q, builder_.CreateZExt(adjust, a->getType())));
}

void Emitter::emit_negate(Operation* op) {
  reject_narrow_codes(op);
  set(op->result(), builder_.CreateFNeg(get(op->operand(0))));
}

void Emitter::emit_abs_int(Operation* op) {
  llvm::Value* v = get(op->operand(0));
  set(op->result(), intrinsic(llvm::Intrinsic::abs, {v, builder_.getFalse()}, {v->getType()}));
}

void Emitter::emit_compare(Operation* op) {
  std::string_view p = op->attr("predicate").string_value();
  using P = llvm::CmpInst::Predicate;
  static const std::pair<std::string_view, P> kPredicates[] = {
      {"eq", P::ICMP_EQ},   {"ne", P::ICMP_NE},   {"slt", P::ICMP_SLT}, {"sle", P::ICMP_SLE},
      {"sgt", P::ICMP_SGT}, {"sge", P::ICMP_SGE}, {"oeq", P::FCMP_OEQ}, {"one", P::FCMP_ONE},
      {"olt", P::FCMP_OLT}, {"ole", P::FCMP_OLE}, {"ogt", P::FCMP_OGT}, {"oge", P::FCMP_OGE},
      {"ueq", P::FCMP_UEQ}, {"une", P::FCMP_UNE}, {"ord", P::FCMP_ORD}, {"uno", P::FCMP_UNO}};
  static const std::pair<std::string_view, P> kUnsigned[] = {{"ult", P::ICMP_ULT}, {"ule", P::ICMP_ULE},
                                                              {"ugt", P::ICMP_UGT}, {"uge", P::ICMP_UGE}};
  static const std::pair<std::string_view, P> kUnordered[] = {{"ult", P::FCMP_ULT}, {"ule", P::FCMP_ULE},
                                                                {"ugt", P::FCMP_UGT}, {"uge", P::FCMP_UGE}};
  P predicate = P::BAD_ICMP_PREDICATE;
  for (auto& [name, value] : kPredicates)
    if (name == p) predicate = value;
  for (auto& [name, value] : op->is(OpKind::CmpI) ? kUnsigned : kUnordered)
    if (name == p) predicate = value;
  llvm::Value *a = get(op->operand(0)), *b = get(op->operand(1));
  if (op->is(OpKind::CmpI)) return set(op->result(), builder_.CreateICmp(predicate, a, b));
  if (const numerics::Format* format = narrow_float_format(op->operand(0)->type().scalar())) {
    a = decode_narrow(*format, a);  // compared as the values they stand for
    b = decode_narrow(*format, b);
  }
  set(op->result(), builder_.CreateFCmp(predicate, a, b));
}

void Emitter::emit_select(Operation* op) {
  if (op->result()->type().is(TypeKind::MemRef)) {
    std::vector<llvm::Value*> a = flatten(op->operand(1)), b = flatten(op->operand(2)), parts;
    // Parts the two share (origins, sizes, strides of same-shaped buffers)
    // stay as they are: known constants keep the views' static facts
    // (ldmatrix_operand, wgmma_operand).
    for (size_t i = 0; i < a.size(); ++i)
      parts.push_back(a[i] == b[i] ? a[i] : builder_.CreateSelect(get(op->operand(0)), a[i], b[i]));
    return bind(op->result(), parts, root_of(op->operand(1)));
  }
  set(op->result(), builder_.CreateSelect(get(op->operand(0)), get(op->operand(1)), get(op->operand(2))));
}

void Emitter::emit_sign_extend(Operation* op) {
  set(op->result(), builder_.CreateSExt(get(op->operand(0)), value_type(op->result()->type(), op)));
}

void Emitter::emit_zero_extend(Operation* op) {
  set(op->result(), builder_.CreateZExt(get(op->operand(0)), value_type(op->result()->type(), op)));
}

void Emitter::emit_int_truncate(Operation* op) {
  set(op->result(), builder_.CreateTrunc(get(op->operand(0)), value_type(op->result()->type(), op)));
}

void Emitter::emit_index_cast(Operation* op) {
  Type from = op->operand(0)->type();
  bool widen = from.is_index() ? false : is_signed(from);
  set(op->result(), builder_.CreateIntCast(get(op->operand(0)), value_type(op->result()->type(), op),
                                           from.is_index() ? true : widen));
}

void Emitter::emit_bitcast(Operation* op) {
  set(op->result(), builder_.CreateBitCast(get(op->operand(0)), value_type(op->result()->type(), op)));
}

void Emitter::emit_splat(Operation* op) {
  auto* type = llvm::cast<llvm::FixedVectorType>(value_type(op->result()->type(), op));
  set(op->result(), builder_.CreateVectorSplat(type->getNumElements(), get(op->operand(0))));
}

}  // namespace tessera::codegen::emitter
