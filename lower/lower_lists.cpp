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
#include <unordered_set>

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
  // `t[i]` of a tuple with an index that is not a literal (a loop's
  // variable): it selects an element, known only in an unrolled loop.
  if (ast_.kind(node) == NodeKind::Subscript && graph_) {
    sema::TypeId object = node_type(ast_.child(node, 0));
    NodeId index = ast_.child(node, 1);
    if (object.valid() && typed_.types.kind(object) == SemaKind::Tuple && ast_.kind(index) != NodeKind::IntLiteral &&
        ast_.kind(index) != NodeKind::UnaryOp)
      return true;
  }
  for (NodeId child : ast_.children(node))
    if (mentions_list(child)) return true;
  return false;
}

// A tensor of rank 1 or more in graph code, which `for r in x`, a
// comprehension and `a, b = x` take row by row (sema types the rows).
bool Lowering::is_row_sequence_node(NodeId node) const {
  return graph_ && is_tensor_node(node) && !typed_.types.dims(node_type(node)).empty();
}

// What a loop or a comprehension unrolls over: a list's elements or a
// tensor's rows; nullopt for anything else (a range, a tuple).
std::optional<Bound> Lowering::unrolled_sequence(NodeId iterable) {
  if (is_row_sequence_node(iterable)) return tensor_rows(value(iterable), iterable);
  if (!is_list_node(iterable)) return std::nullopt;
  Bound list = lower(iterable);
  if (list.is_value()) unsupported(iterable, "iterating over this list");
  return list;
}

// x[0], x[1], ... along x's first axis (NumPy's iteration over an array):
// a list of values, so that what iterates over them is unrolled as over a
// list. The axis' size must be known when compiling.
Bound Lowering::tensor_rows(Value* x, NodeId where) {
  Type t = x->type();
  if (!t.is(TypeKind::Tensor) || t.rank() == 0) internal_error("lower", "rows of a value that is no tensor of rank 1 or more");
  int64_t count = t.shape()[0];
  if (count == kDynamic)
    unsupported(where, "iterating over or unpacking a tensor whose first axis' size is known only at run time (it is "
                       "unrolled, one row at a time)");
  if (count > kMaxUnrolledIterations)
    unsupported(where, "iterating over a tensor of " + std::to_string(count) + " rows (it is unrolled, at most " +
                           std::to_string(kMaxUnrolledIterations) + ")");
  std::vector<int64_t> row_dims(t.shape().begin() + 1, t.shape().end());
  std::vector<int64_t> slice_dims{1};
  std::vector<Value*> row_extents;  // the sizes of the row's `?` axes
  std::vector<int64_t> limits_rest;
  for (size_t a = 1; a < t.rank(); ++a) {
    slice_dims.push_back(t.shape()[a]);
    limits_rest.push_back(t.shape()[a] == kDynamic ? int64_t{-1} : t.shape()[a]);  // -1: the whole axis
    row_extents.push_back(t.shape()[a] == kDynamic ? graph_dim(x, static_cast<int64_t>(a)) : nullptr);
  }
  Type row_type = context_.tensor_type(row_dims, t.scalar());
  Bound rows;
  rows.list_block = builder_.insertion_block();
  for (int64_t i = 0; i < count; ++i) {
    std::vector<int64_t> starts(t.rank(), 0), limits{i + 1}, steps(t.rank(), 1);
    starts[0] = i;
    limits.insert(limits.end(), limits_rest.begin(), limits_rest.end());
    Value* slice = graph_op(OpKind::GraphSlice, {x}, context_.tensor_type(slice_dims, t.scalar()),
                            {{"starts", context_.int_array_attr(starts)},
                             {"limits", context_.int_array_attr(limits)},
                             {"steps", context_.int_array_attr(steps)}},
                            where);
    std::vector<Value*> operands{slice};
    for (Value* d : dynamic_dims(row_type, row_extents)) operands.push_back(d);
    rows.elements.push_back(graph_op(OpKind::GraphReshape, operands, row_type, {}, where));
  }
  return rows;
}

