#include "ir/core/verifier.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <span>

#include "ir/core/ir_text.h"
#include "ir/core/tile_attr_kinds.h"
#include "ir/core/tile_layout.h"

namespace tessera::ir {
namespace {

bool one_of(std::string_view value, std::initializer_list<std::string_view> options) {
  return std::find(options.begin(), options.end(), value) != options.end();
}

bool is_int_element(Type t) {
  if (t.is_index()) return true;
  if (t.is_scalar()) return t.is_int() || t.is_bool();
  if (t.is(TypeKind::Vector) || t.is(TypeKind::Tile) || t.is(TypeKind::Tensor))
    return !sema::is_float(t.scalar());
  return false;
}
bool is_float_element(Type t) {
  if (t.is_scalar()) return t.is_float();
  if (t.is(TypeKind::Vector) || t.is(TypeKind::Tile) || t.is(TypeKind::Tensor)) return sema::is_float(t.scalar());
  return false;
}
// Scalars and elementwise values (vector, tile, tensor) of one shape.
bool is_value_type(Type t) {
  return t.is_index() || t.is_scalar() || t.is(TypeKind::Vector) || t.is(TypeKind::Tile) || t.is(TypeKind::Tensor);
}
unsigned element_bits(Type t) { return t.is_index() ? 64 : sema::scalar_info(t.scalar()).bits; }
bool same_shape(Type a, Type b) {
  if (a.kind() != b.kind()) return false;
  if (!a.is_shaped()) return true;
  return std::equal(a.shape().begin(), a.shape().end(), b.shape().begin(), b.shape().end());
}
bool dims_compatible(std::span<const int64_t> a, std::span<const int64_t> b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i] != kDynamic && b[i] != kDynamic && a[i] != b[i]) return false;
  return true;
}
std::string types_text(const std::vector<Type>& types) {
  std::string s = "(";
  for (size_t i = 0; i < types.size(); ++i) s += (i ? ", " : "") + std::string(types[i].str());
  return s + ")";
}
std::vector<Type> value_types(const std::vector<Value*>& values) {
  std::vector<Type> types;
  for (Value* v : values) types.push_back(v ? v->type() : Type());
  return types;
}

class Verifier {
 public:
  std::vector<VerifyError> run(Operation* root) {
    root->walk([&](Operation* op) { verify_op(op); }, WalkOrder::PreOrder);
    return std::move(errors_);
  }

 private:
  // Records an error; returns false so rules can `return error(...)`.
  bool error(Operation* op, std::string message) {
    errors_.push_back({op, std::move(message)});
    return false;
  }

  void verify_op(Operation* op) {
    size_t before = errors_.size();
    verify_structure(op);
    if (errors_.size() == before) verify_rules(op);
  }

  // --- structure ----------------------------------------------------------------
  void verify_structure(Operation* op) {
    for (unsigned i = 0; i < op->num_operands(); ++i) {
      Value* v = op->operand(i);
      if (!v || !v->type()) {
        error(op, fmt::format("operand #{} is null", i));
        continue;
      }
      check_visible(op, i, v);
    }
    for (unsigned r = 0; r < op->num_regions(); ++r) {
      Region& region = op->region(r);
      if (region.num_blocks() > 1)
        error(op, fmt::format("region #{} has {} blocks; regions hold one block (structured control flow)", r,
                              region.num_blocks()));
      for (size_t b = 0; b < region.num_blocks(); ++b) {
        Block& block = region.block(b);
        for (Operation* nested : block) {
          bool last = nested == block.back();
          if (nested->has_trait(trait::Terminator) && !last)
            error(nested, "is a terminator but is not the last operation of its block");
        }
        if (!op->has_trait(trait::NoTerminator) && !block.terminator())
          error(op, fmt::format("region #{} does not end with a terminator", r));
      }
    }
  }

  void check_visible(Operation* user, unsigned index, Value* v) {
    Block* def_block = v->parent_block();
    if (!def_block || !def_block->parent()) {
      error(user, fmt::format("operand #{} is not defined", index));
      return;
    }
    for (Operation* at = user; at; at = at->parent_op()) {
      if (at->block() == def_block) {
        if (v->is_block_argument()) return;
        Operation* def = v->defining_op();
        if (def != at && def->is_before_in_block(at)) return;
        if (def == at && at != user) {
          error(user, fmt::format("operand #{} is a result of the enclosing '{}'; an operation's regions cannot use "
                                  "its results",
                                  index, at->name()));
          return;
        }
        error(user, fmt::format("operand #{} is used before it is defined", index));
        return;
      }
      if (at != user && at->has_trait(trait::IsolatedFromAbove)) break;
      if (at == user && user->has_trait(trait::IsolatedFromAbove)) break;
    }
    error(user, fmt::format("operand #{} is defined outside the scope where it is used", index));
  }

  // In a kernel with a group shape, a tile in the mma_acc layout
  // (ir/core/tile_layout.h) must split into whole 16 x 8 blocks over the
  // group's warps: the layout is defined by them (code generation needs it).
  void check_mma_layouts(Operation* func) {
    int64_t lanes = group_lanes(func);  // group_shape is checked before
    if (lanes == 0 || !func->has_attr("kernel")) return;
    auto check = [&](Operation* at, Value* v) {
      Type t = v->type();
      if (!t.is(TypeKind::Tile) || t.layout() != TileLayout::MmaAccumulator) return;
      if (t.rank() != 2 || !mma_accumulator_tiling(t.shape()[0], t.shape()[1], lanes))
        error(at, fmt::format("{} does not split into 16x8 blocks evenly over the {} lanes' warps", t.str(), lanes));
    };
    func->walk([&](Operation* op) {
      if (op == func) return;
      for (Value* r : op->results()) check(op, r);
      for (unsigned i = 0; i < op->num_regions(); ++i)
        for (size_t b = 0; b < op->region(i).num_blocks(); ++b)
          for (Value* a : op->region(i).block(b).arguments()) check(op, a);
    });
  }

