// Floats (emitter.h): conversions between float types and with integers,
// arith.truncf's numeric policies, the narrow formats (fp8, fp6, fp4: codes
// in an i8, narrow_float.h) and the math functions (libdevice on the GPU,
// the host's libm on the CPU).
#include <limits>

#include "codegen/emitter/emitter.h"

namespace tessera::codegen::emitter {

// fptrunc, except f32 -> bf16 on the host: LLVM lowers that to a call of
// __truncsfbf2, which older libgcc lack (objects must link anywhere), so it
// is emitted here as the exact round-to-nearest-even sequence, bit for bit
// what the GPU's cvt.rn.bf16.f32 gives (a NaN becomes the canonical 0x7fff).
llvm::Value* Emitter::truncate_float(llvm::Value* value, llvm::Type* to) {
  if (!host_ || !to->getScalarType()->isBFloatTy()) return builder_.CreateFPTrunc(value, to);
  llvm::Type* from = value->getType();
  auto vector_of = [&](llvm::Type* element) -> llvm::Type* {
    if (auto* v = llvm::dyn_cast<llvm::VectorType>(from)) return llvm::VectorType::get(element, v->getElementCount());
    return element;
  };
  if (!from->getScalarType()->isFloatTy()) value = builder_.CreateFPCast(value, vector_of(builder_.getFloatTy()));
  llvm::Type* i32 = vector_of(builder_.getInt32Ty());
  llvm::Type* i16 = vector_of(builder_.getInt16Ty());
  auto constant = [&](uint64_t v) { return llvm::ConstantInt::get(i32, v); };
  llvm::Value* bits = builder_.CreateBitCast(value, i32);
  llvm::Value* lsb = builder_.CreateAnd(builder_.CreateLShr(bits, constant(16)), constant(1));
  llvm::Value* rounded = builder_.CreateAdd(builder_.CreateAdd(bits, constant(0x7fff)), lsb);
  llvm::Value* nearest = builder_.CreateTrunc(builder_.CreateLShr(rounded, constant(16)), i16);
  llvm::Value* quiet_nan = llvm::ConstantInt::get(i16, 0x7fff);  // the canonical NaN, as cvt gives
  llvm::Value* is_nan = builder_.CreateFCmpUNO(value, value);
  return builder_.CreateBitCast(builder_.CreateSelect(is_nan, quiet_nan, nearest), to);
}

// Conversions between float types (arith.extf / arith.truncf, and the
// element conversions of tile.mma): through f32 whenever a narrow format
// (fp8, fp6, fp4) is on either side, decoding and encoding as
// numerics.hpp says (narrow_float.h). An f64 source is first rounded to
// f32 (to nearest even), so f64 -> fp8 rounds twice.
llvm::Value* Emitter::convert_float(llvm::Value* value, sema::ScalarType from, sema::ScalarType to, llvm::Type* to_type) {
  const numerics::Format* from_format = narrow_float_format(from);
  const numerics::Format* to_format = narrow_float_format(to);
  if (!from_format && !to_format) {
    unsigned from_bits = sema::scalar_info(from).bits, to_bits = sema::scalar_info(to).bits;
    if (from_bits < to_bits) return builder_.CreateFPExt(value, to_type);
    if (from_bits > to_bits) return truncate_float(value, to_type);
    return truncate_float(builder_.CreateFPExt(value, f32_like(value)), to_type);  // f16 <-> bf16
  }
  llvm::Value* f32 = value;
  if (from_format)
    f32 = decode_narrow(*from_format, value);
  else if (from == sema::ScalarType::F64)
    f32 = builder_.CreateFPTrunc(value, f32_like(value));
  else if (from != sema::ScalarType::F32)
    f32 = builder_.CreateFPExt(value, f32_like(value));
  if (to_format) return emit_narrow_encode(builder_, *to_format, f32);
  if (to == sema::ScalarType::F32) return f32;
  if (to == sema::ScalarType::F64) return builder_.CreateFPExt(f32, to_type);
  return truncate_float(f32, to_type);  // f16, bf16: exact (every narrow value is one)
}

// arith.truncf with a numeric policy ({rounding = ..., saturate}, and the
// random bits of stochastic rounding as operand 1): the integer sequence
// of numerics::encode_bits for that rounding and overflow mode, on both
// targets, bf16 and f16 included (no cvt: the GPU's cvt.rz/rm/rp forms
// would do for some modes, but one sequence keeps the targets identical).
// The source is first made f32 exactly (decoded, extended) or, from f64,
// rounded to nearest even (the lowering rejects f64 sources for the other
// modes). To f32 (from f64) only `saturate` applies: infinities become the
// largest finite f32 of their sign.
llvm::Value* Emitter::truncate_with_policy(Operation* op) {
  sema::ScalarType from = op->operand(0)->type().scalar(), to = op->result()->type().scalar();
  std::string_view name = op->string_attr("rounding");
  numerics::Rounding rounding = numerics::Rounding::NearestEven;
  if (name == "toward_zero") rounding = numerics::Rounding::TowardZero;
  else if (name == "down") rounding = numerics::Rounding::TowardNegative;
  else if (name == "up") rounding = numerics::Rounding::TowardPositive;
  else if (name == "nearest_away") rounding = numerics::Rounding::NearestAway;
  else if (name == "stochastic") rounding = numerics::Rounding::Stochastic;
  numerics::Overflow overflow = op->has_attr("saturate") ? numerics::Overflow::Saturate : numerics::Overflow::Propagate;
  llvm::Value* value = get(op->operand(0));
  llvm::Value* f32 = value;
  if (const numerics::Format* format = narrow_float_format(from))
    f32 = decode_narrow(*format, value);
  else if (from == sema::ScalarType::F64)
    f32 = builder_.CreateFPTrunc(value, f32_like(value));
  else if (from != sema::ScalarType::F32)
    f32 = builder_.CreateFPExt(value, f32_like(value));
  if (to == sema::ScalarType::F32) {
    if (from != sema::ScalarType::F64 || rounding != numerics::Rounding::NearestEven)
      unsupported(op, "'arith.truncf' to f32 with a rounding other than nearest_even");
    if (overflow == numerics::Overflow::Propagate) return f32;
    llvm::Value* magnitude = builder_.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, f32);
    llvm::Value* is_inf = builder_.CreateFCmpOEQ(magnitude, llvm::ConstantFP::getInfinity(f32->getType()));
    llvm::Value* max = llvm::ConstantFP::get(f32->getType(), static_cast<double>(std::numeric_limits<float>::max()));
    return builder_.CreateSelect(is_inf, builder_.CreateBinaryIntrinsic(llvm::Intrinsic::copysign, max, f32), f32);
  }
  const numerics::Format* format = narrow_float_format(to);
  if (to == sema::ScalarType::BF16) format = &numerics::bf16;
  if (to == sema::ScalarType::F16) format = &numerics::f16;
  if (!format) unsupported(op, "'arith.truncf' with a numeric policy to " + std::string(sema::scalar_info(to).name));
  llvm::Value* random = op->num_operands() > 1 ? get(op->operand(1)) : nullptr;
  llvm::Type* to_type = value_type(op->result()->type(), op);
  // sm_90 and newer convert f32 to e4m3/e5m2 in hardware with exactly
  // these rules: round to nearest even, out of range and infinities to the
  // largest finite value of the sign, NaN to the canonical 0x7F, subnormals
  // kept (cvt.rn.satfinite.{e4m3x2,e5m2x2}.f32; the PTX ISA; sm_89 has it
  // from PTX 8.1 only, newer than the 7.8 we emit for it). Both halves
  // get the value, so the byte taken does not depend on the packing order.
  if (!host_ && arch_.sm >= 90 && rounding == numerics::Rounding::NearestEven &&
      overflow == numerics::Overflow::Saturate && !f32->getType()->isVectorTy() &&
      (format == &numerics::fp8_e4m3 || format == &numerics::fp8_e5m2)) {
    llvm::Intrinsic::ID id = format == &numerics::fp8_e4m3 ? llvm::Intrinsic::nvvm_ff_to_e4m3x2_rn
                                                            : llvm::Intrinsic::nvvm_ff_to_e5m2x2_rn;
    llvm::Value* pair = builder_.CreateIntrinsic(builder_.getInt16Ty(), id, {f32, f32});
    return builder_.CreateTrunc(pair, to_type);
  }
  llvm::Value* code = emit_float_encode_bits(builder_, *format, f32, rounding, overflow, random);
  if (narrow_float_format(to)) return builder_.CreateTrunc(code, to_type);
  auto* vector = llvm::dyn_cast<llvm::VectorType>(to_type);
  llvm::Type* i16 = vector ? static_cast<llvm::Type*>(llvm::VectorType::get(builder_.getInt16Ty(), vector->getElementCount()))
                           : builder_.getInt16Ty();
  return builder_.CreateBitCast(builder_.CreateTrunc(code, i16), to_type);
}

