// What loops and comprehensions iterate over (docs/language/graph.md,
// "Lists", "Tensors as sequences of rows"): the type of their targets, and
// a comprehension's own scope.
#include <algorithm>
#include <functional>

#include "sema/checker.h"
#include "sema/definite_assignment.h"

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

std::vector<TypeId> Checker::mixed_elements(TypeId iterable) const {
  if (!iterable.valid() || types_.kind(iterable) != TypeKind::Tuple) return {};
  std::span<const TypeId> elements = types_.tuple_elements(iterable);
  if (std::ranges::all_of(elements, [&](TypeId t) { return t == elements.front(); })) return {};
  return {elements.begin(), elements.end()};
}

void Checker::check_per_element(NodeId loop, size_t count, std::span<const NodeId> roots,
                                const std::function<void(size_t)>& check_element) {
  std::vector<uint32_t> nodes;
  std::function<void(NodeId)> collect = [&](NodeId n) {
    if (!n.valid()) return;
    nodes.push_back(n.index);
    for (NodeId child : ast_.children(n)) collect(child);
  };
  for (NodeId root : roots) collect(root);
  std::vector<ElementTables> tables;
  for (size_t i = 0; i < count; ++i) {
    // What an element's check finds is its own: nothing left from the one before.
    for (uint32_t n : nodes) {
      out_.node_types[n] = TypeId{};
      call_instances_->erase(n);
      constants_.erase(n);
      if (instance_constants_) instance_constants_->erase(n);
    }
    uint32_t errors = diags_.error_count();
    check_element(i);
    ElementTables& element = tables.emplace_back();
    for (uint32_t n : nodes) {
      element.node_types[n] = out_.node_types[n];
      if (auto it = call_instances_->find(n); it != call_instances_->end()) element.call_instances[n] = it->second;
      auto& constants = instance_constants_ ? *instance_constants_ : constants_;
      if (auto it = constants.find(n); it != constants.end()) element.constants.emplace(n, it->second);
    }
    if (diags_.error_count() > errors) break;  // one element's errors say it
  }
  (*element_tables_)[loop.index] = std::move(tables);
}

// A comprehension's targets are names of its own scope, as in Python 3:
// bound while it is checked (each generator's iterable sees the targets of
// the generators before it), then the names outside it are back. Its
// conditions are conditions (a 0-d tensor is one; lowering wants them known
// when compiling, docs/language/graph.md, "Lists"). A generator over a
// tuple whose elements differ in type checks what follows it once per
// element; when the elements made differ in type too, the comprehension is
// a tuple of them (a list holds one type), its length known when compiling.
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
  // The type of each element made, in order, while the length is known
  // when compiling (every generator over a tuple, its filters decided).
  std::vector<TypeId> made;
  bool error = false, length_known = true;
  auto unbind = [&](NodeId target) {
    std::vector<uint32_t> names;
    target_names(ast_, target, names);
    for (uint32_t id : names) locals_.erase(id);
  };
  std::function<void(size_t)> generate = [&](size_t g) {
    if (g == children.size()) {
      Value element = check_expression(children[0]);
      if (types_.is_error(element.type)) error = true;
      made.push_back(default_type(element.type));
      return;
    }
    auto parts = ast_.children(children[g]);
    Value element = iteration_element(parts[1]);
    TypeId iterable = out_.node_types[parts[1].index];
    std::vector<TypeId> mixed = mixed_elements(iterable);
    auto bind_and_go_on = [&](const Value& item) {
      hide(parts[0]);
      unbind(parts[0]);
      assign_to(parts[0], item, parts[1]);
      for (NodeId condition : parts.subspan(2)) {
        Value c = check_expression(condition);
        check_condition(condition, c);
        std::optional<bool> decided = mixed.empty() ? std::nullopt : decide_condition(condition, c);
        if (!decided) length_known = false;
        else if (!*decided) return;  // the element is filtered out
      }
      generate(g + 1);
    };
    if (mixed.empty()) {
      // One check stands for every element: what it made repeats once per
      // element of a tuple, an unknown number of times for anything else.
      size_t before = made.size();
      bind_and_go_on(element);
      if (types_.kind(iterable) == TypeKind::Tuple) {
        std::vector<TypeId> block(made.begin() + static_cast<std::ptrdiff_t>(before), made.end());
        made.resize(before);
        for (size_t k = 0; k < types_.tuple_elements(iterable).size(); ++k) made.insert(made.end(), block.begin(), block.end());
      } else {
        length_known = false;
      }
      return;
    }
    std::vector<NodeId> roots{parts[0]};
    for (NodeId condition : parts.subspan(2)) roots.push_back(condition);
    for (NodeId later : children.subspan(g + 1)) roots.push_back(later);
    roots.push_back(children[0]);
    check_per_element(children[g], mixed.size(), roots, [&](size_t i) { bind_and_go_on(Value{mixed[i]}); });
  };
  ++control_depth_;
  generate(1);
  --control_depth_;
  for (auto& [id, local] : outside) {
    if (local) locals_[id] = *local;
    else locals_.erase(id);
  }
  if (error) return types_.error();
  if (!made.empty() && std::ranges::all_of(made, [&](TypeId t) { return t == made.front(); }))
    return types_.list(made.front());
  // Elements of several types: a tuple, when its length is known here (else
  // lowering names what makes it known only later).
  return length_known ? types_.tuple(made) : types_.dynamic();
}

}  // namespace tessera::sema
