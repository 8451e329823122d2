// Constant folding of single operations, shared by the passes.
//
// `fold` computes the result of a Pure operation from constant operands, in
// the IR's semantics (ir/core/ir.h): integers wrap at their width (`index` is
// a signed 64-bit integer); f32 is computed in float and f64 in double;
// narrower storage floats are never folded; of the math functions only those
// IEEE 754 rounds exactly (sqrt, floor, ceil, round, abs, fma) are folded.
// Division or remainder by zero, signed division overflow, out-of-range
// shifts and float-to-int conversions out of range are never folded (their
// values are unspecified, so the fold leaves them for run time).
#pragma once

#include <optional>
#include <span>

#include "ir/core/ir.h"

namespace tessera::ir {

// The constant result of `op` (one scalar or index result), or a null
// attribute when it does not fold. `constants[i]` is the value of operand i
// when it is a constant, else null.
Attribute fold(Context& context, Operation* op, std::span<const Attribute> constants);

// The `value` attribute of `v` when an `arith.constant` defines it, else null.
Attribute constant_value(Value* v);

// `a < b` for integer constants of type `t` (signed or unsigned as `t` is);
// nullopt when either is not an integer constant.
std::optional<bool> constant_less_than(Attribute a, Attribute b, Type t);

}  // namespace tessera::ir
