// The scalar code of graph operations (element_code.h). The semantics are
// those of docs/language/graph.md: Python's `//` and `%` (toward negative
// infinity, the divisor's sign), comparisons of floats ordered (NaN compares
// false, except `!=`), integer `//` and `%` by 0 give 0 as NumPy's (no trap;
// INT_MIN // -1 wraps), relu(x) = x > 0 ? x : 0, gelu the tanh approximation,
// random numbers from Philox-4x32-10 (tile.random_bits) keyed by the seed and
// counted by the element's index.
#include "ir/schedule_to_tile/element_code.h"

#include <cmath>
#include <limits>

#include "ir/core/graph_ops.h"
#include "ir/core/rounding_conversion.h"
#include "support/diagnostics/internal_error.h"

namespace tessera::ir {

namespace {

bool is_unsigned_type(Type t) { return scalar_info(t.scalar()).category == ScalarCategory::UnsignedInt; }

Value* cmp(KernelBuilder& kb, Value* a, Value* b, std::string_view signed_int, std::string_view unsigned_int,
           std::string_view floating) {
  Type t = a->type();
  bool f = t.is_float();
  // A bool is 0 or 1, as NumPy orders them (signed, true would be -1 < 0).
  std::string_view predicate = f ? floating : is_unsigned_type(t) || t.is_bool() ? unsigned_int : signed_int;
  return kb.op(f ? OpKind::CmpF : OpKind::CmpI, {a, b}, kb.context().bool_type(),
               {{"predicate", kb.context().string_attr(predicate)}});
}

// An integer divisor that does not trap: 1 where it is 0 (and, signed, -1:
// INT_MIN / -1 overflows); the callers give those elements NumPy's results.
Value* safe_divisor(KernelBuilder& kb, Value* b, bool is_unsigned) {
  Type t = b->type();
  Value* one = kb.builder().constant_int(1, t);
  Value* bad = cmp(kb, b, kb.builder().constant_int(0, t), "eq", "eq", "oeq");
  if (!is_unsigned)
    bad = kb.op(OpKind::OrI, {bad, cmp(kb, b, kb.builder().constant_int(-1, t), "eq", "eq", "oeq")},
                kb.context().bool_type());
  return kb.select(bad, one, b);
}

Value* float_op(KernelBuilder& kb, OpKind kind, std::vector<Value*> operands) {
  Type t = operands[0]->type();
  return kb.op(kind, std::move(operands), t);
}

// Math on a storage float computes in f32 and rounds back (the operands of
// an elementwise op are already in its element type; these functions exist
// for f32 and f64 in LLVM's libraries).
Value* math(KernelBuilder& kb, OpKind kind, Value* x) {
  Type t = x->type();
  if (t.scalar() == ScalarType::F32 || t.scalar() == ScalarType::F64) return kb.op(kind, {x}, t);
  Value* wide = kb.convert(x, kb.context().f32_type());
  return kb.convert(kb.op(kind, {wide}, wide->type()), t);
}

// Python's and NumPy's float `//` and `%` (npy_divmod): the remainder from
// fmod, which is exact, moved to the divisor's sign; the quotient (a - mod) / b
// snapped to the nearest integer. floor(a / b) instead rounds a / b first:
// 1.0 // 0.1 would be 10, not 9, and a - floor(a / b) * b loses digits.
std::pair<Value*, Value*> float_divmod(KernelBuilder& kb, Value* a, Value* b) {
  Type t = a->type();
  Type flag = kb.context().bool_type();
  Value* zero = kb.constant(0.0, t);
  Value* negative_zero = kb.constant(-0.0, t);
  Value* one = kb.constant(1.0, t);
  auto less = [&](Value* x, Value* y) { return cmp(kb, x, y, "slt", "ult", "olt"); };
  Value* mod = kb.op(OpKind::RemF, {a, b}, t);
  Value* div = kb.op(OpKind::DivF, {kb.op(OpKind::SubF, {a, mod}, t), b}, t);
  Value* mod_nonzero = cmp(kb, mod, zero, "ne", "ne", "une");
  Value* signs_differ = kb.op(OpKind::XOrI, {less(b, zero), less(mod, zero)}, flag);
  Value* adjust = kb.all(mod_nonzero, signs_differ);
  mod = kb.select(adjust, kb.op(OpKind::AddF, {mod, b}, t), mod);
  div = kb.select(adjust, kb.op(OpKind::SubF, {div, one}, t), div);
  mod = kb.select(mod_nonzero, mod, kb.select(less(b, zero), negative_zero, zero));  // copysign(0, b)
  Value* floor = math(kb, OpKind::Floor, div);
  Value* snap = cmp(kb, kb.op(OpKind::SubF, {div, floor}, t), kb.constant(0.5, t), "sgt", "ugt", "ogt");
  floor = kb.select(snap, kb.op(OpKind::AddF, {floor, one}, t), floor);
  Value* quotient = kb.op(OpKind::DivF, {a, b}, t);
  Value* div_zero = cmp(kb, div, zero, "eq", "eq", "oeq");
  // copysign(0, a / b): negative also for a quotient of -0.0 (1 / -0.0 < 0).
  Value* quotient_negative =
      kb.op(OpKind::OrI, {less(quotient, zero), less(kb.op(OpKind::DivF, {one, quotient}, t), zero)}, flag);
  floor = kb.select(div_zero, kb.select(quotient_negative, negative_zero, zero), floor);
  // b == 0: a / b (inf or NaN) and fmod's NaN.
  floor = kb.select(cmp(kb, b, zero, "eq", "eq", "oeq"), quotient, floor);
  return {floor, mod};
}

Value* sigmoid(KernelBuilder& kb, Value* x) {
  Type t = x->type();
  Value* one = kb.constant(1.0, t);
  Value* e = math(kb, OpKind::Exp, float_op(kb, OpKind::NegF, {x}));
  return float_op(kb, OpKind::DivF, {one, float_op(kb, OpKind::AddF, {one, e})});
}

Value* int_pow(KernelBuilder& kb, Value* a, Value* b) {
  // Square and multiply over the bits of a non-negative exponent; a
  // negative one gives the real result truncated toward zero (0 unless
  // |a| == 1), as in kernels.
  Type t = a->type();
  Value* zero = kb.constant(0.0, t);
  Value* one = kb.constant(1.0, t);
  Value* exponent = kb.op(OpKind::MaxSI, {b, zero}, t);
  auto results = kb.for_loop(zero, exponent, one, {one}, [&](Value*, std::vector<Value*> carried) {
    return std::vector<Value*>{kb.op(OpKind::MulI, {carried[0], a}, t)};
  });
  Value* negative = cmp(kb, b, zero, "slt", "ult", "olt");
  Value* a_is_one = cmp(kb, a, one, "eq", "eq", "oeq");
  Value* minus_one = kb.constant(-1.0, t);
  Value* a_is_minus_one = cmp(kb, a, minus_one, "eq", "eq", "oeq");
  Value* odd = kb.op(OpKind::AndI, {b, one}, t);
  Value* sign = kb.select(cmp(kb, odd, zero, "ne", "ne", "une"), minus_one, one);
  Value* small = kb.select(a_is_one, one, kb.select(a_is_minus_one, sign, zero));
  return kb.select(negative, small, results[0]);
}

}  // namespace

Value* reduction_identity(KernelBuilder& kb, ReduceKind kind, Type t) {
  switch (kind) {
    case ReduceKind::Sum:
    case ReduceKind::Mean: return kb.constant(0.0, t);
    case ReduceKind::Prod: return kb.constant(1.0, t);
    case ReduceKind::Max:
    case ReduceKind::Min: break;
  }
  bool max = kind == ReduceKind::Max;
  if (t.is_float()) return kb.constant(max ? -INFINITY : INFINITY, t);
  const ScalarInfo& info = scalar_info(t.scalar());
  unsigned bits = info.bits;
  if (t.scalar() == ScalarType::Bool) return kb.builder().constant_int(max ? 0 : 1, t);  // or, and
  if (info.category == ScalarCategory::UnsignedInt) {
    if (max) return kb.constant(0.0, t);
    return kb.builder().constant_int(bits == 64 ? -1 : static_cast<int64_t>((uint64_t{1} << bits) - 1), t);
  }
  int64_t lowest = bits == 64 ? std::numeric_limits<int64_t>::min() : -(int64_t{1} << (bits - 1));
  int64_t highest = bits == 64 ? std::numeric_limits<int64_t>::max() : (int64_t{1} << (bits - 1)) - 1;
  return kb.builder().constant_int(max ? lowest : highest, t);
}

Value* reduction_combine(KernelBuilder& kb, ReduceKind kind, Value* a, Value* b) {
  Type t = a->type();
  // Bools compare unsigned (true is 1, not -1 as a signed i1): max is or.
  bool f = t.is_float(), u = !f && (is_unsigned_type(t) || t.scalar() == ScalarType::Bool);
  switch (kind) {
    case ReduceKind::Sum:
    case ReduceKind::Mean: return kb.op(f ? OpKind::AddF : OpKind::AddI, {a, b}, t);
    case ReduceKind::Prod: return kb.op(f ? OpKind::MulF : OpKind::MulI, {a, b}, t);
    case ReduceKind::Max: return kb.op(f ? OpKind::MaxF : u ? OpKind::MaxUI : OpKind::MaxSI, {a, b}, t);
    case ReduceKind::Min: return kb.op(f ? OpKind::MinF : u ? OpKind::MinUI : OpKind::MinSI, {a, b}, t);
  }
  internal_error("generate-kernels", "an unknown reduction kind");
}

namespace {

bool is_narrow_float(Type t) { return t.is_float() && scalar_info(t.scalar()).bits < 32; }

Value* element_code(KernelBuilder& kb, Operation* op, const std::vector<Value*>& operands,
                    const ElementPosition& position);

}  // namespace

Value* emit_element(KernelBuilder& kb, Operation* op, const std::vector<Value*>& operands,
                    const ElementPosition& position) {
  bool narrow = false;
  for (Value* v : operands) narrow = narrow || is_narrow_float(v->type());
  if (!narrow || !op->is(OpKind::GraphElementwise)) return element_code(kb, op, operands, position);
  std::vector<Value*> wide;
  for (Value* v : operands) wide.push_back(is_narrow_float(v->type()) ? kb.convert(v, kb.context().f32_type()) : v);
  Value* r = element_code(kb, op, wide, position);
  return kb.convert(r, kb.context().scalar_type(op->result()->type().scalar()));
}

namespace {

// The bits of a uniform number k / 2^P exact in `t` and below 1: its
// significand's (its subnormal step's, for fp6/fp4 whose smallest normal
// number is not below 1/2^P); 24 for f32 and wider (a 32-bit word's top).
int uniform_precision(ScalarType t) {
  switch (t) {
    case ScalarType::F16: return 11;
    case ScalarType::BF16: return 8;
    case ScalarType::FP8E4M3: return 4;
    case ScalarType::FP8E5M2: return 3;
    case ScalarType::FP6E2M3:
    case ScalarType::FP6E3M2: return 3;
    case ScalarType::FP4E2M1: return 1;
    default: return 24;
  }
}

Value* element_code(KernelBuilder& kb, Operation* op, const std::vector<Value*>& operands,
                    const ElementPosition& position) {
  Context& context = kb.context();
  Type result_element = context.scalar_type(op->result()->type().scalar());
  switch (op->kind()) {
    case OpKind::GraphCast: {
      // A @precision_policy class: the class's `dequantize(code, scale)`,
      // the helper a kernel's element load calls (lower_policy.cpp), called
      // on this element with the scale; the inline pass and LLVM inline it.
      if (Attribute method = op->attr("dequantize"))
        return kb.op(OpKind::Call, {operands[0], operands[1]}, result_element, {{"callee", method}});
      RoundingPolicy policy = rounding_policy_of(*op);
      // @loss_scale, as a kernel load of a `T @loss_scale(k)` element
      // (lower_policy.cpp): decoded to f32 exactly, then divided by k.
      if (Attribute k = op->attr("unscale")) {
        Value* x = kb.convert(operands[0], context.f32_type());
        return kb.op(OpKind::DivF, {x, kb.constant(k.float_value(), context.f32_type())}, context.f32_type());
      }
      Attribute scale = op->attr("scale");
      if (!policy.changes_values() && !scale) return kb.convert(operands[0], result_element);
      // As a kernel store into a tensor with the policy (lower_policy.cpp):
      // the value made f32 (exact for every source the lowering accepts
      // with a directed rounding; an f64 or an integer is rounded by the
      // conversion itself, once), then arith.truncf with the policy; the
      // random bits of a stochastic rounding numbered by the element's
      // row-major index in the result.
      Value* x = operands[0];
      if (!rounding_conversion_takes(x->type()) || scale) x = kb.convert(x, context.f32_type());
      // @loss_scale, as a kernel store: times k in f32, then the rounding.
      if (scale) x = kb.op(OpKind::MulF, {x, kb.constant(scale.float_value(), context.f32_type())}, context.f32_type());
      Value* bits = nullptr;
      if (policy.rounding == RoundingMode::Stochastic)
        bits = kb.op(OpKind::RandomBits,
                     {kb.convert(operands[1], context.i64_type()), kb.convert(position.linear_index(), context.i64_type())},
                     context.i32_type());
      return emit_rounding_conversion(kb.builder(), x, result_element, policy, bits);
    }
    case OpKind::GraphConstant: {
      Attribute v = op->attr("value");
      if (v.is(AttributeKind::Float)) return kb.constant(v.float_value(), result_element);
      if (v.is(AttributeKind::Bool)) return kb.constant(v.bool_value() ? 1.0 : 0.0, result_element);
      if (result_element.is_float()) return kb.constant(static_cast<double>(v.int_value()), result_element);
      return kb.builder().constant_int(v.int_value(), result_element);
    }
    case OpKind::GraphRandom: {
      // uniform: the top P bits of one Philox word as k / 2^P in [0, 1), P
      // the result type's precision (24 for f32, 8 for bf16: JAX's uniform),
      // so that k / 2^P is exact there and never rounds up to 1;
      // normal: Box-Muller from two words (counters 2i and 2i + 1), 24 bits.
      Value* seed = kb.convert(operands[0], context.i64_type());
      Value* i = kb.convert(position.linear_index(), context.i64_type());
      Type f32 = context.f32_type();
      auto unit = [&](Value* counter, bool open_at_zero, int precision) {
        Value* bits = kb.op(OpKind::RandomBits, {seed, counter}, context.i32_type());
        Value* top = kb.op(OpKind::ShRUI, {bits, kb.builder().constant_int(32 - precision, context.i32_type())},
                           context.i32_type());
        if (open_at_zero) top = kb.op(OpKind::AddI, {top, kb.builder().constant_int(1, context.i32_type())}, context.i32_type());
        Value* as_float = kb.op(OpKind::UIToFP, {top}, f32);
        return kb.op(OpKind::MulF, {as_float, kb.constant(std::ldexp(1.0, -precision), f32)}, f32);
      };
      Value* r;
      if (op->string_attr("distribution") == "uniform") {
        r = unit(i, false, uniform_precision(result_element.scalar()));
      } else {
        Value* two = kb.builder().constant_int(2, context.i64_type());
        Value* first = kb.op(OpKind::MulI, {i, two}, context.i64_type());
        Value* second = kb.op(OpKind::AddI, {first, kb.builder().constant_int(1, context.i64_type())}, context.i64_type());
        Value* u1 = unit(first, true, 24);  // (0, 1]: log is finite
        Value* u2 = unit(second, false, 24);
        Value* radius = kb.op(OpKind::Sqrt, {kb.op(OpKind::MulF, {kb.constant(-2.0, f32), kb.op(OpKind::Log, {u1}, f32)}, f32)}, f32);
        Value* angle = kb.op(OpKind::MulF, {kb.constant(2.0 * M_PI, f32), u2}, f32);
        r = kb.op(OpKind::MulF, {radius, kb.op(OpKind::Cos, {angle}, f32)}, f32);
      }
      return kb.convert(r, result_element);
    }
    case OpKind::GraphIota:
      return kb.convert(position.indices[static_cast<size_t>(op->attr("axis").int_value())], result_element);
    case OpKind::GraphElementwise: break;
    default: internal_error("generate-kernels", "no element code for '" + std::string(op->name()) + "'");
  }
  ElementwiseOp fn = elementwise_op(op);
  Type t = operands.empty() ? result_element : operands[fn == ElementwiseOp::Select ? 1 : 0]->type();
  bool f = t.is_float(), u = !f && !t.is_bool() && is_unsigned_type(t);
  Value* a = operands.size() > 0 ? operands[0] : nullptr;
  Value* b = operands.size() > 1 ? operands[1] : nullptr;
  switch (fn) {
    case ElementwiseOp::Add: return kb.op(f ? OpKind::AddF : OpKind::AddI, {a, b}, t);
    case ElementwiseOp::Sub: return kb.op(f ? OpKind::SubF : OpKind::SubI, {a, b}, t);
    case ElementwiseOp::Mul: return kb.op(f ? OpKind::MulF : OpKind::MulI, {a, b}, t);
    case ElementwiseOp::Div:
    case ElementwiseOp::FloorDiv: {
      if (f) {
        if (fn == ElementwiseOp::FloorDiv) return float_divmod(kb, a, b).first;
        return kb.op(OpKind::DivF, {a, b}, t);
      }
      // NumPy's integer division, without the hardware's traps: x // 0 is 0
      // and INT_MIN // -1 wraps to INT_MIN (x // -1 is -x).
      Value* q = kb.op(u ? OpKind::DivUI : OpKind::FloorDivSI, {a, safe_divisor(kb, b, u)}, t);
      Value* zero = kb.builder().constant_int(0, t);
      if (!u) q = kb.select(cmp(kb, b, kb.builder().constant_int(-1, t), "eq", "eq", "oeq"), kb.op(OpKind::SubI, {zero, a}, t), q);
      return kb.select(cmp(kb, b, zero, "eq", "eq", "oeq"), zero, q);
    }
    case ElementwiseOp::Mod: {
      if (f) return float_divmod(kb, a, b).second;
      // x % 0 is 0 (NumPy), as x % 1 and x % -1 are: divide by 1 instead.
      b = safe_divisor(kb, b, u);
      if (u) return kb.op(OpKind::RemUI, {a, b}, t);
      Value* r = kb.op(OpKind::RemSI, {a, b}, t);
      Value* zero = kb.constant(0.0, t);
      Value* nonzero = cmp(kb, r, zero, "ne", "ne", "une");
      Value* differ = kb.op(OpKind::XOrI, {cmp(kb, r, zero, "slt", "ult", "olt"), cmp(kb, b, zero, "slt", "ult", "olt")},
                            context.bool_type());
      return kb.select(kb.all(nonzero, differ), kb.op(OpKind::AddI, {r, b}, t), r);
    }
    case ElementwiseOp::Pow:
      if (f) {
        if (t.scalar() == ScalarType::F32 || t.scalar() == ScalarType::F64) return kb.op(OpKind::PowF, {a, b}, t);
        Type f32 = context.f32_type();
        return kb.convert(kb.op(OpKind::PowF, {kb.convert(a, f32), kb.convert(b, f32)}, f32), t);
      }
      return int_pow(kb, a, b);
    case ElementwiseOp::Max: return reduction_combine(kb, ReduceKind::Max, a, b);
    case ElementwiseOp::Min: return reduction_combine(kb, ReduceKind::Min, a, b);
    case ElementwiseOp::Neg:
      if (f) return kb.op(OpKind::NegF, {a}, t);
      return kb.op(OpKind::SubI, {kb.constant(0.0, t), a}, t);
    case ElementwiseOp::Abs:
      if (f) return math(kb, OpKind::AbsF, a);
      if (u) return a;
      return kb.op(OpKind::AbsI, {a}, t);
    case ElementwiseOp::Exp: return math(kb, OpKind::Exp, a);
    case ElementwiseOp::Log: return math(kb, OpKind::Log, a);
    case ElementwiseOp::Sqrt: return math(kb, OpKind::Sqrt, a);
    case ElementwiseOp::Rsqrt: return math(kb, OpKind::Rsqrt, a);
    case ElementwiseOp::Tanh: return math(kb, OpKind::Tanh, a);
    case ElementwiseOp::Sin: return math(kb, OpKind::Sin, a);
    case ElementwiseOp::Cos: return math(kb, OpKind::Cos, a);
    case ElementwiseOp::Floor: return f ? math(kb, OpKind::Floor, a) : a;
    case ElementwiseOp::Ceil: return f ? math(kb, OpKind::Ceil, a) : a;
    case ElementwiseOp::Round: return f ? math(kb, OpKind::Round, a) : a;
    case ElementwiseOp::Sigmoid: return sigmoid(kb, a);
    case ElementwiseOp::Relu: {
      Value* zero = kb.constant(0.0, t);
      // NaN stays NaN (np.maximum(x, 0), PyTorch's relu): unordered or greater.
      return kb.select(cmp(kb, a, zero, "sgt", "ugt", "ugt"), a, zero);
    }
    case ElementwiseOp::Gelu: {
      // 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
      Value* x3 = kb.op(OpKind::MulF, {a, kb.op(OpKind::MulF, {a, a}, t)}, t);
      Value* inner = kb.op(OpKind::MulF, {kb.constant(0.7978845608028654, t),
                                          kb.op(OpKind::AddF, {a, kb.op(OpKind::MulF, {kb.constant(0.044715, t), x3}, t)}, t)},
                           t);
      Value* th = math(kb, OpKind::Tanh, inner);
      return kb.op(OpKind::MulF, {kb.op(OpKind::MulF, {kb.constant(0.5, t), a}, t),
                                  kb.op(OpKind::AddF, {kb.constant(1.0, t), th}, t)},
                   t);
    }
    case ElementwiseOp::Silu: return kb.op(OpKind::MulF, {a, sigmoid(kb, a)}, t);
    case ElementwiseOp::Copy: return a;
    case ElementwiseOp::Lt: return cmp(kb, a, b, "slt", "ult", "olt");
    case ElementwiseOp::Le: return cmp(kb, a, b, "sle", "ule", "ole");
    case ElementwiseOp::Gt: return cmp(kb, a, b, "sgt", "ugt", "ogt");
    case ElementwiseOp::Ge: return cmp(kb, a, b, "sge", "uge", "oge");
    case ElementwiseOp::Eq: return cmp(kb, a, b, "eq", "eq", "oeq");
    case ElementwiseOp::Ne: return cmp(kb, a, b, "ne", "ne", "une");
    case ElementwiseOp::And: return kb.op(OpKind::AndI, {a, b}, t);
    case ElementwiseOp::Or: return kb.op(OpKind::OrI, {a, b}, t);
    case ElementwiseOp::Xor: return kb.op(OpKind::XOrI, {a, b}, t);
    case ElementwiseOp::Not:
      if (t.is_bool()) return kb.op(OpKind::XOrI, {a, kb.builder().constant_bool(true)}, t);
      return kb.op(OpKind::XOrI, {a, kb.builder().constant_int(-1, t)}, t);
    case ElementwiseOp::Select: return kb.select(a, b, operands[2]);
    case ElementwiseOp::Shl:
    case ElementwiseOp::Shr: {
      // NumPy's shifts: a count in [0, bits) shifts; any other (negative
      // ones compare as large unsigned numbers) gives 0, or for a right
      // shift of a negative signed value -1 (its sign bit shifted all the
      // way), as Lowering::shift does for numbers, never the hardware's
      // count modulo the width.
      bool left = fn == ElementwiseOp::Shl;
      OpKind kind = left ? OpKind::ShLI : u ? OpKind::ShRUI : OpKind::ShRSI;
      auto width = static_cast<int64_t>(scalar_info(t.scalar()).bits);
      Value* in_range = kb.op(OpKind::CmpI, {b, kb.builder().constant_int(width, t)}, context.bool_type(),
                              {{"predicate", context.string_attr("ult")}});
      Value* shifted = kb.op(kind, {a, kb.select(in_range, b, kb.builder().constant_int(0, t))}, t);
      Value* out = kind == OpKind::ShRSI ? kb.op(OpKind::ShRSI, {a, kb.builder().constant_int(width - 1, t)}, t)
                                         : kb.builder().constant_int(0, t);
      return kb.select(in_range, shifted, out);
    }
  }
  internal_error("generate-kernels", "an elementwise op without element code");
}

}  // namespace

}  // namespace tessera::ir
