// The narrow float conversions as LLVM IR (narrow_float.h). Each line below
// is a line of the specification in tessera/numerics.hpp (decode_bits,
// encode_bits with every rounding and overflow mode, random_bits), in 32-bit unsigned integer
// arithmetic on the f32 bits. Every operation works on vectors too (register
// tiles and load_vector values): constants are splatted to the value's type.
#include "codegen/narrow_float.h"

#include <llvm/IR/Intrinsics.h>

namespace tessera::codegen {

const numerics::Format* narrow_float_format(ScalarType type) {
  switch (type) {
    case ScalarType::FP8E4M3: return &numerics::fp8_e4m3;
    case ScalarType::FP8E5M2: return &numerics::fp8_e5m2;
    case ScalarType::FP6E2M3: return &numerics::fp6_e2m3;
    case ScalarType::FP6E3M2: return &numerics::fp6_e3m2;
    case ScalarType::FP4E2M1: return &numerics::fp4_e2m1;
    case ScalarType::Bool:
    case ScalarType::I8:
    case ScalarType::I16:
    case ScalarType::I32:
    case ScalarType::I64:
    case ScalarType::U8:
    case ScalarType::U16:
    case ScalarType::U32:
    case ScalarType::U64:
    case ScalarType::F16:
    case ScalarType::BF16:
    case ScalarType::F32:
    case ScalarType::F64: return nullptr;
  }
  return nullptr;
}

unsigned packed_element_bits(ScalarType type) {
  const numerics::Format* format = narrow_float_format(type);
  return format && format->bits() < 8 ? format->bits() : 0;
}

namespace {

// The i32 type with the shape of `like` (a scalar or a vector).
llvm::Type* with_element(llvm::Type* like, llvm::Type* element) {
  if (auto* vector = llvm::dyn_cast<llvm::VectorType>(like)) return llvm::VectorType::get(element, vector->getElementCount());
  return element;
}

}  // namespace

llvm::Value* emit_narrow_nan(llvm::IRBuilderBase& b, const numerics::Format& format, llvm::Value* code) {
  llvm::Type* i32 = with_element(code->getType(), b.getInt32Ty());
  auto k = [&](uint32_t v) -> llvm::Value* { return llvm::ConstantInt::get(i32, v); };
  const uint32_t m = format.mantissa_bits, em = format.exponent_bits + format.mantissa_bits;
  llvm::Value* c = b.CreateZExt(code, i32);
  llvm::Value* sign = b.CreateShl(b.CreateAnd(b.CreateLShr(c, k(em)), k(1)), k(31));
  llvm::Value* man = b.CreateAnd(c, k(format.mantissa_mask()));
  return b.CreateBitCast(b.CreateOr(sign, b.CreateOr(b.CreateShl(man, k(23 - m)), k(0x7FC00000))),
                         with_element(code->getType(), b.getFloatTy()));
}

llvm::Value* emit_narrow_is_nan(llvm::IRBuilderBase& b, const numerics::Format& format, llvm::Value* code) {
  llvm::Type* i32 = with_element(code->getType(), b.getInt32Ty());
  llvm::Value* magnitude = b.CreateAnd(b.CreateZExt(code, i32), llvm::ConstantInt::get(i32, format.magnitude_mask()));
  switch (format.nan_encoding) {
    case numerics::NanEncoding::None: return llvm::ConstantInt::getFalse(with_element(code->getType(), b.getInt1Ty()));
    case numerics::NanEncoding::Ieee:  // above the infinity's code
      return b.CreateICmpUGT(magnitude, llvm::ConstantInt::get(i32, format.exponent_field_max() << format.mantissa_bits));
    case numerics::NanEncoding::AllOnes: return b.CreateICmpEQ(magnitude, llvm::ConstantInt::get(i32, format.magnitude_mask()));
  }
  return nullptr;
}

llvm::Value* emit_e5m2_decode_through_f16(llvm::IRBuilderBase& b, llvm::Value* code) {
  // e5m2 is the top byte of an f16 (same exponent width and bias), and f32
  // holds every f16 exactly, infinities included; NaN codes take the
  // specification's payload.
  llvm::Type* i16 = with_element(code->getType(), b.getInt16Ty());
  llvm::Value* half = b.CreateBitCast(b.CreateShl(b.CreateZExt(code, i16), llvm::ConstantInt::get(i16, 8)),
                                      with_element(code->getType(), b.getHalfTy()));
  llvm::Value* value = b.CreateFPExt(half, with_element(code->getType(), b.getFloatTy()));
  return b.CreateSelect(emit_narrow_is_nan(b, numerics::fp8_e5m2, code), emit_narrow_nan(b, numerics::fp8_e5m2, code),
                        value);
}

llvm::Value* emit_narrow_decode(llvm::IRBuilderBase& b, const numerics::Format& format, llvm::Value* code) {
  llvm::Type* i32 = with_element(code->getType(), b.getInt32Ty());
  auto k = [&](uint32_t v) -> llvm::Value* { return llvm::ConstantInt::get(i32, v); };
  const uint32_t m = format.mantissa_bits, em = format.exponent_bits + format.mantissa_bits;
  // Bits above 1 + E + M are ignored.
  llvm::Value* c = b.CreateAnd(b.CreateZExt(code, i32), k(format.sign_mask() | format.magnitude_mask()));
  llvm::Value* sign = b.CreateShl(b.CreateLShr(c, k(em)), k(31));
  llvm::Value* magnitude = b.CreateAnd(c, k(format.magnitude_mask()));
  llvm::Value* exp = b.CreateLShr(magnitude, k(m));
  llvm::Value* man = b.CreateAnd(magnitude, k(format.mantissa_mask()));
  // normal: ((exp - B + 127) << 23) | (man << (23 - M)), which is
  // (magnitude << (23 - M)) + ((127 - B) << 23).
  llvm::Value* normal =
      b.CreateAdd(b.CreateShl(magnitude, k(23 - m)), k(static_cast<uint32_t>(127 - format.bias) << 23), "", true, true);
  // subnormal: p = index of the highest set bit of man = 31 - ctlz(man);
  // ((emin - M + p + 127) << 23) | ((man << (23 - p)) & 0x7FFFFF). Every
  // subnormal of these formats is a normal f32 (numerics.hpp asserts it).
  llvm::Value* clz = b.CreateIntrinsic(llvm::Intrinsic::ctlz, {i32}, {man, b.getFalse()});
  llvm::Value* biased = b.CreateSub(k(static_cast<uint32_t>(format.min_exponent() - static_cast<int>(m) + 31 + 127)), clz);
  // 23 - p = clz - 8 (at most 24, for man == 0, whose result is not used).
  llvm::Value* fraction = b.CreateAnd(b.CreateShl(man, b.CreateSub(clz, k(8))), k(0x7FFFFF));
  llvm::Value* subnormal = b.CreateOr(b.CreateShl(biased, k(23)), fraction);
  llvm::Value* exp_zero = b.CreateICmpEQ(exp, k(0));
  llvm::Value* man_zero = b.CreateICmpEQ(man, k(0));
  llvm::Value* bits = b.CreateSelect(exp_zero, b.CreateSelect(man_zero, k(0), subnormal), normal);
  switch (format.nan_encoding) {
    case numerics::NanEncoding::None: break;
    case numerics::NanEncoding::Ieee: {
      // exponent all ones: inf (man == 0) or a NaN, quietened, payload kept.
      llvm::Value* top = b.CreateICmpEQ(exp, k(format.exponent_field_max()));
      llvm::Value* nan = b.CreateOr(b.CreateShl(man, k(23 - m)), k(0x7FC00000));
      bits = b.CreateSelect(top, b.CreateSelect(man_zero, k(0x7F800000), nan), bits);
      break;
    }
    case numerics::NanEncoding::AllOnes: {
      llvm::Value* is_nan = b.CreateICmpEQ(magnitude, k(format.magnitude_mask()));
      bits = b.CreateSelect(is_nan, b.CreateOr(b.CreateShl(man, k(23 - m)), k(0x7FC00000)), bits);
      break;
    }
  }
  return b.CreateBitCast(b.CreateOr(sign, bits), with_element(code->getType(), b.getFloatTy()));
}

llvm::Value* emit_f32_rounded_to_odd(llvm::IRBuilderBase& b, llvm::Value* value) {
  llvm::Type* f32 = with_element(value->getType(), b.getFloatTy());
  llvm::Type* i32 = with_element(value->getType(), b.getInt32Ty());
  llvm::Value* nearest = b.CreateFPTrunc(value, f32);
  llvm::Value* back = b.CreateFPExt(nearest, value->getType());
  // Unordered: a NaN counts as exact (infinities are).
  llvm::Value* exact = b.CreateFCmpUEQ(back, value);
  llvm::Value* fabs_back = b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, back);
  llvm::Value* fabs_value = b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, value);
  llvm::Value* bits = b.CreateBitCast(nearest, i32);
  // Rounded away from zero: the neighbour toward zero (from inf, the
  // largest finite f32); then the odd one of the two neighbours.
  llvm::Value* toward_zero = b.CreateSelect(b.CreateFCmpOGT(fabs_back, fabs_value),
                                            b.CreateSub(bits, llvm::ConstantInt::get(i32, 1)), bits);
  llvm::Value* odd = b.CreateOr(toward_zero, llvm::ConstantInt::get(i32, 1));
  return b.CreateBitCast(b.CreateSelect(exact, bits, odd), f32);
}