  // --- per-operation rules ---------------------------------------------------------
  bool operands(Operation* op, unsigned n) {
    if (op->num_operands() != n)
      return error(op, fmt::format("expects {} operand{}, got {}", n, n == 1 ? "" : "s", op->num_operands()));
    return true;
  }
  bool min_operands(Operation* op, unsigned n) {
    if (op->num_operands() < n) return error(op, fmt::format("expects at least {} operands, got {}", n, op->num_operands()));
    return true;
  }
  bool results(Operation* op, unsigned n) {
    if (op->num_results() != n)
      return error(op, fmt::format("expects {} result{}, got {}", n, n == 1 ? "" : "s", op->num_results()));
    return true;
  }
  bool regions(Operation* op, unsigned n) {
    if (op->num_regions() != n)
      return error(op, fmt::format("expects {} region{}, got {}", n, n == 1 ? "" : "s", op->num_regions()));
    return true;
  }
  bool shape(Operation* op, unsigned n_operands, unsigned n_results, unsigned n_regions = 0) {
    return operands(op, n_operands) && results(op, n_results) && regions(op, n_regions);
  }
  Attribute attr(Operation* op, std::string_view name, AttributeKind kind, bool required = true) {
    Attribute a = op->attr(name);
    if (!a) {
      if (required) error(op, fmt::format("requires attribute '{}'", name));
      return a;
    }
    if (!a.is(kind)) {
      error(op, fmt::format("attribute '{}' has the wrong kind", name));
      return Attribute();
    }
    return a;
  }
  // An array attribute whose elements are all integers.
  Attribute int_array_attr(Operation* op, std::string_view name) {
    Attribute a = attr(op, name, AttributeKind::Array);
    if (!a) return a;
    for (size_t i = 0; i < a.size(); ++i)
      if (!a[i].is(AttributeKind::Integer)) {
        error(op, fmt::format("attribute '{}' must be an array of integers", name));
        return Attribute();
      }
    return a;
  }
  bool string_choice(Operation* op, std::string_view name, std::initializer_list<std::string_view> options,
                     bool required = true) {
    return string_choice(op, name, std::span<const std::string_view>(options.begin(), options.size()), required);
  }
  bool string_choice(Operation* op, std::string_view name, std::span<const std::string_view> options,
                     bool required = true) {
    Attribute a = attr(op, name, AttributeKind::String, required);
    if (!a) return !required && !op->attr(name);
    if (std::find(options.begin(), options.end(), a.string_value()) == options.end()) {
      std::string list;
      for (auto o : options) list += (list.empty() ? "" : ", ") + std::string(o);
      return error(op, fmt::format("attribute '{}' is \"{}\"; expected one of {}", name, a.string_value(), list));
    }
    return true;
  }
  bool axis_attr(Operation* op, int64_t limit) {
    Attribute a = attr(op, "axis", AttributeKind::Integer);
    if (!a) return false;
    if (a.int_value() < 0 || a.int_value() >= limit)
      return error(op, fmt::format("axis {} is out of range [0, {})", a.int_value(), limit));
    return true;
  }
  bool result_is(Operation* op, Type expected, std::string_view what) {
    if (op->result()->type() != expected)
      return error(op, fmt::format("result must be {} ({}), got {}", what, expected.str(), op->result()->type().str()));
    return true;
  }

  // Every operand and the result have one type; `element_ok` checks it.
  bool same_type_elementwise(Operation* op, unsigned n, bool (*element_ok)(Type), std::string_view what) {
    if (!shape(op, n, 1)) return false;
    Type t = op->result()->type();
    for (unsigned i = 0; i < n; ++i)
      if (op->operand(i)->type() != t)
        return error(op, fmt::format("operand #{} has type {} but the result has type {}; operands and result "
                                     "must have one type",
                                     i, op->operand(i)->type().str(), t.str()));
    if (!is_value_type(t) || !element_ok(t)) return error(op, fmt::format("expects {} values, got {}", what, t.str()));
    return true;
  }

  bool memref_indices(Operation* op, unsigned memref_index, unsigned first_index, unsigned count_after) {
    if (op->num_operands() <= memref_index) return error(op, "expects a memref operand");
    Type m = op->operand(memref_index)->type();
    if (!m.is(TypeKind::MemRef))
      return error(op, fmt::format("operand #{} must be a memref, got {}", memref_index, m.str()));
    unsigned indices = op->num_operands() - first_index - count_after;
    if (op->num_operands() < first_index + count_after || indices != m.rank())
      return error(op, fmt::format("expects {} index operand{} for {}, got {}", m.rank(), m.rank() == 1 ? "" : "s",
                                   m.str(), op->num_operands() < first_index + count_after ? 0 : indices));
    for (unsigned i = first_index; i < first_index + indices; ++i)
      if (!op->operand(i)->type().is_index())
        return error(op, fmt::format("index operand #{} must be index, got {}", i, op->operand(i)->type().str()));
    return true;
  }

  // Constant memory is filled by the host before the launch and read-only
  // for kernels: nothing may store into it or update it atomically.
  bool writable_memref(Operation* op, unsigned memref_index) {
    if (op->operand(memref_index)->type().space() != MemorySpace::Constant) return true;
    return error(op, "writes to constant memory, which is read-only for kernels");
  }