// The f32 value of a narrow-float code (emit_narrow_decode), through a
// hardware conversion to f16 where the target has one: f16 holds every
// value of these formats exactly, then cvt.f32.f16. fp8_e4m3 on sm_90 and
// newer (cvt.rn.f16x2.e4m3x2), fp6 and fp4 on the arch-specific sm_100a
// and sm_120a-class targets (cvt.rn.f16x2.{e2m3x2,e3m2x2,e2m1x2}). The code
// goes in both halves of the pair, so the pair's order does not matter;
// e4m3's NaN codes (0x7F, 0xFF) take the specification's NaN by a select
// (fp6 and fp4 have none). e5m2 goes through f16 on every GPU target
// (emit_e5m2_decode_through_f16); the CPU keeps the integer sequences.
llvm::Value* Emitter::decode_narrow(const numerics::Format& format, llvm::Value* code) {
  if (host_) return emit_narrow_decode(builder_, format, code);
  if (&format == &numerics::fp8_e5m2) return emit_e5m2_decode_through_f16(builder_, code);
  if (code->getType()->isVectorTy()) return emit_narrow_decode(builder_, format, code);
  llvm::Intrinsic::ID id = llvm::Intrinsic::not_intrinsic;
  int shift = 8;  // the second element of the pair: the next byte, or for fp4 the next nibble
  if (&format == &numerics::fp8_e4m3 && arch_.sm >= 90) id = llvm::Intrinsic::nvvm_e4m3x2_to_f16x2_rn;
  if (arch_.arch_specific && arch_.sm >= 100) {
    if (&format == &numerics::fp6_e2m3) id = llvm::Intrinsic::nvvm_e2m3x2_to_f16x2_rn;
    if (&format == &numerics::fp6_e3m2) id = llvm::Intrinsic::nvvm_e3m2x2_to_f16x2_rn;
    if (&format == &numerics::fp4_e2m1) id = llvm::Intrinsic::nvvm_e2m1x2_to_f16x2_rn, shift = 4;
  }
  if (id == llvm::Intrinsic::not_intrinsic) return emit_narrow_decode(builder_, format, code);
  llvm::Value* bits = builder_.CreateAnd(builder_.CreateZExt(code, builder_.getInt16Ty()),
                                         static_cast<uint64_t>((1u << format.bits()) - 1));
  llvm::Value* pair = builder_.CreateOr(bits, builder_.CreateShl(bits, static_cast<uint64_t>(shift)));
  llvm::Value* halves =
      builder_.CreateIntrinsic(llvm::FixedVectorType::get(builder_.getHalfTy(), 2), id, {pair});
  llvm::Value* value = builder_.CreateFPExt(builder_.CreateExtractElement(halves, uint64_t{0}), builder_.getFloatTy());
  if (!format.has_nan()) return value;
  return builder_.CreateSelect(emit_narrow_is_nan(builder_, format, code), emit_narrow_nan(builder_, format, code),
                               value);
}