llvm::Value* emit_f32_rounded_to_odd_from_integer(llvm::IRBuilderBase& b, llvm::Value* value, bool is_signed) {
  llvm::Type* i64 = with_element(value->getType(), b.getInt64Ty());
  auto k = [&](uint64_t v) -> llvm::Value* { return llvm::ConstantInt::get(i64, v); };
  llvm::Value* wide = is_signed ? b.CreateSExt(value, i64) : b.CreateZExt(value, i64);
  llvm::Value* negative = is_signed ? b.CreateICmpSLT(wide, k(0)) : nullptr;
  // |value| as unsigned (the most negative i64 too: 2^63).
  llvm::Value* magnitude = negative ? b.CreateSelect(negative, b.CreateSub(k(0), wide), wide) : wide;
  // The bits below the 24 leading significant ones: dropped = max(n, 24) - 24
  // of them, n the magnitude's width (64 - ctlz).
  llvm::Value* width = b.CreateSub(k(64), b.CreateIntrinsic(llvm::Intrinsic::ctlz, {i64}, {magnitude, b.getFalse()}));
  llvm::Value* dropped = b.CreateSub(b.CreateBinaryIntrinsic(llvm::Intrinsic::umax, width, k(24)), k(24));
  llvm::Value* low_mask = b.CreateSub(b.CreateShl(k(1), dropped), k(1));
  llvm::Value* kept = b.CreateAnd(magnitude, b.CreateNot(low_mask));
  llvm::Value* sticky = b.CreateICmpNE(b.CreateAnd(magnitude, low_mask), k(0));
  llvm::Value* odd = b.CreateOr(kept, b.CreateShl(b.CreateZExt(sticky, i64), dropped));
  llvm::Value* f = b.CreateUIToFP(odd, with_element(value->getType(), b.getFloatTy()));  // exact: 24 bits at most
  return negative ? b.CreateSelect(negative, b.CreateFNeg(f), f) : f;
}

