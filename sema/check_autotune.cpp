// Autotune spaces (docs/autotuning.md): the points of
// `@kernel.autotune(space=dict(...), where=lambda ...: ..., key=(...))`.
// Every point is the cartesian product of the knobs' lists in the order
// written, the first knob varying slowest (Python's itertools.product);
// `where=` is evaluated at each point and prunes those where it is false.
// Whether a kept point compiles is the driver's question (it checks and
// lowers the kernel once per point: driver/autotune.cpp).
#include <algorithm>

#include "sema/checker.h"

namespace tessera::sema {

namespace {

// More points than this is a space nobody can time.
constexpr uint64_t kMaxAutotunePoints = 4096;

std::string point_text(const std::vector<AutotuneParameter>& knobs, const std::vector<int64_t>& values,
                       const ValueStores& stores) {
  std::string text;
  for (size_t k = 0; k < knobs.size(); ++k)
    text += (k ? ", " : "") + std::string(stores.identifiers.name(knobs[k].name)) + "=" + std::to_string(values[k]);
  return text;
}

}  // namespace

void Checker::read_autotune_key(FunctionInfo& info, NodeId value) {
  // key=("n", "k") or key="n"; the names are checked against the kernel's
  // dimensions once its parameters are typed (enumerate_autotune_points).
  std::vector<NodeId> items;
  if (ast_.kind(value) == NodeKind::Tuple || ast_.kind(value) == NodeKind::List) {
    for (NodeId item : ast_.children(value)) items.push_back(item);
  } else {
    items.push_back(value);
  }
  info.autotune_key.clear();
  for (NodeId item : items) {
    if (ast_.kind(item) != NodeKind::StringLiteral) {
      diags_.emit<diag::SemaInvalidAutotuneKey>(ast_.range(item), "'" + source_text(item) + "' is not a string");
      continue;
    }
    info.autotune_key.push_back(values_.strings[ast_.node(item).payload]);
  }
}

void Checker::enumerate_autotune_points(FunctionInfo& info) {
  info.autotune_points.clear();
  uint64_t count = 1;
  for (const AutotuneParameter& knob : info.autotune) count *= knob.candidates.size();
  if (count > kMaxAutotunePoints) {
    diags_.emit<diag::SemaInvalidAutotuneSpace>(ast_.range(info.def),
                                                "the space has " + std::to_string(count) + " points; at most " +
                                                    std::to_string(kMaxAutotunePoints) + " can be tuned");
    return;
  }
  // The constraint: lambda KNOB, ...: condition.
  NodeId where = info.autotune_where;
  std::vector<size_t> where_knobs;  // the lambda's parameters, as knob indices
  if (where.valid()) {
    if (ast_.kind(where) != NodeKind::Lambda) {
      diags_.emit<diag::SemaInvalidAutotuneWhere>(ast_.range(where), "write where=lambda BM, BN: BM * BN <= 16384");
      where = NodeId{};
    } else {
      for (NodeId parameter : ast_.children(ast_.child(where, 0))) {
        IdentifierId name{ast_.node(parameter).payload};
        auto it = std::find_if(info.autotune.begin(), info.autotune.end(),
                               [&](const AutotuneParameter& knob) { return knob.name == name; });
        if (it == info.autotune.end()) {
          diags_.emit<diag::SemaInvalidAutotuneWhere>(ast_.range(parameter),
                                                      "'" + name_of(name) + "' is not a knob of the space");
          where = NodeId{};
          break;
        }
        where_knobs.push_back(static_cast<size_t>(it - info.autotune.begin()));
      }
    }
  }
  std::vector<size_t> index(info.autotune.size(), 0);
  for (uint64_t p = 0; p < count; ++p) {
    AutotunePoint point;
    for (size_t k = 0; k < info.autotune.size(); ++k) point.values.push_back(info.autotune[k].candidates[index[k]]);
    if (where.valid()) {
      auto saved = std::move(locals_);
      locals_.clear();
      for (size_t i = 0; i < where_knobs.size(); ++i) {
        Local local;
        local.type = types_.scalar(ScalarType::I32);
        local.def = ast_.child(where, 0);
        local.constant = Constant{false, point.values[where_knobs[i]]};
        locals_[info.autotune[where_knobs[i]].name.index] = local;
      }
      std::optional<bool> keep = constant_condition(ast_.child(where, 1));
      locals_ = std::move(saved);
      if (!keep) {
        diags_.emit<diag::SemaInvalidAutotuneWhere>(
            ast_.range(ast_.child(where, 1)),
            "its value is not a constant at " + point_text(info.autotune, point.values, values_));
        where = NodeId{};
      } else if (!*keep) {
        point.pruned = "where= is false";
      }
    }
    info.autotune_points.push_back(std::move(point));
    for (size_t k = info.autotune.size(); k-- > 0;) {  // the last knob varies fastest
      if (++index[k] < info.autotune[k].candidates.size()) break;
      index[k] = 0;
    }
  }
}

// A condition of constants: comparisons (chained too), `and`, `or`, `not`,
// `a if c else b`, and what check_expression folds (arithmetic on
// constants and knobs). nullopt when it is not constant.
std::optional<bool> Checker::constant_condition(NodeId node) {
  std::optional<int64_t> v = constant_integer(node);
  if (!v) return std::nullopt;
  return *v != 0;
}

std::optional<int64_t> Checker::constant_integer(NodeId node) {
  const Node& n = ast_.node(node);
  switch (n.kind) {
    case NodeKind::Compare: {
      NodeId lhs = ast_.child(node, 0), rhs = ast_.child(node, 1);
      std::optional<int64_t> before = 1;
      if (n.flags & 1) {  // a chain: lhs is the comparison before, its right operand this one's left
        before = constant_integer(lhs);
        lhs = ast_.child(lhs, 1);
      }
      std::optional<int64_t> a = constant_integer(lhs), b = constant_integer(rhs);
      if (!before || !a || !b) return std::nullopt;
      bool result = false;
      switch (static_cast<CompareOperator>(n.op)) {
        case CompareOperator::Lt:
          result = *a < *b;
          break;
        case CompareOperator::Gt:
          result = *a > *b;
          break;
        case CompareOperator::Le:
          result = *a <= *b;
          break;
        case CompareOperator::Ge:
          result = *a >= *b;
          break;
        case CompareOperator::Eq:
        case CompareOperator::Is:
          result = *a == *b;
          break;
        case CompareOperator::Ne:
        case CompareOperator::IsNot:
          result = *a != *b;
          break;
        case CompareOperator::In:
        case CompareOperator::NotIn:
          return std::nullopt;
      }
      return *before != 0 && result;
    }
    case NodeKind::BoolOp: {
      std::optional<int64_t> a = constant_integer(ast_.child(node, 0)), b = constant_integer(ast_.child(node, 1));
      if (!a || !b) return std::nullopt;
      return static_cast<BoolOperator>(n.op) == BoolOperator::And ? (*a != 0 && *b != 0) : (*a != 0 || *b != 0);
    }
    case NodeKind::UnaryOp:
      if (static_cast<UnaryOperator>(n.op) == UnaryOperator::Not) {
        std::optional<int64_t> a = constant_integer(ast_.child(node, 0));
        if (!a) return std::nullopt;
        return *a == 0;
      }
      break;
    case NodeKind::IfExp: {
      std::optional<int64_t> c = constant_integer(ast_.child(node, 0));
      if (!c) return std::nullopt;
      return constant_integer(ast_.child(node, *c != 0 ? 1 : 2));
    }
    default:
      break;
  }
  Value value = check_expression(node);
  if (!value.constant) return std::nullopt;
  return value.constant->as_int64();
}

}  // namespace tessera::sema
