#include "ir/core/graph_shapes.h"

#include <fmt/format.h>

#include <algorithm>

#include "ir/core/graph_ops.h"
#include "ir/core/tile_attr_kinds.h"

namespace tessera::ir {

namespace {

std::string shape_text(std::span<const int64_t> dims) {
  std::string text = "[";
  for (size_t i = 0; i < dims.size(); ++i)
    text += (i ? ", " : "") + (dims[i] == kDynamic ? std::string("?") : std::to_string(dims[i]));
  return text + "]";
}

bool dims_match(int64_t a, int64_t b) { return a == b || a == kDynamic || b == kDynamic; }

std::optional<GraphResult> tensor_of(ScalarType element, std::vector<int64_t> dims) {
  return GraphResult{false, element, std::move(dims)};
}

std::optional<GraphResult> as_result(Type t) {
  if (t.is_index()) return GraphResult{true, ScalarType::I64, {}};
  return GraphResult{false, t.scalar(), {t.shape().begin(), t.shape().end()}};
}

}  // namespace

std::span<const int64_t> value_shape(Type t) {
  if (t.is(TypeKind::Tensor)) return t.shape();
  return {};
}

std::optional<std::vector<int64_t>> broadcast_shapes(std::span<const int64_t> a, std::span<const int64_t> b) {
  size_t rank = std::max(a.size(), b.size());
  std::vector<int64_t> dims(rank);
  for (size_t i = 0; i < rank; ++i) {
    int64_t x = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    int64_t y = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (x == 1) dims[i] = y;
    else if (y == 1) dims[i] = x;
    else if (x == kDynamic) dims[i] = y;
    else if (y == kDynamic || x == y) dims[i] = x;
    else return std::nullopt;
  }
  return dims;
}

Type GraphResult::type(Context& context) const {
  return index ? context.index_type() : context.tensor_type(dims, element);
}

std::string graph_result_text(const GraphResult& result) {
  if (result.index) return "index";
  std::string text = "tensor<";
  for (int64_t d : result.dims) text += (d == kDynamic ? std::string("?") : std::to_string(d)) + "x";
  return text + std::string(scalar_info(result.element).name) + ">";
}

bool graph_type_matches(const GraphResult& expected, Type actual) {
  if (expected.index) return actual.is_index();
  if (!actual.is(TypeKind::Tensor)) return false;
  if (expected.element != actual.scalar() || expected.dims.size() != actual.rank()) return false;
  for (size_t i = 0; i < actual.rank(); ++i)
    if (!dims_match(expected.dims[i], actual.shape()[i])) return false;
  return true;
}

std::optional<GraphResult> infer_graph_result(Operation* op, unsigned index, std::string& why) {
  Type declared = op->result(index)->type();
  auto fail = [&](std::string message) -> std::optional<GraphResult> {
    why = std::move(message);
    return std::nullopt;
  };
  auto tensor_operand = [&](unsigned i) -> std::optional<Type> {  // an operand that is a tensor
    if (i >= op->num_operands()) return std::nullopt;
    Type t = op->operand(i)->type();
    if (!t.is(TypeKind::Tensor)) return std::nullopt;
    return t;
  };
  // Ops whose result size comes in as operands: one per `?` of the result.
  auto dynamic_sizes = [&](unsigned first) -> bool {
    size_t dynamic = 0;
    for (int64_t d : declared.shape()) dynamic += d == kDynamic ? 1 : 0;
    if (op->num_operands() - first != dynamic) {
      why = fmt::format("takes one index operand per '?' of its result ({}), got {}", dynamic,
                        op->num_operands() - first);
      return false;
    }
    for (unsigned i = first; i < op->num_operands(); ++i)
      if (!op->operand(i)->type().is_index()) {
        why = "its size operands must be index values";
        return false;
      }
    return true;
  };
  switch (op->kind()) {
    case OpKind::GraphEmpty:
    case OpKind::GraphConstant:
      if (!declared.is(TypeKind::Tensor)) return fail("result must be a tensor");
      if (!dynamic_sizes(0)) return std::nullopt;
      return as_result(declared);
    case OpKind::GraphIota: {
      // Each element is its index along `axis`.
      if (!declared.is(TypeKind::Tensor) || declared.scalar() != ScalarType::I64) return fail("result must be an i64 tensor");
      Attribute axis = op->attr("axis");
      if (!axis || !axis.is(AttributeKind::Integer) || axis.int_value() < 0 ||
          axis.int_value() >= static_cast<int64_t>(declared.rank()))
        return fail("requires an integer attribute 'axis' in range");
      if (!dynamic_sizes(0)) return std::nullopt;
      return as_result(declared);
    }
    case OpKind::GraphRandom: {
      if (!declared.is(TypeKind::Tensor) || !is_float(declared.scalar())) return fail("result must be a float tensor");
      if (op->num_operands() < 1 || !op->operand(0)->type().is_int())
        return fail("operand #0 must be the seed, an integer");
      if (!dynamic_sizes(1)) return std::nullopt;
      return as_result(declared);
    }
    case OpKind::GraphElementwise: {
      std::optional<ElementwiseOp> fn = elementwise_op_by_name(op->string_attr("op"));
      if (!fn) return fail("has an unknown op");
      const ElementwiseInfo& info = elementwise_info(*fn);
      if (op->num_operands() != info.arity)
        return fail(fmt::format("'{}' takes {} operand{}, got {}", info.name, info.arity, info.arity == 1 ? "" : "s",
                                op->num_operands()));
      std::vector<int64_t> dims;
      bool any_tensor = false;
      for (Value* v : op->operands()) {
        Type t = v->type();
        if (!t.is(TypeKind::Tensor) && !t.is_scalar())
          return fail(fmt::format("operands must be tensors or scalars, got {}", t.str()));
        if (!t.is(TypeKind::Tensor)) continue;
        any_tensor = true;
        auto b = broadcast_shapes(dims, t.shape());
        if (!b) return fail(fmt::format("operand shapes {} and {} do not broadcast", shape_text(dims), shape_text(t.shape())));
        dims = *b;
      }
      if (!any_tensor) return fail("needs a tensor operand");
      ScalarType element = op->operand(0)->type().scalar();
      unsigned first_value = info.result == ElementwiseResult::Select ? 1 : 0;
      if (info.result == ElementwiseResult::Select && element != ScalarType::Bool)
        return fail("operand #0 of 'select' must be bool");
      element = op->operand(first_value)->type().scalar();
      for (unsigned i = first_value + 1; i < op->num_operands(); ++i)
        if (op->operand(i)->type().scalar() != element)
          return fail(fmt::format("operands have different element types: {} and {}", op->operand(first_value)->type().str(),
                                  op->operand(i)->type().str()));
      if (info.result == ElementwiseResult::Bool) element = ScalarType::Bool;
      return tensor_of(element, dims);
    }
    case OpKind::GraphCast: {
      // A rounding policy (docs/ir/graph.md, "graph.cast"): the attributes of
      // arith.truncf, on a float result; a stochastic rounding takes the
      // seed (an integer) as operand #1.
      auto a = tensor_operand(0);
      // A @precision_policy class (docs/ir/graph.md, "graph.cast"):
      // `dequantize = @Class.dequantize` calls that function (storage code,
      // scale) -> compute value on each element, the scale (a scalar) being
      // operand #1.
      if (Attribute method = op->attr("dequantize")) {
        if (!method.is(AttributeKind::Symbol)) return fail("attribute 'dequantize' must be a symbol (the class's method)");
        if (!a || op->num_operands() != 2 || !op->operand(1)->type().is_scalar() || !declared.is(TypeKind::Tensor))
          return fail("with 'dequantize' converts a tensor of codes, given its scale (a scalar), to a tensor of the same shape");
        for (std::string_view other : {"rounding", "saturate", "scale", "unscale"})
          if (op->has_attr(other)) return fail(fmt::format("takes 'dequantize' or '{}', not both", other));
        return tensor_of(declared.scalar(), {a->shape().begin(), a->shape().end()});
      }
      std::optional<RoundingMode> rounding = parse_rounding_mode(*op);
      bool stochastic = rounding == RoundingMode::Stochastic;
      if (!a || op->num_operands() != (stochastic ? 2u : 1u) || !declared.is(TypeKind::Tensor))
        return fail(stochastic ? "with stochastic rounding converts a tensor, given a seed, to a tensor of the same shape"
                               : "converts a tensor to a tensor of the same shape");
      if (stochastic && !op->operand(1)->type().is_int()) return fail("operand #1 must be the seed, an integer");
      // nearest_even is the absence of the attribute (rounding_attributes).
      if (Attribute r = op->attr("rounding"); r && (!r.is(AttributeKind::String) || !rounding ||
                                                    *rounding == RoundingMode::NearestEven)) {
        std::string modes;
        for (std::string_view name : kRoundingModeNames)
          if (name != rounding_mode_name(RoundingMode::NearestEven))
            modes += fmt::format("{}\"{}\"", modes.empty() ? "" : ", ", name);
        return fail("attribute 'rounding' must be one of " + modes);
      }
      if (op->has_attr("saturate") && !op->attr("saturate").is(AttributeKind::Unit))
        return fail("attribute 'saturate' is a flag");
      if ((op->has_attr("rounding") || op->has_attr("saturate")) &&
          (!is_float(declared.scalar()) || declared.scalar() == ScalarType::F64))
        return fail("a rounding policy needs a float result narrower than f64");
      // @loss_scale (docs/ir/graph.md, "graph.cast"): `scale = k` multiplies
      // the f32 value by k before the rounding (into the storage of a
      // `T @loss_scale(k)` tensor), `unscale = k` divides the decoded f32
      // value by k (out of it).
      for (std::string_view name : {"scale", "unscale"})
        if (Attribute k = op->attr(name); k && (!k.is(AttributeKind::Float) || !(k.float_value() > 0.0)))
          return fail(fmt::format("attribute '{}' must be a positive float", name));
      if (op->has_attr("scale") && op->has_attr("unscale")) return fail("takes 'scale' or 'unscale', not both");
      if (op->has_attr("scale") &&
          (!is_float(a->scalar()) || a->scalar() == ScalarType::F64 || !is_float(declared.scalar()) ||
           declared.scalar() == ScalarType::F64))
        return fail("with 'scale' converts floats narrower than f64");
      if (op->has_attr("unscale") &&
          (!is_float(a->scalar()) || a->scalar() == ScalarType::F64 || declared.scalar() != ScalarType::F32))
        return fail("with 'unscale' converts floats narrower than f64 to f32");
      return tensor_of(declared.scalar(), {a->shape().begin(), a->shape().end()});
    }
    case OpKind::GraphReduce: {
      auto a = tensor_operand(0);
      if (!a) return fail("operand must be a tensor");
      if (!reduce_kind_by_name(op->string_attr("kind"))) return fail("has an unknown kind");
      Attribute axes = op->attr("axes");
      if (!axes) return fail("requires attribute 'axes'");
      std::vector<int64_t> list = axes.int_array();
      for (size_t i = 0; i < list.size(); ++i) {
        if (list[i] < 0 || static_cast<size_t>(list[i]) >= a->rank())
          return fail(fmt::format("axis {} is out of range", list[i]));
        if (i > 0 && list[i] <= list[i - 1]) return fail("axes must be increasing");
      }
      bool keep = op->has_attr("keepdims");
      std::vector<int64_t> dims;
      for (size_t d = 0; d < a->rank(); ++d) {
        bool reduced = std::find(list.begin(), list.end(), static_cast<int64_t>(d)) != list.end();
        if (!reduced) dims.push_back(a->shape()[d]);
        else if (keep) dims.push_back(1);
      }
      return tensor_of(a->scalar(), dims);
    }
    case OpKind::GraphMatmul: {
      auto a = tensor_operand(0), b = tensor_operand(1);
      if (!a || !b || op->num_operands() != 2) return fail("takes two tensors");
      if (a->rank() < 2 || b->rank() < 2) return fail("operands must have rank 2 or more");
      int64_t k1 = a->shape()[a->rank() - 1], k2 = b->shape()[b->rank() - 2];
      if (!dims_match(k1, k2)) return fail(fmt::format("inner dimensions differ: {} and {}", k1, k2));
      auto batch = broadcast_shapes(a->shape().first(a->rank() - 2), b->shape().first(b->rank() - 2));
      if (!batch) return fail("batch dimensions do not broadcast");
      std::vector<int64_t> dims = *batch;
      dims.push_back(a->shape()[a->rank() - 2]);
      dims.push_back(b->shape()[b->rank() - 1]);
      if (!declared.is(TypeKind::Tensor)) return fail("result must be a tensor");
      return tensor_of(declared.scalar(), dims);
    }
    case OpKind::GraphSoftmax: {
      auto a = tensor_operand(0);
      if (!a || op->num_operands() != 1) return fail("operand must be a tensor");
      Attribute axis = op->attr("axis");
      if (!axis || !axis.is(AttributeKind::Integer) || axis.int_value() < 0 ||
          axis.int_value() >= static_cast<int64_t>(a->rank()))
        return fail("requires an integer attribute 'axis' in range");
      return as_result(*a);
    }
    case OpKind::GraphSort: {
      // sort(x) along `axis`: x's type; with `indices`, the positions
      // along the axis the values came from (i64), np.argsort's.
      auto a = tensor_operand(0);
      if (!a || op->num_operands() != 1 || a->rank() == 0) return fail("operand must be a tensor of rank 1 or more");
      Attribute axis = op->attr("axis");
      if (!axis || !axis.is(AttributeKind::Integer) || axis.int_value() < 0 ||
          axis.int_value() >= static_cast<int64_t>(a->rank()))
        return fail("requires an integer attribute 'axis' in range");
      if (a->scalar() == ScalarType::Bool) return fail("sorts numbers, not bool");
      if (op->has_attr("indices")) return tensor_of(ScalarType::I64, {a->shape().begin(), a->shape().end()});
      return as_result(*a);
    }
    case OpKind::GraphNorm: {
      auto x = tensor_operand(0);
      if (!x || x->rank() == 0) return fail("operand #0 must be a tensor");
      std::string_view kind = op->string_attr("kind");
      if (kind != "rms" && kind != "layer") return fail("attribute 'kind' must be rms or layer");
      unsigned max_operands = kind == "layer" ? 3 : 2;
      if (op->num_operands() > max_operands) return fail("takes the tensor, then an optional weight (and bias for layer)");
      for (unsigned i = 1; i < op->num_operands(); ++i) {
        auto w = tensor_operand(i);
        if (!w || w->rank() != 1 || !dims_match(w->shape()[0], x->shape().back()) || w->scalar() != x->scalar())
          return fail("a weight or bias is a vector over the last axis, of the tensor's element type");
      }
      return as_result(*x);
    }
    case OpKind::GraphAttention:
    case OpKind::GraphAttentionGrad: {
      // attention(q, k, v) -> o; attention_grad(q, k, v, o, do) -> (dq, dk, dv).
      bool grad = op->is(OpKind::GraphAttentionGrad);
      auto q = tensor_operand(0), k = tensor_operand(1), v = tensor_operand(2);
      if (!q || !k || !v || op->num_operands() != (grad ? 5u : 3u))
        return fail(grad ? "takes q, k, v, o and do tensors" : "takes q, k and v tensors");
      if (q->rank() < 2 || k->rank() < 2 || v->rank() < 2) return fail("q, k and v are [..., S, D] tensors");
      size_t rq = q->rank(), rk = k->rank(), rv = v->rank();
      if (!dims_match(q->shape()[rq - 1], k->shape()[rk - 1])) return fail("q and k have different head sizes");
      if (!dims_match(k->shape()[rk - 2], v->shape()[rv - 2])) return fail("k and v have different lengths");
      if (q->scalar() != k->scalar() || q->scalar() != v->scalar()) return fail("q, k and v have different element types");
      // Batch dimensions broadcast, as matmul's: [..., Sq, Dv].
      auto batch = broadcast_shapes(q->shape().first(rq - 2), k->shape().first(rk - 2));
      if (batch) batch = broadcast_shapes(*batch, v->shape().first(rv - 2));
      if (!batch) return fail("q, k and v have batch dimensions that do not broadcast");
      std::vector<int64_t> dims = *batch;
      dims.push_back(q->shape()[rq - 2]);
      dims.push_back(v->shape()[rv - 1]);
      if (!grad) return tensor_of(q->scalar(), dims);
      // The gradients have the operands' types; o and do the output's.
      for (unsigned i = 3; i < 5; ++i) {
        auto t = tensor_operand(i);
        if (!t || !graph_type_matches(GraphResult{false, q->scalar(), dims}, *t))
          return fail(fmt::format("operand #{} ({}) must have the attention output's type {}", i, i == 3 ? "o" : "do",
                                  graph_result_text(GraphResult{false, q->scalar(), dims})));
      }
      if (index > 2) return fail("has three results: dq, dk and dv");
      return as_result(op->operand(index)->type());
    }
    case OpKind::GraphDim: {
      auto a = tensor_operand(0);
      Attribute axis = op->attr("axis");
      if (!a || op->num_operands() != 1) return fail("operand must be a tensor");
      if (!axis || !axis.is(AttributeKind::Integer) || axis.int_value() < 0 ||
          axis.int_value() >= static_cast<int64_t>(a->rank()))
        return fail("requires an integer attribute 'axis' in range");
      return GraphResult{true, ScalarType::I64, {}};
    }
    case OpKind::GraphReshape: {
      auto a = tensor_operand(0);
      if (!a) return fail("operand #0 must be a tensor");
      if (!declared.is(TypeKind::Tensor) || declared.scalar() != a->scalar())
        return fail("result must be a tensor of the operand's element type");
      if (!dynamic_sizes(1)) return std::nullopt;
      int64_t from = a->num_elements(), to = declared.num_elements();
      if (from != kDynamic && to != kDynamic && from != to)
        return fail(fmt::format("reshapes {} elements into {}", from, to));
      return as_result(declared);
    }
    case OpKind::GraphTranspose: {
      auto a = tensor_operand(0);
      if (!a || op->num_operands() != 1) return fail("operand must be a tensor");
      Attribute perm = op->attr("perm");
      if (!perm) return fail("requires attribute 'perm'");
      std::vector<int64_t> p = perm.int_array();
      std::vector<int64_t> sorted = p;
      std::sort(sorted.begin(), sorted.end());
      bool ok = p.size() == a->rank();
      for (size_t i = 0; ok && i < sorted.size(); ++i) ok = sorted[i] == static_cast<int64_t>(i);
      if (!ok) return fail("'perm' must be a permutation of the operand's axes");
      std::vector<int64_t> dims;
      for (int64_t axis : p) dims.push_back(a->shape()[static_cast<size_t>(axis)]);
      return tensor_of(a->scalar(), dims);
    }
    case OpKind::GraphSlice: {
      // starts/limits entries `?` come from the index operands after the
      // tensor, in order (each dimension's start, then its limit); a limit
      // of -1 is the end of the dimension.
      auto a = tensor_operand(0);
      if (!a) return fail("operand 0 must be a tensor");
      Attribute starts = op->attr("starts"), limits = op->attr("limits"), steps = op->attr("steps");
      if (!starts || !limits || !steps) return fail("requires attributes 'starts', 'limits' and 'steps'");
      std::vector<int64_t> s = starts.int_array(), l = limits.int_array(), t = steps.int_array();
      if (s.size() != a->rank() || l.size() != a->rank() || t.size() != a->rank())
        return fail("needs one start, limit and step per dimension");
      size_t dynamic = 0;
      for (size_t d = 0; d < a->rank(); ++d) dynamic += (s[d] == kDynamic) + (l[d] == kDynamic);
      if (op->num_operands() != 1 + dynamic)
        return fail(fmt::format("needs {} index operands after the tensor (one per '?' start and limit), got {}",
                                dynamic, op->num_operands() - 1));
      for (size_t i = 1; i < op->num_operands(); ++i)
        if (!op->operand(i)->type().is_index()) return fail("start and limit operands must be indices");
      // `sizes` (optional): a dynamic window's static length, which the
      // code that made the bounds checked.
      std::vector<int64_t> window(a->rank(), kDynamic);
      if (Attribute sizes = op->attr("sizes")) {
        window = sizes.int_array();
        if (window.size() != a->rank()) return fail("'sizes' needs one entry per dimension");
      }
      std::vector<int64_t> dims;
      for (size_t d = 0; d < a->rank(); ++d) {
        int64_t extent = a->shape()[d];
        if (t[d] == 0) return fail("steps must not be 0");
        if (t[d] < 0) {
          // NumPy's negative step: elements start, start + step, ... above
          // `limits` (-1: through element 0). Bounds known only at run time
          // are in range (the lowering clamps them: start in [-1, size - 1],
          // limit in [-1, start]).
          if (s[d] == kDynamic || l[d] == kDynamic) {
            if (window[d] != kDynamic && window[d] < 0) return fail("'sizes' entries must be non-negative or '?'");
            dims.push_back(window[d]);
            continue;
          }
          if (extent == kDynamic)
            return fail(fmt::format("dimension {} has a negative step and constant bounds, which needs a static size", d));
          if (window[d] != kDynamic) return fail("'sizes' may only give the size of a window with a '?' bound");
          if (s[d] < 0 || s[d] >= extent || l[d] < -1 || l[d] >= s[d])
            return fail(fmt::format("dimension {} is sliced [{}:{}:{}] but has size {}", d, s[d], l[d], t[d], extent));
          dims.push_back((s[d] - l[d] - 1) / -t[d] + 1);
          continue;
        }
        if (s[d] == kDynamic || l[d] == kDynamic) {
          if (window[d] != kDynamic && window[d] < 0) return fail("'sizes' entries must be non-negative or '?'");
          dims.push_back(window[d]);
          continue;
        }
        if (window[d] != kDynamic) return fail("'sizes' may only give the size of a window with a '?' bound");
        if (l[d] == -1) {  // to the end of the dimension
          if (s[d] < 0 || (extent != kDynamic && s[d] > extent))
            return fail(fmt::format("dimension {} is sliced from {} but has size {}", d, s[d],
                                    extent == kDynamic ? std::string("?") : std::to_string(extent)));
          dims.push_back(extent == kDynamic ? kDynamic : (extent - s[d] + t[d] - 1) / t[d]);
          continue;
        }
        if (s[d] < 0 || l[d] < s[d] || (extent != kDynamic && l[d] > extent))
          return fail(fmt::format("dimension {} is sliced [{}:{}] but has size {}", d, s[d], l[d],
                                  extent == kDynamic ? std::string("?") : std::to_string(extent)));
        dims.push_back((l[d] - s[d] + t[d] - 1) / t[d]);
      }
      return tensor_of(a->scalar(), dims);
    }
    case OpKind::GraphConcat: {
      if (op->num_operands() == 0) return fail("needs at least one operand");
      auto first = tensor_operand(0);
      if (!first) return fail("operands must be tensors");
      Attribute axis = op->attr("axis");
      if (!axis || !axis.is(AttributeKind::Integer) || axis.int_value() < 0 ||
          axis.int_value() >= static_cast<int64_t>(first->rank()))
        return fail("requires an integer attribute 'axis' in range");
      auto ax = static_cast<size_t>(axis.int_value());
      std::vector<int64_t> dims(first->shape().begin(), first->shape().end());
      for (unsigned i = 1; i < op->num_operands(); ++i) {
        auto t = tensor_operand(i);
        if (!t || t->rank() != first->rank() || t->scalar() != first->scalar())
          return fail("operands must be tensors of one rank and element type");
        for (size_t d = 0; d < dims.size(); ++d) {
          if (d == ax) {
            dims[d] = dims[d] == kDynamic || t->shape()[d] == kDynamic ? kDynamic : dims[d] + t->shape()[d];
          } else if (!dims_match(dims[d], t->shape()[d])) {
            return fail(fmt::format("operand #{} differs in dimension {}", i, d));
          }
        }
      }
      return tensor_of(first->scalar(), dims);
    }
    case OpKind::GraphLaunch: {
      // graph.launch %g0, %g1, %g2, args... {kernel}: a result per `mut`
      // tensor argument, its new value (the kernel's signature says which).
      unsigned grids = launch_grid_operand_count(op);
      if (op->num_operands() < grids) return fail("takes the grid's three sizes, then the kernel's arguments");
      for (unsigned i = 0; i < grids; ++i)
        if (!op->operand(i)->type().is_index()) return fail("the grid sizes must be index values");
      Attribute mut = op->attr("mut_operands");
      std::vector<int64_t> list = mut ? mut.int_array() : std::vector<int64_t>{};
      if (index >= list.size()) return fail("has a result for each 'mut_operands' entry");
      auto at = static_cast<unsigned>(list[index]);
      if (at < grids || at >= op->num_operands() || !op->operand(at)->type().is(TypeKind::Tensor))
        return fail("a 'mut_operands' entry names a tensor operand");
      return as_result(op->operand(at)->type());
    }
    case OpKind::GraphRecv:
    case OpKind::GraphSendRecv:
      if (op->num_operands() != 1 || !op->operand(0)->type().is(TypeKind::Tensor))
        return fail("operand #0 must be a tensor");
      return as_result(op->operand(0)->type());
    case OpKind::GraphLoad:
      if (!declared.is(TypeKind::Tensor) || op->num_operands() != 0) return fail("result must be a tensor");
      return as_result(declared);
    case OpKind::GraphAllReduce:
    case OpKind::GraphBroadcast:
    case OpKind::GraphAllGather:
    case OpKind::GraphReduceScatter:
    case OpKind::GraphShard:
    case OpKind::GraphUnshard: {
      // Mesh-sized dims: all_gather multiplies dimension `dim` by the size of
      // mesh axis `axis`, reduce_scatter divides it; shard divides each
      // dimension by the size of the axis its `spec` entry names, unshard
      // multiplies.
      if (op->num_operands() != 1 || !op->operand(0)->type().is(TypeKind::Tensor))
        return fail("operand #0 must be a tensor");
      Type t = op->operand(0)->type();
      std::vector<int64_t> dims(t.shape().begin(), t.shape().end());
      if (op->is(OpKind::GraphAllReduce) || op->is(OpKind::GraphBroadcast)) return tensor_of(t.scalar(), dims);
      Attribute mesh = op->attr("mesh");
      if (!mesh || !mesh.is(AttributeKind::Array) || mesh.size() != 3 || !mesh[1].is(AttributeKind::Array))
        return fail("requires attribute 'mesh' = [shape, axes, devices]");
      std::vector<int64_t> mesh_shape = mesh[0].int_array();
      auto axis_size = [&](std::string_view axis) -> int64_t {
        for (size_t a = 0; a < mesh[1].size() && a < mesh_shape.size(); ++a)
          if (mesh[1][a].string_value() == axis) return mesh_shape[a];
        return 0;
      };
      auto scale = [&](size_t d, int64_t n, bool up) {
        if (dims[d] == kDynamic) return true;
        if (!up && dims[d] % n != 0) return false;
        dims[d] = up ? dims[d] * n : dims[d] / n;
        return true;
      };
      if (op->is(OpKind::GraphShard) || op->is(OpKind::GraphUnshard)) {
        Attribute spec = op->attr("spec");
        if (!spec || !spec.is(AttributeKind::Array) || spec.size() != dims.size())
          return fail(fmt::format("the sharding spec must name one mesh axis (or \"\") per dimension of a rank-{} tensor",
                                  dims.size()));
        for (size_t d = 0; d < dims.size(); ++d) {
          if (spec[d].string_value().empty()) continue;
          int64_t n = axis_size(spec[d].string_value());
          if (n == 0) return fail("names an axis the mesh does not have: '" + std::string(spec[d].string_value()) + "'");
          if (!scale(d, n, op->is(OpKind::GraphUnshard))) return fail("a split dimension is not a multiple of its axis's size");
        }
        return tensor_of(t.scalar(), dims);
      }
      int64_t n = axis_size(op->string_attr("axis"));
      if (n == 0) return fail("names an axis the mesh does not have");
      Attribute dim = op->attr("dim");
      if (!dim || !dim.is(AttributeKind::Integer) || dim.int_value() < 0 || dim.int_value() >= static_cast<int64_t>(dims.size()))
        return fail("requires an integer attribute 'dim' in range");
      if (!scale(static_cast<size_t>(dim.int_value()), n, op->is(OpKind::GraphAllGather)))
        return fail("dimension 'dim' is not a multiple of the axis's size");
      return tensor_of(t.scalar(), dims);
    }
    default: return as_result(declared);
  }
}

}  // namespace tessera::ir