llvm::Value* emit_float_encode_bits(llvm::IRBuilderBase& b, const numerics::Format& format, llvm::Value* value,
                                   numerics::Rounding rounding, numerics::Overflow overflow, llvm::Value* random) {
  using numerics::Rounding;
  llvm::Type* i32 = with_element(value->getType(), b.getInt32Ty());
  auto k = [&](uint32_t v) -> llvm::Value* { return llvm::ConstantInt::get(i32, v); };
  auto ks = [&](int v) -> llvm::Value* { return llvm::ConstantInt::getSigned(i32, v); };
  const uint32_t m = format.mantissa_bits, r = 23 - m;
  const uint32_t max_code = format.max_finite_code();
  const int emin = format.min_exponent();
  const bool saturate = overflow == numerics::Overflow::Saturate;
  // 1. sign = x >> 31; a = x & 0x7FFFFFFF; S = sign << (E + M).
  llvm::Value* x = b.CreateBitCast(value, i32);
  llvm::Value* a = b.CreateAnd(x, k(0x7FFFFFFF));
  llvm::Value* sign = b.CreateLShr(x, k(31));
  llvm::Value* sign_code = b.CreateShl(sign, k(format.exponent_bits + m));
  llvm::Value* negative = b.CreateICmpNE(sign, k(0));
  // 4. e32 = a >> 23; sig = a & 0x7FFFFF, plus 0x800000 when e32 != 0;
  //    e = max(e32, 1) - 127. (Infinities take this path too, as 2^128;
  //    step 3 below replaces their result.)
  llvm::Value* e32 = b.CreateLShr(a, k(23));
  llvm::Value* sig = b.CreateSelect(b.CreateICmpNE(e32, k(0)), b.CreateOr(b.CreateAnd(a, k(0x7FFFFF)), k(0x800000)), a);
  llvm::Value* e = b.CreateSub(b.CreateBinaryIntrinsic(llvm::Intrinsic::umax, e32, k(1)), k(127));
  //    shift = R + max(0, emin - e); s = min(shift, 31)
  llvm::Value* shift = b.CreateAdd(b.CreateBinaryIntrinsic(llvm::Intrinsic::smax, b.CreateSub(ks(emin), e), k(0)), k(r));
  llvm::Value* s = b.CreateBinaryIntrinsic(llvm::Intrinsic::umin, shift, k(31));
  //    kept = sig >> s; rem = sig & (2^s - 1); half = 2^(s - 1)
  llvm::Value* kept = b.CreateLShr(sig, s);
  llvm::Value* rem = b.CreateAnd(sig, b.CreateSub(b.CreateShl(k(1), s), k(1)));
  llvm::Value* half = b.CreateShl(k(1), b.CreateSub(s, k(1)));
  //    code = (e >= emin ? (e + B - 1) << M : 0) + kept
  llvm::Value* exponent_part =
      b.CreateSelect(b.CreateICmpSGE(e, ks(emin)), b.CreateShl(b.CreateAdd(e, ks(format.bias - 1)), k(m)), k(0));
  llvm::Value* code = b.CreateAdd(exponent_part, kept);
  // 5. Round: code += up.
  llvm::Value* up = nullptr;
  llvm::Value* inexact = b.CreateICmpNE(rem, k(0));
  switch (rounding) {
    case Rounding::NearestEven: {  // rem > half || (rem == half && (kept & 1))
      llvm::Value* odd = b.CreateICmpNE(b.CreateAnd(kept, k(1)), k(0));
      up = b.CreateOr(b.CreateICmpUGT(rem, half), b.CreateAnd(b.CreateICmpEQ(rem, half), odd));
      break;
    }
    case Rounding::NearestAway: up = b.CreateICmpUGE(rem, half); break;  // rem >= half
    case Rounding::TowardZero: up = nullptr; break;                       // false
    case Rounding::TowardPositive: up = b.CreateAnd(inexact, b.CreateNot(negative)); break;
    case Rounding::TowardNegative: up = b.CreateAnd(inexact, negative); break;
    case Rounding::Stochastic: {
      // t = rem >> min(shift - R, 31); up = t + (random & (2^R - 1)) >= 2^R
      llvm::Value* below = b.CreateBinaryIntrinsic(llvm::Intrinsic::umin, b.CreateSub(shift, k(r)), k(31));
      llvm::Value* t = b.CreateLShr(rem, below);
      llvm::Value* bits = b.CreateAnd(random, k((uint32_t{1} << r) - 1));
      up = b.CreateICmpUGE(b.CreateAdd(t, bits), k(uint32_t{1} << r));
      break;
    }
  }
  if (up) code = b.CreateAdd(code, b.CreateZExt(up, i32));
  // 6. Overflow: max_code under Saturate or when the rounding moved toward
  //    zero for this sign; otherwise inf if the format has one, else the
  //    canonical NaN (e4m3, unsigned), else the largest finite value.
  llvm::Value* saturated = b.CreateOr(sign_code, k(max_code));
  llvm::Value* propagated;
  if (format.has_inf)
    propagated = b.CreateOr(sign_code, k(format.inf_code()));
  else if (format.has_nan())
    propagated = k(format.canonical_nan());
  else
    propagated = saturated;
  llvm::Value* overflowed = propagated;
  if (saturate || rounding == Rounding::TowardZero)
    overflowed = saturated;
  else if (rounding == Rounding::TowardNegative)  // toward zero for x > 0
    overflowed = b.CreateSelect(negative, propagated, saturated);
  else if (rounding == Rounding::TowardPositive)  // toward zero for x < 0
    overflowed = b.CreateSelect(negative, saturated, propagated);
  // 7. S | code.
  llvm::Value* result = b.CreateSelect(b.CreateICmpUGT(code, k(max_code)), overflowed, b.CreateOr(sign_code, code));
  // 3. inf: S | max_code under Saturate; else as a Propagate overflow (the
  //    rounding mode does not matter: infinity is exact).
  result = b.CreateSelect(b.CreateICmpEQ(a, k(0x7F800000)), saturate ? saturated : propagated, result);
  // 2. NaN: the canonical NaN, or the positive largest finite value.
  llvm::Value* nan_code = k(format.has_nan() ? format.canonical_nan() : max_code);
  return b.CreateSelect(b.CreateICmpUGT(a, k(0x7F800000)), nan_code, result);
}

