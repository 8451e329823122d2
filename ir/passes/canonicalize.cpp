// canonicalize: folds constants, applies algebraic identities, resolves
// control flow with constant conditions, and puts constants on the right of
// commutative operations; repeats until nothing changes (docs/ir/passes.md).
#include <cmath>
#include <optional>

#include "ir/passes/fold.h"
#include "ir/passes/passes.h"

namespace tessera::ir {
namespace {

class Canonicalizer {
 public:
  explicit Canonicalizer(Context& context) : ctx_(context) {}

  // Simplifies `op`, which may be erased; true when anything changed.
  bool simplify(Operation* op) {
    // Folding leaves the operands' definitions unused; drop them as MLIR's
    // canonicalizer does, so that folded code reads as folded.
    if (trivially_dead(op)) {
      op->erase();
      return true;
    }
    if (op->has_trait(trait::ConstantLike)) return false;
    if (op->is(OpKind::If)) return simplify_if(op);
    if (op->is(OpKind::For)) return simplify_for(op);
    if (!op->has_trait(trait::Pure) || op->num_results() != 1 || op->num_regions() != 0) return false;

    std::vector<Attribute> constants;
    for (Value* v : op->operands()) constants.push_back(constant_value(v));
    if (Attribute folded = fold(ctx_, op, constants)) {
      replace(op, constant(folded, op));
      return true;
    }
    if (op->has_trait(trait::Commutative) && op->num_operands() == 2 && constants[0] && !constants[1]) {
      Value* lhs = op->operand(0);
      op->set_operand(0, op->operand(1));
      op->set_operand(1, lhs);
      return true;
    }
    if (Value* v = identity(op)) {
      replace(op, v);
      return true;
    }
    return false;
  }

 private:
  static bool trivially_dead(Operation* op) {
    if (!op->has_trait(trait::Pure) || op->has_trait(trait::Terminator) || op->num_regions() != 0 ||
        op->num_results() == 0)
      return false;
    for (Value* r : op->results())
      if (r->has_uses()) return false;
    return true;
  }

  Value* constant(Attribute value, Operation* before) {
    Type type = before->result()->type();
    Operation* c = Operation::create(OpKind::Constant, before->loc(), {}, std::span<const Type>(&type, 1),
                                     {{"value", value}});
    before->block()->insert_before(before, c);
    return c->result();
  }
  void replace(Operation* op, Value* with) {
    op->result()->replace_all_uses_with(with);
    op->erase();
  }

  static bool is_int(Attribute a, int64_t v) {
    return (a.is(AttributeKind::Integer) && a.int_value() == v) || (a.is(AttributeKind::Bool) && a.bool_value() == (v != 0));
  }
  static bool is_float(Attribute a, double v, bool negative_zero = false) {
    return a.is(AttributeKind::Float) && a.float_value() == v && std::signbit(a.float_value()) == negative_zero;
  }

