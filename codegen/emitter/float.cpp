// Floats (emitter.h): conversions between float types and with integers,
// arith.truncf's numeric policies, the narrow formats (fp8, fp6, fp4: codes
// in an i8, narrow_float.h) and the math functions. What the targets do
// differently (bf16 rounding on the CPU, the GPU's hardware conversions,
// libdevice or libm) is in their hooks (target_hooks.h).
#include <limits>

#include "codegen/emitter/emitter.h"

namespace tessera::codegen::emitter {

namespace {

// The rounding of numerics::encode_bits that an arith.truncf's mode names.
numerics::Rounding numerics_rounding(ir::RoundingMode mode) {
  switch (mode) {
    case ir::RoundingMode::NearestEven: return numerics::Rounding::NearestEven;
    case ir::RoundingMode::TowardZero: return numerics::Rounding::TowardZero;
    case ir::RoundingMode::Down: return numerics::Rounding::TowardNegative;
    case ir::RoundingMode::Up: return numerics::Rounding::TowardPositive;
    case ir::RoundingMode::NearestAway: return numerics::Rounding::NearestAway;
    case ir::RoundingMode::Stochastic: return numerics::Rounding::Stochastic;
  }
  internal_error("codegen", "an unknown rounding mode");
}

}  // namespace

// fp8/fp6/fp4 values are codes in i8s: the lowering converts them to f32
// before any arithmetic (ir.h); only moves, conversions and comparisons
// see them.
void Emitter::reject_narrow_codes(Operation* op) {
  Type t0 = op->num_operands() > 0 ? op->operand(0)->type() : Type{};
  if (t0 && (t0.is_scalar() || t0.is_shaped()) && narrow_float_format(t0.scalar()))
    unsupported(op, "'" + std::string(op->name()) + "' on " + std::string(scalar_info(t0.scalar()).name) +
                        " values (convert them to f32 first)");
}

// Conversions between float types (arith.extf / arith.truncf, and the
// element conversions of tile.mma): through f32 whenever a narrow format
// (fp8, fp6, fp4) is on either side, decoding and encoding as
// numerics.hpp says (narrow_float.h). An f64 source narrower than f32 is
// first made f32 by rounding to odd, so that it is rounded once
// (numerics.hpp, "Wider sources"; rounding it to nearest f32 first would
// round twice: f64 -> f32 -> bf16 is not f64 -> bf16).
llvm::Value* Emitter::convert_float(llvm::Value* value, ScalarType from, ScalarType to, llvm::Type* to_type) {
  const numerics::Format* from_format = narrow_float_format(from);
  const numerics::Format* to_format = narrow_float_format(to);
  if (!from_format && !to_format) {
    unsigned from_bits = scalar_info(from).bits, to_bits = scalar_info(to).bits;
    if (from_bits < to_bits) return builder_.CreateFPExt(value, to_type);
    if (to == ScalarType::F32) return target_->truncate_float(value, to_type);  // from f64: once
  }
  llvm::Value* f32 = value;
  if (from_format)
    f32 = decode_narrow(*from_format, value);
  else if (from == ScalarType::F64)
    f32 = emit_f32_rounded_to_odd(builder_, value);
  else if (from != ScalarType::F32)
    f32 = builder_.CreateFPExt(value, f32_like(value));
  if (to == ScalarType::F32) return f32;
  if (to == ScalarType::F64) return builder_.CreateFPExt(f32, to_type);
  return round_f32_to(f32, to, to_type);
}

llvm::Value* Emitter::round_f32_to(llvm::Value* f32, ScalarType to, llvm::Type* to_type) {
  if (const numerics::Format* format = narrow_float_format(to)) return emit_narrow_encode(builder_, *format, f32);
  return target_->truncate_float(f32, to_type);  // bf16, f16
}

// arith.truncf with a numeric policy ({rounding = ..., saturate}, and the
// random bits of stochastic rounding as operand 1): the integer sequence
// of numerics::encode_bits for that rounding and overflow mode, on both
// targets, bf16 and f16 included (no cvt: the GPU's cvt.rz/rm/rp forms
// would do for some modes, but one sequence keeps the targets identical).
// The source is first made f32 exactly (decoded, extended) or, from f64,
// rounded to odd, so that the policy's rounding is the only one (the
// lowering rejects f64 sources for the modes other than nearest even). To
// f32 (from f64, rounded to nearest even) only `saturate` applies:
// infinities become the largest finite f32 of their sign.
llvm::Value* Emitter::truncate_with_policy(Operation* op) {
  ScalarType from = op->operand(0)->type().scalar(), to = op->result()->type().scalar();
  numerics::Rounding rounding = numerics_rounding(ir::rounding_mode(*op));
  numerics::Overflow overflow = op->has_attr("saturate") ? numerics::Overflow::Saturate : numerics::Overflow::Propagate;
  llvm::Value* value = get(op->operand(0));
  llvm::Value* f32 = value;
  if (const numerics::Format* format = narrow_float_format(from))
    f32 = decode_narrow(*format, value);
  else if (from == ScalarType::F64)
    f32 = to == ScalarType::F32 ? builder_.CreateFPTrunc(value, f32_like(value)) : emit_f32_rounded_to_odd(builder_, value);
  else if (from != ScalarType::F32)
    f32 = builder_.CreateFPExt(value, f32_like(value));
  if (to == ScalarType::F32) {
    if (from != ScalarType::F64 || rounding != numerics::Rounding::NearestEven)
      unsupported(op, "'arith.truncf' to f32 with a rounding other than nearest_even");
    if (overflow == numerics::Overflow::Propagate) return f32;
    llvm::Value* magnitude = builder_.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, f32);
    llvm::Value* is_inf = builder_.CreateFCmpOEQ(magnitude, llvm::ConstantFP::getInfinity(f32->getType()));
    llvm::Value* max = llvm::ConstantFP::get(f32->getType(), static_cast<double>(std::numeric_limits<float>::max()));
    return builder_.CreateSelect(is_inf, builder_.CreateBinaryIntrinsic(llvm::Intrinsic::copysign, max, f32), f32);
  }
  const numerics::Format* format = narrow_float_format(to);
  if (to == ScalarType::BF16) format = &numerics::bf16;
  if (to == ScalarType::F16) format = &numerics::f16;
  if (!format) unsupported(op, "'arith.truncf' with a numeric policy to " + std::string(scalar_info(to).name));
  llvm::Value* random = op->num_operands() > 1 ? get(op->operand(1)) : nullptr;
  llvm::Type* to_type = value_type(op->result()->type(), op);
  // A hardware conversion with exactly these rules where the target has one
  // (NvptxHooks::encode_fp8_saturating), else the integer sequence.
  if (rounding == numerics::Rounding::NearestEven && overflow == numerics::Overflow::Saturate &&
      !f32->getType()->isVectorTy() && (format == &numerics::fp8_e4m3 || format == &numerics::fp8_e5m2))
    if (llvm::Value* code = target_->encode_fp8_saturating(*format, f32, to_type)) return code;
  llvm::Value* code = emit_float_encode_bits(builder_, *format, f32, rounding, overflow, random);
  if (narrow_float_format(to)) return builder_.CreateTrunc(code, to_type);
  auto* vector = llvm::dyn_cast<llvm::VectorType>(to_type);
  llvm::Type* i16 = vector ? static_cast<llvm::Type*>(llvm::VectorType::get(builder_.getInt16Ty(), vector->getElementCount()))
                           : builder_.getInt16Ty();
  return builder_.CreateBitCast(builder_.CreateTrunc(code, i16), to_type);
}

