// What loops and comprehensions iterate over (docs/language/graph.md,
// "Lists", "Tensors as sequences of rows"): the type of their targets, and
// a comprehension's own scope.
#include <algorithm>
#include <functional>

#include "sema/checker.h"

namespace tessera::sema {

Value Checker::iteration_element(NodeId iterable_node) {
  Value iterable = check_expression(iterable_node);
  TypeKind kind = types_.kind(iterable.type);
  if (kind == TypeKind::Range) return Value{types_.scalar(range_element_type(iterable_node))};
  if (kind == TypeKind::List) return Value{TypeId{types_.info(iterable.type).payload}};
  // `for t in (a, b)`: unrolled as a list is (lower_lists.cpp), so the
  // elements must be of one type (else the target stays untyped and
  // lowering names the loop).
  if (kind == TypeKind::Tuple) {
    std::span<const TypeId> elements = types_.tuple_elements(iterable.type);
    if (!elements.empty() && std::ranges::all_of(elements, [&](TypeId t) { return t == elements.front(); }))
      return Value{elements.front()};
    return Value{types_.dynamic()};
  }
  if (kind == TypeKind::Error) return Value{types_.error()};
  // `for r in x` of a tensor in graph code: its rows along the first axis,
  // as NumPy iterates (unrolled: lowering wants that axis' size known).
  if (kind == TypeKind::Tensor && !in_device() && !types_.dims(iterable.type).empty())
    return Value{first_axis_element(iterable.type)};
  if (in_device()) {
    diags_.emit<diag::SemaNotIterable>(ast_.range(iterable_node), types_.to_string(iterable.type));
    return Value{types_.error()};
  }
  return Value{types_.dynamic()};
}

// An element of a tensor along its first axis in graph code (a row, as
// `x[i]` types it): the other axes, with the tensor's element type.
TypeId Checker::first_axis_element(TypeId tensor) {
  const TypeInfo& info = types_.info(tensor);
  std::vector<DimId> rest(types_.dims(tensor).begin() + 1, types_.dims(tensor).end());
  return types_.tensor(info.scalar, info.policy, rest, info.space, false, info.seed_style);
}

// A comprehension's targets are names of its own scope, as in Python 3:
// bound while it is checked (each generator's iterable sees the targets of
// the generators before it), then the names outside it are back. Its
// conditions are conditions (a 0-d tensor is one; lowering wants them known
// when compiling, docs/language/graph.md, "Lists").
TypeId Checker::check_comprehension(NodeId node) {
  auto children = ast_.children(node);
  std::vector<std::pair<uint32_t, std::optional<Local>>> outside;
  std::function<void(NodeId)> hide = [&](NodeId target) {
    NodeKind kind = ast_.kind(target);
    if (kind == NodeKind::Tuple || kind == NodeKind::List) {
      for (NodeId element : ast_.children(target)) hide(element);
      return;
    }
    if (kind != NodeKind::Name) return;
    uint32_t id = ast_.node(target).payload;
    if (std::any_of(outside.begin(), outside.end(), [&](const auto& o) { return o.first == id; })) return;
    auto it = locals_.find(id);
    outside.emplace_back(id, it == locals_.end() ? std::nullopt : std::optional<Local>(it->second));
    if (it != locals_.end()) locals_.erase(it);
  };
  ++control_depth_;
  for (NodeId generator : children.subspan(1)) {
    auto parts = ast_.children(generator);
    Value element = iteration_element(parts[1]);
    hide(parts[0]);
    assign_to(parts[0], element, parts[1]);
    for (NodeId condition : parts.subspan(2)) check_condition(condition, check_expression(condition));
  }
  Value element = check_expression(children[0]);
  --control_depth_;
  for (auto& [id, local] : outside) {
    if (local) locals_[id] = *local;
    else locals_.erase(id);
  }
  if (types_.is_error(element.type)) return types_.error();
  return types_.list(default_type(element.type));
}

}  // namespace tessera::sema