llvm::Value* Emitter::widen_to(llvm::Value* v, sema::ScalarType from, llvm::Type* accum) {
  if (const numerics::Format* format = narrow_float_format(from)) v = decode_narrow(*format, v);
  return builder_.CreateFPExt(v, accum);
}

llvm::Type* Emitter::f32_like(llvm::Value* v) {
  if (auto* vector = llvm::dyn_cast<llvm::VectorType>(v->getType()))
    return llvm::VectorType::get(builder_.getFloatTy(), vector->getElementCount());
  return builder_.getFloatTy();
}

llvm::Value* Emitter::libdevice_call(Operation* op, const char* f32_name, const char* f64_name, llvm::ArrayRef<llvm::Value*> args) {
  llvm::Type* t = args[0]->getType();
  if (host_) return host_math(op, args);
  std::string name = t->isDoubleTy() ? f64_name : f32_name;
  if (!t->isFloatTy() && !t->isDoubleTy()) unsupported(op, "'" + std::string(op->name()) + "' on 16-bit floats");
  std::vector<llvm::Type*> params(args.size(), t);
  llvm::FunctionCallee callee = module_->getOrInsertFunction(name, llvm::FunctionType::get(t, params, false));
  return builder_.CreateCall(callee, args);
}

// The host's libm through LLVM's math intrinsics (the same functions C++'s
// <cmath> calls).
llvm::Value* Emitter::host_math(Operation* op, llvm::ArrayRef<llvm::Value*> args) {
  llvm::Type* t = args[0]->getType();
  auto call = [&](llvm::Intrinsic::ID id) { return intrinsic(id, args, {t}); };
  switch (op->kind()) {
    case OpKind::Exp: return call(llvm::Intrinsic::exp);
    case OpKind::Log: return call(llvm::Intrinsic::log);
    case OpKind::Tanh: return call(llvm::Intrinsic::tanh);
    case OpKind::Sin: return call(llvm::Intrinsic::sin);
    case OpKind::Cos: return call(llvm::Intrinsic::cos);
    case OpKind::PowF: return call(llvm::Intrinsic::pow);
    case OpKind::Rsqrt:
      return builder_.CreateFDiv(llvm::ConstantFP::get(t, 1.0), intrinsic(llvm::Intrinsic::sqrt, args, {t}));
    default: unsupported(op, "'" + std::string(op->name()) + "'");
  }
}