  bool check_yield(Operation* parent, Region& region, OpKind terminator, const std::vector<Type>& expected,
                   std::string_view what) {
    if (region.empty()) return true;
    Operation* t = region.front().terminator();
    if (!t) return true;  // reported structurally
    if (!t->is(terminator))
      return error(parent, fmt::format("{} must end with '{}', not '{}'", what, op_kind_name(terminator), t->name()));
    std::vector<Type> got = value_types(t->operands());
    if (terminator == OpKind::Condition) {
      if (got.empty() || !got[0].is_bool()) return error(t, "first operand must be the bool loop condition");
      got.erase(got.begin());
    }
    if (got != expected)
      return error(t, fmt::format("yields {} but {} expects {}", types_text(got), parent->name(), types_text(expected)));
    return true;
  }

  bool block_args(Operation* op, Region& region, const std::vector<Type>& expected, std::string_view what) {
    if (region.empty()) return error(op, fmt::format("{} is empty", what));
    std::vector<Type> got = value_types(region.front().arguments());
    if (got != expected)
      return error(op, fmt::format("{} takes arguments {}, expected {}", what, types_text(got), types_text(expected)));
    return true;
  }

  bool verify_cast(Operation* op, bool (*from_ok)(Type), bool (*to_ok)(Type), int width_rule, std::string_view what,
                   unsigned n_operands = 1) {
    if (!shape(op, n_operands, 1)) return false;
    Type from = op->operand(0)->type(), to = op->result()->type();
    if (!is_value_type(from) || !is_value_type(to) || !same_shape(from, to) || !from_ok(from) || !to_ok(to))
      return error(op, fmt::format("cannot convert {} to {}; {}", from.str(), to.str(), what));
    if (width_rule > 0 && element_bits(to) <= element_bits(from))
      return error(op, fmt::format("result {} must be wider than the operand {}", to.str(), from.str()));
    if (width_rule < 0 && element_bits(to) >= element_bits(from))
      return error(op, fmt::format("result {} must be narrower than the operand {}", to.str(), from.str()));
    return true;
  }

  static bool any_int(Type t) { return is_int_element(t) && !t.is_index(); }
  static bool any_float(Type t) { return is_float_element(t); }

  Operation* enclosing_func(Operation* op) { return op->enclosing(OpKind::Func); }

  static bool holds_regions(OpKind kind) {
    return kind == OpKind::Module || kind == OpKind::Func || kind == OpKind::For || kind == OpKind::If ||
           kind == OpKind::While || kind == OpKind::ScheduleTile || kind == OpKind::ScheduleFuse ||
           kind == OpKind::SchedulePipeline;
  }

