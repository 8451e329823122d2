#include "ir/core/rounding_conversion.h"

#include <limits>

#include "ir/core/ir.h"

namespace tessera::ir {

std::vector<NamedAttribute> rounding_attributes(Context& context, const RoundingPolicy& policy) {
  std::vector<NamedAttribute> attributes;
  if (policy.rounding != RoundingMode::NearestEven)
    attributes.push_back({"rounding", context.string_attr(rounding_mode_name(policy.rounding))});
  if (policy.saturate) attributes.push_back({"saturate", context.unit_attr()});
  return attributes;
}

RoundingPolicy rounding_policy_of(const Operation& op) {
  RoundingPolicy policy;
  policy.rounding = rounding_mode(op);
  policy.saturate = op.has_attr("saturate");
  return policy;
}

bool rounding_conversion_takes(Type t) {
  return t.is_scalar() && (t.is_int() || t.scalar() == ScalarType::F64);
}

Value* emit_rounding_conversion(Builder& builder, Value* x, Type element, const RoundingPolicy& policy,
                                Value* random_bits) {
  Context& context = builder.context();
  Type f32 = context.f32_type();
  auto op = [&](OpKind kind, std::vector<Value*> operands, Type result, std::vector<NamedAttribute> attributes = {}) {
    return builder.create(kind, std::span<Value* const>(operands), std::span<const Type>(&result, 1), std::move(attributes))
        ->result();
  };
  if (x->type().is_int()) {
    OpKind to_float = scalar_info(x->type().scalar()).category == ScalarCategory::UnsignedInt ? OpKind::UIToFP
                                                                                             : OpKind::SIToFP;
    if (element.scalar() == ScalarType::BF16 && !policy.directed()) return op(to_float, {x}, element);
    x = op(to_float, {x}, f32);
  }
  if (element.scalar() == ScalarType::F32 && x->type() == f32) {
    if (!policy.saturate) return x;
    // f32 @saturate: infinities become the largest finite f32 of their sign
    // (ordered comparisons: a NaN stays).
    Value* max = builder.constant_float(static_cast<double>(std::numeric_limits<float>::max()), f32);
    Value* min = builder.constant_float(-static_cast<double>(std::numeric_limits<float>::max()), f32);
    Value* above = op(OpKind::CmpF, {x, max}, context.bool_type(), {{"predicate", context.string_attr("ogt")}});
    x = op(OpKind::Select, {above, max, x}, f32);
    Value* below = op(OpKind::CmpF, {x, min}, context.bool_type(), {{"predicate", context.string_attr("olt")}});
    return op(OpKind::Select, {below, min, x}, f32);
  }
  std::vector<Value*> operands{x};
  if (policy.rounding == RoundingMode::Stochastic) operands.push_back(random_bits);
  return op(OpKind::TruncF, std::move(operands), element, rounding_attributes(context, policy));
}

}  // namespace tessera::ir
