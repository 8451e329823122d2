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

bool Lowering::is_gather(const std::vector<NodeId>& indices) {
  return graph_ && std::ranges::any_of(indices, [&](NodeId i) {
           if (ast_.kind(i) == NodeKind::Slice || ast_.kind(i) == NodeKind::NoneLiteral ||
               ast_.kind(i) == NodeKind::EllipsisLiteral || !is_tensor_node(i))
             return false;
           Type t = graph_type(i);
           return t.is(TypeKind::Tensor) && t.rank() > 0;
         });
}

Value* Lowering::graph_gather(NodeId node, Value* x, const std::vector<NodeId>& indices) {
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
  std::vector<int64_t> indexed, kept;
  for (size_t d = 0; d < rank; ++d) (index_of[d].valid() ? indexed : kept).push_back(static_cast<int64_t>(d));
  // A size known only at run time: its value (for reshapes and iota).
  auto run_time_extent = [&](Value* v, int64_t d) -> Value* {
    return v->type().shape()[static_cast<size_t>(d)] == kDynamic ? graph_dim(v, d) : nullptr;
  };

  // `lp[ts.arange(B), labels]` (cross-entropy's class index per row): with
  // every index tensor 1-D, an index that is arange over its whole
  // dimension pairs result element b with that dimension's element b, so
  // the dimension is a batch of the selection (each row selects among its
  // own positions: M counts the other indexed dimensions only).
  int64_t batch = -1;
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

  if (batch >= 0 && indexed.size() == 1) return x;  // x[ts.arange(n)]: x itself
  const int64_t batch_size = batch >= 0 ? t.shape()[static_cast<size_t>(batch)] : 0;

  // F: the flat position over the indexed dimensions (but the batch one),
  // row-major, with the indices' broadcast shape P; and whether every index
  // is in range.
  const Type i64 = context_.i64_type();
  Value* flat = nullptr;
  Value* in_range = nullptr;
  int64_t positions = 1;  // M, kDynamic when known at run time only
  Value* positions_value = nullptr;
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
  const std::vector<int64_t> index_shape(flat->type().shape().begin(), flat->type().shape().end());
  const size_t p = index_shape.size();
  auto all_axes = [](size_t n) {
    std::vector<int64_t> axes(n);
    std::iota(axes.begin(), axes.end(), 0);
    return axes;
  };

  // NumPy's IndexError, when it runs: the count of indices out of range is 0.
  Value* outside = graph_elementwise("select", {in_range, builder_.constant_int(0, i64), builder_.constant_int(1, i64)},
                                     node);
  Value* count = graph_op(OpKind::GraphReduce, {outside}, context_.tensor_type({}, ScalarType::I64),
                          {{"kind", context_.string_attr("sum")}, {"axes", context_.int_array_attr(all_axes(p))}}, node);
  Value* none = emit(OpKind::CmpI, {convert(count, i64), builder_.constant_int(0, i64)}, context_.bool_type(),
                     {{"predicate", context_.string_attr("eq")}});
  builder_.create(OpKind::HostCheck, std::span<Value* const>(&none, 1), std::span<const Type>{},
                  {{"message", context_.string_attr(source_position(node) +
                                                    ": an integer-tensor index is out of range for its axis of the "
                                                    "tensor (NumPy's IndexError)")}});

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
  std::vector<int64_t> order;  // [batch], kept..., the other indexed
  if (batch >= 0) order.push_back(batch);
  order.insert(order.end(), kept.begin(), kept.end());
  for (int64_t d : indexed)
    if (d != batch) order.push_back(d);
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
  source_extents.push_back(positions == kDynamic ? positions_value : nullptr);
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
  if (positions == kDynamic) position_sizes.push_back(positions_value);
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
  // [P, kept...]; with adjacent indexed dimensions (NumPy's rule) the index
  // dimensions go where the indexed ones were.
  const bool adjacent = indexed.back() - indexed.front() + 1 == static_cast<int64_t>(indexed.size());
  const size_t before =
      adjacent ? static_cast<size_t>(std::ranges::count_if(kept, [&](int64_t d) { return d < indexed.front(); })) : 0;
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

}  // namespace tessera::ir