  void verify_rules(Operation* op) {
    if (!holds_regions(op->kind()) && op->num_regions() > 0)
      return void(error(op, fmt::format("expects 0 regions, got {}", op->num_regions())));
    switch (op->kind()) {
      case OpKind::Module: {
        if (!regions(op, 1)) return;
        std::set<std::string_view> names;
        for (size_t b = 0; b < op->region(0).num_blocks(); ++b)
          for (Operation* nested : op->region(0).block(b)) {
            if (!nested->is(OpKind::Func)) {
              error(nested, "only functions may appear at module level");
              continue;
            }
            if (!names.insert(nested->symbol_name()).second)
              error(nested, fmt::format("redefines function '@{}'", nested->symbol_name()));
          }
        return;
      }
      case OpKind::Func: {
        if (!shape(op, 0, 0, 1)) return;
        if (!attr(op, "sym_name", AttributeKind::String)) return;
        Attribute ft = attr(op, "function_type", AttributeKind::Type);
        if (!ft) return;
        Type fn = ft.type();
        if (!fn.is(TypeKind::Function)) return void(error(op, "function_type must be a function type"));
        if (op->has_attr("kernel") && fn.num_results() > 0) error(op, "a kernel returns no values");
        if (Attribute g = op->attr("group_shape")) {
          if (!g.is(AttributeKind::Array) || g.size() < 1 || g.size() > 3)
            return void(error(op, "group_shape must be an array of 1 to 3 positive integers"));
          for (size_t i = 0; i < g.size(); ++i)
            if (!g[i].is(AttributeKind::Integer) || g[i].int_value() <= 0)
              return void(error(op, "group_shape must be an array of 1 to 3 positive integers"));
        }
        if (Attribute r = op->attr("grid_rank"))
          if (!r.is(AttributeKind::Integer) || r.int_value() < 1 || r.int_value() > 3)
            return void(error(op, "grid_rank must be 1, 2 or 3"));
        Region& body = op->region(0);
        if (body.empty()) return;
        check_mma_layouts(op);
        std::vector<Type> inputs;
        for (size_t i = 0; i < fn.num_inputs(); ++i) inputs.push_back(fn.input(i));
        block_args(op, body, inputs, "the entry block");
        return;
      }
      case OpKind::Return: {
        Operation* func = op->parent_op();
        if (!func || !func->is(OpKind::Func)) return void(error(op, "must be directly inside a 'func.func'"));
        Attribute signature = func->attr("function_type");
        if (!signature || !signature.is(AttributeKind::Type) || !signature.type().is(TypeKind::Function))
          return;  // reported at the function
        Type fn = signature.type();
        std::vector<Type> expected;
        for (size_t i = 0; i < fn.num_results(); ++i) expected.push_back(fn.result(i));
        std::vector<Type> got = value_types(op->operands());
        if (got != expected)
          error(op, fmt::format("returns {} but the function returns {}", types_text(got), types_text(expected)));
        return;
      }
      case OpKind::Call: {
        if (!regions(op, 0)) return;
        Attribute callee = attr(op, "callee", AttributeKind::Symbol);
        if (!callee) return;
        Operation* module = op->enclosing(OpKind::Module);
        Operation* target = module ? lookup_function(module, callee.string_value()) : nullptr;
        if (!target) return void(error(op, fmt::format("calls unknown function '@{}'", callee.string_value())));
        Attribute signature = target->attr("function_type");
        if (!signature || !signature.is(AttributeKind::Type) || !signature.type().is(TypeKind::Function))
          return;  // reported at the callee
        Type fn = signature.type();
        std::vector<Type> inputs, outputs;
        for (size_t i = 0; i < fn.num_inputs(); ++i) inputs.push_back(fn.input(i));
        for (size_t i = 0; i < fn.num_results(); ++i) outputs.push_back(fn.result(i));
        if (value_types(op->operands()) != inputs)
          return void(error(op, fmt::format("passes {} to '@{}', which takes {}", types_text(value_types(op->operands())),
                                            callee.string_value(), types_text(inputs))));
        if (op->result_types() != outputs)
          error(op, fmt::format("expects results {} from '@{}', which returns {}", types_text(op->result_types()),
                                callee.string_value(), types_text(outputs)));
        return;
      }
      case OpKind::Constant: {
        if (!shape(op, 0, 1)) return;
        Attribute v = op->attr("value");
        if (!v) return void(error(op, "requires attribute 'value'"));
        Type t = op->result()->type();
        bool ok = (v.is(AttributeKind::Integer) && v.type() == t) || (v.is(AttributeKind::Float) && v.type() == t) ||
                  (v.is(AttributeKind::Bool) && t.is_bool());
        if (!ok) error(op, fmt::format("value {} does not have the result type {}", v.str(), t.str()));
        return;
      }
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
      case OpKind::ShRUI: same_type_elementwise(op, 2, is_int_element, "integer or index"); return;
      case OpKind::AddF:
      case OpKind::SubF:
      case OpKind::MulF:
      case OpKind::DivF:
      case OpKind::RemF:
      case OpKind::MinF:
      case OpKind::MaxF:
      case OpKind::PowF: same_type_elementwise(op, 2, is_float_element, "float"); return;
      case OpKind::NegF:
      case OpKind::Exp:
      case OpKind::Log:
      case OpKind::Sqrt:
      case OpKind::Rsqrt:
      case OpKind::Tanh:
      case OpKind::Sin:
      case OpKind::Cos:
      case OpKind::Floor:
      case OpKind::Ceil:
      case OpKind::Round:
      case OpKind::AbsF: same_type_elementwise(op, 1, is_float_element, "float"); return;
      case OpKind::AbsI: same_type_elementwise(op, 1, is_int_element, "integer"); return;
      case OpKind::Fma: same_type_elementwise(op, 3, is_float_element, "float"); return;
      case OpKind::CmpI:
      case OpKind::CmpF: {
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
        return;
      }
      case OpKind::Select: {
        if (!shape(op, 3, 1)) return;
        Type c = op->operand(0)->type(), r = op->result()->type();
        if (op->operand(1)->type() != r || op->operand(2)->type() != r)
          return void(error(op, "both choices must have the result type"));
        if (!c.is_bool() && !(c.is_shaped() && c.scalar() == ScalarType::Bool && same_shape(c, r)))
          error(op, fmt::format("condition must be bool, got {}", c.str()));
        return;
      }
      case OpKind::ExtSI:
      case OpKind::ExtUI: verify_cast(op, any_int, any_int, 1, "integer extension widens integers"); return;
      case OpKind::TruncI: verify_cast(op, any_int, any_int, -1, "integer truncation narrows integers"); return;
      case OpKind::SIToFP:
      case OpKind::UIToFP: verify_cast(op, any_int, any_float, 0, "converts integers to floats"); return;
      case OpKind::FPToSI:
      case OpKind::FPToUI: verify_cast(op, any_float, any_int, 0, "converts floats to integers"); return;
      case OpKind::ExtF: verify_cast(op, any_float, any_float, 1, "float extension widens floats"); return;
      case OpKind::TruncF: {
        // Stochastic rounding takes a second operand: the random bits, one
        // i32 per element (docs/ir/core.md, "Conversions").
        bool stochastic = op->string_attr("rounding") == "stochastic";
        if (!verify_cast(op, any_float, any_float, -1, "float truncation narrows floats", stochastic ? 2 : 1)) return;
        string_choice(op, "rounding", {"nearest_even", "toward_zero", "down", "up", "nearest_away", "stochastic"},
                      false);
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
        return;
      }
      case OpKind::IndexCast: {
        if (!shape(op, 1, 1)) return;
        Type a = op->operand(0)->type(), b = op->result()->type();
        if (!((a.is_index() && b.is_int()) || (a.is_int() && b.is_index())))
          error(op, fmt::format("converts between index and an integer type, not {} to {}", a.str(), b.str()));
        return;
      }
      case OpKind::Bitcast: {
        if (!shape(op, 1, 1)) return;
        Type a = op->operand(0)->type(), b = op->result()->type();
        if (!a.is_scalar() || !b.is_scalar() || element_bits(a) != element_bits(b))
          error(op, fmt::format("reinterprets a scalar as another of the same width, not {} as {}", a.str(), b.str()));
        return;
      }
      case OpKind::For: {
        if (!min_operands(op, 3) || !regions(op, 1)) return;
        Type iv = op->operand(0)->type();
        if (!iv.is_index() && !iv.is_int()) return void(error(op, "bounds must be index or integer values"));
        if (op->operand(1)->type() != iv || op->operand(2)->type() != iv)
          return void(error(op, "lower bound, upper bound and step must have one type"));
        std::vector<Type> iters;
        for (unsigned i = 3; i < op->num_operands(); ++i) iters.push_back(op->operand(i)->type());
        if (op->result_types() != iters)
          return void(error(op, fmt::format("results {} must match the loop-carried values {}",
                                            types_text(op->result_types()), types_text(iters))));
        std::vector<Type> args{iv};
        args.insert(args.end(), iters.begin(), iters.end());
        if (!block_args(op, op->region(0), args, "the loop body")) return;
        check_yield(op, op->region(0), OpKind::Yield, iters, "the loop body");
        return;
      }
      case OpKind::If: {
        if (!operands(op, 1) || !regions(op, 2)) return;
        if (!op->operand(0)->type().is_bool())
          return void(error(op, fmt::format("condition must be bool, got {}", op->operand(0)->type().str())));
        if (op->region(0).empty()) return void(error(op, "the then-region is empty"));
        if (op->num_results() > 0 && op->region(1).empty())
          return void(error(op, "an 'scf.if' with results needs an else-region"));
        for (unsigned r = 0; r < 2; ++r) {
          if (!op->region(r).empty() && op->region(r).front().num_arguments() > 0)
            return void(error(op, "its regions take no arguments"));
          check_yield(op, op->region(r), OpKind::Yield, op->result_types(), r == 0 ? "the then-region" : "the else-region");
        }
        return;
      }
      case OpKind::While: {
        if (!regions(op, 2)) return;
        std::vector<Type> inits = value_types(op->operands());
        if (!block_args(op, op->region(0), inits, "the condition region")) return;
        if (!block_args(op, op->region(1), op->result_types(), "the body region")) return;
        check_yield(op, op->region(0), OpKind::Condition, op->result_types(), "the condition region");
        check_yield(op, op->region(1), OpKind::Yield, inits, "the body region");
        return;
      }
      case OpKind::Yield: {
        Operation* p = op->parent_op();
        if (!p || !(p->is(OpKind::For) || p->is(OpKind::If) || p->is(OpKind::While)))
          error(op, "must end the region of an 'scf.for', 'scf.if' or 'scf.while'");
        return;
      }
      case OpKind::Condition: {
        Operation* p = op->parent_op();
        if (!p || !p->is(OpKind::While) || &p->region(0) != op->parent_region())
          error(op, "must end the condition region of an 'scf.while'");
        return;
      }
      case OpKind::ScheduleYield: {
        Operation* p = op->parent_op();
        if (!p || !(p->is(OpKind::ScheduleTile) || p->is(OpKind::ScheduleFuse) || p->is(OpKind::SchedulePipeline)))
          error(op, "must end the region of a schedule operation");
        return;
      }

      // --- graph ---------------------------------------------------------------------
      case OpKind::GraphConstant: {
        if (!shape(op, 0, 1)) return;
        Attribute v = op->attr("value");
        if (!v || !(v.is(AttributeKind::Float) || v.is(AttributeKind::Integer) || v.is(AttributeKind::Bool)))
          return void(error(op, "requires a scalar attribute 'value' (splatted over the tensor)"));
        if (!op->result()->type().is(TypeKind::Tensor)) error(op, "result must be a tensor");
        return;
      }
      case OpKind::GraphElementwise: {
        if (!min_operands(op, 1) || !results(op, 1)) return;
        if (!string_choice(op, "op",
                           {"add", "sub", "mul", "div", "max", "min", "pow", "neg", "exp", "log", "sqrt", "rsqrt",
                            "tanh", "relu", "gelu", "sigmoid", "abs"}))
          return;
        std::string_view fn = op->string_attr("op");
        unsigned arity = one_of(fn, {"add", "sub", "mul", "div", "max", "min", "pow"}) ? 2 : 1;
        if (op->num_operands() != arity)
          return void(error(op, fmt::format("'{}' takes {} operand{}, got {}", fn, arity, arity == 1 ? "" : "s",
                                            op->num_operands())));
        for (Value* v : op->operands())
          if (!v->type().is(TypeKind::Tensor) && !v->type().is_scalar())
            return void(error(op, fmt::format("operands must be tensors or scalars, got {}", v->type().str())));
        if (!op->result()->type().is(TypeKind::Tensor)) error(op, "result must be a tensor");
        return;
      }
      case OpKind::GraphMatmul: {
        if (!shape(op, 2, 1)) return;
        Type a = op->operand(0)->type(), b = op->operand(1)->type(), r = op->result()->type();
        if (!a.is(TypeKind::Tensor) || !b.is(TypeKind::Tensor) || !r.is(TypeKind::Tensor))
          return void(error(op, "operands and result must be tensors"));
        if (a.rank() < 2 || b.rank() < 2) return void(error(op, "operands must have rank 2 or more"));
        int64_t k1 = a.shape()[a.rank() - 1], k2 = b.shape()[b.rank() - 2];
        if (k1 != kDynamic && k2 != kDynamic && k1 != k2)
          error(op, fmt::format("inner dimensions differ: {} and {}", k1, k2));
        return;
      }
      case OpKind::GraphReduce: {
        if (!shape(op, 1, 1)) return;
        if (!string_choice(op, "kind", {"sum", "mean", "max", "min"})) return;
        if (Attribute axes = int_array_attr(op, "axes")) {
          for (int64_t axis : axes.int_array())
            if (axis < 0 || static_cast<size_t>(axis) >= op->operand(0)->type().rank())
              return void(error(op, fmt::format("axis {} is out of range", axis)));
        }
        return;
      }
      case OpKind::GraphSoftmax: {
        if (!shape(op, 1, 1)) return;
        Type t = op->operand(0)->type();
        if (!t.is(TypeKind::Tensor)) return void(error(op, "operand must be a tensor"));
        axis_attr(op, static_cast<int64_t>(t.rank()));
        return;
      }
      case OpKind::GraphNorm: {
        if (!min_operands(op, 1) || !results(op, 1)) return;
        string_choice(op, "kind", {"rms", "layer"});
        attr(op, "eps", AttributeKind::Float);
        return;
      }
      case OpKind::GraphAttention: shape(op, 3, 1); return;
      case OpKind::GraphCast: {
        if (!shape(op, 1, 1)) return;
        Type a = op->operand(0)->type(), r = op->result()->type();
        if (!a.is(TypeKind::Tensor) || !r.is(TypeKind::Tensor) || !dims_compatible(a.shape(), r.shape()))
          error(op, "converts a tensor to a tensor of the same shape");
        return;
      }
      case OpKind::GraphRandom:
        if (!shape(op, 0, 1)) return;
        string_choice(op, "distribution", {"normal", "uniform"});
        return;
      case OpKind::GraphGrad: {
        if (!results(op, 1)) return;
        Attribute of = attr(op, "of", AttributeKind::Symbol);
        Operation* module = op->enclosing(OpKind::Module);
        if (of && module && !lookup_function(module, of.string_value()))
          error(op, fmt::format("differentiates unknown function '@{}'", of.string_value()));
        return;
      }
      case OpKind::GraphMesh: {
        if (!shape(op, 0, 1)) return;
        Attribute dims = int_array_attr(op, "shape");
        Attribute axes = attr(op, "axes", AttributeKind::Array);
        if (dims && axes && dims.size() != axes.size())
          error(op, "needs one axis name per mesh dimension");
        if (!op->result()->type().is(TypeKind::Opaque) || op->result()->type().opaque_name() != "mesh")
          error(op, "result must be opaque<\"mesh\">");
        return;
      }
      case OpKind::GraphShard: {
        if (!shape(op, 2, 1)) return;
        if (!op->operand(1)->type().is(TypeKind::Opaque)) return void(error(op, "operand #1 must be a mesh"));
        Attribute spec = attr(op, "spec", AttributeKind::Array);
        if (spec && spec.size() != op->operand(0)->type().rank())
          error(op, fmt::format("the sharding spec names {} dimensions for a rank-{} tensor", spec.size(),
                                op->operand(0)->type().rank()));
        return;
      }
      case OpKind::GraphAllReduce:
      case OpKind::GraphReduceScatter:
        if (!shape(op, 1, 1)) return;
        string_choice(op, "op", {"sum", "max", "min", "mean"});
        attr(op, "axis", AttributeKind::String);
        return;
      case OpKind::GraphAllGather:
      case OpKind::GraphBroadcast:
        if (!shape(op, 1, 1)) return;
        attr(op, "axis", AttributeKind::String);
        return;
      case OpKind::GraphSend:
        if (!shape(op, 1, 0)) return;
        attr(op, "peer", AttributeKind::Integer);
        return;
      case OpKind::GraphRecv:
        if (!shape(op, 0, 1)) return;
        attr(op, "peer", AttributeKind::Integer);
        return;
      case OpKind::GraphPrint: results(op, 0); return;

      // --- schedule ------------------------------------------------------------------
      case OpKind::ScheduleTile:
      case OpKind::ScheduleFuse:
      case OpKind::SchedulePipeline: {
        if (!regions(op, 1)) return;
        if (op->region(0).empty()) return void(error(op, "the region is empty"));
        if (op->is(OpKind::ScheduleTile)) {
          Attribute sizes = int_array_attr(op, "sizes");
          if (sizes)
            for (int64_t s : sizes.int_array())
              if (s <= 0) return void(error(op, "tile sizes must be positive"));
        }
        if (op->is(OpKind::SchedulePipeline)) {
          Attribute stages = attr(op, "stages", AttributeKind::Integer);
          if (stages && stages.int_value() < 1) return void(error(op, "needs at least one stage"));
        }
        check_yield(op, op->region(0), OpKind::ScheduleYield, op->result_types(), "the region");
        return;
      }
      case OpKind::SchedulePrefetch: {
        if (!shape(op, 1, 0)) return;
        Attribute d = attr(op, "distance", AttributeKind::Integer);
        if (d && d.int_value() < 1) error(op, "prefetch distance must be at least 1");
        return;
      }
      case OpKind::ScheduleKnob: {
        if (!shape(op, 0, 1)) return;
        attr(op, "name", AttributeKind::String);
        Attribute c = attr(op, "candidates", AttributeKind::Array);
        if (c && c.size() == 0) error(op, "needs at least one candidate");
        if (!op->result()->type().is_index()) error(op, "result must be index");
        return;
      }

      // --- tile ----------------------------------------------------------------------
      case OpKind::LinearId:
      case OpKind::LaneId:
      case OpKind::WarpId:
        if (shape(op, 0, 1) && !op->result()->type().is_index()) error(op, "result must be index");
        return;
      case OpKind::LocalId:
      case OpKind::GroupId:
      case OpKind::GroupSize:
      case OpKind::NumGroups:
        if (!shape(op, 0, 1)) return;
        if (!op->result()->type().is_index()) return void(error(op, "result must be index"));
        axis_attr(op, 3);
        return;
      case OpKind::Dim: {
        if (!shape(op, 1, 1)) return;
        Type m = op->operand(0)->type();
        if (!m.is(TypeKind::MemRef) && !m.is(TypeKind::Tensor))
          return void(error(op, "operand must be a memref or tensor"));
        if (!axis_attr(op, static_cast<int64_t>(m.rank()))) return;
        if (!op->result()->type().is_index()) error(op, "result must be index");
        return;
      }
      case OpKind::AllocShared:
      case OpKind::AllocLocal: {
        if (!shape(op, 0, 1)) return;
        Type m = op->result()->type();
        MemorySpace want = op->is(OpKind::AllocShared) ? MemorySpace::Shared : MemorySpace::Local;
        if (!m.is(TypeKind::MemRef) || m.space() != want || !m.has_static_shape())
          return void(error(op, fmt::format("result must be a statically shaped memref in {} memory, got {}",
                                            memory_space_name(want), m.str())));
        if (Attribute a = op->attr("alignment")) {
          if (!a.is(AttributeKind::Integer) || a.int_value() <= 0 || (a.int_value() & (a.int_value() - 1)) != 0)
            error(op, "alignment must be a positive power of two");
        }
        if (Attribute o = op->attr("offset")) {
          if (!o.is(AttributeKind::Integer) || o.int_value() < 0) error(op, "offset must be a non-negative integer");
        }
        return;
      }
      case OpKind::Subview: {
        if (!results(op, 1) || !memref_indices(op, 0, 1, 0)) return;
        Type m = op->operand(0)->type(), r = op->result()->type();
        Attribute sizes = int_array_attr(op, "sizes");
        if (!sizes) return;
        std::vector<int64_t> s = sizes.int_array();
        if (s.size() != m.rank()) return void(error(op, "needs one size per dimension"));
        // `drop`: source dimensions (increasing, each of size 1) left out of
        // the result, a rank-reducing view.
        std::vector<int64_t> shape = s;
        if (op->attr("drop")) {
          Attribute drop = int_array_attr(op, "drop");
          if (!drop) return;
          std::vector<int64_t> d = drop.int_array();
          for (size_t i = 0; i < d.size(); ++i) {
            if (d[i] < 0 || d[i] >= static_cast<int64_t>(s.size()) || (i > 0 && d[i] <= d[i - 1]) ||
                s[static_cast<size_t>(d[i])] != 1)
              return void(error(op, "'drop' must list increasing dimensions of size 1"));
          }
          for (size_t i = d.size(); i-- > 0;) shape.erase(shape.begin() + d[i]);
        }
        if (!r.is(TypeKind::MemRef) || r.scalar() != m.scalar() || r.space() != m.space() ||
            !std::equal(shape.begin(), shape.end(), r.shape().begin(), r.shape().end()))
        {
          std::string dims;
          for (int64_t d : shape) dims += (dims.empty() ? "" : "x") + std::to_string(d);
          error(op, fmt::format("result must be a memref of shape {} with the source's element type and memory space",
                                dims));
        }
        return;
      }
      case OpKind::Barrier: shape(op, 0, 0); return;
      case OpKind::Load: {
        if (!results(op, 1) || !memref_indices(op, 0, 1, 0)) return;
        Type m = op->operand(0)->type();
        if (!op->result()->type().is_scalar() || op->result()->type().scalar() != m.scalar())
          error(op, fmt::format("result must be the element type {}", sema::scalar_info(m.scalar()).name));
        return;
      }
      case OpKind::Store: {
        if (!results(op, 0) || !memref_indices(op, 1, 2, 0) || !writable_memref(op, 1)) return;
        Type v = op->operand(0)->type(), m = op->operand(1)->type();
        if (!v.is_scalar() || v.scalar() != m.scalar())
          error(op, fmt::format("stores {} into a memref of {}", v.str(), sema::scalar_info(m.scalar()).name));
        return;
      }
      case OpKind::LoadVector: {
        if (!results(op, 1) || !memref_indices(op, 0, 1, 0)) return;
        Type m = op->operand(0)->type(), r = op->result()->type();
        if (!r.is(TypeKind::Vector) || r.scalar() != m.scalar())
          error(op, fmt::format("result must be a vector of {}", sema::scalar_info(m.scalar()).name));
        return;
      }
      case OpKind::StoreVector: {
        if (!results(op, 0) || !memref_indices(op, 1, 2, 0) || !writable_memref(op, 1)) return;
        Type v = op->operand(0)->type(), m = op->operand(1)->type();
        if (!v.is(TypeKind::Vector) || v.scalar() != m.scalar())
          error(op, fmt::format("stores {} into a memref of {}", v.str(), sema::scalar_info(m.scalar()).name));
        return;
      }
      case OpKind::CpAsync: {
        if (!shape(op, 2, 1)) return;
        Type d = op->operand(0)->type(), s = op->operand(1)->type();
        if (!d.is(TypeKind::MemRef) || d.space() != MemorySpace::Shared)
          return void(error(op, "destination must be a shared memref"));
        if (!s.is(TypeKind::MemRef) || s.space() != MemorySpace::Global)
          return void(error(op, "source must be a global memref"));
        if (d.scalar() != s.scalar()) return void(error(op, "source and destination must have one element type"));
        if (!dims_compatible(d.shape(), s.shape()))
          return void(error(op, fmt::format("copies {} into {}; shapes differ", s.str(), d.str())));
        if (!op->result()->type().is(TypeKind::Token)) error(op, "result must be a token");
        return;
      }
      case OpKind::CpCommitGroup:
        if (!results(op, 1)) return;
        for (Value* v : op->operands())
          if (!v->type().is(TypeKind::Token)) return void(error(op, "operands must be the tokens of async copies"));
        if (!op->result()->type().is(TypeKind::Token)) error(op, "result must be a token");
        return;
      case OpKind::CpWaitGroup: {
        if (!shape(op, 0, 0)) return;
        Attribute p = attr(op, "pending", AttributeKind::Integer);
        if (p && p.int_value() < 0) error(op, "pending must be non-negative");
        return;
      }
      case OpKind::Atomic: {
        if (!results(op, 1) || !memref_indices(op, 0, 1, 1) || !writable_memref(op, 0)) return;
        if (!string_choice(op, "kind", kAtomicKindNames)) return;
        Type m = op->operand(0)->type(), v = op->operand(op->num_operands() - 1)->type();
        if (!v.is_scalar() || v.scalar() != m.scalar() || op->result()->type() != v)
          return void(error(op, fmt::format("value and result must be the element type {}",
                                            sema::scalar_info(m.scalar()).name)));
        if (atomic_integers_only(atomic_kind(*op)) && !is_int_element(v))
          error(op, fmt::format("atomic '{}' needs an integer element type, got {}", op->string_attr("kind"), v.str()));
        return;
      }
      case OpKind::AtomicCas: {
        if (!results(op, 1) || !memref_indices(op, 0, 1, 2) || !writable_memref(op, 0)) return;
        Type m = op->operand(0)->type();
        Type c = op->operand(op->num_operands() - 2)->type(), n = op->operand(op->num_operands() - 1)->type();
        if (c != n || !c.is_scalar() || c.scalar() != m.scalar() || op->result()->type() != c)
          error(op, fmt::format("compare, new value and result must be the element type {}",
                                sema::scalar_info(m.scalar()).name));
        return;
      }
      case OpKind::Shuffle: {
        if (!shape(op, 2, 1)) return;
        if (!string_choice(op, "mode", kShuffleModeNames)) return;
        Type v = op->operand(0)->type();
        if (!v.is_scalar() && !v.is_index()) return void(error(op, "shuffles a scalar value"));
        if (op->result()->type() != v) return void(error(op, "result must have the operand's type"));
        Type off = op->operand(1)->type();
        if (!off.is_index() && !off.is_int()) error(op, "offset must be an integer");
        return;
      }
      case OpKind::WarpReduce: {
        if (!shape(op, 1, 1)) return;
        if (!string_choice(op, "kind", kWarpReduceKindNames)) return;
        Type v = op->operand(0)->type();
        if (!v.is_scalar() || op->result()->type() != v) error(op, "reduces a scalar to the same type");
        return;
      }
      case OpKind::RandomBits: {
        if (!shape(op, 2, 1)) return;
        if (!op->operand(0)->type().is_scalar() || op->operand(0)->type().scalar() != ScalarType::I64 ||
            !op->operand(1)->type().is_scalar() || op->operand(1)->type().scalar() != ScalarType::I64)
          return void(error(op, "takes a seed and a counter, both i64"));
        if (!op->result()->type().is_scalar() || op->result()->type().scalar() != ScalarType::I32)
          error(op, "result must be i32");
        return;
      }
      case OpKind::Splat: {
        if (!shape(op, 1, 1)) return;
        Type v = op->operand(0)->type(), r = op->result()->type();
        if (!v.is_scalar() || !(r.is(TypeKind::Tile) || r.is(TypeKind::Vector)) || r.scalar() != v.scalar())
          error(op, fmt::format("splats a scalar into a tile or vector of it, not {} into {}", v.str(), r.str()));
        return;
      }
      case OpKind::Mma: {
        if (!results(op, 1)) return;
        if (op->num_operands() != 2 && op->num_operands() != 3)
          return void(error(op, fmt::format("expects 2 or 3 operands (a, b, accumulator), got {}", op->num_operands())));
        Type a = op->operand(0)->type(), b = op->operand(1)->type(), r = op->result()->type();
        for (Type t : {a, b})
          if (!(t.is(TypeKind::Tile) || (t.is(TypeKind::MemRef) && t.space() == MemorySpace::Shared)) || t.rank() != 2 ||
              !t.has_static_shape())
            return void(error(op, fmt::format("operands must be static 2-D tiles or shared memrefs, got {}", t.str())));
        if (!r.is(TypeKind::Tile) || r.rank() != 2) return void(error(op, "result must be a 2-D tile"));
        if (a.shape()[1] != b.shape()[0])
          return void(error(op, fmt::format("inner dimensions differ: {} and {}", a.shape()[1], b.shape()[0])));
        if (r.shape()[0] != a.shape()[0] || r.shape()[1] != b.shape()[1])
          return void(error(op, fmt::format("result must be {}x{}, got {}", a.shape()[0], b.shape()[1], r.str())));
        if (a.scalar() != b.scalar()) return void(error(op, "a and b must have one element type"));
        if (op->num_operands() == 3 && op->operand(2)->type() != r)
          error(op, "the accumulator must have the result type");
        return;
      }
      case OpKind::StoreTile: {
        if (!shape(op, 2, 0)) return;
        Type t = op->operand(0)->type(), m = op->operand(1)->type();
        if (!t.is(TypeKind::Tile) || !m.is(TypeKind::MemRef)) return void(error(op, "stores a tile into a memref"));
        if (!writable_memref(op, 1)) return;
        if (!dims_compatible(t.shape(), m.shape()))
          return void(error(op, fmt::format("stores {} into {}; shapes differ", t.str(), m.str())));
        if (t.scalar() != m.scalar()) error(op, "tile and memref must have one element type");
        return;
      }
    }
  }

  std::vector<VerifyError> errors_;
};

}  // namespace

std::vector<VerifyError> verify(Operation* root) { return Verifier().run(root); }

bool verify_and_report(Operation* root, DiagnosticEngine& diags) {
  auto errors = verify(root);
  for (auto& e : errors) {
    SourceRange range = location_range(diags.sources(), e.op->loc());
    if (range.begin != 0)
      diags.emit<diag::IrVerifyError>(range, std::string(e.op->name()), e.message);
    else
      diags.emit_global<diag::IrVerifyError>(std::string(e.op->name()), e.message + " (at " +
                                                                            std::string(e.op->loc().str()) + ")");
  }
  return errors.empty();
}

}  // namespace tessera::ir
