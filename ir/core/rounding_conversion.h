// The conversion of a value to a float element type under a numeric
// policy's rounding (@rounding, @saturate, @stochastic_round): the one piece
// of code that kernel element stores (lower/lower_policy.cpp), scalar casts
// (lower/lower_builtins.cpp) and the graph level's `graph.cast`
// (schedule_to_tile/element_code.cpp) all emit, so that a policy rounds the
// same way wherever it is written (docs/numerics.md, "Policies").
#pragma once

#include <string_view>
#include <vector>

#include "ir/core/builder.h"
#include "ir/core/tile_attr_kinds.h"

namespace tessera::ir {

// How a value is rounded: `rounding` is one of arith.truncf's modes
// (rounding_modes.def); `saturate` clamps overflow and infinities to the
// largest finite value of the sign.
struct RoundingPolicy {
  RoundingMode rounding = RoundingMode::NearestEven;
  bool saturate = false;

  bool changes_values() const { return rounding != RoundingMode::NearestEven || saturate; }
  bool directed() const { return rounding != RoundingMode::NearestEven; }
};

// The attributes of an arith.truncf (or graph.cast) for `policy`: `rounding`
// unless nearest even, `saturate` when set.
std::vector<NamedAttribute> rounding_attributes(Context& context, const RoundingPolicy& policy);

// The policy a graph.cast's attributes say.
RoundingPolicy rounding_policy_of(const Operation& op);

// Whether emit_rounding_conversion takes a value of type `t` as it is: an
// f64 (which callers accept under nearest even only) or an integer, which
// rounded to nearest f32 first would be rounded twice. Callers make other
// values f32 (exactly) first.
bool rounding_conversion_takes(Type t);

// `x` (f32; f64 when the policy rounds to nearest even; an integer)
// converted to the float type `element` by `policy`: arith.truncf with the
// policy's attributes (`random_bits`, one i32, as its second operand when
// stochastic); for an f32 `element`, f32 `x` under @saturate has its
// infinities clamped to +-FLT_MAX (NaN stays). An integer becomes f32
// first (arith.sitofp/uitofp: exact below 2^24, which is all a directed
// rounding accepts), except to bf16 under nearest even: one arith.sitofp
// to bf16, which rounds once, where through f32 it would round twice;
// @saturate changes nothing there, as no integer comes near bf16's largest
// finite value. For the other types every integer above 2^24 overflows
// whichever way it is rounded.
Value* emit_rounding_conversion(Builder& builder, Value* x, Type element, const RoundingPolicy& policy,
                                Value* random_bits);

}  // namespace tessera::ir