llvm::Value* emit_narrow_encode(llvm::IRBuilderBase& b, const numerics::Format& format, llvm::Value* value) {
  llvm::Value* code = emit_float_encode_bits(b, format, value, numerics::Rounding::NearestEven,
                                             numerics::Overflow::Propagate, nullptr);
  return b.CreateTrunc(code, with_element(value->getType(), b.getInt8Ty()));
}

llvm::Value* emit_random_bits(llvm::IRBuilderBase& b, llvm::Value* seed, llvm::Value* counter) {
  llvm::Type* i32 = b.getInt32Ty();
  llvm::Type* i64 = b.getInt64Ty();
  // key = {lo32(seed), hi32(seed)}; block = counter >> 2, ctr = {lo32(block), hi32(block), 0, 0}.
  llvm::Value* key0 = b.CreateTrunc(seed, i32);
  llvm::Value* key1 = b.CreateTrunc(b.CreateLShr(seed, 32), i32);
  llvm::Value* block = b.CreateLShr(counter, 2);
  llvm::Value* c[4] = {b.CreateTrunc(block, i32), b.CreateTrunc(b.CreateLShr(block, 32), i32), b.getInt32(0),
                       b.getInt32(0)};
  auto mul_wide = [&](uint32_t multiplier, llvm::Value* v, llvm::Value*& hi, llvm::Value*& lo) {
    llvm::Value* product = b.CreateMul(b.CreateZExt(v, i64), b.getInt64(multiplier), "", true, false);
    hi = b.CreateTrunc(b.CreateLShr(product, 32), i32);
    lo = b.CreateTrunc(product, i32);
  };
  for (int round = 0; round < 10; ++round) {
    if (round > 0) {  // key += {0x9E3779B9, 0xBB67AE85} (mod 2^32)
      key0 = b.CreateAdd(key0, b.getInt32(0x9E3779B9u));
      key1 = b.CreateAdd(key1, b.getInt32(0xBB67AE85u));
    }
    llvm::Value *hi0, *lo0, *hi1, *lo1;
    mul_wide(0xD2511F53u, c[0], hi0, lo0);
    mul_wide(0xCD9E8D57u, c[2], hi1, lo1);
    // {hi1 ^ c1 ^ k0, lo1, hi0 ^ c3 ^ k1, lo0}
    llvm::Value* next[4] = {b.CreateXor(b.CreateXor(hi1, c[1]), key0), lo1, b.CreateXor(b.CreateXor(hi0, c[3]), key1),
                            lo0};
    for (int i = 0; i < 4; ++i) c[i] = next[i];
  }
  // word counter & 3
  llvm::Value* word = b.CreateTrunc(b.CreateAnd(counter, 3), i32);
  llvm::Value* result = c[3];
  for (int i = 2; i >= 0; --i) result = b.CreateSelect(b.CreateICmpEQ(word, b.getInt32(static_cast<uint32_t>(i))), c[i], result);
  return result;
}

}  // namespace tessera::codegen