// An integer (or bool) the IR computes from constants only (an unrolled
// loop's variable, `i - 1`, `i % 2 == 0` of it): its value.
std::optional<int64_t> Lowering::folded_int(Value* v) const {
  if (auto c = constant_int_value(v)) return c;
  Operation* op = v->defining_op();
  if (!op) return std::nullopt;
  if (op->is(OpKind::Constant) && op->attr("value").is(AttributeKind::Bool)) return op->attr("value").bool_value() ? 1 : 0;
  auto operand = [&](size_t i) { return folded_int(op->operand(i)); };
  if (op->is(OpKind::ExtSI) || op->is(OpKind::ExtUI) || op->is(OpKind::TruncI) || op->is(OpKind::IndexCast))
    return operand(0);
  if (op->is(OpKind::Select)) {
    auto c = operand(0);
    if (!c) return std::nullopt;
    return operand(*c ? 1 : 2);
  }
  if (op->num_operands() != 2) return std::nullopt;
  auto a = operand(0), b = operand(1);
  if (!a || !b) return std::nullopt;
  if (op->is(OpKind::AddI)) return *a + *b;
  if (op->is(OpKind::SubI)) return *a - *b;
  if (op->is(OpKind::MulI)) return *a * *b;
  if (op->is(OpKind::AndI)) return *a & *b;
  if (op->is(OpKind::OrI)) return *a | *b;
  if (op->is(OpKind::XOrI)) return *a ^ *b;
  if ((op->is(OpKind::DivSI) || op->is(OpKind::RemSI) || op->is(OpKind::FloorDivSI)) && *b != 0) {
    if (op->is(OpKind::DivSI)) return *a / *b;
    if (op->is(OpKind::RemSI)) return *a % *b;
    int64_t q = *a / *b;
    return (*a % *b != 0 && ((*a < 0) != (*b < 0))) ? q - 1 : q;
  }
  if (op->is(OpKind::CmpI)) {
    std::string_view p = op->attr("predicate").string_value();
    if (p == "eq") return *a == *b;
    if (p == "ne") return *a != *b;
    if (p == "slt") return *a < *b;
    if (p == "sle") return *a <= *b;
    if (p == "sgt") return *a > *b;
    if (p == "sge") return *a >= *b;
  }
  return std::nullopt;
}

// `for x in l` (each element), and `for i in range(a, b, s)` with constant
// bounds whose body uses a list: the body once per iteration, in this
// block. False when the loop is not one of these (lowered as a loop).
bool Lowering::lower_list_loop(NodeId statement) {
  NodeId target = ast_.child(statement, 0), iterable = ast_.child(statement, 1), body = ast_.child(statement, 2);
  // A tuple (`for t in (a, b)`, a tuple a function returned) is unrolled
  // the same way when its elements have one type (sema types the target).
  // Over one whose elements differ in type, each element with the types
  // sema found for it (for_each_element).
  sema::TypeId iterable_type = node_type(iterable);
  bool over_tuple = iterable_type.valid() && typed_.types.kind(iterable_type) == SemaKind::Tuple;
  // In device code a loop over a list (`for off in [16, 8, 4, 2, 1]`, a
  // list of shared buffers) or a tuple is unrolled too; only graph code
  // unrolls loops that build lists.
  bool over_device_list = !graph_ && iterable_type.valid() && typed_.types.kind(iterable_type) == SemaKind::List;
  bool over_list = is_list_node(iterable) || over_tuple || is_row_sequence_node(iterable) || over_device_list;
  // A body that binds a name holding a list or a tuple again (`params =
  // [p - lr * g for p, g in zip(params, grads)]`, a training step) is
  // unrolled as well: such a name is no loop-carried value.
  auto rebinds_sequence = [&] {
    std::vector<uint32_t> assigned;
    assigned_names(ast_, body, assigned);
    return std::ranges::any_of(assigned, [&](uint32_t name) {
      auto it = env_.find(name);
      return it != env_.end() && !it->second.is_value() && !it->second.text;
    });
  };
  if (!over_list && !mentions_list(body) && !(graph_ && rebinds_sequence())) return false;
  auto refuse_jumps = [&] {
    if (contains_break(ast_, body) || contains_kind(ast_, body, NodeKind::Continue))
      unsupported(statement, "'break' or 'continue' in a loop over a list or building one (such a loop is unrolled)");
  };
  if (over_list) {
    refuse_jumps();
    Bound list = over_tuple || over_device_list ? lower(iterable) : *unrolled_sequence(iterable);
    if (list.is_value()) unsupported(iterable, "iterating over this list");
    for_each_element(statement, target, list.size(), [&](size_t i) {
      // `for x in l` binds x to each element; `for i, x in enumerate(l)`
      // unpacks each tuple.
      if (ast_.kind(target) == NodeKind::Name) env_[ast_.node(target).payload] = list.element(i);
      else assign(target, list.element(i), statement);
      lower_suite(body);
    });
    return true;
  }
  if (ast_.kind(target) != NodeKind::Name) return false;  // lowered (and refused) as any loop
  // A loop of run-time length: lowered as a loop; an append in it is
  // refused where it is (lower_list_append).
  std::optional<std::vector<int64_t>> values = unrolled_range(iterable, statement, "a loop that uses a list");
  if (!values) return false;
  refuse_jumps();
  Type iv_type = typed_type(target).value_or(context_.i32_type());
  if (!iv_type.is_int()) iv_type = context_.i32_type();
  // (Checked once per value where the body indexes a tuple whose elements
  // differ in type: each value with its tables.)
  for_each_element(statement, target, values->size(), [&](size_t i) {
    env_[ast_.node(target).payload] = Bound{builder_.constant_int((*values)[i], iv_type), {}, {}};
    lower_suite(body);
  });
  return true;
}