  // The value `op` is equal to by an algebraic identity, or null.
  Value* identity(Operation* op) {
    auto operands = op->operands();
    Attribute rhs = operands.size() >= 2 ? constant_value(operands[1]) : Attribute();
    bool scalar = op->result()->type().is_scalar() || op->result()->type().is_index();
    switch (op->kind()) {
      case OpKind::AddI:
      case OpKind::OrI:
      case OpKind::XOrI:
      case OpKind::ShLI:
      case OpKind::ShRSI:
      case OpKind::ShRUI:
        if (rhs && is_int(rhs, 0)) return operands[0];  // x + 0, x | 0, x ^ 0, x << 0
        if (op->is(OpKind::OrI) && operands[0] == operands[1]) return operands[0];
        if (op->is(OpKind::XOrI) && operands[0] == operands[1] && scalar)
          return constant(zero(op->result()->type()), op);
        return nullptr;
      case OpKind::SubI:
        if (rhs && is_int(rhs, 0)) return operands[0];
        if (operands[0] == operands[1] && scalar) return constant(zero(op->result()->type()), op);  // x - x
        return nullptr;
      case OpKind::MulI:
        if (rhs && is_int(rhs, 1)) return operands[0];
        if (rhs && is_int(rhs, 0)) return operands[1];  // x * 0: the zero itself (integers only)
        return nullptr;
      case OpKind::DivSI:
      case OpKind::DivUI:
        if (rhs && is_int(rhs, 1)) return operands[0];
        return nullptr;
      case OpKind::AndI:
        if (rhs && is_int(rhs, 0)) return operands[1];  // x & 0: the zero itself
        [[fallthrough]];
      case OpKind::MinSI:
      case OpKind::MaxSI:
      case OpKind::MinUI:
      case OpKind::MaxUI:
        if (operands[0] == operands[1]) return operands[0];
        return nullptr;
      // Float identities that hold for every input, signed zeros and NaNs included.
      case OpKind::MulF:
        if (rhs && is_float(rhs, 1.0)) return operands[0];  // x * 1.0
        return nullptr;
      case OpKind::AddF:
        if (rhs && is_float(rhs, 0.0, /*negative_zero=*/true)) return operands[0];  // x + -0.0
        return nullptr;
      case OpKind::SubF:
        if (rhs && is_float(rhs, 0.0)) return operands[0];  // x - +0.0
        return nullptr;
      case OpKind::Select: {
        if (operands[1] == operands[2]) return operands[1];
        Attribute c = constant_value(operands[0]);
        if (c && c.is(AttributeKind::Bool)) return c.bool_value() ? operands[1] : operands[2];
        return nullptr;
      }
      case OpKind::CmpI: {
        if (operands[0] != operands[1] || !scalar) return nullptr;
        std::string_view p = op->string_attr("predicate");
        bool holds = p == "eq" || p == "sle" || p == "sge" || p == "ule" || p == "uge";
        return constant(ctx_.bool_attr(holds), op);
      }
      default: return nullptr;
    }
  }

  Attribute zero(Type t) { return t.is_bool() ? ctx_.bool_attr(false) : ctx_.int_attr(0, t); }

  // Moves the operations of `region` (but its terminator) before `op` and
  // returns the terminator's operands.
  static std::vector<Value*> inline_before(Region& region, Operation* op) {
    Block& block = region.front();
    Operation* terminator = block.terminator();
    std::vector<Value*> yielded = terminator ? terminator->operands() : std::vector<Value*>();
    for (Operation* nested : block)
      if (nested != terminator) nested->move_before(op);
    return yielded;
  }
  static void replace_results(Operation* op, const std::vector<Value*>& values) {
    for (unsigned i = 0; i < op->num_results(); ++i) op->result(i)->replace_all_uses_with(values[i]);
    op->erase();
  }

  // scf.if with a constant condition: the taken region, inline.
  bool simplify_if(Operation* op) {
    Attribute c = constant_value(op->operand(0));
    if (!c || !c.is(AttributeKind::Bool)) return false;
    Region& taken = op->region(c.bool_value() ? 0 : 1);
    std::vector<Value*> values;
    if (!taken.empty()) values = inline_before(taken, op);
    replace_results(op, values);
    return true;
  }

  // scf.for that runs zero times (constant lower bound >= upper bound, compared
  // as the bounds' type is signed or not): its init values. The body's
  // effects never happen, so even stores and barriers in it go.
  bool simplify_for(Operation* op) {
    Attribute lb = constant_value(op->operand(0)), ub = constant_value(op->operand(1));
    std::optional<bool> runs = constant_less_than(lb, ub, op->operand(0)->type());
    if (!runs || *runs) return false;
    std::vector<Value*> inits;
    for (unsigned i = 3; i < op->num_operands(); ++i) inits.push_back(op->operand(i));
    replace_results(op, inits);
    return true;
  }

  Context& ctx_;
};

}  // namespace

void run_canonicalize_pass(Operation* module, PassContext& context) {
  Canonicalizer canonicalizer(context.context);
  // Each change erases an operation or moves a constant right, so this ends;
  // the bound is a guard against a pattern that would undo another.
  for (int round = 0; round < 64; ++round) {
    bool changed = false;
    for (Operation* func : module_functions(module))
      func->walk([&](Operation* op) { changed |= canonicalizer.simplify(op); }, WalkOrder::PostOrder);
    if (!changed) return;
  }
}

}  // namespace tessera::ir
