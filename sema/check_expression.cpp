// Sema: expressions, names, promotion rules and builtin calls.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "support/diagnostics/internal_error.h"
#include "sema/checker.h"
#include "support/format_spec.h"
#include "support/percent_format.h"

namespace tessera::sema {

std::string dotted_path_of(const Ast& ast, const ValueStores& values, NodeId node);

namespace {

// Python builtins that host code may use; they type as dynamic values.
bool is_python_builtin(std::string_view name) {
  return name == "dict" || name == "len" || name == "int" || name == "float" || name == "bool" || name == "list" ||
         name == "tuple" || name == "str" || name == "isinstance";
}

// Whether two expressions are written the same (`t * 64` and `t * 64`).
// A literal's payload indexes its own entry in the value stores, so two
// occurrences of `64` differ in payload: literals compare by value.
bool same_tree(const Ast& ast, const ValueStores& values, NodeId a, NodeId b) {
  if (a.valid() != b.valid()) return false;
  if (!a.valid()) return true;
  const Node& x = ast.node(a);
  const Node& y = ast.node(b);
  if (x.kind != y.kind || x.op != y.op || x.children_count != y.children_count) return false;
  switch (x.kind) {
    case NodeKind::IntLiteral:
    case NodeKind::SizeLiteral:
      if (values.integers[x.payload] != values.integers[y.payload]) return false;
      break;
    case NodeKind::FloatLiteral:
      if (values.reals[x.payload] != values.reals[y.payload]) return false;
      break;
    case NodeKind::StringLiteral:
      if (values.strings[x.payload] != values.strings[y.payload]) return false;
      break;
    default:
      if (x.payload != y.payload) return false;
  }
  for (size_t i = 0; i < x.children_count; ++i) {
    if (!same_tree(ast, values, ast.child(a, i), ast.child(b, i))) return false;
  }
  return true;
}

uint64_t storage_bytes(ScalarType type, uint64_t count) {
  return (count * scalar_info(type).bits + 7) / 8;
}

}  // namespace

TypeId Checker::default_type(TypeId type) {
  switch (types_.kind(type)) {
    case TypeKind::UntypedInt:
      return types_.scalar(ScalarType::I32);
    case TypeKind::UntypedFloat:
      return types_.scalar(ScalarType::F32);
    default:
      return type;
  }
}

TypeId Checker::element_value_type(TypeId tensor) {
  Policy policy = types_.policy(types_.info(tensor).policy);
  const PolicyClass* custom = policy.custom.valid() ? out_.policy_class(policy.custom) : nullptr;
  if (!custom) return types_.element_type(tensor);
  // A @precision_policy element reads as `dequantize`'s `compute` value; a
  // narrow `compute` does its arithmetic in `accumulate`.
  Policy accum;
  if (is_storage_float(custom->compute) && custom->accumulate != ScalarType::F32) accum.accum = custom->accumulate;
  return types_.scalar(custom->compute, types_.intern_policy(accum));
}

// A @precision_policy tensor in graph code (docs/language/graph.md,
// "Precision policy classes"): the @jit entry point dequantizes it with its
// per-tensor scale, so the body sees a tensor of `compute` values (with
// @accum(accumulate) where `compute` is a storage float), as an element
// `w[i]` reads in a kernel (element_value_type). Its declared type stays the
// signature's (`parameter_types`): the entry takes the codes and the scale.
TypeId Checker::graph_policy_values(TypeId type, bool device) {
  if (device || types_.kind(type) != TypeKind::Tensor) return type;
  TypeInfo info = types_.info(type);  // a copy: interning below may move the table
  Policy policy = types_.policy(info.policy);
  if (!policy.custom.valid() || !out_.policy_class(policy.custom)) return type;
  TypeId element = element_value_type(type);
  std::vector<DimId> dims(types_.dims(type).begin(), types_.dims(type).end());
  return types_.tensor(types_.info(element).scalar, types_.info(element).policy, dims, info.space, info.mut,
                       info.seed_style);
}

TypeId Checker::compute_type(TypeId type) {
  const TypeInfo& info = types_.info(type);
  if (info.kind != TypeKind::Scalar) return type;
  ScalarType scalar = info.scalar;
  if (is_storage_float(scalar)) {
    scalar = types_.policy(info.policy).accum.value_or(ScalarType::F32);
    // A narrow accumulation type (fp8 @accum(bf16)) keeps its @accum, so
    // that arithmetic on the results (a running sum) stays in it too rather
    // than widening to f32, the default of a plain bf16.
    if (is_storage_float(scalar)) {
      Policy accum;
      accum.accum = scalar;
      return types_.scalar(scalar, types_.intern_policy(accum));
    }
  }
  return types_.scalar(scalar);
}

bool Checker::is_assignable(TypeId from, TypeId to) const {
  if (from == to) return true;
  const TypeInfo& f = types_.info(from);
  const TypeInfo& t = types_.info(to);
  if (f.kind == TypeKind::Dynamic || t.kind == TypeKind::Dynamic) return true;
  if (f.kind == TypeKind::Error || t.kind == TypeKind::Error) return true;
  if (t.kind == TypeKind::Scalar) {
    if (f.kind == TypeKind::UntypedInt) return t.scalar != ScalarType::Bool;
    if (f.kind == TypeKind::UntypedFloat) return is_float(t.scalar);
    if (f.kind != TypeKind::Scalar) return false;
    if (f.scalar == t.scalar) return true;
    // Widening only: ints into wider ints of the same signedness or any float,
    // floats into floats at least as wide.
    const ScalarInfo& fs = scalar_info(f.scalar);
    const ScalarInfo& ts = scalar_info(t.scalar);
    if (is_float(t.scalar)) return !is_float(f.scalar) ? f.scalar != ScalarType::Bool : ts.bits >= fs.bits;
    if (is_integer(t.scalar) && is_integer(f.scalar)) return fs.category == ts.category && ts.bits >= fs.bits;
    return false;
  }
  if (t.kind == TypeKind::Tuple && f.kind == TypeKind::Tuple) {
    auto from_elements = types_.tuple_elements(from);
    auto to_elements = types_.tuple_elements(to);
    if (from_elements.size() != to_elements.size()) return false;
    for (size_t i = 0; i < to_elements.size(); ++i) {
      if (!is_assignable(from_elements[i], to_elements[i])) return false;
    }
    return true;
  }
  if (t.kind == TypeKind::Tensor && f.kind == TypeKind::Tensor) {
    return f.scalar == t.scalar && types_.dims(from).size() == types_.dims(to).size();
  }
  return false;
}

// Two tensor types (or tuples of them) with a size both know as a constant
// that differs: a result of `f32[3]` where the annotation says `f32[4]`.
bool Checker::constant_sizes_differ(TypeId a, TypeId b) const {
  if (types_.kind(a) == TypeKind::Tuple && types_.kind(b) == TypeKind::Tuple) {
    auto as = types_.tuple_elements(a), bs = types_.tuple_elements(b);
    for (size_t i = 0; i < std::min(as.size(), bs.size()); ++i)
      if (constant_sizes_differ(as[i], bs[i])) return true;
    return false;
  }
  if (types_.kind(a) != TypeKind::Tensor || types_.kind(b) != TypeKind::Tensor) return false;
  auto da = types_.dims(a), db = types_.dims(b);
  if (da.size() != db.size()) return false;
  for (size_t i = 0; i < da.size(); ++i) {
    auto x = types_.constant_value(da[i]), y = types_.constant_value(db[i]);
    if (x && y && *x != *y) return true;
  }
  return false;
}

TypeId Checker::read_back_numbers(TypeId value, TypeId declared) {
  if (types_.kind(value) == TypeKind::Tuple && types_.kind(declared) == TypeKind::Tuple) {
    auto vs = types_.tuple_elements(value), ds = types_.tuple_elements(declared);
    if (vs.size() != ds.size()) return value;
    std::vector<TypeId> elements;
    for (size_t i = 0; i < vs.size(); ++i) elements.push_back(read_back_numbers(vs[i], ds[i]));
    return types_.tuple(elements);
  }
  if (types_.kind(declared) == TypeKind::Scalar && types_.kind(value) == TypeKind::Tensor && types_.dims(value).empty())
    return types_.scalar(types_.info(value).scalar);
  return value;
}

TypeId Checker::default_type(const Value& value) {
  // An integer constant without context is i32, or i64 when its exact value
  // does not fit i32 (an error later if it fits neither: check_constant_fits).
  if (types_.kind(value.type) == TypeKind::UntypedInt && value.constant && !value.constant->is_float &&
      !integer_range(ScalarType::I32).contains(value.constant->integer))
    return types_.scalar(ScalarType::I64);
  return default_type(value.type);
}

bool Checker::check_constant_fits(NodeId where, const Value& value, TypeId target) {
  if (!value.constant || value.constant->from_local) return true;
  if (value.constant->is_float) return check_float_constant_fits(where, value, target);
  // Typed constants (a bool) have their type already; untyped ones take it here.
  if (types_.kind(value.type) != TypeKind::UntypedInt || !target.valid()) return true;
  TypeInfo t = types_.info(target);
  if (t.kind == TypeKind::Tensor) t = types_.info(types_.element_type(target));  // a slice filled with it
  if (t.kind != TypeKind::Scalar || !is_integer(t.scalar)) return true;  // to a float: a conversion
  IntegerRange range = integer_range(t.scalar);
  if (range.contains(value.constant->integer)) return true;
  diags_.emit<diag::SemaConstantOutOfRange>(ast_.range(where), to_string(value.constant->integer),
                                            std::string(scalar_info(t.scalar).name), to_string(range.min),
                                            to_string(range.max));
  return false;
}

// An untyped float constant in an f32 context is rounded to f32: a finite
// one past its range (`x * 1e50`, `y[i] = 1e39`) would silently be an
// infinity. (Narrower floats round by their policies, which define
// overflow; f64 holds every finite literal; @saturate clamps.)
bool Checker::check_float_constant_fits(NodeId where, const Value& value, TypeId target) {
  if (types_.kind(value.type) != TypeKind::UntypedFloat || !target.valid()) return true;
  TypeInfo t = types_.info(target);
  if (t.kind == TypeKind::Tensor) t = types_.info(types_.element_type(target));
  if (t.kind != TypeKind::Scalar || t.scalar != ScalarType::F32 || types_.policy(t.policy).saturate) return true;
  double v = value.constant->real;
  if (!std::isfinite(v) || std::isfinite(static_cast<float>(v))) return true;
  auto text = [](double x) {
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%.9g", x);
    return std::string(buffer);
  };
  double largest = std::numeric_limits<float>::max();
  diags_.emit<diag::SemaConstantOutOfRange>(ast_.range(where), text(v), "f32", text(-largest), text(largest));
  return false;
}

void Checker::check_operand_constants(const Value& lhs, NodeId lhs_node, const Value& rhs, NodeId rhs_node,
                                      TypeId result) {
  if (!result.valid() || types_.kind(result) != TypeKind::Scalar) return;
  check_constant_fits(lhs_node, lhs, result);
  check_constant_fits(rhs_node, rhs, result);
}

bool Checker::same_tensor_kind(TypeId from, TypeId to) {
  if (!in_device() || types_.kind(from) != TypeKind::Tensor || types_.kind(to) != TypeKind::Tensor) return true;
  return types_.with_mut(from, false) == types_.with_mut(to, false);
}

void Checker::finalize_bare_shared(IdentifierId name, TypeId element) {
  auto it = locals_.find(name.index);
  if (it == locals_.end() || !it->second.bare_shared || !types_.is_error(it->second.type)) return;
  const TypeInfo& e = types_.info(element);
  if (e.kind != TypeKind::Scalar) return;
  // The bare allocations of a kernel are interchangeable buffers (the seed's
  // double buffer swaps them): the first use types all of them, and they
  // share the budget equally.
  uint32_t bare = 0;
  for (auto& [id, local] : locals_) bare += local.bare_shared ? 1 : 0;
  uint64_t budget = function_ && function_->shared_budget ? *function_->shared_budget : kDefaultSharedBudgetBytes;
  uint64_t count = budget * 8 / scalar_info(e.scalar).bits / std::max<uint32_t>(bare, 1);
  DimId dims[] = {types_.constant_dim(static_cast<int64_t>(count))};
  TypeId buffer = types_.tensor(e.scalar, e.policy, dims, AddressSpace::Shared, true, false);
  for (auto& [id, local] : locals_) {
    if (!local.bare_shared || !types_.is_error(local.type)) continue;
    local.type = buffer;
    set_type(local.def, buffer);
    if (function_) function_->shared_bytes += storage_bytes(e.scalar, count);
  }
}

Value Checker::check_expression(NodeId node) {
  const Node& n = ast_.node(node);
  Value value{types_.error()};
  switch (n.kind) {
    case NodeKind::IntLiteral:
    case NodeKind::SizeLiteral:
      value = Value{types_.untyped_int(), Constant{false, static_cast<ConstantInt>(values_.integers[n.payload])}};
      break;
    case NodeKind::FloatLiteral:
      value = Value{types_.untyped_float(), Constant{true, 0, values_.reals[n.payload]}};
      break;
    case NodeKind::BoolLiteral:
      value = Value{types_.scalar(ScalarType::Bool), Constant{false, n.flags & 1}};
      break;
    case NodeKind::NoneLiteral:
      value = Value{types_.none()};
      break;
    case NodeKind::StringLiteral:
      value = Value{types_.string()};
      break;
    case NodeKind::FString:
      for (NodeId part : ast_.children(node)) {
        if (ast_.kind(part) != NodeKind::FormattedValue) continue;
        Value field = check_expression(ast_.child(part, 0));
        if (ast_.node(part).payload != UINT32_MAX) check_format_spec(part, field);
      }
      value = Value{types_.string()};
      break;
    case NodeKind::EllipsisLiteral:
      value = Value{types_.dynamic()};
      break;
    case NodeKind::Name:
      value = resolve_name(node);
      break;
    case NodeKind::Attribute:
      value = resolve_attribute(node);
      break;
    case NodeKind::Call:
      value = check_call(node);
      break;
    case NodeKind::Subscript:
      value = check_subscript(node);
      // Of a sharded tensor in graph code: whole stays whole, anything else
      // is a layout no rule gives (check_dist.cpp).
      if (!in_device() && types_.kind(value.type) == TypeKind::Tensor && !types_.sharding(value.type)) {
        TypeId object = out_.node_types[ast_.child(node, 0).index];
        if (object.valid() && types_.kind(object) == TypeKind::Tensor && types_.sharding(object))
          value.type = without_rule_sharding(value.type, std::span<const TypeId>(&object, 1));
      }
      break;
    case NodeKind::BinaryOp:
      value = check_binary(node);
      break;
    case NodeKind::UnaryOp: {
      Value operand = check_expression(ast_.child(node, 0));
      auto op = static_cast<UnaryOperator>(n.op);
      if (op == UnaryOperator::Not) {
        const TypeInfo& t = types_.info(operand.type);
        // `not t` of a 0-d tensor in graph code: its truth value, read back
        // to the host as an `if` reads it (Python's bool() of it).
        if (t.kind == TypeKind::Tensor && !in_device() && types_.dims(operand.type).empty()) {
          value = Value{types_.scalar(ScalarType::Bool)};
          break;
        }
        if (t.kind == TypeKind::Tensor) {
          // Python's `not` asks for one truth value: NumPy raises for an
          // array; the elementwise not of a bool tensor is `~`.
          NodeId x = ast_.child(node, 0);
          auto d = diags_.emit<diag::SemaTensorTruthValue>(n.range, "not", types_.to_string(operand.type), "~");
          if (t.scalar == ScalarType::Bool) d.fix_it_replace(n.range, "~(" + std::string(source_text(x)) + ")");
          value = Value{types_.error()};
          break;
        }
        value = Value{types_.scalar(ScalarType::Bool)};
        if (operand.constant) value.constant = Constant{false, operand.constant->as_double() == 0.0};
        break;
      }
      const TypeInfo& t = types_.info(operand.type);
      bool numeric = t.kind == TypeKind::UntypedInt || t.kind == TypeKind::UntypedFloat ||
                     (t.kind == TypeKind::Scalar && t.scalar != ScalarType::Bool) || t.kind == TypeKind::Dynamic ||
                     (t.kind == TypeKind::Tensor && !in_device());
      bool integral = t.kind == TypeKind::UntypedInt || (t.kind == TypeKind::Scalar && is_integer(t.scalar)) ||
                      t.kind == TypeKind::Dynamic ||
                      (t.kind == TypeKind::Tensor && !in_device() && (is_integer(t.scalar) || t.scalar == ScalarType::Bool));
      if (t.kind == TypeKind::Error) break;
      // NumPy refuses `-` of a bool array (TypeError: use `~`).
      bool bool_tensor_negation = op == UnaryOperator::Neg && t.kind == TypeKind::Tensor && t.scalar == ScalarType::Bool;
      if (!numeric || (op == UnaryOperator::Invert && !integral) || bool_tensor_negation) {
        diags_.emit<diag::SemaInvalidOperand>(n.range, std::string(operator_spelling(op)),
                                              types_.to_string(operand.type));
        break;
      }
      value = Value{t.kind == TypeKind::Scalar ? compute_type(operand.type) : operand.type};
      value.global_id = operand.global_id;
      if (operand.constant) {
        Constant c = *operand.constant;
        bool exact = true;
        if (op == UnaryOperator::Neg) {
          c.real = -c.real;
          if (!c.is_float) exact = fold_integer(BinaryOperator::Sub, 0, operand.constant->integer, c.integer) == FoldError::None;
        } else if (op == UnaryOperator::Invert) {
          c.integer = ~c.integer;
        }
        if (exact) {
          value.constant = c;
        } else if (!c.from_local) {
          diags_.emit<diag::SemaConstantTooLarge>(n.range);
          value = Value{types_.error()};
        }
      }
      break;
    }
    case NodeKind::BoolOp: {
      NodeId left = ast_.child(node, 0), right = ast_.child(node, 1);
      Value lhs = check_expression(left);
      // Python short-circuits: in graph code a left operand fixed when
      // compiling that decides (`bias is not None and bias.ndim == 2` of a
      // None bias) leaves the right one unchecked, and it is no code.
      if (!in_device()) {
        bool is_and = static_cast<BoolOperator>(n.op) == BoolOperator::And;
        if (std::optional<bool> first = exact_condition(left); first && *first != is_and) {
          value = Value{types_.scalar(ScalarType::Bool), Constant{false, *first ? 1 : 0}};
          break;
        }
      }
      Value rhs = check_expression(right);
      const TypeInfo &lt = types_.info(lhs.type), &rt = types_.info(rhs.type);
      // 0-d tensors in graph code: their truth values, read back to the
      // host as an `if` reads them; the result is that bool (Python would
      // give the operand itself, whose truth value it is).
      auto one_value = [&](const Value& v, const TypeInfo& t) {
        return t.kind != TypeKind::Tensor || (!in_device() && types_.dims(v.type).empty());
      };
      if ((lt.kind == TypeKind::Tensor || rt.kind == TypeKind::Tensor) && one_value(lhs, lt) && one_value(rhs, rt)) {
        value = Value{types_.scalar(ScalarType::Bool)};
        break;
      }
      if (lt.kind == TypeKind::Tensor || rt.kind == TypeKind::Tensor) {
        bool is_and = static_cast<BoolOperator>(n.op) == BoolOperator::And;
        std::string_view elementwise = is_and ? "&" : "|";
        auto d = diags_.emit<diag::SemaTensorTruthValue>(n.range, is_and ? "and" : "or",
                                                         types_.to_string(lt.kind == TypeKind::Tensor ? lhs.type : rhs.type),
                                                         std::string(elementwise));
        bool both_bool = (lt.kind != TypeKind::Tensor || lt.scalar == ScalarType::Bool) &&
                         (rt.kind != TypeKind::Tensor || rt.scalar == ScalarType::Bool) &&
                         lt.kind != TypeKind::Error && rt.kind != TypeKind::Error;
        if (both_bool)
          d.fix_it_replace(n.range, "(" + std::string(source_text(left)) + ") " + std::string(elementwise) + " (" +
                                        std::string(source_text(right)) + ")");
        value = Value{types_.error()};
        break;
      }
      value = Value{types_.scalar(ScalarType::Bool)};
      if (lhs.constant && rhs.constant) {
        bool a = lhs.constant->as_double() != 0.0, b = rhs.constant->as_double() != 0.0;
        value.constant = Constant{false, static_cast<BoolOperator>(n.op) == BoolOperator::And ? (a && b) : (a || b)};
        value.constant->from_local = lhs.constant->from_local || rhs.constant->from_local;
      }
      break;
    }
    case NodeKind::Compare: {
      NodeId lhs_node = ast_.child(node, 0);
      Value lhs = check_expression(lhs_node);
      Value rhs = check_expression(ast_.child(node, 1));
      // In a chain the left operand of this comparison is the right operand of the previous one.
      TypeId left_type = (n.flags & 1) ? out_.node_types[ast_.child(lhs_node, 1).index] : lhs.type;
      auto op = static_cast<CompareOperator>(n.op);
      bool identity = op == CompareOperator::Is || op == CompareOperator::IsNot || op == CompareOperator::In ||
                      op == CompareOperator::NotIn;
      TypeId common{};
      if (!identity) {
        common = binary_result(node, BinaryUse::compare(op), left_type, rhs.type);
        // A constant compared with a typed value converts to its type.
        if (!(n.flags & 1)) check_operand_constants(lhs, lhs_node, rhs, ast_.child(node, 1), common);
      }
      bool tensor = types_.kind(left_type) == TypeKind::Tensor || types_.kind(rhs.type) == TypeKind::Tensor;
      if (tensor && !in_device() && !identity && common.valid() && types_.kind(common) == TypeKind::Tensor) {
        // Element-wise, NumPy's: a bool tensor of the broadcast shape; `a < b
        // < c` is (a < b) & (b < c), broadcast together.
        if (n.flags & 1) common = binary_result(node, BinaryUse::of(BinaryOperator::BitAnd), lhs.type, common);
        if (types_.is_error(common) || types_.kind(common) != TypeKind::Tensor) {
          value = Value{types_.is_error(common) ? common : types_.dynamic()};
        } else {
          const TypeInfo& info = types_.info(common);
          std::vector<DimId> dims(types_.dims(common).begin(), types_.dims(common).end());
          value = Value{types_.tensor(ScalarType::Bool, PolicyId{}, dims, info.space, false, info.seed_style)};
          // Laid out as its operands (a mask of a split tensor is split
          // alike); a partial value's terms compare to nothing global.
          // (The program compares the reduced values.)
          if (!(n.flags & 1)) left_type = reduce_partial_in_program(lhs_node, left_type);
          rhs.type = reduce_partial_in_program(ast_.child(node, 1), rhs.type);
          std::vector<TypeId> operands;
          for (TypeId t : {left_type, rhs.type})
            if (types_.kind(t) == TypeKind::Tensor && types_.sharding(t)) operands.push_back(t);
          if (!operands.empty()) {
            std::optional<uint32_t> sharding =
                elementwise_sharding(node, "a comparison", operands, dims.size(), false);
            if (sharding && *sharding && types_.sharding_info(*sharding).partial_axes) {
              diags_.emit<diag::SemaDistLayoutMismatch>(n.range, "a comparison", types_.to_string(operands[0]),
                                                        reduce_first(types_.sharding_info(*sharding)));
              sharding.reset();
            }
            value = sharding ? Value{types_.with_sharding(value.type, *sharding)} : Value{types_.error()};
          }
        }
      } else {
        value = Value{tensor && !in_device() ? types_.dynamic() : types_.scalar(ScalarType::Bool)};
      }
      // `x is None` in graph code: fixed by x's type (a parameter given None,
      // or a tensor), so a constant the lowering takes as it is.
      if (!in_device() && (op == CompareOperator::Is || op == CompareOperator::IsNot))
        if (std::optional<bool> known = exact_condition(node)) value = Value{types_.scalar(ScalarType::Bool), Constant{false, *known ? 1 : 0}};
      break;
    }
    case NodeKind::IfExp: {
      Value condition = check_expression(ast_.child(node, 0));
      check_condition(ast_.child(node, 0), condition);
      // Graph code: a condition fixed when compiling (`ts.sum(x, axis=0) if
      // kind == "sum" else x`, `b.ndim if b is not None else 0`) evaluates
      // one branch, as Python does; only it is checked (and compiled: the
      // lowering reads the decision recorded here).
      if (std::optional<bool> taken = decide_condition(ast_.child(node, 0), condition)) {
        value = check_expression(ast_.child(node, *taken ? 1 : 2));
        break;
      }
      Value a = check_expression(ast_.child(node, 1));
      Value b = check_expression(ast_.child(node, 2));
      // A condition known when compiling (`x if MODE == 1 else ts.sum(x)`)
      // takes one branch, as Python evaluates only that one: the value is
      // of its type, whatever the other's (lowering compiles it alone).
      std::optional<bool> known;
      if (!types_.is_error(condition.type) && !types_.is_error(a.type) && !types_.is_error(b.type) &&
          !is_assignable(a.type, b.type) && !is_assignable(b.type, a.type))
        known = constant_condition(ast_.child(node, 0));
      if (known) {
        value = *known ? a : b;
      } else if (is_assignable(a.type, b.type)) {
        value = Value{b.type};
      } else if (is_assignable(b.type, a.type)) {
        value = Value{a.type};
      } else {
        value = Value{binary_result(node, BinaryUse::conditional(), a.type, b.type)};
      }
      break;
    }
    case NodeKind::Tuple: {
      std::vector<TypeId> elements;
      for (NodeId child : ast_.children(node)) elements.push_back(check_expression(child).type);
      value = Value{types_.tuple(elements)};
      break;
    }
    case NodeKind::List: {
      TypeId element = types_.dynamic();
      bool first = true;
      std::vector<TypeId> elements;
      for (NodeId child : ast_.children(node)) {
        TypeId t = check_expression(child).type;
        elements.push_back(default_type(t));
        if (first)
          element = default_type(t);
        else if (!is_assignable(t, element) || constant_sizes_differ(t, element))
          element = types_.dynamic();
        first = false;
      }
      // Tensors of several types in graph code (`[W1, b1, W2, b2]`, weights
      // of several shapes): a list holds one type, so this one is a tuple
      // (its length known, each element its own type: indexed by constants,
      // unpacked, iterated over unrolled; docs/language/graph.md, "Lists").
      // (Tuples of them too: `[(W1, b1), (W2, b2)]`, the layers of an MLP.)
      bool tensors = !elements.empty() && std::ranges::all_of(elements, [&](TypeId t) {
        return types_.kind(t) == TypeKind::Tensor || types_.kind(t) == TypeKind::Tuple;
      });
      if (!in_device() && tensors && types_.kind(element) == TypeKind::Dynamic) {
        value = Value{types_.tuple(elements)};
        break;
      }
      value = Value{types_.list(element)};
      break;
    }
    case NodeKind::Dict:
      for (NodeId entry : ast_.children(node)) {
        check_expression(ast_.child(entry, 0));
        check_expression(ast_.child(entry, 1));
      }
      if (in_device()) diags_.emit<diag::SemaUnsupportedInKernel>(n.range, std::string("a dict literal"));
      value = Value{types_.object(values_.identifiers.intern("dict"))};
      break;
    case NodeKind::ListComp:
    case NodeKind::GeneratorExp:
      if (!in_device()) {
        value = Value{check_comprehension(node)};
        break;
      }
      [[fallthrough]];
    case NodeKind::Lambda:
      if (in_device()) {
        diags_.emit<diag::SemaUnsupportedInKernel>(
            n.range, std::string(n.kind == NodeKind::Lambda ? "a lambda" : "a comprehension"));
        value = Value{types_.error()};
      } else {
        value = Value{types_.dynamic()};
      }
      break;
    case NodeKind::DynamicDim:
      diags_.emit<diag::SemaUseOfTypeAsValue>(n.range, std::string("?"));
      break;
    case NodeKind::KeywordArgument:
    case NodeKind::StarArgument:
    case NodeKind::DoubleStarArgument:
      value = check_expression(ast_.child(node, 0));
      break;
    case NodeKind::Slice:
      for (NodeId part : ast_.children(node)) {
        if (part.valid()) check_expression(part);
      }
      value = Value{types_.dynamic()};
      break;
    case NodeKind::ErrorExpr:
      break;
    default:
      internal_error("sema", "unexpected expression kind " + std::string(node_kind_name(n.kind)));
  }
  set_type(node, value.type);
  if (value.constant) {
    constants_[node.index] = *value.constant;
    if (instance_constants_) (*instance_constants_)[node.index] = *value.constant;
  }
  return value;
}

// `{v:spec}` of an f-string: a spec support/format_spec.h formats, of a
// number or a 0-d tensor (Python formats an array only without a spec), an
// integer presentation type ('d', 'x', ...) only of an integer or a bool.
void Checker::check_format_spec(NodeId field, const Value& value) {
  const std::string& spec = values_.strings[ast_.node(field).payload];
  SourceRange where = ast_.range(field);
  if (spec.find_first_of("{}") != std::string::npos) {
    diags_.emit<diag::SemaFormatSpec>(where, spec, "is not one print formats: a nested replacement field is not supported");
    return;
  }
  std::string why;
  std::optional<FormatSpec> parsed = parse_format_spec(spec, &why);
  if (!parsed) {
    diags_.emit<diag::SemaFormatSpec>(where, spec, "is not one print formats: " + why);
    return;
  }
  TypeInfo t = types_.info(value.type);
  if (t.kind == TypeKind::Error || t.kind == TypeKind::Dynamic) return;
  // A string takes fill, alignment and width (`{name:>10}`; text aligns
  // left by default, as Python's).
  if (t.kind == TypeKind::String && !in_device()) {
    if (parsed->sign || parsed->alternate || parsed->zero || parsed->precision || parsed->type)
      diags_.emit<diag::SemaFormatSpec>(where, spec, "is not one print formats for a string: only fill, alignment and width are");
    return;
  }
  bool number = types_.is_numeric_scalar(value.type) ||
                (t.kind == TypeKind::Tensor && !in_device() && types_.dims(value.type).empty());
  if (!number) {
    diags_.emit<diag::SemaFormatSpec>(where, spec, "needs a number or a 0-d tensor, got '" + types_.to_string(value.type) + "'");
    return;
  }
  bool floating = t.kind == TypeKind::UntypedFloat || ((t.kind == TypeKind::Scalar || t.kind == TypeKind::Tensor) &&
                                                       is_float(t.scalar));
  if (parsed->integer_type() && floating)
    diags_.emit<diag::SemaFormatSpec>(where, spec, "is for integers, got '" + types_.to_string(value.type) + "'");
}

// `"fmt" % values`: the format a string literal (parsed when compiling),
// one value per conversion (a tuple literal, a tuple value such as
// `x.shape`, or one value), each of a kind its conversion formats: %d, %e,
// %f, %g take a number or a 0-d tensor (%d truncates a float toward zero,
// as Python's int()), %o, %x an integer, %s and %r whatever print prints
// (with a width, a number, a string or a 0-d tensor). Its value is a
// string, which print prints (lowering expands it there).
Value Checker::check_percent_format(NodeId node, const Value& rhs) {
  NodeId format_node = ast_.child(node, 0), values_node = ast_.child(node, 1);
  SourceRange where = ast_.range(node);
  std::string source = source_text(format_node);
  if (ast_.kind(format_node) != NodeKind::StringLiteral) {
    diags_.emit<diag::SemaPercentFormat>(where, source, "needs a string literal as its format");
    return Value{types_.error()};
  }
  std::string why;
  std::optional<PercentFormat> format = parse_percent_format(values_.strings[ast_.node(format_node).payload], &why);
  if (!format) {
    diags_.emit<diag::SemaPercentFormat>(where, source, why);
    return Value{types_.error()};
  }
  if (types_.is_error(rhs.type) || types_.kind(rhs.type) == TypeKind::Dynamic) return Value{types_.string()};
  std::vector<TypeId> values;
  if (types_.kind(rhs.type) == TypeKind::Tuple)
    values.assign(types_.tuple_elements(rhs.type).begin(), types_.tuple_elements(rhs.type).end());
  else
    values.push_back(rhs.type);
  if (values.size() != format->conversions.size()) {
    diags_.emit<diag::SemaPercentFormat>(
        where, source,
        "has " + std::to_string(format->conversions.size()) + " conversion" +
            (format->conversions.size() == 1 ? "" : "s") + " but " + std::to_string(values.size()) + " value" +
            (values.size() == 1 ? " is" : "s are") + " given (Python raises TypeError)");
    return Value{types_.error()};
  }
  for (size_t i = 0; i < values.size(); ++i) {
    const PercentConversion& c = format->conversions[i];
    TypeInfo t = types_.info(values[i]);
    if (t.kind == TypeKind::Error || t.kind == TypeKind::Dynamic) continue;
    bool zero_d = t.kind == TypeKind::Tensor && types_.dims(values[i]).empty();
    bool number = types_.is_numeric_scalar(values[i]) || zero_d;
    bool floating = t.kind == TypeKind::UntypedFloat ||
                    ((t.kind == TypeKind::Scalar || t.kind == TypeKind::Tensor) && is_float(t.scalar));
    std::string conversion = std::string("has '%") + c.conversion + "' for value " + std::to_string(i + 1) + ", which";
    std::string got = "got '" + types_.to_string(values[i]) + "'";
    if (c.conversion == 's') {
      bool printable = t.kind == TypeKind::Tensor || t.kind == TypeKind::String || t.kind == TypeKind::None ||
                       t.kind == TypeKind::Dtype || t.kind == TypeKind::Tuple || number;
      if (!printable)
        diags_.emit<diag::SemaPercentFormat>(where, source, "cannot print value " + std::to_string(i + 1) + " ('" +
                                                                types_.to_string(values[i]) + "')");
      else if (!c.spec.empty() && !number && t.kind != TypeKind::String)
        diags_.emit<diag::SemaPercentFormat>(where, source,
                                             "has a width for value " + std::to_string(i + 1) +
                                                 ", which pads only numbers, strings and 0-d tensors, " + got);
      continue;
    }
    if (!number) {
      diags_.emit<diag::SemaPercentFormat>(where, source, conversion + " needs a number or a 0-d tensor, " + got);
      continue;
    }
    if ((c.conversion == 'o' || c.conversion == 'x' || c.conversion == 'X') && floating)
      diags_.emit<diag::SemaPercentFormat>(where, source, conversion + " is for integers (Python raises TypeError), " + got);
  }
  (void)values_node;
  return Value{types_.string()};
}

Value Checker::resolve_name(NodeId node) {
  uint32_t id = ast_.node(node).payload;
  std::string_view name = values_.identifiers.name(IdentifierId{id});
  if (auto it = locals_.find(id); it != locals_.end()) {
    const Local& local = it->second;
    if (local.bare_shared && types_.is_error(local.type)) {
      // Typed by its first store: reading before that cannot be typed. A
      // store target is fine (assign_to types the buffer first).
      if (!assigning_) diags_.emit<diag::SemaBareAllocNeedsType>(ast_.range(node), std::string(name));
      return Value{types_.error()};
    }
    Value value{local.type, local.constant, local.global_id};
    if (value.constant && !local.exact_constant) value.constant->from_local = true;
    return value;
  }
  if (auto it = module_symbols_.find(id); it != module_symbols_.end() && module_symbol_bound(id)) {
    const ModuleSymbol& symbol = it->second;
    switch (symbol.kind) {
      case ModuleSymbol::Kind::Function:
        return Value{types_.function(symbol.function_index)};
      case ModuleSymbol::Kind::Class:
        return Value{types_.object(IdentifierId{id}), std::nullopt, false, true};
      case ModuleSymbol::Kind::TypeAlias:
        return Value{types_.dtype(*alias_type(node)), std::nullopt, false, true};
      case ModuleSymbol::Kind::Constant: {
        NodeId value_node = ast_.child(symbol.node, 1);
        TypeId type = out_.node_types[value_node.index];
        if (auto recorded = module_value_types_.find(value_node.index);
            !type.valid() && recorded != module_value_types_.end())
          type = recorded->second;
        return Value{type.valid() ? type : types_.dynamic(), symbol.constant};
      }
      case ModuleSymbol::Kind::Import: {
        // `from tessera import softmax`, `from tessera.dist import
        // ShardSpec`, `from tessera import bf16`: the name is what the
        // attribute `ts.softmax` (`dist.ShardSpec`, `ts.bf16`) would be, not
        // a module.
        const std::string& path = module_path(symbol.module_id);
        if (auto builtin = lookup_builtin(path)) return Value{types_.builtin(static_cast<uint32_t>(*builtin))};
        if (auto dtype = lookup_dtype(path); dtype && !is_builtin_namespace(path))
          return Value{types_.dtype(types_.scalar(dtype->type)), std::nullopt, false, true};
        return Value{types_.module(symbol.module_id)};
      }
    }
  }
  if (name == "ts" || name == "tessera") return Value{types_.module(0)};
  if (is_builtin_namespace(name) || name == "tshared" || name == "cp_async")
    return Value{types_.module(module_id(std::string(name)))};
  if (auto builtin = lookup_builtin(name)) return Value{types_.builtin(static_cast<uint32_t>(*builtin))};
  if (auto dtype = lookup_dtype(name)) {
    if (dtype->defaulted_format) {
      diags_.emit<diag::SemaDefaultedFormat>(ast_.range(node), std::string(name),
                                             std::string(scalar_info(dtype->type).name));
    }
    return Value{types_.dtype(types_.scalar(dtype->type)), std::nullopt, false, true};
  }
  if (name == "Tensor") return Value{types_.dtype(types_.dynamic()), std::nullopt, false, true};
  if (is_python_builtin(name)) return Value{types_.object(IdentifierId{id})};

  std::vector<std::string> candidates;
  for (auto& [local_id, local] : locals_) candidates.push_back(name_of(local_id));
  for (auto& [symbol_id, symbol] : module_symbols_) {
    if (module_symbol_bound(symbol_id)) candidates.push_back(name_of(symbol_id));
  }
  for (std::string_view path : all_builtin_paths()) {
    if (path.find('.') == std::string_view::npos) candidates.emplace_back(path);
  }
  std::sort(candidates.begin(), candidates.end());
  if (auto suggestion = closest_name(name, candidates)) {
    diags_.emit<diag::SemaUndefinedNameSuggest>(ast_.range(node), std::string(name), *suggestion)
        .fix_it_replace(ast_.range(node), *suggestion);
  } else {
    diags_.emit<diag::SemaUndefinedName>(ast_.range(node), std::string(name));
  }
  return Value{types_.error()};
}

Value Checker::resolve_attribute(NodeId node) {
  NodeId object = ast_.child(node, 0);
  Value base = check_expression(object);
  std::string member = name_of(ast_.node(node).payload);
  const TypeInfo& info = types_.info(base.type);
  switch (info.kind) {
    case TypeKind::Module: {
      const std::string& prefix = module_path(info.payload);
      std::string path = prefix.empty() ? member : prefix + "." + member;
      if (auto builtin = lookup_builtin(path)) return Value{types_.builtin(static_cast<uint32_t>(*builtin))};
      if (is_builtin_namespace(path) || path == "tshared" || path == "cp_async" || path == "cp_async.shared") {
        return Value{types_.module(module_id(path))};
      }
      if (prefix.empty()) {
        if (auto dtype = lookup_dtype(member)) return Value{types_.dtype(types_.scalar(dtype->type)), {}, false, true};
        if (member == "Tensor") return Value{types_.dtype(types_.dynamic()), std::nullopt, false, true};
        if (member == "pi") return Value{types_.untyped_float(), Constant{true, 0, M_PI}};
        if (member == "e") return Value{types_.untyped_float(), Constant{true, 0, M_E}};
        if (member == "inf") return Value{types_.untyped_float(), Constant{true, 0, HUGE_VAL}};
        if (member == "nan") return Value{types_.untyped_float(), Constant{true, 0, std::nan("")}};
        if (member == "precision_policy" || member == "kernel" || member == "jit") return Value{types_.dynamic()};
      }
      std::vector<std::string> candidates;
      for (std::string_view p : all_builtin_paths()) {
        if (prefix.empty() ? p.find('.') == std::string_view::npos : p.starts_with(prefix + ".")) {
          candidates.emplace_back(prefix.empty() ? p : p.substr(prefix.size() + 1));
        }
      }
      std::string owner = prefix.empty() ? source_text(object) : source_text(object);
      if (auto suggestion = closest_name(member, candidates)) {
        SourceOffset name_begin = ast_.range(node).end - static_cast<SourceOffset>(member.size());
        diags_.emit<diag::SemaUnknownMemberSuggest>(ast_.range(node), owner, member, *suggestion)
            .fix_it_replace(SourceRange{name_begin, ast_.range(node).end}, *suggestion);
      } else {
        diags_.emit<diag::SemaUnknownMember>(ast_.range(node), owner, member);
      }
      return Value{types_.error()};
    }
    case TypeKind::Error:
      return Value{types_.error()};
    case TypeKind::Tensor:
      if (!in_device()) return tensor_attribute(node, base.type, member);
      break;
    case TypeKind::Dynamic:
    case TypeKind::Object:
    case TypeKind::Mesh:
    case TypeKind::Layout:
    case TypeKind::Function:
    case TypeKind::Builtin:
      if (!in_device()) return Value{types_.dynamic()};
      break;
    default:
      break;
  }
  diags_.emit<diag::SemaUnknownMember>(ast_.range(node), types_.to_string(base.type), member);
  return Value{types_.error()};
}

// NumPy's attributes of a tensor in graph code: `x.T` (the axes reversed),
// `x.shape` (a tuple of i32; `x.shape[k]` is a constant where the size is),
// `x.ndim`, `x.size`, `x.dtype`. Anything else is an unknown member.
Value Checker::tensor_attribute(NodeId node, TypeId tensor, const std::string& member) {
  const TypeInfo& info = types_.info(tensor);
  std::vector<DimId> dims(types_.dims(tensor).begin(), types_.dims(tensor).end());
  auto integer = [&](int64_t v) { return Value{types_.untyped_int(), Constant{false, v, 0.0}}; };
  if (member == "T") {
    std::reverse(dims.begin(), dims.end());
    TypeId transposed = types_.tensor(info.scalar, {}, dims, value_space(), false, false);
    // A sharded tensor's layout reversed with its dimensions (a block of x
    // transposed is the block of x.T).
    if (const ShardingInfo* s = types_.sharding(tensor)) {
      ShardingInfo u = *s;
      std::reverse(u.dim_axes.begin(), u.dim_axes.end());
      transposed = types_.with_sharding(transposed, types_.intern_sharding(u));
    }
    return Value{transposed};
  }
  if (member == "ndim") return integer(static_cast<int64_t>(dims.size()));
  if (member == "size") {
    int64_t total = 1;
    for (DimId d : dims) {
      std::optional<int64_t> v = types_.constant_value(d);
      if (!v) return Value{types_.scalar(ScalarType::I32)};
      total *= *v;
    }
    return integer(total);
  }
  if (member == "shape") {
    std::vector<TypeId> elements(dims.size(), types_.scalar(ScalarType::I32));
    return Value{types_.tuple(elements)};
  }
  if (member == "dtype") return Value{types_.dtype(types_.scalar(info.scalar)), std::nullopt, false, true};
  diags_.emit<diag::SemaUnknownMember>(ast_.range(node), types_.to_string(tensor), member);
  return Value{types_.error()};
}

TypeId Checker::binary_result(NodeId node, const BinaryUse& use, TypeId lhs, TypeId rhs) {
  const bool arithmetic = use.arithmetic();
  const TypeInfo& a = types_.info(lhs);
  const TypeInfo& b = types_.info(rhs);
  SourceRange where = ast_.range(node);
  auto invalid = [&] {
    bool shown = use.shown_lhs.valid();
    diags_.emit<diag::SemaInvalidOperands>(where, use.spelling, types_.to_string(shown ? use.shown_lhs : lhs),
                                           types_.to_string(shown ? use.shown_rhs : rhs));
    return types_.error();
  };
  if (a.kind == TypeKind::Error || b.kind == TypeKind::Error) return types_.error();
  if (a.kind == TypeKind::Dynamic || b.kind == TypeKind::Dynamic) return types_.dynamic();
  // Strings (docs/language/graph.md, "Strings"): `+` joins two, `*` repeats
  // one an integer number of times (lowering needs the count when compiling).
  // `MODE == "train"`: compared when compiling (both must be known then).
  if (a.kind == TypeKind::String && b.kind == TypeKind::String)
    return use.is(BinaryOperator::Add) || (use.kind == BinaryUse::Kind::Compare && (use.spelling == "==" || use.spelling == "!="))
               ? types_.string()
               : invalid();
  auto integer = [&](const TypeInfo& t) {
    return t.kind == TypeKind::UntypedInt || (t.kind == TypeKind::Scalar && !is_float(t.scalar) && t.scalar != ScalarType::Bool);
  };
  if (use.is(BinaryOperator::Mul) && ((a.kind == TypeKind::String && integer(b)) || (b.kind == TypeKind::String && integer(a) && !use.augmented)))
    return types_.string();
  if (a.kind == TypeKind::String || b.kind == TypeKind::String) return invalid();

  // Tensors: elementwise with broadcasting, graph-level code only.
  if (a.kind == TypeKind::Tensor || b.kind == TypeKind::Tensor) {
    // In kernels: a register tile (tile.mma's result) on the left, and
    // beside it a number or another register tile; a tensor in memory is
    // read element by element (`sc[i, j]`), never whole.
    if (in_device() && (!(a.kind == TypeKind::Tensor && a.space == AddressSpace::Register) ||
                        (b.kind == TypeKind::Tensor && b.space != AddressSpace::Register)))
      return invalid();
    // `<<` and `>>` with a bool tensor (NumPy has no bool shift: it
    // promotes): a bool operand takes the other's integer type, int8 when
    // both are bools, NumPy's default integer (i64) beside a Python int.
    // Arithmetic (`x * mask`, `n - (x > 0)`) promotes a bool operand the
    // same way to the other operand's number type (`f32` beside a Python
    // float, Tessera's default float); two bools stay refused.
    const bool shift = use.is(BinaryOperator::LShift) || use.is(BinaryOperator::RShift);
    const bool promotes_bool = shift || (use.kind == BinaryUse::Kind::Operator && !use.bitwise());
    if (promotes_bool) {
      auto element = [&](TypeId t) { return types_.kind(t) == TypeKind::Tensor ? types_.scalar(types_.info(t).scalar) : t; };
      auto is_bool_element = [&](TypeId t) {
        TypeId e = element(t);
        return types_.kind(e) == TypeKind::Scalar && types_.info(e).scalar == ScalarType::Bool;
      };
      if (is_bool_element(lhs) || is_bool_element(rhs)) {
        auto as_integer = [&](TypeId t, TypeId other) {
          if (!is_bool_element(t)) return t;
          const TypeInfo& o = types_.info(element(other));
          ScalarType s = is_bool_element(other)              ? (shift ? ScalarType::I8 : ScalarType::Bool)
                         : o.kind == TypeKind::UntypedInt     ? ScalarType::I64
                         : o.kind == TypeKind::UntypedFloat && !shift ? ScalarType::F32
                         : o.kind == TypeKind::Scalar && (is_integer(o.scalar) || (!shift && is_float(o.scalar)))
                             ? o.scalar
                             : ScalarType::Bool;  // refused below
          if (types_.kind(t) != TypeKind::Tensor) return types_.scalar(s);
          const TypeInfo& ti = types_.info(t);
          return types_.tensor(s, {}, types_.dims(t), ti.space, false, false);
        };
        TypeId l = as_integer(lhs, rhs), r = as_integer(rhs, lhs);
        if (!is_bool_element(l) && !is_bool_element(r)) return binary_result(node, use.showing(lhs, rhs), l, r);
      }
    }
    // A comparison of bools with numbers compares the bools as 0 and 1, as
    // NumPy does (`mask == 1`, `m != 0`): a bool tensor.
    auto is_bool = [&](TypeId t) { return types_.kind(t) == TypeKind::Scalar && types_.info(t).scalar == ScalarType::Bool; };
    auto bool_with_number = [&](TypeId x, TypeId y) {
      return use.kind == BinaryUse::Kind::Compare && types_.is_numeric_scalar(x) && types_.is_numeric_scalar(y) &&
             is_bool(x) != is_bool(y);
    };
    if (a.kind == TypeKind::Tensor && b.kind == TypeKind::Tensor) {
      auto da = types_.dims(lhs), db = types_.dims(rhs);
      size_t rank = std::max(da.size(), db.size());
      std::vector<DimId> dims(rank);
      for (size_t i = 0; i < rank; ++i) {
        DimId x = i < rank - da.size() ? types_.constant_dim(1) : da[i - (rank - da.size())];
        DimId y = i < rank - db.size() ? types_.constant_dim(1) : db[i - (rank - db.size())];
        auto cx = types_.constant_value(x), cy = types_.constant_value(y);
        if (x == y || (cy && *cy == 1)) {
          dims[i] = x;
        } else if (cx && *cx == 1) {
          dims[i] = y;
        } else if (cx && cy) {
          // Blocks of two layouts (a row-split and a column-split tensor of
          // one global shape): the layouts are what differs.
          const ShardingInfo *sl = types_.sharding(lhs), *sr = types_.sharding(rhs);
          if (sl && sr && sl->dim_axes != sr->dim_axes)
            diags_.emit<diag::SemaDistLayoutMismatch>(where, std::string(use.spelling), types_.to_string(lhs),
                                                      types_.to_string(rhs));
          else
            diags_.emit<diag::SemaShapeMismatch>(where, use.spelling, types_.to_string(lhs), types_.to_string(rhs));
          return types_.error();
        } else {
          dims[i] = x;  // symbolic: checked at launch
        }
      }
      // The elements are typed as two scalars are (a comparison of two
      // bools too, which `+` would refuse).
      TypeId element = bool_with_number(types_.scalar(a.scalar), types_.scalar(b.scalar))
                           ? types_.scalar(ScalarType::Bool)
                           : binary_result(node, use.showing(lhs, rhs), compute_type(types_.scalar(a.scalar, a.policy)),
                                           compute_type(types_.scalar(b.scalar, b.policy)));
      if (types_.is_error(element)) return element;
      if (!arithmetic) element = types_.scalar(ScalarType::Bool);
      // The elements' @accum decides where they compute (a narrow one, as
      // `fp8_e4m3 @accum(bf16)`, stays on the result: compute_type).
      return types_.tensor(types_.info(element).scalar, types_.info(element).policy, dims, value_space(), false, false);
    }
    const TypeInfo& t = a.kind == TypeKind::Tensor ? a : b;
    TypeId tensor_type = a.kind == TypeKind::Tensor ? lhs : rhs;
    TypeId scalar_side = a.kind == TypeKind::Tensor ? rhs : lhs;
    if (!types_.is_numeric_scalar(scalar_side)) return invalid();
    TypeId element = bool_with_number(types_.scalar(t.scalar), scalar_side)
                         ? types_.scalar(ScalarType::Bool)
                         : binary_result(node, use.showing(lhs, rhs), compute_type(types_.scalar(t.scalar, t.policy)),
                                         scalar_side);
    if (types_.is_error(element)) return element;
    std::vector<DimId> dims(types_.dims(tensor_type).begin(), types_.dims(tensor_type).end());
    if (!arithmetic) return types_.tensor(ScalarType::Bool, {}, dims, value_space(), false, false);
    return types_.tensor(types_.info(element).scalar, types_.info(element).policy, dims, value_space(), false, false);
  }

  if (!types_.is_numeric_scalar(lhs) || !types_.is_numeric_scalar(rhs)) return invalid();
  bool bitwise = use.bitwise();
  bool is_bool_a = a.kind == TypeKind::Scalar && a.scalar == ScalarType::Bool;
  bool is_bool_b = b.kind == TypeKind::Scalar && b.scalar == ScalarType::Bool;
  if (is_bool_a || is_bool_b) {
    bool logical = !use.augmented && (use.is(BinaryOperator::BitAnd) || use.is(BinaryOperator::BitOr) ||
                                      use.is(BinaryOperator::BitXor));
    if (is_bool_a && is_bool_b && (logical || use.kind == BinaryUse::Kind::Compare)) {
      return types_.scalar(ScalarType::Bool);
    }
    if (arithmetic || !(is_bool_a && is_bool_b)) return invalid();
    return types_.scalar(ScalarType::Bool);
  }
  if (use.is(BinaryOperator::MatMul)) return invalid();

  bool a_float = a.kind == TypeKind::UntypedFloat || (a.kind == TypeKind::Scalar && is_float(a.scalar));
  bool b_float = b.kind == TypeKind::UntypedFloat || (b.kind == TypeKind::Scalar && is_float(b.scalar));
  if (bitwise && (a_float || b_float)) return invalid();

  // Both untyped: stays untyped (constant arithmetic); true division gives a float.
  if ((a.kind == TypeKind::UntypedInt || a.kind == TypeKind::UntypedFloat) &&
      (b.kind == TypeKind::UntypedInt || b.kind == TypeKind::UntypedFloat)) {
    if (a_float || b_float || use.is(BinaryOperator::Div)) return types_.untyped_float();
    return types_.untyped_int();
  }
  TypeId ca = a.kind == TypeKind::Scalar ? compute_type(lhs) : lhs;
  TypeId cb = b.kind == TypeKind::Scalar ? compute_type(rhs) : rhs;
  const TypeInfo& x = types_.info(ca);
  const TypeInfo& y = types_.info(cb);
  TypeId result;
  if (x.kind != TypeKind::Scalar) {
    // untyped op typed
    result = (x.kind == TypeKind::UntypedFloat && !is_float(y.scalar)) ? types_.scalar(ScalarType::F32) : cb;
  } else if (y.kind != TypeKind::Scalar) {
    result = (y.kind == TypeKind::UntypedFloat && !is_float(x.scalar)) ? types_.scalar(ScalarType::F32) : ca;
  } else if (is_float(x.scalar) != is_float(y.scalar)) {
    result = is_float(x.scalar) ? ca : cb;
  } else if (is_float(x.scalar)) {
    // Two formats of one width (`bf16 @accum(bf16)` and `f16 @accum(f16)`):
    // neither holds the other, f32 holds both (whichever operand is left).
    if (x.scalar != y.scalar && scalar_info(x.scalar).bits == scalar_info(y.scalar).bits)
      result = types_.scalar(ScalarType::F32);
    else
      result = scalar_info(x.scalar).bits >= scalar_info(y.scalar).bits ? ca : cb;
  } else {
    if (scalar_info(x.scalar).category != scalar_info(y.scalar).category) {
      // The signed operand first, whichever side it is on (a tensor's
      // element is typed as the left operand).
      bool signed_first = scalar_info(x.scalar).category == ScalarCategory::SignedInt;
      diags_.emit<diag::SemaMixedSignedness>(where, use.spelling, types_.to_string(signed_first ? ca : cb),
                                             types_.to_string(signed_first ? cb : ca));
      return types_.error();
    }
    result = scalar_info(x.scalar).bits >= scalar_info(y.scalar).bits ? ca : cb;
  }
  if (use.is(BinaryOperator::Div) && is_integer(types_.info(result).scalar)) result = types_.scalar(ScalarType::F32);
  return result;
}

namespace {

// Whether `lhs op rhs` keeps a partial operand partial (elementwise_sharding's
// rules): partial sums (or means) added to or subtracted from partial values
// of the same kind, or a partial sum scaled by something whole. Otherwise the
// program reduces the partial operands first.
bool keeps_partial(const TypeStore& types, BinaryOperator op, TypeId lhs, TypeId rhs) {
  auto partial = [&](TypeId t) -> const ShardingInfo* {
    const ShardingInfo* s = types.kind(t) == TypeKind::Tensor ? types.sharding(t) : nullptr;
    return s && s->partial_axes ? s : nullptr;
  };
  const ShardingInfo *l = partial(lhs), *r = partial(rhs);
  if (!l && !r) return true;
  if (op == BinaryOperator::Add || op == BinaryOperator::Sub)
    return l && r && l->partial_axes == r->partial_axes && l->partial_op == r->partial_op &&
           (l->partial_op == PartialOp::Sum || l->partial_op == PartialOp::Avg);
  if (op == BinaryOperator::Mul) return !(l && r) && (l ? l : r)->partial_op == PartialOp::Sum;
  if (op == BinaryOperator::Div) return l && !r && l->partial_op == PartialOp::Sum;
  return false;
}

}  // namespace

Value Checker::check_binary(NodeId node) {
  const Node& n = ast_.node(node);
  auto op = static_cast<BinaryOperator>(n.op);
  // A dtype with policies written in an expression
  // (`ts.cast(x, fp8_e4m3 @saturate)`): a type, as on the right of an alias
  // (`@` parsed as a matmul; its left side names a dtype, never a value).
  if (op == BinaryOperator::MatMul && denotes_dtype(node))
    return Value{types_.dtype(resolve_type(node)), std::nullopt, false, true};
  Value lhs = check_expression(ast_.child(node, 0));
  Value rhs = check_expression(ast_.child(node, 1));
  // `"%d items, %.3f" % (n, loss)`: Python's printf-style formatting.
  if (op == BinaryOperator::Mod && types_.kind(lhs.type) == TypeKind::String && !in_device())
    return check_percent_format(node, rhs);

  // Matrix product of two tensors: ts.matmul's rules (NumPy's), vector
  // operands and broadcast batch dimensions included.
  if (op == BinaryOperator::MatMul && types_.kind(lhs.type) == TypeKind::Tensor &&
      types_.kind(rhs.type) == TypeKind::Tensor && !in_device()) {
    TypeId product = matmul_result(node, ast_.child(node, 0), ast_.child(node, 1), lhs.type, rhs.type);
    if (types_.is_error(product)) return Value{product};
    lhs.type = reduce_partial_in_program(ast_.child(node, 0), lhs.type);
    rhs.type = reduce_partial_in_program(ast_.child(node, 1), rhs.type);
    auto sharding = matmul_sharding(node, lhs.type, rhs.type, product);
    if (!sharding) return Value{types_.error()};
    return Value{types_.with_sharding(product, *sharding)};
  }

  Value result{binary_result(node, BinaryUse::of(op), lhs.type, rhs.type)};
  if (!in_device() && !types_.is_error(result.type) && types_.kind(result.type) == TypeKind::Tensor &&
      (types_.sharding(lhs.type) || types_.sharding(rhs.type))) {
    if (!function_ && !keeps_partial(types_, op, lhs.type, rhs.type)) {
      lhs.type = reduce_partial_in_program(ast_.child(node, 0), lhs.type);
      rhs.type = reduce_partial_in_program(ast_.child(node, 1), rhs.type);
    }
    // (A number added to a partial sum would be added once per rank.)
    bool linear = (op == BinaryOperator::Add || op == BinaryOperator::Sub) &&
                  types_.kind(lhs.type) == TypeKind::Tensor && types_.kind(rhs.type) == TypeKind::Tensor;
    bool scaling = op == BinaryOperator::Mul || op == BinaryOperator::Div;
    std::vector<TypeId> operands;
    for (TypeId t : {lhs.type, rhs.type})
      if (types_.kind(t) == TypeKind::Tensor) operands.push_back(t);
    // Only a partial sum scaled by something whole stays a partial sum.
    bool partial_rhs = types_.sharding(rhs.type) && types_.sharding(rhs.type)->partial_axes;
    if (op == BinaryOperator::Div && partial_rhs) scaling = false;
    std::optional<uint32_t> sharding;
    if (linear || scaling) {
      sharding = elementwise_sharding(node, operator_spelling(op), operands, types_.dims(result.type).size(), linear);
    } else {
      sharding = elementwise_sharding(node, operator_spelling(op), operands, types_.dims(result.type).size(), false);
      if (sharding && *sharding && types_.sharding_info(*sharding).partial_axes) {
        const ShardingInfo* left = types_.sharding(lhs.type);
        TypeId partial = left && left->partial_axes ? lhs.type : rhs.type;
        diags_.emit<diag::SemaDistLayoutMismatch>(n.range, std::string(operator_spelling(op)),
                                                  types_.to_string(partial),
                                                  reduce_first(types_.sharding_info(*sharding)));
        sharding.reset();
      }
    }
    if (!sharding) return Value{types_.error()};
    result.type = types_.with_sharding(result.type, *sharding);
  }
  result.global_id = (lhs.global_id || rhs.global_id) && (op == BinaryOperator::Add || op == BinaryOperator::Sub);
  if (types_.is_error(result.type)) return result;
  NodeId lhs_node = ast_.child(node, 0), rhs_node = ast_.child(node, 1);
  auto exact = [](const Value& v) { return v.constant && !v.constant->from_local; };
  auto integral = [&](TypeId t) {
    const TypeInfo& info = types_.info(t);
    return info.kind == TypeKind::UntypedInt || (info.kind == TypeKind::Scalar && is_integer(info.scalar));
  };
  // An integer to a negative constant power has no integer result (NumPy
  // refuses it too); a float base says what is meant. pow() is float.
  if (op == BinaryOperator::Pow && integral(lhs.type) && integral(rhs.type) && exact(rhs) && !rhs.constant->is_float &&
      rhs.constant->integer < 0) {
    std::string base = source_text(lhs_node);
    std::string fixed = ast_.kind(lhs_node) == NodeKind::IntLiteral ? base + ".0" : "cast(" + base + ", f32)";
    diags_.emit<diag::SemaNegativeIntegerPower>(n.range, to_string(rhs.constant->integer), fixed)
        .fix_it_replace(ast_.range(lhs_node), fixed);
    return Value{types_.error()};
  }
  // A literal count or divisor says what it does whatever the other
  // operand: a negative shift count raises in Python, and an integer `//` or
  // `%` by zero has no value in a kernel (graph code follows NumPy: 0).
  if (!exact(lhs) && exact(rhs) && !rhs.constant->is_float && integral(rhs.type)) {
    bool shift = op == BinaryOperator::LShift || op == BinaryOperator::RShift;
    if (shift && rhs.constant->integer < 0) {
      diags_.emit<diag::SemaNegativeShift>(n.range, to_string(rhs.constant->integer));
      return Value{types_.error()};
    }
    if ((op == BinaryOperator::FloorDiv || op == BinaryOperator::Mod) && rhs.constant->integer == 0 && in_device() &&
        integral(lhs.type)) {
      diags_.emit<diag::SemaDivisionByZero>(n.range, std::string(operator_spelling(op)),
                                            "in a kernel, where an integer division by zero has no defined value");
      return Value{types_.error()};
    }
  }
  // Untyped constants take the type of the other operand: their exact value
  // must fit it (`x + 3000000000` with x: i32).
  check_operand_constants(lhs, lhs_node, rhs, rhs_node, result.type);
  if (!lhs.constant || !rhs.constant) return result;
  Constant a = *lhs.constant, b = *rhs.constant;
  bool real = a.is_float || b.is_float || op == BinaryOperator::Div;
  Constant c;
  c.is_float = real;
  c.from_local = a.from_local || b.from_local;
  bool both_exact = !c.from_local;
  if (real) {
    double x = a.as_double(), y = b.as_double();
    bool divides = op == BinaryOperator::Div || op == BinaryOperator::FloorDiv || op == BinaryOperator::Mod;
    if (divides && y == 0) {
      // Python raises ZeroDivisionError; a kernel would compute inf or NaN.
      if (both_exact) {
        diags_.emit<diag::SemaDivisionByZero>(n.range, std::string(operator_spelling(op)), "in a constant expression");
        return Value{types_.error()};
      }
      return result;
    }
    switch (op) {
      case BinaryOperator::Add: c.real = x + y; break;
      case BinaryOperator::Sub: c.real = x - y; break;
      case BinaryOperator::Mul: c.real = x * y; break;
      case BinaryOperator::Div: c.real = x / y; break;
      case BinaryOperator::FloorDiv: c.real = std::floor(x / y); break;
      case BinaryOperator::Mod: c.real = x - std::floor(x / y) * y; break;
      case BinaryOperator::Pow: c.real = std::pow(x, y); break;
      case BinaryOperator::LShift:
      case BinaryOperator::RShift:
      case BinaryOperator::BitAnd:
      case BinaryOperator::BitOr:
      case BinaryOperator::BitXor:
      case BinaryOperator::MatMul: return result;  // not float operations (reported by binary_result)
    }
    result.constant = c;
    return result;
  }
  switch (fold_integer(op, a.integer, b.integer, c.integer)) {
    case FoldError::None:
      result.constant = c;
      break;
    case FoldError::DivisionByZero:
      if (both_exact) {
        diags_.emit<diag::SemaDivisionByZero>(n.range, std::string(operator_spelling(op)), "in a constant expression");
        return Value{types_.error()};
      }
      break;
    case FoldError::NegativeShift:
      if (both_exact) {
        diags_.emit<diag::SemaNegativeShift>(n.range, to_string(b.integer));
        return Value{types_.error()};
      }
      break;
    case FoldError::TooLarge:
      if (both_exact) {
        diags_.emit<diag::SemaConstantTooLarge>(n.range);
        return Value{types_.error()};
      }
      break;
    case FoldError::NegativeExponent:  // a stale local's value: the run-time rule applies
      break;
  }
  return result;
}

bool Checker::check_constant_index(NodeId index, const Value& value, DimId dim, size_t axis, NodeId object,
                                   std::string_view what, bool is_end) {
  // Kernels index memory: a constant index must lie inside the axis, and a
  // negative one does not count from the end (graph-level code follows
  // NumPy, where it does, and where an integer index outside [-size, size)
  // is an IndexError; slice bounds clamp).
  if (!value.constant || value.constant->from_local || value.constant->is_float) return true;
  ConstantInt k = value.constant->integer;
  std::optional<int64_t> size = types_.constant_value(dim);
  if (!in_device()) {
    if (what != "index" || !size || (k < *size && k >= -*size)) return true;
    diags_.emit<diag::SemaIndexOutOfRange>(ast_.range(index), std::string(what), to_string(k),
                                           static_cast<unsigned>(axis), source_text(object), std::to_string(*size));
    return false;
  }
  // Past the start even counting from the end (`s[-65]` of 64 elements):
  // no index to suggest.
  if (k < 0 && size && *size + k < 0) {
    diags_.emit<diag::SemaIndexOutOfRange>(ast_.range(index), std::string(what), to_string(k),
                                           static_cast<unsigned>(axis), source_text(object), std::to_string(*size));
    return false;
  }
  if (k < 0) {
    std::string size_text = size ? std::to_string(*size) : types_.dim_to_string(dim);
    std::string fixed = size ? to_string(*size + k) : size_text + " - " + to_string(-k);
    diags_.emit<diag::SemaNegativeIndex>(ast_.range(index), std::string(what), to_string(k), fixed)
        .fix_it_replace(ast_.range(index), fixed);
    return false;
  }
  if (size && (is_end ? k > *size : k >= *size)) {
    diags_.emit<diag::SemaIndexOutOfRange>(ast_.range(index), std::string(what), to_string(k),
                                           static_cast<unsigned>(axis), source_text(object), std::to_string(*size));
    return false;
  }
  return true;
}

Value Checker::check_subscript(NodeId node) {
  NodeId object = ast_.child(node, 0);
  NodeId index = ast_.child(node, 1);
  // `fp8[e5m2]` (the brief's alias of fp8_e5m2) is a dtype: `fp8` alone
  // would warn that it means fp8_e4m3.
  if (ast_.kind(object) == NodeKind::Name && ast_.kind(index) == NodeKind::Name &&
      !locals_.count(ast_.node(object).payload)) {
    const std::string family = name_of(ast_.node(object).payload);
    if ((family == "fp8" || family == "fp6" || family == "fp4") &&
        lookup_dtype(family + "_" + name_of(ast_.node(index).payload))) {
      set_type(object, types_.dtype(types_.dynamic()));
      return Value{types_.dtype(resolve_type(node)), std::nullopt, false, true};
    }
  }
  Value base = check_expression(object);
  const TypeInfo& info = types_.info(base.type);
  std::vector<NodeId> indices;
  if (ast_.kind(index) == NodeKind::Tuple && !(ast_.node(index).flags & 1)) {
    indices.assign(ast_.children(index).begin(), ast_.children(index).end());
  } else {
    indices.push_back(index);
  }

  if (base.is_type) {
    // A type in expression position (`ts.Tensor[...]`, `f32[n]`).
    return Value{types_.dtype(resolve_type(node)), std::nullopt, false, true};
  }
  switch (info.kind) {
    case TypeKind::Error:
      for (NodeId i : indices) check_expression(i);
      return Value{types_.error()};
    case TypeKind::Dynamic:
    case TypeKind::Object:
    case TypeKind::Mesh:
    case TypeKind::Layout:
      for (NodeId i : indices) check_expression(i);
      return Value{types_.dynamic()};
    case TypeKind::List: {
      for (NodeId i : indices) check_expression(i);
      // `l[1:]`, `l[::-1]`: a list (graph code; lowering needs the bounds
      // known when compiling).
      if (indices.size() == 1 && ast_.kind(indices[0]) == NodeKind::Slice) return Value{base.type};
      return Value{TypeId{info.payload}};
    }
    case TypeKind::Tuple: {
      Value i = check_expression(index);
      auto elements = types_.tuple_elements(base.type);
      int64_t k_value = -1;
      bool shape = ast_.kind(object) == NodeKind::Attribute && name_of(ast_.node(object).payload) == "shape";
      if (i.constant) {
        // A negative index counts from the end, as Python's; one out of
        // range is Python's IndexError.
        if (std::optional<int64_t> c = i.constant->as_int64()) {
          int64_t size = static_cast<int64_t>(elements.size());
          k_value = *c < 0 ? *c + size : *c;
          if (k_value < 0 || k_value >= size) {
            diags_.emit<diag::SemaTupleIndexOutOfRange>(ast_.range(index), *c, types_.to_string(base.type),
                                                        static_cast<unsigned>(size));
            return Value{types_.error()};
          }
        }
      }
      std::optional<int64_t> k = k_value >= 0 ? std::optional<int64_t>(k_value) : std::nullopt;
      // `x.shape[k]` of a tensor (k may count from the end): a constant
      // where the size is one.
      if (shape && k && static_cast<size_t>(*k) < elements.size()) {
        TypeId tensor = out_.node_types[ast_.child(object, 0).index];
        if (tensor.valid() && types_.kind(tensor) == TypeKind::Tensor) {
          if (auto size = types_.constant_value(types_.dims(tensor)[static_cast<size_t>(*k)]))
            return Value{types_.untyped_int(), Constant{false, *size, 0.0}};
        }
      }
      if (k && *k >= 0 && static_cast<size_t>(*k) < elements.size()) return Value{elements[static_cast<size_t>(*k)]};
      // An index known when it runs, or in a loop lowering unrolls
      // (`t[i]` in `for i in range(2)`), of a tuple of one element type:
      // that type.
      if (!in_device() && !k && !elements.empty() && !types_.is_error(i.type) &&
          std::ranges::all_of(elements, [&](TypeId t) { return t == elements.front(); }) &&
          (types_.kind(i.type) == TypeKind::UntypedInt ||
           (types_.kind(i.type) == TypeKind::Scalar && is_integer(types_.info(i.type).scalar))))
        return Value{elements.front()};
      return Value{types_.dynamic()};
    }
    case TypeKind::Tensor:
      break;
    default:
      for (NodeId i : indices) check_expression(i);
      diags_.emit<diag::SemaNotSubscriptable>(ast_.range(object), types_.to_string(base.type));
      return Value{types_.error()};
  }

  if (info.space == AddressSpace::Register && in_device()) {
    // Register values: a vector's elements can be read (and not written);
    // a register tile lives spread over a warp's lanes, no lane holds it.
    if (types_.dims(base.type).size() != 1) {
      for (NodeId i : indices) check_expression(i);
      diags_.emit<diag::SemaIndexRegisterTile>(ast_.range(node), source_text(object));
      return Value{types_.error()};
    }
    if (ast_.kind(index) == NodeKind::Slice) {
      check_expression(index);
      diags_.emit<diag::SemaUnsupportedInKernel>(ast_.range(index), std::string("a slice of a vector"));
      return Value{types_.error()};
    }
  }
  // A copy: checking the indices below may create types.
  std::vector<DimId> dims(types_.dims(base.type).begin(), types_.dims(base.type).end());
  size_t consumed = 0;
  std::vector<DimId> remaining;
  bool error = false;
  bool bound_reported = false;  // a slice bound had an error: its length is not the user's doing
  // `...` stands for every dimension the other indices leave (NumPy): at
  // most one.
  size_t consuming = 0, ellipses = 0;
  for (NodeId i : indices) {
    if (ast_.kind(i) == NodeKind::EllipsisLiteral) ++ellipses;
    else if (ast_.kind(i) != NodeKind::NoneLiteral) ++consuming;
  }
  if (ellipses > 1) {
    for (NodeId i : indices)
      if (ast_.kind(i) != NodeKind::EllipsisLiteral && ast_.kind(i) != NodeKind::Slice) check_expression(i);
    diags_.emit<diag::SemaMultipleEllipsis>(ast_.range(node), source_text(object));
    return Value{types_.error()};
  }
  // NumPy's integer-array indexing in graph code (a gather,
  // docs/language/graph.md "Indexing with integer tensors"): each integer
  // tensor consumes one dimension; the integers beside them count as 0-d
  // indices for NumPy's rule of where the broadcast index dimensions go (in
  // place of the indexed ones when those are adjacent, else first).
  std::vector<std::pair<NodeId, TypeId>> gathers;  // the integer tensors
  std::vector<size_t> indexed_dims;                // the dimensions they and the integers index
  size_t gather_at = 0;                            // where in `remaining` the index dimensions go, when adjacent
  // NumPy's adjacency is the index tuple's: a None between two indices
  // (`x[i, None, j]`) puts the index dimensions first.
  bool none_between = false, none_pending = false, any_indexed = false;
  for (NodeId i : indices) {
    if (ast_.kind(i) == NodeKind::NoneLiteral) {
      remaining.push_back(types_.constant_dim(1));  // new axis
      none_pending = any_indexed;
      continue;
    }
    if (ast_.kind(i) != NodeKind::EllipsisLiteral && ast_.kind(i) != NodeKind::Slice) {
      none_between = none_between || none_pending;
      any_indexed = true;
    }
    if (ast_.kind(i) == NodeKind::EllipsisLiteral) {
      for (size_t skip = dims.size() > consuming ? dims.size() - consuming : 0; skip > 0; --skip)
        remaining.push_back(dims[consumed++]);
      continue;
    }
    if (consumed >= dims.size()) {
      for (NodeId rest : indices) check_expression(rest);
      diags_.emit<diag::SemaTooManyIndices>(ast_.range(node), source_text(object), static_cast<unsigned>(dims.size()),
                                            static_cast<unsigned>(indices.size()));
      return Value{types_.error()};
    }
    if (ast_.kind(i) == NodeKind::Slice) {
      NodeId lower = ast_.child(i, 0), upper = ast_.child(i, 1), step = ast_.child(i, 2);
      std::optional<Constant> lo, hi;
      for (NodeId part : {lower, upper, step}) {
        if (!part.valid()) continue;
        Value v = check_expression(part);
        if (types_.is_error(v.type)) bound_reported = true;
        if (!types_.is_error(v.type) && types_.kind(default_type(v.type)) == TypeKind::Scalar &&
            !is_integer(types_.info(default_type(v.type)).scalar)) {
          diags_.emit<diag::SemaIndexNotInteger>(ast_.range(part), types_.to_string(v.type));
          error = true;
        }
        if (part == lower) lo = v.constant;
        if (part == upper) hi = v.constant;
        if (part == step && v.constant && !v.constant->is_float && v.constant->integer == 0) {
          diags_.emit<diag::SemaSliceStepZero>(ast_.range(part));
          error = true;
        }
        if (part != step && !check_constant_index(part, v, dims[consumed], consumed, object,
                                                  part == lower ? "slice start" : "slice end", part == upper))
          error = true;
      }
      set_type(i, types_.dynamic());
      // The slice's length. A constant dimension: Python's slice rules
      // exactly (negative bounds count from the end, bounds clamp). A
      // symbolic one: constant non-negative bounds, or `t:t + k`, give a
      // window of fixed length (its bounds are checked where they run);
      // anything else is known at run time only.
      DimId length = types_.dynamic_dim();
      // Each bound's value where known (an absent start is 0, an absent
      // step 1; an absent end is the dimension's end).
      int64_t step_value = 1, lo_value = 0, hi_value = 0, extent = 0;
      bool step_known = true, lo_known = true, hi_known = false;
      if (step.valid()) {
        auto c = constants_.find(step.index);
        step_known = c != constants_.end() && c->second.as_int64() && *c->second.as_int64() > 0;
        if (step_known) step_value = *c->second.as_int64();
      }
      if (lower.valid()) {
        lo_known = lo && lo->as_int64();
        if (lo_known) lo_value = *lo->as_int64();
      }
      if (upper.valid() && hi && hi->as_int64()) {
        hi_known = true;
        hi_value = *hi->as_int64();
      }
      bool extent_known = types_.constant_value(dims[consumed]).has_value();
      if (extent_known) extent = *types_.constant_value(dims[consumed]);
      // NumPy's negative step on a constant size with constant bounds:
      // bounds wrap once and clamp to [-1, size - 1], the defaults run from
      // the last element through the first.
      std::optional<int64_t> negative_step;
      if (step.valid()) {
        auto c = constants_.find(step.index);
        if (c != constants_.end() && c->second.as_int64() && *c->second.as_int64() < 0) negative_step = *c->second.as_int64();
      }
      if (negative_step && extent_known && lo_known && (!upper.valid() || hi_known)) {
        auto wrap = [&](int64_t v) { return std::clamp<int64_t>(v < 0 ? v + extent : v, -1, extent - 1); };
        int64_t a = lower.valid() ? wrap(lo_value) : extent - 1, b = upper.valid() ? wrap(hi_value) : -1;
        length = types_.constant_dim(a > b ? (a - b - 1) / -*negative_step + 1 : 0);
      } else if (negative_step) {
        // known when it runs (the lowering reports what it cannot compile)
      } else if (!lower.valid() && !upper.valid() && !step.valid()) {
        length = dims[consumed];
      } else if (extent_known && step_known && lo_known && (!upper.valid() || hi_known)) {
        auto clamp = [&](int64_t v) { return std::clamp<int64_t>(v < 0 ? v + extent : v, 0, extent); };
        int64_t a = clamp(lo_value), b = upper.valid() ? clamp(hi_value) : extent;
        length = types_.constant_dim(b > a ? (b - a + step_value - 1) / step_value : 0);
      } else if (step_known && lo_known && lo_value >= 0 && hi_known && hi_value >= lo_value) {
        length = types_.constant_dim((hi_value - lo_value + step_value - 1) / step_value);
      } else if (!step.valid() && upper.valid() && ast_.kind(upper) == NodeKind::BinaryOp &&
                 static_cast<BinaryOperator>(ast_.node(upper).op) == BinaryOperator::Add && lower.valid() &&
                 same_tree(ast_, values_, ast_.child(upper, 0), lower)) {
        // Already checked as part of `upper`: read its constant, do not re-check.
        auto window = constants_.find(ast_.child(upper, 1).index);
        if (window != constants_.end() && window->second.as_int64() && *window->second.as_int64() >= 0)
          length = types_.constant_dim(*window->second.as_int64());
      }
      remaining.push_back(length);
      ++consumed;
      continue;
    }
    Value v = check_expression(i);
    TypeId t = default_type(v.type);
    const TypeInfo& ti = types_.info(t);
    // (A 0-d integer tensor, `x[labels[i]]`, selects as an integer does; as
    // a gather of no index dimensions.)
    if (ti.kind == TypeKind::Tensor && !in_device() && (!types_.dims(t).empty() || is_integer(ti.scalar))) {
      // NumPy's boolean-mask indexing: a data-dependent shape; its
      // integer-array indexing: a gather.
      if (ti.scalar == ScalarType::Bool) {
        diags_.emit<diag::SemaTensorIndex>(ast_.range(i), types_.to_string(v.type))
            .note<diag::NoteMaskWhere>(ast_.range(i), source_text(i), source_text(object));
        error = true;
      } else if (!is_integer(ti.scalar)) {
        diags_.emit<diag::SemaIndexNotInteger>(ast_.range(i), types_.to_string(v.type));
        error = true;
      } else {
        if (gathers.empty()) gather_at = remaining.size();
        gathers.push_back({i, t});
        indexed_dims.push_back(consumed);
      }
    } else if (ti.kind != TypeKind::Error && ti.kind != TypeKind::Dynamic &&
        !(ti.kind == TypeKind::Scalar && is_integer(ti.scalar))) {
      diags_.emit<diag::SemaIndexNotInteger>(ast_.range(i), types_.to_string(v.type));
      error = true;
    } else if (!check_constant_index(i, v, dims[consumed], consumed, object, "index", false)) {
      error = true;
    } else {
      indexed_dims.push_back(consumed);
    }
    if (v.global_id && info.space == AddressSpace::Shared) {
      diags_.emit<diag::SemaSharedIndexedByGlobalId>(ast_.range(i), source_text(object));
    }
    ++consumed;
  }
  if (!error && !gathers.empty()) {
    std::optional<std::vector<DimId>> index_dims = gather_dims(node, object, base.type, gathers);
    if (!index_dims) return Value{types_.error()};
    // Adjacent indexed dimensions (integers included) with no None between
    // their indices: the index dimensions take their place; else they come
    // first (NumPy). Consumed in order, so indexed_dims is sorted.
    const bool adjacent = indexed_dims.back() - indexed_dims.front() + 1 == indexed_dims.size() && !none_between;
    remaining.insert(remaining.begin() + static_cast<std::ptrdiff_t>(adjacent ? gather_at : 0), index_dims->begin(),
                     index_dims->end());
  }
  if (error) return Value{types_.error()};
  for (size_t d = consumed; d < dims.size(); ++d) remaining.push_back(dims[d]);
  if (remaining.empty()) {
    // Graph code: one element of a tensor is a 0-d tensor, as NumPy's x[i, j]
    // is a 0-d value (it is one in the Graph IR; typed as a number, scalar
    // arithmetic on it did not compile). Kernels read a number.
    if (!in_device()) return Value{types_.tensor(info.scalar, info.policy, {}, info.space, false, info.seed_style)};
    return Value{element_value_type(base.type)};
  }
  TypeId result = types_.tensor(info.scalar, info.policy, remaining, info.space, info.mut, info.seed_style);
  // In device code a slice is a view of memory, whose size lowering fixes
  // at compile time; only an element loop (slice assignment) or a vector's
  // start take a size known at run time.
  if (in_device() && !bound_reported && info.space != AddressSpace::Register &&
      !runtime_length_slices_.contains(node.index) &&
      std::ranges::any_of(remaining, [&](DimId d) { return !types_.constant_value(d).has_value(); })) {
    diags_.emit<diag::SemaSliceNotStatic>(ast_.range(node), source_text(node), types_.to_string(result),
                                          std::string(slice_use_));
    return Value{types_.error()};
  }
  return Value{result};
}

// The shape of a gather's indices, broadcast together (NumPy), after the
// checks of what the lowering compiles: a tensor not split or partial over
// a mesh. nullopt after a diagnostic.
std::optional<std::vector<DimId>> Checker::gather_dims(NodeId node, NodeId object, TypeId object_type,
                                                       std::span<const std::pair<NodeId, TypeId>> indices) {
  const std::string first_type = types_.to_string(indices.front().second);
  const bool object_laid_out = distributed_layout(types_.sharding(object_type));
  for (auto [where, type] : indices) {
    const bool index_laid_out = distributed_layout(types_.sharding(type));
    if (index_laid_out || object_laid_out) {
      diags_.emit<diag::SemaTensorIndexGather>(
          ast_.range(index_laid_out ? where : object), first_type,
          "of a tensor split, partial or varying over a mesh axis is not supported yet; all_gather the tensor and "
          "its indices first");
      return std::nullopt;
    }
  }
  std::vector<DimId> dims(types_.dims(indices.front().second).begin(), types_.dims(indices.front().second).end());
  TypeId shape = indices.front().second;
  for (size_t k = 1; k < indices.size(); ++k) {
    auto [where, type] = indices[k];
    std::optional<std::vector<DimId>> both =
        broadcast_dims(where, source_text(node), shape, type, dims, types_.dims(type));
    if (!both) return std::nullopt;
    dims = *both;
    shape = type;
  }
  return dims;
}

}  // namespace tessera::sema