void Lowering::for_each_element(NodeId loop, NodeId target, size_t count,
                                const std::function<void(size_t)>& lower_element) {
  const sema::ElementTablesMap& map = element_tables_ ? *element_tables_ : typed_.element_tables;
  auto found = map.find(loop.index);
  if (found == map.end()) {
    for (size_t i = 0; i < count; ++i) lower_element(i);
    return;
  }
  // Sema checked an element inside another's body for the last outer
  // element only: its tables would be wrong for the others.
  if (element_tables_in_use_)
    unsupported(loop, "a loop or a comprehension over a tuple whose elements differ in type inside another");
  const std::vector<sema::ElementTables>& tables = found->second;
  if (tables.size() != count) internal_error("lower", "a tuple loop's element count differs from sema's");
  struct Restore {
    const sema::ElementTables*& in_use;
    ~Restore() { in_use = nullptr; }
  } restore{element_tables_in_use_};
  std::unordered_set<uint32_t> outside;
  for (const auto& [name, bound] : env_) outside.insert(name);
  std::vector<uint32_t> targets;
  sema::target_names(ast_, target, targets);
  for (uint32_t name : targets) outside.erase(name);
  for (size_t i = 0; i < count; ++i) {
    std::erase_if(env_, [&](const auto& entry) { return !outside.count(entry.first); });
    element_tables_in_use_ = &tables[i];
    lower_element(i);
  }
}

// The values of `range(a, b, s)` when its bounds are known when compiling;
// nullopt when it is no such range. Unrolled `what` (a loop that uses a
// list, a comprehension) of more than kMaxUnrolledIterations is refused.
std::optional<std::vector<int64_t>> Lowering::unrolled_range(NodeId iterable, NodeId where, std::string_view what) {
  sema::TypeId callee_type = ast_.kind(iterable) == NodeKind::Call ? node_type(ast_.child(iterable, 0)) : sema::TypeId{};
  if (!callee_type.valid() || typed_.types.kind(callee_type) != SemaKind::Builtin ||
      static_cast<sema::BuiltinId>(typed_.types.info(callee_type).payload) != sema::BuiltinId::Range)
    return std::nullopt;
  auto bound_args = typed_.call_arguments.find(iterable.index);
  if (bound_args == typed_.call_arguments.end()) return std::nullopt;
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
        if (ast_.kind(callee) != NodeKind::Name || name_of(ast_.node(callee).payload) != "len" ||
            ast_.children(n).size() != 2)
          return false;
        sema::TypeId of = node_type(ast_.child(n, 1));
        return is_list_node(ast_.child(n, 1)) || (of.valid() && typed_.types.kind(of) == SemaKind::Tuple);
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
  if (!first || !last || !by || *by == 0) return std::nullopt;
  int64_t count = *by > 0 ? (*last - *first + *by - 1) / *by : (*first - *last - *by - 1) / -*by;
  count = std::max<int64_t>(count, 0);
  if (count > kMaxUnrolledIterations)
    unsupported(where, std::string(what) + " (" + std::to_string(count) + " iterations; it is unrolled, at most " +
                           std::to_string(kMaxUnrolledIterations) + ")");
  std::vector<int64_t> values;
  for (int64_t k = 0; k < count; ++k) values.push_back(*first + k * *by);
  return values;
}

