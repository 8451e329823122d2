// The narrow float formats (fp8_e4m3, fp8_e5m2, fp6_e2m3, fp6_e3m2,
// fp4_e2m1) as LLVM IR: a value of one of them is its code in an i8 (the low
// 4, 6 or 8 bits), and the conversions to and from f32 are integer sequences
// that implement tessera/numerics.hpp (the specification) step by step, so
// that the CPU and the GPU give the same bits for every input. Hardware
// conversions are used where their results are the specification's bit for
// bit (docs/codegen.md, "Narrow floats").
#pragma once

#include <llvm/IR/IRBuilder.h>

#include <tessera/numerics.hpp>

#include "support/scalar_type.h"

namespace tessera::codegen {

// The format of a scalar type held as a code in an i8 (fp8, fp6, fp4), or
// null (bf16 and f16 are LLVM's bfloat and half; everything else is no
// narrow float).
const numerics::Format* narrow_float_format(ScalarType type);

// Bits per element of a type stored packed (fp6: 6, fp4: 4), or 0.
unsigned packed_element_bits(ScalarType type);

// The f32 value of `code` (i8, or a vector of i8): numerics::decode_bits,
// exact, as an integer sequence. Bits above the format's width are ignored.
llvm::Value* emit_narrow_decode(llvm::IRBuilderBase& builder, const numerics::Format& format, llvm::Value* code);

// The same for fp8_e5m2 through f16: the code as the top byte of an f16,
// widened (fpext: cvt.f32.f16 on the GPU), NaN codes selected from
// emit_narrow_nan. For the GPU: on the CPU the widening may be a call to
// __extendhfsf2, which objects for any host must not need.
llvm::Value* emit_e5m2_decode_through_f16(llvm::IRBuilderBase& builder, llvm::Value* code);

// Whether `code` is a NaN code of `format` (i1 of code's shape), and the f32
// NaN decode_bits gives for a NaN code: sign | 0x7FC00000 | man << (23 - M).
// For decodes that take a hardware conversion's value for the other codes.
llvm::Value* emit_narrow_is_nan(llvm::IRBuilderBase& builder, const numerics::Format& format, llvm::Value* code);
llvm::Value* emit_narrow_nan(llvm::IRBuilderBase& builder, const numerics::Format& format, llvm::Value* code);

// The code (i8, or a vector of i8) of `value` (f32, or a vector of f32):
// numerics::encode_bits with Rounding::NearestEven and Overflow::Propagate.
llvm::Value* emit_narrow_encode(llvm::IRBuilderBase& builder, const numerics::Format& format, llvm::Value* value);

// The code, in the low bits of an i32 (or a vector of i32), of `value` (f32,
// or a vector of f32) in `format` (any format of numerics.hpp, bf16 and f16
// included): numerics::encode_bits with the given rounding and overflow
// modes. `random` (i32 of value's shape) is used by Rounding::Stochastic only.
llvm::Value* emit_float_encode_bits(llvm::IRBuilderBase& builder, const numerics::Format& format, llvm::Value* value,
                                   numerics::Rounding rounding, numerics::Overflow overflow, llvm::Value* random);

// `value` (f64, or a vector of f64) as f32 rounded to odd
// (numerics::f32_rounded_to_odd): rounding that to any narrower format then
// rounds the f64 once (numerics.hpp, "Wider sources").
llvm::Value* emit_f32_rounded_to_odd(llvm::IRBuilderBase& builder, llvm::Value* value);

// The same for an integer (of any width up to 64 bits, or a vector):
// truncated to its 24 leading significant bits, the last of them set when
// a dropped bit was, then converted (exactly).
llvm::Value* emit_f32_rounded_to_odd_from_integer(llvm::IRBuilderBase& builder, llvm::Value* value, bool is_signed);

// numerics::random_bits(seed, counter) (Philox-4x32-10): seed and counter
// i64, the result i32.
llvm::Value* emit_random_bits(llvm::IRBuilderBase& builder, llvm::Value* seed, llvm::Value* counter);

}  // namespace tessera::codegen