// The targets decode alike (narrow_float.h); the GPU takes hardware
// conversions where they give the same bits (NvptxHooks::decode_narrow).
llvm::Value* Emitter::decode_narrow(const numerics::Format& format, llvm::Value* code) {
  return target_->decode_narrow(format, code);
}

llvm::Value* Emitter::widen_to(llvm::Value* v, ScalarType from, llvm::Type* accum) {
  // Integer tiles (int8 x int8 into i32, as the tensor cores' IMMA):
  // extended by their signedness, or converted to a float accumulator.
  if (is_integer(from)) {
    bool is_signed = scalar_info(from).category == ScalarCategory::SignedInt;
    if (accum->isIntegerTy()) return is_signed ? builder_.CreateSExtOrTrunc(v, accum) : builder_.CreateZExtOrTrunc(v, accum);
    return is_signed ? builder_.CreateSIToFP(v, accum) : builder_.CreateUIToFP(v, accum);
  }
  if (const numerics::Format* format = narrow_float_format(from)) v = decode_narrow(*format, v);
  return v->getType() == accum ? v : builder_.CreateFPExt(v, accum);
}

llvm::Type* Emitter::f32_like(llvm::Value* v) {
  if (auto* vector = llvm::dyn_cast<llvm::VectorType>(v->getType()))
    return llvm::VectorType::get(builder_.getFloatTy(), vector->getElementCount());
  return builder_.getFloatTy();
}

// To f32 and f64 one conversion; to narrower types (bf16, f16, the narrow
// formats) through f32, exactly for integers of at most 16 bits and rounded
// to odd for wider ones, so that the value is rounded once (an i32 rounded
// to nearest f32 and then to bf16 would be rounded twice: 33685505 would
// become 33554432, not 33816576).
void Emitter::emit_int_to_float(Operation* op) {
  llvm::Value* value = get(op->operand(0));
  ScalarType from = op->operand(0)->type().scalar(), to = op->result()->type().scalar();
  bool is_signed = op->is(OpKind::SIToFP);
  llvm::Type* to_type = value_type(op->result()->type(), op);
  if (to == ScalarType::F32 || to == ScalarType::F64)
    return set(op->result(), is_signed ? builder_.CreateSIToFP(value, to_type) : builder_.CreateUIToFP(value, to_type));
  llvm::Value* f32 = nullptr;
  if (scalar_info(from).bits <= 16)  // bool too
    f32 = is_signed ? builder_.CreateSIToFP(value, f32_like(value)) : builder_.CreateUIToFP(value, f32_like(value));
  else
    f32 = emit_f32_rounded_to_odd_from_integer(builder_, value, is_signed);
  set(op->result(), round_f32_to(f32, to, to_type));
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
  if (ir::rounding_mode(*op) == ir::RoundingMode::NearestEven && !op->has_attr("saturate"))
    return set(op->result(), convert_float(get(op->operand(0)), op->operand(0)->type().scalar(),
                                           op->result()->type().scalar(), value_type(op->result()->type(), op)));
  set(op->result(), truncate_with_policy(op));
}

void Emitter::emit_random_bits(Operation* op) {
  set(op->result(), codegen::emit_random_bits(builder_, get(op->operand(0)), get(op->operand(1))));
}

void Emitter::emit_math(Operation* op, MathFunction function) {
  reject_narrow_codes(op);
  std::vector<llvm::Value*> args;
  for (ir::Value* v : op->operands()) args.push_back(get(v));
  set(op->result(), target_->math(op, function, args));
}

}  // namespace tessera::codegen::emitter
