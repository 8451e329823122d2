#include "ir/passes/fold.h"

#include <bit>
#include <cmath>
#include <optional>

#include "ir/core/tile_attr_kinds.h"

namespace tessera::ir {
namespace {

// --- integers: a value is held as int64_t, canonical for its type -------------------
// Signed types and index are sign-extended from their width, unsigned types and
// bool zero-extended.

unsigned width(Type t) { return t.is_index() ? 64u : t.is_bool() ? 1u : t.bit_width(); }
bool is_unsigned(Type t) {
  return t.is_bool() || (t.is_scalar() && scalar_info(t.scalar()).category == ScalarCategory::UnsignedInt);
}
uint64_t low_bits(int64_t v, unsigned w) {
  return w >= 64 ? static_cast<uint64_t>(v) : static_cast<uint64_t>(v) & ((uint64_t{1} << w) - 1);
}
int64_t as_signed(int64_t v, unsigned w) {
  if (w >= 64) return v;
  uint64_t bits = low_bits(v, w);
  uint64_t sign = uint64_t{1} << (w - 1);
  return static_cast<int64_t>((bits ^ sign) - sign);
}
int64_t signed_min(unsigned w) { return w >= 64 ? INT64_MIN : -(int64_t{1} << (w - 1)); }
int64_t canonical(uint64_t bits, Type t) {
  unsigned w = width(t);
  return is_unsigned(t) ? static_cast<int64_t>(low_bits(static_cast<int64_t>(bits), w))
                        : as_signed(static_cast<int64_t>(bits), w);
}

std::optional<int64_t> int_of(Attribute a) {
  if (a.is(AttributeKind::Integer)) return a.int_value();
  if (a.is(AttributeKind::Bool)) return a.bool_value() ? 1 : 0;
  return std::nullopt;
}
Attribute make_int(Context& ctx, uint64_t bits, Type t) {
  if (t.is_bool()) return ctx.bool_attr((bits & 1) != 0);
  return ctx.int_attr(canonical(bits, t), t);
}
bool foldable_int(Type t) { return t.is_index() || t.is_int() || t.is_bool(); }

// --- floats: f32 in float, f64 in double; nothing narrower ---------------------------
bool is_f32(Type t) { return t.is_scalar() && t.scalar() == ScalarType::F32; }
bool is_f64(Type t) { return t.is_scalar() && t.scalar() == ScalarType::F64; }
bool foldable_float(Type t) { return is_f32(t) || is_f64(t); }

template <typename F>
std::optional<F> float_binary(OpKind kind, F a, F b) {
  switch (kind) {
    case OpKind::AddF: return a + b;
    case OpKind::SubF: return a - b;
    case OpKind::MulF: return a * b;
    case OpKind::DivF:
      if (b == 0) return std::nullopt;
      return a / b;
    case OpKind::RemF:
      if (b == 0) return std::nullopt;
      return std::fmod(a, b);
    case OpKind::MinF:
    case OpKind::MaxF:
      // NaNs and signed zeros: left to run time.
      if (std::isnan(a) || std::isnan(b) || (a == 0 && b == 0)) return std::nullopt;
      return kind == OpKind::MinF ? (a < b ? a : b) : (a > b ? a : b);
    default: return std::nullopt;
  }
}

Attribute fold_float_binary(Context& ctx, OpKind kind, Attribute a, Attribute b, Type t) {
  if (!a.is(AttributeKind::Float) || !b.is(AttributeKind::Float)) return {};
  if (is_f32(t)) {
    auto r = float_binary<float>(kind, static_cast<float>(a.float_value()), static_cast<float>(b.float_value()));
    return r ? ctx.float_attr(static_cast<double>(*r), t) : Attribute();
  }
  auto r = float_binary<double>(kind, a.float_value(), b.float_value());
  return r ? ctx.float_attr(*r, t) : Attribute();
}

// Functions that IEEE 754 defines exactly (correctly rounded), so the folded
// value is the one every target computes. `round` is half to even, as in
// docs/codegen.md (the default floating-point environment rounds to nearest
// even, which `nearbyint` uses).
template <typename F>
F float_unary(OpKind kind, F a) {
  switch (kind) {
    case OpKind::NegF: return -a;
    case OpKind::AbsF: return std::fabs(a);
    case OpKind::Floor: return std::floor(a);
    case OpKind::Ceil: return std::ceil(a);
    case OpKind::Round: return std::nearbyint(a);
    case OpKind::Sqrt: return std::sqrt(a);
    default: return a;
  }
}

Attribute fold_float_unary(Context& ctx, OpKind kind, double a, Type t) {
  if (is_f32(t)) return ctx.float_attr(static_cast<double>(float_unary<float>(kind, static_cast<float>(a))), t);
  return ctx.float_attr(float_unary<double>(kind, a), t);
}

Attribute fold_int_binary(Context& ctx, OpKind kind, int64_t a, int64_t b, Type t) {
  unsigned w = width(t);
  uint64_t ua = low_bits(a, w), ub = low_bits(b, w);
  int64_t sa = as_signed(a, w), sb = as_signed(b, w);
  switch (kind) {
    case OpKind::AddI: return make_int(ctx, ua + ub, t);
    case OpKind::SubI: return make_int(ctx, ua - ub, t);
    case OpKind::MulI: return make_int(ctx, ua * ub, t);
    case OpKind::DivSI:
    case OpKind::FloorDivSI:
    case OpKind::RemSI: {
      if (sb == 0 || (sb == -1 && sa == signed_min(w))) return {};
      int64_t q = sa / sb, r = sa % sb;
      if (kind == OpKind::RemSI) return make_int(ctx, static_cast<uint64_t>(r), t);
      if (kind == OpKind::FloorDivSI && r != 0 && ((r < 0) != (sb < 0))) --q;
      return make_int(ctx, static_cast<uint64_t>(q), t);
    }
    case OpKind::DivUI:
      if (ub == 0) return {};
      return make_int(ctx, ua / ub, t);
    case OpKind::RemUI:
      if (ub == 0) return {};
      return make_int(ctx, ua % ub, t);
    case OpKind::MinSI: return make_int(ctx, static_cast<uint64_t>(sa < sb ? sa : sb), t);
    case OpKind::MaxSI: return make_int(ctx, static_cast<uint64_t>(sa > sb ? sa : sb), t);
    case OpKind::MinUI: return make_int(ctx, ua < ub ? ua : ub, t);
    case OpKind::MaxUI: return make_int(ctx, ua > ub ? ua : ub, t);
    case OpKind::AndI: return make_int(ctx, ua & ub, t);
    case OpKind::OrI: return make_int(ctx, ua | ub, t);
    case OpKind::XOrI: return make_int(ctx, ua ^ ub, t);
    case OpKind::ShLI:
      if (ub >= w) return {};
      return make_int(ctx, ua << ub, t);
    case OpKind::ShRSI:
      if (ub >= w) return {};
      return make_int(ctx, static_cast<uint64_t>(sa >> ub), t);
    case OpKind::ShRUI:
      if (ub >= w) return {};
      return make_int(ctx, ua >> ub, t);
    default: return {};
  }
}

std::optional<bool> compare_ints(std::string_view p, int64_t a, int64_t b, unsigned w) {
  int64_t sa = as_signed(a, w), sb = as_signed(b, w);
  uint64_t ua = low_bits(a, w), ub = low_bits(b, w);
  if (p == "eq") return ua == ub;
  if (p == "ne") return ua != ub;
  if (p == "slt") return sa < sb;
  if (p == "sle") return sa <= sb;
  if (p == "sgt") return sa > sb;
  if (p == "sge") return sa >= sb;
  if (p == "ult") return ua < ub;
  if (p == "ule") return ua <= ub;
  if (p == "ugt") return ua > ub;
  if (p == "uge") return ua >= ub;
  return std::nullopt;
}

std::optional<bool> compare_floats(std::string_view p, double a, double b) {
  bool unordered = std::isnan(a) || std::isnan(b);
  if (p == "ord") return !unordered;
  if (p == "uno") return unordered;
  bool is_u = p.size() == 3 && p[0] == 'u';
  if (unordered) return is_u;
  std::string_view rel = p.substr(1);
  if (rel == "eq") return a == b;
  if (rel == "ne") return a != b;
  if (rel == "lt") return a < b;
  if (rel == "le") return a <= b;
  if (rel == "gt") return a > b;
  if (rel == "ge") return a >= b;
  return std::nullopt;
}

Attribute fold_cast(Context& ctx, Operation* op, Attribute a) {
  Type from = op->operand(0)->type(), to = op->result()->type();
  switch (op->kind()) {
    case OpKind::ExtSI:
    case OpKind::ExtUI:
    case OpKind::TruncI:
    case OpKind::IndexCast: {
      auto v = int_of(a);
      if (!v || !foldable_int(from) || !foldable_int(to)) return {};
      int64_t x = op->is(OpKind::ExtSI) ? as_signed(*v, width(from))
                  : op->is(OpKind::ExtUI) ? static_cast<int64_t>(low_bits(*v, width(from)))
                                          : *v;  // canonical for `from`; truncation takes the low bits
      return make_int(ctx, static_cast<uint64_t>(x), to);
    }
    case OpKind::SIToFP:
    case OpKind::UIToFP: {
      auto v = int_of(a);
      if (!v || !foldable_int(from) || !foldable_float(to)) return {};
      unsigned w = width(from);
      if (op->is(OpKind::SIToFP)) {
        int64_t s = as_signed(*v, w);
        return ctx.float_attr(is_f32(to) ? static_cast<double>(static_cast<float>(s)) : static_cast<double>(s), to);
      }
      uint64_t u = low_bits(*v, w);
      return ctx.float_attr(is_f32(to) ? static_cast<double>(static_cast<float>(u)) : static_cast<double>(u), to);
    }
    case OpKind::FPToSI:
    case OpKind::FPToUI: {
      if (!a.is(AttributeKind::Float) || !foldable_float(from) || !foldable_int(to) || to.is_bool()) return {};
      double x = std::trunc(a.float_value());
      if (std::isnan(x)) return {};
      unsigned w = width(to);
      if (op->is(OpKind::FPToSI)) {
        double lo = -std::ldexp(1.0, static_cast<int>(w) - 1), hi = std::ldexp(1.0, static_cast<int>(w) - 1);
        if (!(x >= lo && x < hi)) return {};
        return make_int(ctx, static_cast<uint64_t>(static_cast<int64_t>(x)), to);
      }
      if (!(x >= 0 && x < std::ldexp(1.0, static_cast<int>(w)))) return {};
      return make_int(ctx, static_cast<uint64_t>(x), to);
    }
    case OpKind::ExtF:
      if (!a.is(AttributeKind::Float) || !is_f32(from) || !is_f64(to)) return {};
      return ctx.float_attr(static_cast<double>(static_cast<float>(a.float_value())), to);
    case OpKind::TruncF: {
      if (!a.is(AttributeKind::Float) || !is_f64(from) || !is_f32(to) || op->has_attr("saturate")) return {};
      if (!op->string_attr("rounding").empty() && parse_rounding_mode(*op) != RoundingMode::NearestEven) return {};
      return ctx.float_attr(static_cast<double>(static_cast<float>(a.float_value())), to);
    }
    case OpKind::Bitcast: {
      auto v = int_of(a);
      if (v && foldable_int(from) && foldable_int(to)) return make_int(ctx, low_bits(*v, width(from)), to);
      if (v && foldable_int(from) && is_f32(to) && width(from) == 32)
        return ctx.float_attr(static_cast<double>(std::bit_cast<float>(static_cast<uint32_t>(low_bits(*v, 32)))), to);
      if (v && foldable_int(from) && is_f64(to) && width(from) == 64)
        return ctx.float_attr(std::bit_cast<double>(low_bits(*v, 64)), to);
      if (!a.is(AttributeKind::Float)) return {};
      if (is_f32(from) && foldable_int(to) && width(to) == 32)
        return make_int(ctx, std::bit_cast<uint32_t>(static_cast<float>(a.float_value())), to);
      if (is_f64(from) && foldable_int(to) && width(to) == 64)
        return make_int(ctx, std::bit_cast<uint64_t>(a.float_value()), to);
      return {};
    }
    default: return {};
  }
}

}  // namespace

std::optional<bool> constant_less_than(Attribute a, Attribute b, Type t) {
  auto x = int_of(a), y = int_of(b);
  if (!x || !y || !foldable_int(t)) return std::nullopt;
  unsigned w = width(t);
  if (is_unsigned(t)) return low_bits(*x, w) < low_bits(*y, w);
  return as_signed(*x, w) < as_signed(*y, w);
}

Attribute constant_value(Value* v) {
  Operation* def = v->defining_op();
  return def && def->is(OpKind::Constant) ? def->attr("value") : Attribute();
}

Attribute fold(Context& ctx, Operation* op, std::span<const Attribute> constants) {
  if (!op->has_trait(trait::Pure) || op->num_results() != 1 || op->num_regions() != 0) return {};
  Type t = op->result()->type();
  if (!t.is_index() && !t.is_scalar()) return {};  // vectors, tiles and tensors have no constants
  for (Attribute a : constants)
    if (!a) return {};
  switch (op->kind()) {
    case OpKind::AddI:
    case OpKind::SubI:
    case OpKind::MulI:
    case OpKind::DivSI:
    case OpKind::DivUI:
    case OpKind::FloorDivSI:
    case OpKind::RemSI:
    case OpKind::RemUI:
    case OpKind::MinSI:
    case OpKind::MaxSI:
    case OpKind::MinUI:
    case OpKind::MaxUI:
    case OpKind::AndI:
    case OpKind::OrI:
    case OpKind::XOrI:
    case OpKind::ShLI:
    case OpKind::ShRSI:
    case OpKind::ShRUI: {
      auto a = int_of(constants[0]), b = int_of(constants[1]);
      if (!a || !b || !foldable_int(t)) return {};
      return fold_int_binary(ctx, op->kind(), *a, *b, t);
    }
    case OpKind::AddF:
    case OpKind::SubF:
    case OpKind::MulF:
    case OpKind::DivF:
    case OpKind::RemF:
    case OpKind::MinF:
    case OpKind::MaxF:
      if (!foldable_float(t)) return {};
      return fold_float_binary(ctx, op->kind(), constants[0], constants[1], t);
    case OpKind::NegF:
    case OpKind::AbsF:
    case OpKind::Floor:
    case OpKind::Ceil:
    case OpKind::Round:
    case OpKind::Sqrt:
      if (!foldable_float(t) || !constants[0].is(AttributeKind::Float)) return {};
      return fold_float_unary(ctx, op->kind(), constants[0].float_value(), t);
    case OpKind::Fma: {
      if (!foldable_float(t)) return {};
      for (Attribute a : constants)
        if (!a.is(AttributeKind::Float)) return {};
      double a = constants[0].float_value(), b = constants[1].float_value(), c = constants[2].float_value();
      if (is_f32(t))
        return ctx.float_attr(static_cast<double>(std::fma(static_cast<float>(a), static_cast<float>(b),
                                                             static_cast<float>(c))),
                              t);
      return ctx.float_attr(std::fma(a, b, c), t);
    }
    case OpKind::AbsI: {
      auto a = int_of(constants[0]);
      if (!a || !foldable_int(t) || t.is_bool()) return {};
      if (is_unsigned(t)) return constants[0];
      int64_t s = as_signed(*a, width(t));
      // |INT_MIN| wraps to INT_MIN, as integer arithmetic does at run time.
      return make_int(ctx, s < 0 ? 0 - static_cast<uint64_t>(s) : static_cast<uint64_t>(s), t);
    }
    // exp, log, rsqrt, tanh, sin, cos and powf are not correctly rounded: the
    // device library and the host's libm may differ in the last place, so a
    // folded value could differ from the one computed at run time. Left alone.
    case OpKind::Exp:
    case OpKind::Log:
    case OpKind::Rsqrt:
    case OpKind::Tanh:
    case OpKind::Sin:
    case OpKind::Cos:
    case OpKind::PowF: return {};
    case OpKind::CmpI: {
      Type operand = op->operand(0)->type();
      auto a = int_of(constants[0]), b = int_of(constants[1]);
      if (!a || !b || !foldable_int(operand)) return {};
      auto r = compare_ints(op->string_attr("predicate"), *a, *b, width(operand));
      return r ? ctx.bool_attr(*r) : Attribute();
    }
    case OpKind::CmpF: {
      Type operand = op->operand(0)->type();
      if (!foldable_float(operand) || !constants[0].is(AttributeKind::Float) || !constants[1].is(AttributeKind::Float))
        return {};
      double a = constants[0].float_value(), b = constants[1].float_value();
      if (is_f32(operand)) a = static_cast<float>(a), b = static_cast<float>(b);
      auto r = compare_floats(op->string_attr("predicate"), a, b);
      return r ? ctx.bool_attr(*r) : Attribute();
    }
    case OpKind::Select: {
      auto c = int_of(constants[0]);
      if (!c) return {};
      return *c ? constants[1] : constants[2];
    }
    case OpKind::ExtSI:
    case OpKind::ExtUI:
    case OpKind::TruncI:
    case OpKind::IndexCast:
    case OpKind::SIToFP:
    case OpKind::UIToFP:
    case OpKind::FPToSI:
    case OpKind::FPToUI:
    case OpKind::ExtF:
    case OpKind::TruncF:
    case OpKind::Bitcast: return fold_cast(ctx, op, constants[0]);
    default: return {};
  }
}

}  // namespace tessera::ir
