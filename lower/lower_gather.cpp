// Indexing with integer tensors in graph code (docs/language/graph.md,
// "Indexing with integer tensors"): NumPy's integer-array indexing, a
// gather. `lp[ts.arange(B), labels]`, `table[ids]`, `x[:, idx]`.
//
// Built from graph operations that fuse into one reduction (a `rows`
// kernel), so that every target compiles it and autodiff and sharding need
// no rule of their own:
// the indexed dimensions of x are flattened into one axis of M positions,
// each index element's flat position F is computed (NumPy's wrap once for
// negative indices, checked in range when it runs: NumPy's IndexError), and
//
//   result[p, r] = sum over m of where(F[p] == m, x[m, r], 0)
//
// which selects the one match. Sizes may be known only at run time. It
// costs M operations per result element
// (fine for a class index into logits, costly for a large embedding
// table: a kernel of its own is what a faster form would add).
#include <numeric>

#include "lower/lowering.h"

namespace tessera::ir {

namespace {
std::vector<int64_t> all_axes(size_t n) {
  std::vector<int64_t> axes(n);
  std::iota(axes.begin(), axes.end(), 0);
  return axes;
}
}  // namespace

bool Lowering::is_gather(const std::vector<NodeId>& indices) {
  return graph_ && std::ranges::any_of(indices, [&](NodeId i) {
           if (ast_.kind(i) == NodeKind::Slice || ast_.kind(i) == NodeKind::NoneLiteral ||
               ast_.kind(i) == NodeKind::EllipsisLiteral || !is_tensor_node(i))
             return false;
           Type t = graph_type(i);
           return t.is(TypeKind::Tensor) && (t.rank() > 0 || is_integer(t.scalar()));
         });
}

// The positions `x[indices]` selects: x's dimensions by role, each index
// element's flat position F over the indexed dimensions (but a batch one),
// and the run-time check that every index is in range (NumPy's IndexError).
Lowering::GatherPlan Lowering::plan_gather(NodeId node, Value* x, const std::vector<NodeId>& indices) {
  GatherPlan g;
  const Type t = x->type();
  const size_t rank = t.rank();
  // The index of each dimension of x: an integer tensor, an integer, or
  // none (':', '...': the dimension is kept).
  std::vector<NodeId> index_of(rank);
  const size_t consuming = axis_consuming_indices(indices);
  size_t axis = 0;
  for (NodeId i : indices) {
    if (ast_.kind(i) == NodeKind::EllipsisLiteral) {
      axis += rank - consuming;
      continue;
    }
    if (ast_.kind(i) != NodeKind::Slice) index_of[axis] = i;
    ++axis;
  }
  std::vector<int64_t>& indexed = g.indexed;
  std::vector<int64_t>& kept = g.kept;
  for (size_t d = 0; d < rank; ++d) (index_of[d].valid() ? indexed : kept).push_back(static_cast<int64_t>(d));

  // `lp[ts.arange(B), labels]` (cross-entropy's class index per row): with
  // every index tensor 1-D, an index that is arange over its whole
  // dimension pairs result element b with that dimension's element b, so
  // the dimension is a batch of the selection (each row selects among its
  // own positions: M counts the other indexed dimensions only).
  int64_t& batch = g.batch;
  const bool one_dimensional = std::ranges::all_of(indexed, [&](int64_t d) {
    NodeId i = index_of[static_cast<size_t>(d)];
    return !is_tensor_node(i) || graph_type(i).rank() == 1;
  });
  for (int64_t d : indexed) {
    NodeId i = index_of[static_cast<size_t>(d)];
    if (!one_dimensional || !is_builtin_call(i, sema::BuiltinId::Arange)) continue;
    auto args = typed_.call_arguments.find(i.index);
    if (args == typed_.call_arguments.end() || args->second.size() < 2) continue;
    const std::vector<NodeId>& a = args->second;
    std::optional<int64_t> start = a[1].valid() ? constant_of(a[0]) : std::optional<int64_t>(0);
    std::optional<int64_t> stop = constant_of(a[1].valid() ? a[1] : a[0]);
    std::optional<int64_t> step = a.size() > 2 && a[2].valid() ? constant_of(a[2]) : std::optional<int64_t>(1);
    if (start == 0 && step == 1 && stop && *stop == t.shape()[static_cast<size_t>(d)]) {
      batch = d;
      break;
    }
  }

  if (batch >= 0 && indexed.size() == 1) return g;  // x[ts.arange(n)]: x itself (no F)
  const int64_t batch_size = batch >= 0 ? t.shape()[static_cast<size_t>(batch)] : 0;

  // F: the flat position over the indexed dimensions (but the batch one),
  // row-major, with the indices' broadcast shape P; and whether every index
  // is in range.
  const Type i64 = context_.i64_type();
  Value*& flat = g.flat;
  Value* in_range = nullptr;
  int64_t& positions = g.positions;
  Value*& positions_value = g.positions_value;
  for (int64_t d : indexed) {
    if (d == batch) continue;
    NodeId i = index_of[static_cast<size_t>(d)];
    Value* v = is_tensor_node(i) ? to_element(value(i), ScalarType::I64, i)
                                 : scalar_as_tensor(value(i, i64), ScalarType::I64, i);
    const int64_t size = t.shape()[static_cast<size_t>(d)];
    Value* size_index = size == kDynamic ? graph_dim(x, d) : builder_.constant_index(size);
    Value* zero = builder_.constant_int(0, i64);
    Value* extent = size == kDynamic ? convert(size_index, i64) : builder_.constant_int(size, i64);
    Value* wrapped = graph_elementwise(
        "select", {graph_elementwise("lt", {v, zero}, i), graph_elementwise("add", {v, extent}, i), v}, i);
    Value* ok = graph_elementwise("and", {graph_elementwise("ge", {wrapped, zero}, i),
                                          graph_elementwise("lt", {wrapped, extent}, i)},
                                  i);
    in_range = in_range ? graph_elementwise("and", {in_range, ok}, i) : ok;
    flat = flat ? graph_elementwise("add", {graph_elementwise("mul", {flat, extent}, i), wrapped}, i) : wrapped;
    positions = positions == kDynamic || size == kDynamic ? kDynamic : positions * size;
    positions_value =
        positions_value ? emit(OpKind::MulI, {positions_value, size_index}, context_.index_type()) : size_index;
  }
  if (batch >= 0 && flat->type().shape()[0] != batch_size) {  // the other indices broadcast along the batch
    const std::vector<int64_t> batch_shape{batch_size};
    Value* zeros = graph_op(OpKind::GraphConstant, {}, context_.tensor_type(batch_shape, ScalarType::I64),
                            {{"value", context_.int_attr(0)}}, node);
    flat = graph_elementwise("add", {flat, zeros}, node);
  }
  // NumPy's IndexError, when it runs.
  check_every_element(in_range, node,
                      source_position(node) +
                          ": an integer-tensor index is out of range for its axis of the tensor (NumPy's IndexError)");
  if (batch >= 0) g.order.push_back(batch);
  g.order.insert(g.order.end(), kept.begin(), kept.end());
  for (int64_t d : indexed)
    if (d != batch) g.order.push_back(d);
  // With adjacent indexed dimensions (NumPy's rule) the index dimensions
  // go where the indexed ones were in the result, else first.
  const bool adjacent = indexed.back() - indexed.front() + 1 == static_cast<int64_t>(indexed.size());
  g.before =
      adjacent ? static_cast<size_t>(std::ranges::count_if(kept, [&](int64_t d) { return d < indexed.front(); })) : 0;
  return g;
}

// Stops the run with `message` unless every element of the bool tensor
// `ok` is true: the count of false ones, read back, is 0.
void Lowering::check_every_element(Value* ok, NodeId node, const std::string& message) {
  const Type i64 = context_.i64_type();
  Value* failing =
      graph_elementwise("select", {ok, builder_.constant_int(0, i64), builder_.constant_int(1, i64)}, node);
  Value* count = graph_op(OpKind::GraphReduce, {failing}, context_.tensor_type({}, ScalarType::I64),
                          {{"kind", context_.string_attr("sum")},
                           {"axes", context_.int_array_attr(all_axes(ok->type().rank()))}},
                          node);
  Value* none = emit(OpKind::CmpI, {convert(count, i64), builder_.constant_int(0, i64)}, context_.bool_type(),
                     {{"predicate", context_.string_attr("eq")}});
  builder_.create(OpKind::HostCheck, std::span<Value* const>(&none, 1), std::span<const Type>{},
                  {{"message", context_.string_attr(message)}});
}

Value* Lowering::graph_gather(NodeId node, Value* x, const std::vector<NodeId>& indices) {
  const GatherPlan g = plan_gather(node, x, indices);
  if (!g.flat) return x;  // x[ts.arange(n)]
  const Type t = x->type();
  const size_t rank = t.rank();
  const std::vector<int64_t>& kept = g.kept;
  const int64_t batch = g.batch, positions = g.positions;
  const int64_t batch_size = batch >= 0 ? t.shape()[static_cast<size_t>(batch)] : 0;
  Value* flat = g.flat;
  auto run_time_extent = [&](Value* v, int64_t d) -> Value* {
    return v->type().shape()[static_cast<size_t>(d)] == kDynamic ? graph_dim(v, d) : nullptr;
  };
  const std::vector<int64_t> index_shape(flat->type().shape().begin(), flat->type().shape().end());
  const size_t p = index_shape.size();

  // The selection as one `rows` kernel (graph-fusion fuses elementwise
  // operations into a reduction over the last axis of their space): x with
  // its indexed dimensions last and flattened, spread to [1 (P), kept..., M]
  // ([batch, kept..., M] with a batch dimension);
  // F broadcast to [P, kept..., 1] (P x kept elements); the positions
  // 0..M-1 along the last axis. The compare, the select and the sum run
  // over [P, kept..., M] without storing it.
  const ScalarType element = t.scalar();
  const ScalarType summed = element == ScalarType::Bool ? ScalarType::I32 : element;
  const size_t last = p + kept.size();  // the axis of the M positions
  Value* source = to_element(x, summed, node);
  const std::vector<int64_t>& order = g.order;
  if (order != all_axes(rank)) {
    std::vector<int64_t> moved;
    for (int64_t d : order) moved.push_back(t.shape()[static_cast<size_t>(d)]);
    source = graph_op(OpKind::GraphTranspose, {source}, context_.tensor_type(moved, summed),
                      {{"perm", context_.int_array_attr(order)}}, node);
  }
  std::vector<int64_t> spread_source(p, batch >= 0 ? batch_size : 1);  // P is [batch_size] with a batch
  std::vector<Value*> source_extents(p, nullptr);
  std::vector<Value*> kept_sizes;         // their sizes known at run time, in order
  for (int64_t d : kept) {
    const int64_t size = t.shape()[static_cast<size_t>(d)];
    spread_source.push_back(size);
    source_extents.push_back(run_time_extent(x, d));
    if (size == kDynamic) kept_sizes.push_back(graph_dim(x, d));
  }
  spread_source.push_back(positions);
  source_extents.push_back(positions == kDynamic ? g.positions_value : nullptr);
  Type source_type = context_.tensor_type(spread_source, summed);
  std::vector<Value*> reshape{source};
  for (Value* d : dynamic_dims(source_type, source_extents)) reshape.push_back(d);
  source = graph_op(OpKind::GraphReshape, reshape, source_type, {}, node);

  std::vector<int64_t> spread_flat = index_shape;
  std::vector<Value*> flat_extents;
  for (size_t k = 0; k < p; ++k) flat_extents.push_back(run_time_extent(flat, static_cast<int64_t>(k)));
  spread_flat.insert(spread_flat.end(), kept.size() + 1, 1);
  flat_extents.resize(spread_flat.size(), nullptr);
  Type flat_type = context_.tensor_type(spread_flat, ScalarType::I64);
  std::vector<Value*> flat_reshape{flat};
  for (Value* d : dynamic_dims(flat_type, flat_extents)) flat_reshape.push_back(d);
  flat = graph_op(OpKind::GraphReshape, flat_reshape, flat_type, {}, node);
  if (!kept.empty()) {
    std::vector<int64_t> zeros_shape(p, 1);
    for (int64_t d : kept) zeros_shape.push_back(t.shape()[static_cast<size_t>(d)]);
    zeros_shape.push_back(1);
    Value* zeros = graph_op(OpKind::GraphConstant, kept_sizes, context_.tensor_type(zeros_shape, ScalarType::I64),
                            {{"value", context_.int_attr(0)}}, node);
    flat = graph_elementwise("add", {flat, zeros}, node);
  }

  std::vector<int64_t> position_shape(last, 1);
  position_shape.push_back(positions);
  std::vector<Value*> position_sizes;
  if (positions == kDynamic) position_sizes.push_back(g.positions_value);
  Value* position = graph_op(OpKind::GraphIota, position_sizes, context_.tensor_type(position_shape, ScalarType::I64),
                             {{"axis", context_.int_attr(static_cast<int64_t>(last))}}, node);
  Value* zero = is_float(summed) ? builder_.constant_float(0.0, context_.scalar_type(summed))
                                 : builder_.constant_int(0, context_.scalar_type(summed));
  Value* match = graph_elementwise("select", {graph_elementwise("eq", {flat, position}, node), source, zero}, node);
  const std::vector<int64_t> position_axis{static_cast<int64_t>(last)};
  Value* selected = graph_op(OpKind::GraphReduce, {match}, context_.tensor_type({}, summed),
                             {{"kind", context_.string_attr("sum")}, {"axes", context_.int_array_attr(position_axis)},
                              {"keepdims", context_.unit_attr()}},
                             node);
  std::vector<int64_t> result_shape(selected->type().shape().begin(), selected->type().shape().end() - 1);
  std::vector<Value*> result_extents;
  for (size_t k = 0; k < last; ++k) result_extents.push_back(run_time_extent(selected, static_cast<int64_t>(k)));
  Type result_type = context_.tensor_type(result_shape, summed);
  std::vector<Value*> squeeze{selected};
  for (Value* d : dynamic_dims(result_type, result_extents)) squeeze.push_back(d);
  Value* result = graph_op(OpKind::GraphReshape, squeeze, result_type, {}, node);
  // [P, kept...], the first `before` kept dimensions moved before P.
  const size_t before = g.before;
  if (before > 0) {
    std::vector<int64_t> perm, dims;
    for (size_t k = 0; k < before; ++k) perm.push_back(static_cast<int64_t>(p + k));
    for (size_t k = 0; k < p; ++k) perm.push_back(static_cast<int64_t>(k));
    for (size_t k = p + before; k < p + kept.size(); ++k) perm.push_back(static_cast<int64_t>(k));
    for (int64_t d : perm) dims.push_back(result->type().shape()[static_cast<size_t>(d)]);
    result = graph_op(OpKind::GraphTranspose, {result}, context_.tensor_type(dims, summed),
                      {{"perm", context_.int_array_attr(perm)}}, node);
  }
  return to_element(result, element, node);
}


// `x[i, None]`, `x[None, :, i]`, `x[i, None, j]`: `selected` is the gather
// of the indices without None; NumPy's new axes go where each None stands,
// and the index dimensions first where a None separates two indices
// (NumPy's adjacency is the index tuple's; without the None they were in
// place of the indexed dimensions).
Value* Lowering::gather_new_axes(NodeId node, Value* selected, size_t rank, const std::vector<NodeId>& indices) {
  const size_t consuming = axis_consuming_indices(indices);
  std::string roles;  // in index order: 'n' a new axis, 'k' a kept dimension, 'i' an index
  for (NodeId i : indices) {
    const NodeKind kind = ast_.kind(i);
    if (kind == NodeKind::NoneLiteral) roles += 'n';
    else if (kind == NodeKind::EllipsisLiteral) roles.append(rank - consuming, 'k');
    else roles += kind == NodeKind::Slice ? 'k' : 'i';
  }
  if (std::ranges::none_of(indices, [&](NodeId i) { return ast_.kind(i) == NodeKind::EllipsisLiteral; }))
    roles.append(rank - consuming, 'k');  // the dimensions after the indices
  const size_t first = roles.find('i'), last = roles.rfind('i');
  const std::string_view between = std::string_view(roles).substr(first, last - first + 1);
  const bool dims_adjacent = between.find('k') == std::string_view::npos;
  const bool adjacent = dims_adjacent && between.find('n') == std::string_view::npos;
  const auto kept = static_cast<size_t>(std::ranges::count(roles, 'k'));
  const size_t p = selected->type().rank() - kept;
  const size_t kept_before =
      dims_adjacent ? static_cast<size_t>(std::count(roles.begin(), roles.begin() + static_cast<std::ptrdiff_t>(first), 'k'))
                    : 0;
  if (dims_adjacent && !adjacent && kept_before > 0) {  // [kept before, P, kept after] -> [P, kept...]
    std::vector<int64_t> perm, dims;
    for (size_t k = 0; k < p; ++k) perm.push_back(static_cast<int64_t>(kept_before + k));
    for (size_t k = 0; k < kept_before; ++k) perm.push_back(static_cast<int64_t>(k));
    for (size_t k = kept_before + p; k < selected->type().rank(); ++k) perm.push_back(static_cast<int64_t>(k));
    for (int64_t d : perm) dims.push_back(selected->type().shape()[static_cast<size_t>(d)]);
    selected = graph_op(OpKind::GraphTranspose, {selected}, context_.tensor_type(dims, selected->type().scalar()),
                        {{"perm", context_.int_array_attr(perm)}}, node);
  }
  std::vector<int64_t> shape;
  std::vector<Value*> extents;
  size_t next = 0;  // the next dimension of `selected`
  auto take = [&] {
    const int64_t size = selected->type().shape()[next];
    shape.push_back(size);
    extents.push_back(size == kDynamic ? graph_dim(selected, static_cast<int64_t>(next)) : nullptr);
    ++next;
  };
  bool placed = !adjacent;
  if (!adjacent)
    for (size_t k = 0; k < p; ++k) take();
  for (char role : roles) {
    if (role == 'n') {
      shape.push_back(1);
      extents.push_back(nullptr);
    } else if (role == 'k') {
      take();
    } else if (!placed) {
      for (size_t k = 0; k < p; ++k) take();
      placed = true;
    }
  }
  const Type type = context_.tensor_type(shape, selected->type().scalar());
  std::vector<Value*> operands{selected};
  for (Value* d : dynamic_dims(type, extents)) operands.push_back(d);
  return graph_op(OpKind::GraphReshape, operands, type, {}, node);
}

// `x[indices] = v` with integer tensors among the indices (NumPy's
// scatter; x already sliced by the slices beside them, graph_store): the elements the indices select hold v broadcast to the
// selection's shape, the others x's. Where an element is selected twice
// the last selection wins (what NumPy does; `x[i] += v` reads x[i] once,
// so a repeated index adds v once, as in NumPy).
//
// With a batch (`y[ts.arange(B), labels] = 1.0`) row b has one selected
// position, F[b]: `where(F[b] == m, v[b], x[b, m])`, elementwise. Else the
// last index element selecting each position m is found first,
// `last[m] = max over p of where(F[p] == m, p, -1)` (a rows kernel over
// [M, P]), then
// `new[r, m] = last[m] >= 0 ? sum over p of where(p == last[m], v[p, r], 0) : x[r, m]`
// (a rows kernel over [kept, M, P]: the sum has one term).
Value* Lowering::graph_scatter(NodeId target, Value* x, const std::vector<NodeId>& indices, Value* v, NodeId where) {
  const Type t = x->type();
  const ScalarType element = t.scalar();
  const ScalarType summed = element == ScalarType::Bool ? ScalarType::I32 : element;
  auto extent = [&](Value* value, size_t d) -> Value* {
    return value->type().shape()[d] == kDynamic ? graph_dim(value, static_cast<int64_t>(d)) : nullptr;
  };
  auto reshaped = [&](Value* value, const std::vector<int64_t>& shape, std::vector<Value*> extents) {
    extents.resize(shape.size(), nullptr);
    Type type = context_.tensor_type(shape, value->type().scalar());
    if (type == value->type()) return value;
    std::vector<Value*> operands{value};
    for (Value* d : dynamic_dims(type, extents)) operands.push_back(d);
    return graph_op(OpKind::GraphReshape, operands, type, {}, where);
  };
  auto transposed = [&](Value* value, const std::vector<int64_t>& perm) {
    if (perm == all_axes(perm.size())) return value;
    std::vector<int64_t> dims;
    for (int64_t d : perm) dims.push_back(value->type().shape()[static_cast<size_t>(d)]);
    return graph_op(OpKind::GraphTranspose, {value}, context_.tensor_type(dims, value->type().scalar()),
                    {{"perm", context_.int_array_attr(perm)}}, where);
  };
  auto iota = [&](const std::vector<int64_t>& shape, size_t axis, Value* size) {
    std::vector<Value*> sizes;
    if (size) sizes.push_back(size);
    return graph_op(OpKind::GraphIota, sizes, context_.tensor_type(shape, ScalarType::I64),
                    {{"axis", context_.int_attr(static_cast<int64_t>(axis))}}, where);
  };
  Value* vt = v->type().is(TypeKind::Tensor) ? to_element(v, summed, where) : scalar_as_tensor(v, summed, where);
  Value* source = to_element(x, summed, where);
  Value* yes = graph_op(OpKind::GraphConstant, {}, context_.tensor_type({}, ScalarType::Bool),
                        {{"value", context_.bool_attr(true)}}, where);
  auto in_x_type = [&](Value* updated) {
    updated = to_element(updated, element, where);
    return updated->type() == t ? updated : reshape_as(updated, t, x);
  };

  const GatherPlan g = plan_gather(target, x, indices);
  if (!g.flat) return in_x_type(graph_elementwise("select", {yes, vt, source}, where));  // x[ts.arange(n)] = v
  Value* flat = g.flat;
  const size_t p = flat->type().rank(), kept = g.kept.size();
  const size_t lead = (g.batch >= 0 ? 1 : 0) + kept;  // x's dimensions before the M positions

  // v as [P..., kept...]: right-aligned to the selection's rank (its
  // result order: the first `before` kept dimensions, P, the other kept
  // ones), then in that order.
  vt = without_leading_ones(vt, p + kept, where);
  const Type vtype = vt->type();
  std::vector<int64_t> v_shape(p + kept - vtype.rank(), 1);
  std::vector<Value*> v_extents(v_shape.size(), nullptr);
  for (size_t d = 0; d < vtype.rank(); ++d) {
    v_shape.push_back(vtype.shape()[d]);
    v_extents.push_back(extent(vt, d));
  }
  std::vector<int64_t> canonical;
  for (size_t i = 0; i < p; ++i) canonical.push_back(static_cast<int64_t>(g.before + i));
  for (size_t i = 0; i < g.before; ++i) canonical.push_back(static_cast<int64_t>(i));
  for (size_t i = p + g.before; i < p + kept; ++i) canonical.push_back(static_cast<int64_t>(i));
  Value* values = transposed(reshaped(vt, v_shape, v_extents), canonical);

  // x as [batch?, kept..., M].
  Value* ordered = transposed(source, g.order);
  std::vector<int64_t> x_shape;
  std::vector<Value*> x_extents;
  for (size_t d = 0; d < lead; ++d) {
    x_shape.push_back(ordered->type().shape()[d]);
    x_extents.push_back(extent(ordered, d));
  }
  x_shape.push_back(g.positions);
  x_extents.push_back(g.positions == kDynamic ? g.positions_value : nullptr);
  Value* rows = reshaped(ordered, x_shape, x_extents);
  Value* positions_size = g.positions == kDynamic ? g.positions_value : nullptr;

  Value* updated = nullptr;
  if (g.batch >= 0) {
    std::vector<int64_t> f_shape(lead + 1, 1), m_shape(lead + 1, 1);
    f_shape[0] = flat->type().shape()[0];
    m_shape[lead] = g.positions;
    Value* f = reshaped(flat, f_shape, {extent(flat, 0)});
    std::vector<int64_t> spread = v_shape;
    for (size_t d = 0; d < spread.size(); ++d) spread[d] = values->type().shape()[d];
    spread.push_back(1);
    std::vector<Value*> spread_extents;
    for (size_t d = 0; d < p + kept; ++d) spread_extents.push_back(extent(values, d));
    Value* here = graph_elementwise("eq", {f, iota(m_shape, lead, positions_size)}, where);
    updated = graph_elementwise("select", {here, reshaped(values, spread, spread_extents), rows}, where);
  } else {
    // The count of index elements, P flattened.
    int64_t count = 1;
    Value* count_value = nullptr;
    for (size_t d = 0; d < p; ++d) {
      const int64_t size = flat->type().shape()[d];
      count = count == kDynamic || size == kDynamic ? kDynamic : count * size;
      Value* size_index = size == kDynamic ? graph_dim(flat, static_cast<int64_t>(d)) : builder_.constant_index(size);
      count_value = count_value ? emit(OpKind::MulI, {count_value, size_index}, context_.index_type()) : size_index;
    }
    Value* count_size = count == kDynamic ? count_value : nullptr;
    const Type i64 = context_.i64_type();
    // last[m], [M, 1].
    Value* f = reshaped(flat, {1, count}, {nullptr, count_size});
    Value* candidates = graph_elementwise("select",
                                          {graph_elementwise("eq", {f, iota({g.positions, 1}, 0, positions_size)}, where),
                                           iota({1, count}, 1, count_size), builder_.constant_int(-1, i64)},
                                          where);
    const std::vector<int64_t> along_p{1};
    const std::vector<int64_t> last_per_position{g.positions, 1};
    Value* last = graph_op(OpKind::GraphReduce, {candidates}, context_.tensor_type(last_per_position, ScalarType::I64),
                           {{"kind", context_.string_attr("max")}, {"axes", context_.int_array_attr(along_p)},
                            {"keepdims", context_.unit_attr()}},
                           where);
    // v at every index element ([P..., kept...]; v may broadcast), as
    // [kept..., 1, P flattened].
    std::vector<int64_t> full_shape(flat->type().shape().begin(), flat->type().shape().end());
    std::vector<Value*> full_sizes;
    for (size_t d = 0; d < p; ++d)
      if (Value* e = extent(flat, d)) full_sizes.push_back(e);
    for (int64_t d : g.kept) {
      full_shape.push_back(t.shape()[static_cast<size_t>(d)]);
      if (Value* e = extent(x, static_cast<size_t>(d))) full_sizes.push_back(e);
    }
    // v broadcast to every index element; a size known only at run time is
    // checked there (1 or the selection's, NumPy's rule).
    if (std::vector<int64_t>(values->type().shape().begin(), values->type().shape().end()) != full_shape ||
        std::ranges::count(full_shape, kDynamic) > 0) {
      Value* zeros = graph_op(OpKind::GraphConstant, full_sizes, context_.tensor_type(full_shape, summed),
                              {{"value", zero_attribute(summed)}}, where);
      values = graph_elementwise("select", {yes, values, zeros}, where);
    }
    std::vector<int64_t> by_element{count}, to_last;
    std::vector<Value*> by_element_extents{count_size}, spread_extents;
    std::vector<int64_t> spread;
    for (size_t d = 0; d < kept; ++d) {
      by_element.push_back(values->type().shape()[p + d]);
      by_element_extents.push_back(extent(values, p + d));
      to_last.push_back(static_cast<int64_t>(d + 1));
      spread.push_back(values->type().shape()[p + d]);
      spread_extents.push_back(extent(values, p + d));
    }
    to_last.push_back(0);
    spread.push_back(1);
    spread.push_back(count);
    spread_extents.push_back(nullptr);
    spread_extents.push_back(count_size);
    values = reshaped(transposed(reshaped(values, by_element, by_element_extents), to_last), spread, spread_extents);
    // new[r, m]: the value of last[m], where there is one.
    std::vector<int64_t> last_shape(kept, 1), element_shape(kept + 1, 1);
    last_shape.push_back(g.positions);
    last_shape.push_back(1);
    element_shape.push_back(count);
    std::vector<Value*> last_extents(kept, nullptr);
    last_extents.push_back(positions_size);
    Value* spread_last = reshaped(last, last_shape, last_extents);
    Value* zero = is_float(summed) ? builder_.constant_float(0.0, context_.scalar_type(summed))
                                   : builder_.constant_int(0, context_.scalar_type(summed));
    Value* chosen = graph_elementwise(
        "select", {graph_elementwise("eq", {iota(element_shape, kept + 1, count_size), spread_last}, where), values, zero},
        where);
    std::vector<int64_t> summed_shape(x_shape);
    summed_shape.push_back(1);
    const std::vector<int64_t> along_elements{static_cast<int64_t>(kept + 1)};
    Value* sum = graph_op(OpKind::GraphReduce, {chosen}, context_.tensor_type(summed_shape, summed),
                          {{"kind", context_.string_attr("sum")}, {"axes", context_.int_array_attr(along_elements)},
                           {"keepdims", context_.unit_attr()}},
                          where);
    sum = reshaped(sum, x_shape, x_extents);
    std::vector<int64_t> hit_shape(kept, 1);
    hit_shape.push_back(g.positions);
    Value* hit = graph_elementwise("ge", {reshaped(spread_last, hit_shape, last_extents), builder_.constant_int(0, i64)},
                                   where);
    updated = graph_elementwise("select", {hit, sum, rows}, where);
  }

  // Back to x's dimensions: [order...], then x's order.
  std::vector<int64_t> order_shape, back(g.order.size());
  std::vector<Value*> order_extents;
  for (size_t j = 0; j < g.order.size(); ++j) {
    const auto d = static_cast<size_t>(g.order[j]);
    order_shape.push_back(t.shape()[d]);
    order_extents.push_back(extent(x, d));
    back[d] = static_cast<int64_t>(j);
  }
  return in_x_type(transposed(reshaped(updated, order_shape, order_extents), back));
}

}  // namespace tessera::ir