void Emitter::emit_int_to_float(Operation* op) {
  // To a narrow format through f32: exact below 2^24, and larger
  // integers overflow every narrow format either way.
  llvm::Value* value = get(op->operand(0));
  const numerics::Format* format = narrow_float_format(op->result()->type().scalar());
  llvm::Type* to = format ? f32_like(value) : value_type(op->result()->type(), op);
  llvm::Value* v = op->is(OpKind::SIToFP) ? builder_.CreateSIToFP(value, to) : builder_.CreateUIToFP(value, to);
  set(op->result(), format ? emit_narrow_encode(builder_, *format, v) : v);
}

void Emitter::emit_float_to_int(Operation* op) {
  llvm::Value* v = get(op->operand(0));
  if (const numerics::Format* format = narrow_float_format(op->operand(0)->type().scalar())) v = decode_narrow(*format, v);
  llvm::Type* to = value_type(op->result()->type(), op);
  set(op->result(), op->is(OpKind::FPToSI) ? builder_.CreateFPToSI(v, to) : builder_.CreateFPToUI(v, to));
}

void Emitter::emit_extend_float(Operation* op) {
  set(op->result(), convert_float(get(op->operand(0)), op->operand(0)->type().scalar(),
                                  op->result()->type().scalar(), value_type(op->result()->type(), op)));
}

void Emitter::emit_truncate_float(Operation* op) {
  std::string_view rounding = op->string_attr("rounding");
  if ((rounding.empty() || rounding == "nearest_even") && !op->has_attr("saturate"))
    return set(op->result(), convert_float(get(op->operand(0)), op->operand(0)->type().scalar(),
                                           op->result()->type().scalar(), value_type(op->result()->type(), op)));
  set(op->result(), truncate_with_policy(op));
}

void Emitter::emit_random_bits(Operation* op) {
  set(op->result(), codegen::emit_random_bits(builder_, get(op->operand(0)), get(op->operand(1))));
}

void Emitter::emit_math(Operation* op, const char* f32_name, const char* f64_name) {
  std::vector<llvm::Value*> args;
  for (ir::Value* v : op->operands()) args.push_back(get(v));
  set(op->result(), libdevice_call(op, f32_name, f64_name, args));
}

}  // namespace tessera::codegen::emitter