// `[e for x in l if c]`, `[e for i in range(N)]`, `[e for a, b in zip(l, m)]`,
// nested generators, and a generator expression as sum()'s, max()'s or
// min()'s argument: a list whose length is known when compiling. Each
// generator is unrolled (as a loop that builds a list): its target bound to
// each element (a constant for a range), its conditions folded (one known
// only at run time would make the length so: lower.unsupported), the
// element lowered once per kept iteration. The targets are the
// comprehension's own names (Python 3): the names outside are back after it.
Bound Lowering::lower_comprehension(NodeId node) {
  auto children = ast_.children(node);
  std::vector<std::pair<uint32_t, std::optional<Bound>>> outside;
  std::function<void(NodeId)> hide = [&](NodeId target) {
    if (ast_.kind(target) == NodeKind::Tuple || ast_.kind(target) == NodeKind::List) {
      for (NodeId element : ast_.children(target)) hide(element);
      return;
    }
    if (ast_.kind(target) != NodeKind::Name) unsupported(target, "a comprehension target that is not a name or a tuple of names");
    uint32_t id = ast_.node(target).payload;
    auto it = env_.find(id);
    outside.emplace_back(id, it == env_.end() ? std::nullopt : std::optional<Bound>(it->second));
  };
  for (NodeId generator : children.subspan(1)) hide(ast_.child(generator, 0));
  Bound result;
  result.list_block = builder_.insertion_block();
  std::function<void(size_t)> generate = [&](size_t g) {
    if (g == children.size()) {
      result.nested.push_back(lower(children[0]));
      return;
    }
    auto parts = ast_.children(children[g]);
    NodeId target = parts[0], iterable = parts[1];
    std::vector<Bound> items;
    sema::TypeId iterable_type = node_type(iterable);
    if (iterable_type.valid() && typed_.types.kind(iterable_type) == SemaKind::Tuple) {
      Bound tuple = lower(iterable);
      if (tuple.is_value()) unsupported(iterable, "iterating over this tuple");
      for (size_t i = 0; i < tuple.size(); ++i) items.push_back(tuple.element(i));
    } else if (std::optional<Bound> sequence = unrolled_sequence(iterable)) {
      for (size_t i = 0; i < sequence->size(); ++i) items.push_back(sequence->element(i));
    } else if (auto range = unrolled_range(iterable, node, "a comprehension")) {
      Type iv_type = ast_.kind(target) == NodeKind::Name ? typed_type(target).value_or(context_.i32_type())
                                                          : context_.i32_type();
      if (!iv_type.is_int()) iv_type = context_.i32_type();
      for (int64_t v : *range) items.push_back(Bound{builder_.constant_int(v, iv_type), {}, {}});
    } else {
      unsupported(iterable, is_builtin_call(iterable, sema::BuiltinId::Range)
                                ? "a comprehension over a range whose bounds are known only at run time (the list's "
                                  "length must be known when compiling)"
                                : "a comprehension over something other than a list, a tensor or range()");
    }
    for_each_element(children[g], target, items.size(), [&](size_t i) {
      const Bound& item = items[i];
      if (ast_.kind(target) == NodeKind::Name) env_[ast_.node(target).payload] = item;
      else assign(target, item, children[g]);
      bool kept = true;
      for (NodeId condition : parts.subspan(2)) {
        std::optional<int64_t> known = constant_of(condition);
        if (!known) known = folded_int(value(condition, context_.bool_type()));
        if (!known)
          unsupported(condition, "a comprehension's condition known only at run time (the list's length must be "
                                 "known when compiling; choose element by element with ts.where)");
        if (!*known) {
          kept = false;
          break;
        }
      }
      if (kept) generate(g + 1);
    });
  };
  generate(1);
  for (auto& [id, bound] : outside) {
    if (bound) env_[id] = *bound;
    else env_.erase(id);
  }
  // All values: kept as `elements`, as lists of values are.
  if (std::all_of(result.nested.begin(), result.nested.end(), [](const Bound& b) { return b.is_value(); })) {
    for (const Bound& b : result.nested) result.elements.push_back(b.value);
    result.nested.clear();
  }
  return result;
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

// enumerate(l): (i, l[i]) for each element; zip(a, b, ...): (a[i], b[i],
// ...) for i below the shortest length, as Python's. Of lists, tuples of one
// element type and tensors (their rows).
Bound Lowering::lower_list_tuples(NodeId call) {
  bool enumerate = name_of(ast_.node(ast_.child(call, 0)).payload) == "enumerate";
  std::vector<Bound> lists;
  for (NodeId a : ast_.children(call).subspan(1)) {
    lists.push_back(is_row_sequence_node(a) ? tensor_rows(value(a), a) : lower(a));
    if (lists.back().is_value()) unsupported(a, "iterating over this list");
  }
  size_t n = lists[0].size();
  for (const Bound& l : lists) n = std::min(n, l.size());
  Bound tuples;
  tuples.list_block = builder_.insertion_block();
  for (size_t i = 0; i < n; ++i) {
    std::vector<Bound> parts;
    if (enumerate) parts.push_back(Bound{builder_.constant_int(static_cast<int64_t>(i), context_.i32_type()), {}, {}});
    for (const Bound& l : lists) parts.push_back(l.element(i));
    Bound tuple;
    if (std::all_of(parts.begin(), parts.end(), [](const Bound& b) { return b.is_value(); })) {
      for (const Bound& b : parts) tuple.elements.push_back(b.value);
    } else {
      tuple.nested = std::move(parts);
    }
    tuples.nested.push_back(std::move(tuple));
  }
  return tuples;
}

// Python's sum(l), max(l), min(l) of a list: its elements added (compared)
// in order, in the elements' type (sema's check_graph_builtin).
Bound Lowering::lower_list_reduction(NodeId call, sema::BuiltinId builtin) {
  NodeId list_node = call_argument(call, 0);
  Bound list = ast_.kind(list_node) == NodeKind::GeneratorExp ? lower_comprehension(list_node) : lower(list_node);
  if (list.size() == 0) {
    if (builtin != sema::BuiltinId::Sum) unsupported(call, "max() or min() of an empty list (Python raises ValueError)");
    return Bound{builder_.constant_int(0, context_.i32_type()), {}, {}};  // Python: sum([]) is 0
  }
  Type t = graph_type(call);
  Value* result = nullptr;
  for (size_t i = 0; i < list.size(); ++i) {
    Bound e = list.element(i);
    if (!e.is_value()) unsupported(list_node, "sum(), max() or min() of a list whose elements are not numbers or tensors");
    Value* v = e.value;
    if (t.is_scalar()) v = convert(v, t);
    // A tuple's elements may differ in type: each in the result's.
    if (t.is(TypeKind::Tensor) && !v->type().is(TypeKind::Tensor)) v = scalar_as_tensor(convert(v, context_.scalar_type(t.scalar())), t.scalar(), call);
    if (t.is(TypeKind::Tensor) && v->type().scalar() != t.scalar()) v = to_element(v, t.scalar(), call);
    if (!result) {
      result = v;
      continue;
    }
    if (v->type().is(TypeKind::Tensor) || result->type().is(TypeKind::Tensor)) {
      result = graph_elementwise(builtin == sema::BuiltinId::Sum   ? "add"
                                 : builtin == sema::BuiltinId::Max ? "max"
                                                                   : "min",
                                 {result, v}, call);
    } else if (builtin == sema::BuiltinId::Sum) {
      result = emit_binary(BinaryOperator::Add, result, v, call);
    } else {
      bool is_max = builtin == sema::BuiltinId::Max;
      ScalarType s = t.scalar();
      OpKind kind = is_float(s) ? (is_max ? OpKind::MaxF : OpKind::MinF)
                    : sema::scalar_info(s).category == sema::ScalarCategory::UnsignedInt ? (is_max ? OpKind::MaxUI : OpKind::MinUI)
                                                                                          : (is_max ? OpKind::MaxSI : OpKind::MinSI);
      result = emit(kind, {result, v}, t);
    }
  }
  return Bound{result, {}, {}};
}

}  // namespace tessera::ir
