// Lists in graph code (docs/language/graph.md, "Lists"): `l = []`,
// `l.append(x)`, `l[i]`, `len(l)`, `for x in l`, print(l). A list is a
// compile-time sequence of values (a Bound's elements): its length must be
// known when compiling, so a loop that uses a list runs its iterations
// one after the other in the IR (unrolled), with the loop variable a
// constant in each, and an append anywhere else (a loop whose trip count
// is known only at run time, a branch taken at run time) is
// lower.unsupported.
#include <algorithm>
#include <functional>

#include "lower/lowering.h"

namespace tessera::ir {

using SemaKind = sema::TypeKind;

namespace {
// More iterations than this in an unrolled loop is refused: the IR would
// hold a copy of the body per iteration.
constexpr int64_t kMaxUnrolledIterations = 4096;
}  // namespace

bool Lowering::is_list_node(NodeId node) const {
  sema::TypeId t = node_type(node);
  return graph_ && t.valid() && typed_.types.kind(t) == SemaKind::List;
}

bool Lowering::mentions_list(NodeId node) const {
  if (!node.valid()) return false;
  if (ast_.kind(node) == NodeKind::Name && is_list_node(node)) return true;
  // `[]` made in the body, `l.append(x)` of a list made before.
  if (ast_.kind(node) == NodeKind::List && is_list_node(node)) return true;
  for (NodeId child : ast_.children(node))
    if (mentions_list(child)) return true;
  return false;
}

// An integer the IR computes from constants only (an unrolled loop's
// variable, `i - 1` of it): its value.
std::optional<int64_t> Lowering::folded_int(Value* v) const {
  if (auto c = constant_int_value(v)) return c;
  Operation* op = v->defining_op();
  if (!op) return std::nullopt;
  auto operand = [&](size_t i) { return folded_int(op->operand(i)); };
  if (op->is(OpKind::AddI) || op->is(OpKind::SubI) || op->is(OpKind::MulI)) {
    auto a = operand(0), b = operand(1);
    if (!a || !b) return std::nullopt;
    return op->is(OpKind::AddI) ? *a + *b : op->is(OpKind::SubI) ? *a - *b : *a * *b;
  }
  if (op->is(OpKind::ExtSI) || op->is(OpKind::TruncI) || op->is(OpKind::IndexCast)) return operand(0);
  return std::nullopt;
}

// `for x in l` (each element), and `for i in range(a, b, s)` with constant
// bounds whose body uses a list: the body once per iteration, in this
// block. False when the loop is not one of these (lowered as a loop).
bool Lowering::lower_list_loop(NodeId statement) {
  NodeId target = ast_.child(statement, 0), iterable = ast_.child(statement, 1), body = ast_.child(statement, 2);
  bool over_list = is_list_node(iterable);
  if (!over_list && !mentions_list(body)) return false;
  auto refuse_jumps = [&] {
    if (contains_break(ast_, body) || contains_kind(ast_, body, NodeKind::Continue))
      unsupported(statement, "'break' or 'continue' in a loop over a list or building one (such a loop is unrolled)");
    if (ast_.kind(target) != NodeKind::Name) unsupported(target, "a loop target that is not a name, in a loop over a list");
  };
  if (over_list) {
    refuse_jumps();
    Bound list = lower(iterable);
    if (list.is_value()) unsupported(iterable, "iterating over this list");
    for (size_t i = 0; i < list.size(); ++i) {
      env_[ast_.node(target).payload] = list.element(i);
      lower_suite(body);
    }
    return true;
  }
  // range(...) with constant bounds.
  sema::TypeId callee_type = ast_.kind(iterable) == NodeKind::Call ? node_type(ast_.child(iterable, 0)) : sema::TypeId{};
  if (!callee_type.valid() || typed_.types.kind(callee_type) != SemaKind::Builtin ||
      static_cast<sema::BuiltinId>(typed_.types.info(callee_type).payload) != sema::BuiltinId::Range)
    return false;
  auto bound_args = typed_.call_arguments.find(iterable.index);
  if (bound_args == typed_.call_arguments.end()) return false;
  const std::vector<NodeId>& args = bound_args->second;
  NodeId start = args[0], stop = args.size() > 1 ? args[1] : NodeId{}, step = args.size() > 2 ? args[2] : NodeId{};
  if (!stop.valid()) std::swap(start, stop);  // range(n)
  // A bound sema does not know but the IR computes from constants
  // (`range(len(l) - 1)`, an outer unrolled loop's variable) counts too.
  // Only expressions of literals, names holding IR constants, arithmetic
  // and len() of a list are lowered to try (nothing with an effect).
  std::function<bool(NodeId)> foldable = [&](NodeId n) {
    switch (ast_.kind(n)) {
      case NodeKind::IntLiteral: return true;
      case NodeKind::Name: {
        auto it = env_.find(ast_.node(n).payload);
        return it == env_.end() ? constant_of(n).has_value()
                                : it->second.is_value() && constant_int_value(it->second.value).has_value();
      }
      case NodeKind::BinaryOp:
      case NodeKind::UnaryOp:
        for (NodeId child : ast_.children(n))
          if (!foldable(child)) return false;
        return true;
      case NodeKind::Call: {
        NodeId callee = ast_.child(n, 0);
        return ast_.kind(callee) == NodeKind::Name && name_of(ast_.node(callee).payload) == "len" &&
               ast_.children(n).size() == 2 && is_list_node(ast_.child(n, 1));
      }
      default: return false;
    }
  };
  auto known = [&](NodeId bound) -> std::optional<int64_t> {
    if (auto c = constant_of(bound)) return c;
    if (!foldable(bound)) return std::nullopt;
    return folded_int(value(bound));
  };
  std::optional<int64_t> first = start.valid() ? known(start) : std::optional<int64_t>(0);
  std::optional<int64_t> last = known(stop);
  std::optional<int64_t> by = step.valid() ? known(step) : std::optional<int64_t>(1);
  // A loop of run-time length: lowered as a loop; an append in it is
  // refused where it is (lower_list_append).
  if (!first || !last || !by || *by == 0) return false;
  refuse_jumps();
  int64_t count = *by > 0 ? (*last - *first + *by - 1) / *by : (*first - *last - *by - 1) / -*by;
  if (count > kMaxUnrolledIterations)
    unsupported(statement, "a loop of " + std::to_string(count) + " iterations that uses a list (such a loop is unrolled; at most " +
                               std::to_string(kMaxUnrolledIterations) + ")");
  Type iv_type = typed_type(target).value_or(context_.i32_type());
  if (!iv_type.is_int()) iv_type = context_.i32_type();
  for (int64_t k = 0; k < count; ++k) {
    env_[ast_.node(target).payload] = Bound{builder_.constant_int(*first + k * *by, iv_type), {}, {}};
    lower_suite(body);
  }
  return true;
}

// `l.append(x)`: x joins the list's elements, when the list was made in
// this block.
Bound Lowering::lower_list_append(NodeId call) {
  NodeId callee = ast_.child(call, 0);
  NodeId object = ast_.child(callee, 0);
  auto it = env_.find(ast_.node(object).payload);
  if (it == env_.end() || it->second.is_value()) unsupported(call, "appending to this value");
  if (it->second.list_block != builder_.insertion_block())
    unsupported(call, "appending to the list '" + name_of(ast_.node(object).payload) +
                          "' inside a loop whose trip count is known only at run time or a branch taken at run time "
                          "(a list's length must be known when compiling)");
  Bound x = lower(ast_.child(call, 1));
  Bound& list = it->second;
  // Values in `elements`; once an element is a tuple, every element in
  // `nested`.
  if (x.is_value() && list.nested.empty()) {
    list.elements.push_back(x.value);
    return Bound{};
  }
  for (Value* e : list.elements) list.nested.push_back(Bound{e, {}, {}});
  list.elements.clear();
  list.nested.push_back(std::move(x));
  return Bound{};
}

// `l[i]` with i known when compiling (a constant, an unrolled loop's
// variable); negative counts from the end, as in Python. `l[a:b:s]` with
// such bounds: a new list, Python's slice.
Bound Lowering::lower_list_subscript(NodeId node) {
  NodeId object = ast_.child(node, 0), index = ast_.child(node, 1);
  Bound list = lower(object);
  if (list.is_value()) unsupported(node, "indexing this list");
  auto known = [&](NodeId e, const char* what) {
    std::optional<int64_t> k = constant_of(e);
    if (!k) k = folded_int(value(e));
    if (!k) unsupported(e, std::string(what) + " known only at run time");
    return *k;
  };
  auto n = static_cast<int64_t>(list.size());
  if (ast_.kind(index) == NodeKind::Slice) {
    NodeId start = ast_.child(index, 0), stop = ast_.child(index, 1), step = ast_.child(index, 2);
    int64_t by = step.valid() ? known(step, "a list slice's step") : 1;
    if (by == 0) unsupported(step, "a list slice with a step of zero (Python raises ValueError)");
    // Python's slice.indices(n): bounds clamped to [0, n] (to [-1, n - 1]
    // counting down).
    auto clamp = [&](NodeId e, int64_t otherwise) {
      if (!e.valid()) return otherwise;
      int64_t v = known(e, "a list slice's bound");
      if (v < 0) v += n;
      return by > 0 ? std::clamp<int64_t>(v, 0, n) : std::clamp<int64_t>(v, -1, n - 1);
    };
    int64_t from = clamp(start, by > 0 ? 0 : n - 1), to = clamp(stop, by > 0 ? n : -1);
    Bound sliced;
    sliced.list_block = builder_.insertion_block();
    for (int64_t i = from; by > 0 ? i < to : i > to; i += by) sliced.nested.push_back(list.element(static_cast<size_t>(i)));
    // All values: kept as `elements`, as lists of values are.
    if (std::all_of(sliced.nested.begin(), sliced.nested.end(), [](const Bound& b) { return b.is_value(); })) {
      for (const Bound& b : sliced.nested) sliced.elements.push_back(b.value);
      sliced.nested.clear();
    }
    return sliced;
  }
  int64_t k = known(index, "indexing a list with an index");
  int64_t i = k < 0 ? k + n : k;
  if (i < 0 || i >= n) {
    diags_.emit<diag::LowerListIndexOutOfRange>(ast_.range(index), std::to_string(k), std::to_string(n));
    throw LoweringFailed{};
  }
  return list.element(static_cast<size_t>(i));
}

}  // namespace tessera::ir
