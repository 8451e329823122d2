// Assignments into a tensor in graph code (docs/language/graph.md,
// "Assigning into a tensor"): `x[i] = v`, `x[a:b, j] = v`, `x[i] += v`.
// A tensor is a value there, so the assignment is a functional update: x is
// bound to a new tensor equal to x except in the selected elements, which
// hold v broadcast to the selection's shape (NumPy's rule) in x's element
// type. Later reads of x see the new tensor; a caller's tensor passed as x
// is unchanged (as for a kernel's `mut` argument).
//
// Built from graph operations that fuse: along an axis selected by a slice
// with bounds known when compiling, the parts before and after the slice
// and the updated middle are concatenated; along an axis selected by an
// index known only at run time, `where(position == i, updated row, x)`.
// Through integer tensors (a scatter): graph_scatter, lower_gather.cpp.
#include <functional>

#include "lower/lowering.h"

namespace tessera::ir {

namespace {
// How one axis of x is selected by the target's subscript.
struct AxisSelection {
  enum class Kind { Whole, Index, Range } kind = Kind::Whole;
  Value* index = nullptr;        // Index: the element, an index value known at run time
  int64_t start = 0, limit = 0;  // Range: bounds known when compiling, clamped to the axis
};
}  // namespace

// v without its leading dimensions of size 1 beyond `rank` (NumPy's
// assignment drops them: `x[0:2] = ones((1, 2, 3))`); sema checked they are 1.
Value* Lowering::without_leading_ones(Value* v, size_t rank, NodeId where) {
  const Type t = v->type();
  if (!t.is(TypeKind::Tensor) || t.rank() <= rank) return v;
  const size_t extra = t.rank() - rank;
  for (size_t d = 0; d < extra; ++d)
    if (t.shape()[d] != 1) unsupported(where, "assigning a tensor of higher rank than the selection it is assigned into");
  std::vector<int64_t> dims(t.shape().begin() + static_cast<std::ptrdiff_t>(extra), t.shape().end());
  std::vector<Value*> extents;
  for (size_t d = 0; d < dims.size(); ++d)
    extents.push_back(dims[d] == kDynamic ? graph_dim(v, static_cast<int64_t>(extra + d)) : nullptr);
  const Type type = context_.tensor_type(dims, t.scalar());
  std::vector<Value*> operands{v};
  for (Value* e : dynamic_dims(type, extents)) operands.push_back(e);
  return graph_op(OpKind::GraphReshape, operands, type, {}, where);
}

bool Lowering::is_graph_tensor_store(NodeId target) const {
  return graph_ && ast_.kind(target) == NodeKind::Subscript && is_tensor_node(ast_.child(target, 0));
}

void Lowering::graph_store(NodeId target, Value* v, NodeId where) {
  NodeId object = ast_.child(target, 0), index = ast_.child(target, 1);
  if (ast_.kind(object) != NodeKind::Name)
    unsupported(target, "assigning into a part of a tensor that is not a variable (write 'x[i, j] = v' for "
                        "'x[i][j] = v')");
  Value* x = value(object);
  Type t = x->type();
  std::vector<NodeId> indices = subscript_indices(index);
  // x[i] = v with an integer tensor i: a scatter. Beside slices with
  // bounds (`x[1:3, i] = v`) into the sliced part, which is then assigned
  // as `x[1:3, :] = part` below (the indexed axes whole).
  const bool scatter = is_gather(indices);
  if (scatter) {
    for (NodeId i : indices)
      if (ast_.kind(i) == NodeKind::NoneLiteral) unsupported(i, "'None' in the target of an assignment into a tensor");
    const bool bounded_slice = std::ranges::any_of(indices, [&](NodeId i) {
      return ast_.kind(i) == NodeKind::Slice &&
             (ast_.child(i, 0).valid() || ast_.child(i, 1).valid() || ast_.child(i, 2).valid());
    });
    Value* part = bounded_slice ? graph_basic_indexing(target, x, indices, true) : x;
    v = graph_scatter(target, part, indices, v, where);
    if (!bounded_slice) {
      env_[ast_.node(object).payload] = Bound{v, {}};
      return;
    }
  }
  size_t consuming = axis_consuming_indices(indices);
  std::vector<AxisSelection> axes(t.rank());
  // An integer index drops its axis from the selection (x[i] of a matrix
  // is a row; a constant one becomes a Range of one element below); a
  // slice keeps it.
  std::vector<bool> dropped(t.rank(), false);
  size_t axis = 0;
  for (NodeId i : indices) {
    NodeKind k = ast_.kind(i);
    if (k == NodeKind::NoneLiteral) unsupported(i, "'None' in the target of an assignment into a tensor");
    if (k == NodeKind::EllipsisLiteral) {
      axis += t.rank() - consuming;
      continue;
    }
    int64_t extent = t.shape()[axis];
    if (k == NodeKind::Slice) {
      NodeId lo = ast_.child(i, 0), hi = ast_.child(i, 1), step = ast_.child(i, 2);
      std::optional<int64_t> by = step.valid() ? constant_of(step) : std::optional<int64_t>(1);
      if (!by || *by != 1) unsupported(i, "assigning into a slice with a step other than 1");
      if (!lo.valid() && !hi.valid()) {
        ++axis;  // the whole axis
        continue;
      }
      std::optional<int64_t> a = lo.valid() ? constant_of(lo) : std::optional<int64_t>(0);
      std::optional<int64_t> b = hi.valid() ? constant_of(hi) : std::optional<int64_t>(extent);
      if (extent == kDynamic || !a || !b)
        unsupported(i, "assigning into a slice whose bounds or axis size are known only at run time");
      // Python's clamping, as x[a:b] reads.
      auto clamp = [&](int64_t e) { return std::clamp<int64_t>(e < 0 ? e + extent : e, 0, extent); };
      axes[axis].kind = AxisSelection::Kind::Range;
      axes[axis].start = clamp(*a);
      axes[axis].limit = std::max(clamp(*b), axes[axis].start);
      ++axis;
      continue;
    }
    if (scatter) {  // the scattered part holds this axis whole
      ++axis;
      continue;
    }
    // An integer: known when compiling on an axis of known size, the range
    // of one element; else checked when it runs.
    dropped[axis] = true;
    std::optional<int64_t> at = constant_of(i);
    if (at && extent != kDynamic) {
      int64_t element = *at < 0 ? *at + extent : *at;
      if (element < 0 || element >= extent) unsupported(i, "a tensor index out of range");
      axes[axis].kind = AxisSelection::Kind::Range;
      axes[axis].start = element;
      axes[axis].limit = element + 1;
    } else {
      axes[axis].kind = AxisSelection::Kind::Index;
      axes[axis].index = checked_tensor_index(x, axis, i);
    }
    ++axis;
  }

  // v in x's element type, with x's rank: the selection's axes (x's, less
  // the indexed ones) right-aligned as broadcasting aligns them, 1 at the
  // indexed axes.
  ScalarType element = t.scalar();
  Value* vt = v->type().is(TypeKind::Tensor) ? to_element(v, element, where) : scalar_as_tensor(v, element, where);
  size_t selection_rank = 0;
  for (size_t a = 0; a < t.rank(); ++a) selection_rank += dropped[a] ? 0 : 1;
  vt = without_leading_ones(vt, selection_rank, where);
  Type given = vt->type();
  std::vector<int64_t> dims;
  std::vector<Value*> extents;
  size_t lead = selection_rank - given.rank(), seen = 0;
  for (size_t a = 0; a < t.rank(); ++a) {
    if (dropped[a] || seen++ < lead) {
      dims.push_back(1);
      extents.push_back(nullptr);
      continue;
    }
    size_t d = seen - 1 - lead;
    dims.push_back(given.shape()[d]);
    extents.push_back(given.shape()[d] == kDynamic ? graph_dim(vt, static_cast<int64_t>(d)) : nullptr);
  }
  Type expanded = context_.tensor_type(dims, element);
  if (expanded != given) {
    std::vector<Value*> operands{vt};
    for (Value* d : dynamic_dims(expanded, extents)) operands.push_back(d);
    vt = graph_op(OpKind::GraphReshape, operands, expanded, {}, where);
  }

  // region[..., start:limit, ...] along axis k (or the one element at a
  // run-time index).
  auto slice_axis = [&](Value* region, size_t k, Value* at, int64_t start, int64_t limit) {
    Type rt = region->type();
    std::vector<int64_t> starts(rt.rank(), 0), limits, steps(rt.rank(), 1), sliced(rt.shape().begin(), rt.shape().end());
    for (int64_t e : rt.shape()) limits.push_back(e == kDynamic ? int64_t{-1} : e);  // -1: the whole axis
    std::vector<Value*> operands{region};
    if (at) {
      starts[k] = limits[k] = kDynamic;
      operands.push_back(at);
      operands.push_back(emit(OpKind::AddI, {at, builder_.constant_index(1)}, context_.index_type()));
      sliced[k] = 1;
    } else {
      starts[k] = start;
      limits[k] = limit;
      sliced[k] = limit - start;
    }
    return graph_op(OpKind::GraphSlice, operands, context_.tensor_type(sliced, rt.scalar()),
                    {{"starts", context_.int_array_attr(starts)},
                     {"limits", context_.int_array_attr(limits)},
                     {"steps", context_.int_array_attr(steps)}},
                    where);
  };
  Value* yes = graph_op(OpKind::GraphConstant, {}, context_.tensor_type({}, ScalarType::Bool),
                        {{"value", context_.bool_attr(true)}}, where);
  // The region with the selection's part of it (axes k on) replaced by v.
  std::function<Value*(Value*, size_t)> update = [&](Value* region, size_t k) -> Value* {
    while (k < axes.size() && axes[k].kind == AxisSelection::Kind::Whole) ++k;
    if (k == axes.size()) return graph_elementwise("select", {yes, vt, region}, where);  // v broadcast to it
    const AxisSelection& s = axes[k];
    Type rt = region->type();
    if (s.kind == AxisSelection::Kind::Index) {
      Value* row = update(slice_axis(region, k, s.index, 0, 0), k + 1);
      std::vector<Value*> sizes;
      for (size_t d = 0; d < rt.rank(); ++d)
        if (rt.shape()[d] == kDynamic) sizes.push_back(graph_dim(region, static_cast<int64_t>(d)));
      Value* positions = graph_op(OpKind::GraphIota, sizes, context_.tensor_type(rt.shape(), ScalarType::I64),
                                  {{"axis", context_.int_attr(static_cast<int64_t>(k))}}, where);
      Value* here = graph_elementwise("eq", {positions, convert(s.index, context_.i64_type())}, where);
      return graph_elementwise("select", {here, row, region}, where);
    }
    std::vector<Value*> parts;
    if (s.start > 0) parts.push_back(slice_axis(region, k, nullptr, 0, s.start));
    if (s.limit > s.start) parts.push_back(update(slice_axis(region, k, nullptr, s.start, s.limit), k + 1));
    if (s.limit < rt.shape()[k]) parts.push_back(slice_axis(region, k, nullptr, s.limit, rt.shape()[k]));
    if (parts.size() == 1) return parts.front();
    if (parts.empty()) return region;
    return graph_op(OpKind::GraphConcat, parts, rt, {{"axis", context_.int_attr(static_cast<int64_t>(k))}}, where);
  };
  Value* updated = update(x, 0);
  if (updated->type() != t) updated = reshape_as(updated, t, x);
  env_[ast_.node(object).payload] = Bound{updated, {}};
}

}  // namespace tessera::ir
