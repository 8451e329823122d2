// The rules of the arith and math operations (verifier_rules.h; docs/ir/core.md).
#include <fmt/format.h>

#include "ir/core/tile_attr_kinds.h"
#include "ir/core/verifier_rules.h"

namespace tessera::ir::verification {

// 'arith.constant'
void Verifier::verify_constant(Operation* op) {
  if (!shape(op, 0, 1)) return;
  Attribute v = op->attr("value");
  if (!v) return void(error(op, "requires attribute 'value'"));
  Type t = op->result()->type();
  bool ok = (v.is(AttributeKind::Integer) && v.type() == t) || (v.is(AttributeKind::Float) && v.type() == t) ||
            (v.is(AttributeKind::Bool) && t.is_bool());
  if (!ok) error(op, fmt::format("value {} does not have the result type {}", v.str(), t.str()));
}

// 'arith.addi', 'arith.subi', 'arith.muli', 'arith.divsi', 'arith.divui', 'arith.floordivsi', 'arith.remsi',
// 'arith.remui', 'arith.minsi', 'arith.maxsi', 'arith.minui', 'arith.maxui', 'arith.andi', 'arith.ori',
// 'arith.xori', 'arith.shli', 'arith.shrsi', 'arith.shrui'
void Verifier::verify_int_elementwise(Operation* op) {
  same_type_elementwise(op, 2, is_int_element, "integer or index");
}

// 'arith.addf', 'arith.subf', 'arith.mulf', 'arith.divf', 'arith.remf', 'arith.minf', 'arith.maxf',
// 'math.powf'
void Verifier::verify_float_binary(Operation* op) {
  same_type_elementwise(op, 2, is_float_element, "float");
}

// 'arith.negf', 'math.exp', 'math.log', 'math.sqrt', 'math.rsqrt', 'math.tanh', 'math.sin', 'math.cos',
// 'math.floor', 'math.ceil', 'math.round', 'math.absf'
void Verifier::verify_float_unary(Operation* op) {
  same_type_elementwise(op, 1, is_float_element, "float");
}

// 'math.absi'
void Verifier::verify_abs_int(Operation* op) {
  same_type_elementwise(op, 1, is_int_element, "integer");
}

// 'math.fma'
void Verifier::verify_fma(Operation* op) {
  same_type_elementwise(op, 3, is_float_element, "float");
}

// 'arith.cmpi', 'arith.cmpf'
void Verifier::verify_compare(Operation* op) {
  if (!shape(op, 2, 1)) return;
  Type t = op->operand(0)->type();
  if (op->operand(1)->type() != t)
    return void(error(op, fmt::format("compares {} with {}; operands must have one type", t.str(),
                                      op->operand(1)->type().str())));
  bool ints = op->is(OpKind::CmpI);
  if (ints ? !is_int_element(t) : !is_float_element(t))
    return void(error(op, fmt::format("expects {} operands, got {}", ints ? "integer or index" : "float", t.str())));
  if (ints)
    string_choice(op, "predicate", {"eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge"});
  else
    string_choice(op, "predicate",
                  {"oeq", "one", "olt", "ole", "ogt", "oge", "ueq", "une", "ult", "ule", "ugt", "uge", "ord", "uno"});
  Type r = op->result()->type();
  if (!(t.is_scalar() || t.is_index() ? r.is_bool() : (same_shape(r, t) && r.scalar() == ScalarType::Bool)))
    error(op, fmt::format("result must be bool (elementwise for {}), got {}", t.str(), r.str()));
}

// 'arith.select'
void Verifier::verify_select(Operation* op) {
  if (!shape(op, 3, 1)) return;
  Type c = op->operand(0)->type(), r = op->result()->type();
  if (op->operand(1)->type() != r || op->operand(2)->type() != r)
    return void(error(op, "both choices must have the result type"));
  if (!c.is_bool() && !(c.is_shaped() && c.scalar() == ScalarType::Bool && same_shape(c, r)))
    error(op, fmt::format("condition must be bool, got {}", c.str()));
}

// 'arith.extsi', 'arith.extui'
void Verifier::verify_int_extension(Operation* op) {
  verify_cast(op, any_int, any_int, 1, "integer extension widens integers");
}

// 'arith.trunci'
void Verifier::verify_int_truncation(Operation* op) {
  verify_cast(op, any_int, any_int, -1, "integer truncation narrows integers");
}

// 'arith.sitofp', 'arith.uitofp'
void Verifier::verify_int_to_float(Operation* op) {
  verify_cast(op, any_int, any_float, 0, "converts integers to floats");
}

// 'arith.fptosi', 'arith.fptoui'
void Verifier::verify_float_to_int(Operation* op) {
  verify_cast(op, any_float, any_int, 0, "converts floats to integers");
}

// 'arith.extf'
void Verifier::verify_float_extension(Operation* op) {
  verify_cast(op, any_float, any_float, 1, "float extension widens floats");
}

// 'arith.truncf'
void Verifier::verify_float_truncation(Operation* op) {
  // Stochastic rounding takes a second operand: the random bits, one
  // i32 per element (docs/ir/core.md, "Conversions").
  bool stochastic = parse_rounding_mode(*op) == RoundingMode::Stochastic;
  if (!verify_cast(op, any_float, any_float, -1, "float truncation narrows floats", stochastic ? 2 : 1)) return;
  string_choice(op, "rounding", kRoundingModeNames, false);
  if (op->has_attr("saturate") && !op->attr("saturate").is(AttributeKind::Unit))
    error(op, "attribute 'saturate' is a flag");
  if (stochastic) {
    Type bits = op->operand(1)->type(), value = op->operand(0)->type();
    bool ok = bits.is_scalar() || bits.is_shaped() ? bits.scalar() == ScalarType::I32 && same_shape(bits, value) &&
                                                       bits.kind() == value.kind()
                                                 : false;
    if (!ok)
      error(op, fmt::format("stochastic rounding takes the random bits as i32 of the operand's shape, got {}",
                            bits.str()));
  }
}

// 'arith.index_cast'
void Verifier::verify_index_cast(Operation* op) {
  if (!shape(op, 1, 1)) return;
  Type a = op->operand(0)->type(), b = op->result()->type();
  if (!((a.is_index() && b.is_int()) || (a.is_int() && b.is_index())))
    error(op, fmt::format("converts between index and an integer type, not {} to {}", a.str(), b.str()));
}

// 'arith.bitcast'
void Verifier::verify_bitcast(Operation* op) {
  if (!shape(op, 1, 1)) return;
  Type a = op->operand(0)->type(), b = op->result()->type();
  if (!a.is_scalar() || !b.is_scalar() || element_bits(a) != element_bits(b))
    error(op, fmt::format("reinterprets a scalar as another of the same width, not {} as {}", a.str(), b.str()));
}

}  // namespace tessera::ir::verification
