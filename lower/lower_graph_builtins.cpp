// Lowering of the graph level's builtins, @jit calls and kernel launches
// (lower_graph.cpp; docs/ir/lowering.md, "The graph level"). Composite
// operations that have no op of their own are written with the ops that
// have (mse is a mean of squares, dropout a select on uniform numbers,
// split_qkv a reshape, slices and transposes), so that autodiff and fusion
// see only the primitive set.
#include <cmath>
#include <functional>

#include "ir/core/graph_ops.h"
#include "ir/core/graph_shapes.h"
#include "lower/lowering.h"
#include "support/format_spec.h"
#include "support/percent_format.h"

namespace tessera::ir {

using sema::BuiltinId;
using SemaKind = sema::TypeKind;

namespace {

// An int or tuple argument of axes, normalised against `rank`, in order
// (sema checked them).
std::vector<int64_t> normalized_axes(const std::vector<int64_t>& axes, size_t rank) {
  std::vector<int64_t> out;
  for (int64_t a : axes) out.push_back(a < 0 ? a + static_cast<int64_t>(rank) : a);
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

Value* Lowering::lower_matmul(Value* a, Value* b, Type result, NodeId where) {
  ScalarType element = result.scalar();
  // Operands stored narrow with an @accum are multiplied as stored (the
  // kernel widens them); anything else converts to the result type first.
  auto operand = [&](Value* v) {
    if (is_storage_float(v->type().scalar()) && is_float(element)) return v;
    return to_element(v, element, where);
  };
  a = operand(a);
  b = operand(b);
  // NumPy's vector operands: a gains a leading axis, b a trailing one; the
  // result drops them again.
  bool a_vector = a->type().rank() == 1, b_vector = b->type().rank() == 1;
  auto expand = [&](Value* v, bool front) {
    Type t = v->type();
    std::vector<int64_t> dims(t.shape().begin(), t.shape().end());
    dims.insert(front ? dims.begin() : dims.end(), 1);
    Type want = context_.tensor_type(dims, t.scalar());
    std::vector<Value*> extents;
    for (size_t d = 0; d < dims.size(); ++d) extents.push_back(nullptr);
    std::vector<Value*> operands{v};
    if (t.shape()[0] == kDynamic) operands.push_back(graph_dim(v, 0));
    return graph_op(OpKind::GraphReshape, operands, want, {}, where);
  };
  if (a_vector) a = expand(a, true);
  if (b_vector) b = expand(b, false);
  std::vector<int64_t> dims(result.shape().begin(), result.shape().end());
  if (a_vector) dims.insert(dims.end() - (b_vector ? 0 : 1), 1);
  if (b_vector) dims.push_back(1);
  Value* product = graph_op(OpKind::GraphMatmul, {a, b}, context_.tensor_type(dims, element), {}, where);
  if (!a_vector && !b_vector) return product;
  std::vector<Value*> operands{product};
  Type r = product->type();
  std::vector<int64_t> out;
  std::vector<Value*> extents;
  for (size_t d = 0; d < r.rank(); ++d) {
    bool dropped = (a_vector && d == r.rank() - 2) || (b_vector && d == r.rank() - 1);
    if (dropped) continue;
    out.push_back(r.shape()[d]);
    extents.push_back(r.shape()[d] == kDynamic ? graph_dim(product, static_cast<int64_t>(d)) : nullptr);
  }
  Type want = context_.tensor_type(out, element);
  for (Value* d : dynamic_dims(want, extents)) operands.push_back(d);
  return graph_op(OpKind::GraphReshape, operands, want, {}, where);
}

Bound Lowering::lower_graph_builtin(NodeId call, BuiltinId builtin) {
  switch (builtin) {
    case BuiltinId::DistMesh:
    case BuiltinId::DistTensor:
    case BuiltinId::ShardSpec:
    case BuiltinId::AllReduce:
    case BuiltinId::AllGather:
    case BuiltinId::ReduceScatter:
    case BuiltinId::Broadcast:
    case BuiltinId::Send:
    case BuiltinId::Recv:
    case BuiltinId::SendRecv: return lower_dist_builtin(call, builtin);
    case BuiltinId::ScheduleTile:
    case BuiltinId::ScheduleVectorize:
    case BuiltinId::ScheduleLanes:
    case BuiltinId::SchedulePipelineStages:
    case BuiltinId::ScheduleAsyncCopy:
    case BuiltinId::ScheduleUseSharedMemory:
    case BuiltinId::SchedulePipeline:
    case BuiltinId::SchedulePrefetch: return lower_schedule_directive(call);
    default: break;
  }
  auto arg = [&](size_t i) { return call_argument(call, i); };
  const sema::BuiltinInfo& info = sema::builtin_info(builtin);
  bool tensor_result = is_tensor_node(call);
  // Python's sum(l), max(l), min(l) of a list (lower_lists.cpp).
  if ((builtin == BuiltinId::Sum || builtin == BuiltinId::Max || builtin == BuiltinId::Min) && arg(0).valid() &&
      (is_list_node(arg(0)) || (node_type(arg(0)).valid() && typed_.types.kind(node_type(arg(0))) == SemaKind::Tuple &&
                                ast_.kind(ast_.child(call, 0)) == NodeKind::Name)))
    return lower_list_reduction(call, builtin);
  // Scalar math in graph code is scalar code, as in kernels.
  switch (info.signature) {
    case sema::Signature::UnaryFloat:
    case sema::Signature::UnaryNumeric:
    case sema::Signature::BinaryNumeric:
    case sema::Signature::CastArgs:
      if (!tensor_result) return lower_builtin_call(call, builtin);
      break;
    case sema::Signature::MinMax:
      if (!tensor_result && !arg(1).valid()) {  // max(x) of a number is the number
        if (!is_tensor_node(arg(0))) return Bound{value(arg(0), graph_type(call)), {}};
      }
      if (!tensor_result) return lower_builtin_call(call, builtin);
      break;
    default: break;
  }
  Type result = tensor_result ? graph_type(call) : Type{};
  ScalarType element = tensor_result ? result.scalar() : ScalarType::F32;
  // dtype= with a rounding policy (zeros, ones, full, rand, randn): the
  // values are made in f32, then rounded by the policy as ts.cast rounds.
  std::optional<sema::Policy> rounding;
  NodeId rounding_dtype;
  ScalarType rounded_element = element;
  if (tensor_result && (info.signature == sema::Signature::RandomArgs || info.signature == sema::Signature::FillArgs)) {
    rounding_dtype = arg(info.signature == sema::Signature::RandomArgs || builtin == BuiltinId::Full ||
                                 builtin == BuiltinId::FullLike
                             ? 2
                             : 1);
    if (rounding_dtype.valid()) rounding = dtype_policy(rounding_dtype);
    if (rounding && is_float(element)) {
      element = ScalarType::F32;
      result = context_.tensor_type(result.shape(), element);
    } else {
      rounding.reset();
    }
  }
  auto round_by_dtype = [&](Value* v) {
    return rounding ? graph_cast_by_policy(v, rounded_element, *rounding, call, rounding_dtype) : v;
  };
  auto tensor = [&](size_t i) { return value(arg(i)); };
  auto as_element = [&](size_t i) {
    return to_element(value(arg(i), is_tensor_node(arg(i)) ? Type{} : context_.scalar_type(element)), element, arg(i));
  };
  auto unary = [&](std::string_view fn) { return Bound{graph_elementwise(fn, {as_element(0)}, call), {}}; };
  auto reduce = [&](Value* x, std::string_view kind, std::vector<int64_t> axes, bool keepdims) {
    std::vector<NamedAttribute> attributes{{"kind", context_.string_attr(kind)},
                                           {"axes", context_.int_array_attr(normalized_axes(axes, x->type().rank()))}};
    if (keepdims) attributes.push_back({"keepdims", context_.unit_attr()});
    return graph_op(OpKind::GraphReduce, {x}, context_.tensor_type({}, x->type().scalar()), std::move(attributes), call);
  };
  auto all_axes = [&](Value* x) {
    std::vector<int64_t> axes;
    for (size_t d = 0; d < x->type().rank(); ++d) axes.push_back(static_cast<int64_t>(d));
    return axes;
  };
  auto axes_argument = [&](NodeId node, Value* x) {
    if (!node.valid() || ast_.kind(node) == NodeKind::NoneLiteral) return all_axes(x);
    std::vector<int64_t> axes;
    if (NodeId literal = constant_tuple_of(node); literal.valid()) node = literal;  // sema::Checker::tensor_axes
    if (ast_.kind(node) == NodeKind::Tuple || ast_.kind(node) == NodeKind::List) {
      for (NodeId a : ast_.children(node)) axes.push_back(*constant_of(a));
    } else {
      axes.push_back(*constant_of(node));
    }
    return axes;
  };
  // max/min/argmax/argmin have no identity: reducing axes without elements
  // fails when it runs, with NumPy's message (its ValueError), instead of
  // giving -inf or an index past the end. Checked only where a reduced
  // extent may be 0.
  auto require_elements = [&](Value* x, const std::vector<int64_t>& axes, std::string_view message) {
    std::vector<int64_t> normal = normalized_axes(axes, x->type().rank());
    if (std::ranges::none_of(normal, [&](int64_t a) { return x->type().shape()[a] == kDynamic || x->type().shape()[a] == 0; }))
      return;
    Value* count = builder_.constant_index(1);
    for (int64_t a : normal)
      count = emit(OpKind::MulI, {count, x->type().shape()[a] == kDynamic ? graph_dim(x, a) : builder_.constant_index(x->type().shape()[a])},
                   context_.index_type());
    Value* any = emit(OpKind::CmpI, {count, builder_.constant_index(0)}, context_.bool_type(),
                      {{"predicate", context_.string_attr("ne")}});
    builder_.create(OpKind::HostCheck, std::span<Value* const>(&any, 1), std::span<const Type>{},
                    {{"message", context_.string_attr(source_position(call) + ": " + std::string(message))}});
  };
  auto bool_argument = [&](NodeId node) {
    if (!node.valid()) return false;
    if (const sema::Constant* c = known_constant(node)) return c->integer != 0;
    return ast_.kind(node) == NodeKind::BoolLiteral && (ast_.node(node).flags & 1);
  };
  auto number_argument = [&](NodeId node, double otherwise) {
    if (!node.valid() || ast_.kind(node) == NodeKind::NoneLiteral) return otherwise;
    if (const sema::Constant* c = known_constant(node)) return c->as_double();
    unsupported(node, "an argument that is not a compile-time constant");
  };
  // The sizes a shape gives the result type t, one per axis, in i64 (null
  // where t's size is static): `sizes` is one shape argument (a tuple
  // written out, one extent, or a tuple value: `x.shape`, `s = x.shape`,
  // whose elements are the sizes) or the sizes as separate arguments
  // (`x.reshape(2, 6)`).
  auto shape_extents = [&](std::span<const NodeId> sizes, Type t) {
    std::vector<Value*> extents;
    NodeId shape = sizes.front();
    if (sema::TypeId st = node_type(shape); sizes.size() == 1 && ast_.kind(shape) != NodeKind::Tuple &&
                                            ast_.kind(shape) != NodeKind::List && st.valid() &&
                                            typed_.types.kind(st) == SemaKind::Tuple) {
      bool dynamic = std::find(t.shape().begin(), t.shape().end(), kDynamic) != t.shape().end();
      Bound values = dynamic ? lower(shape) : Bound{};
      for (size_t d = 0; d < t.rank(); ++d) {
        Value* size = dynamic && t.shape()[d] == kDynamic && d < values.size() ? values.element(d).value : nullptr;
        extents.push_back(size ? convert(size, context_.i64_type()) : nullptr);
      }
      return extents;
    }
    std::vector<NodeId> nodes(sizes.begin(), sizes.end());
    if (sizes.size() == 1 && (ast_.kind(shape) == NodeKind::Tuple || ast_.kind(shape) == NodeKind::List))
      nodes.assign(ast_.children(shape).begin(), ast_.children(shape).end());
    for (size_t d = 0; d < nodes.size(); ++d)
      extents.push_back(d < t.rank() && t.shape()[d] == kDynamic ? value(nodes[d], context_.i64_type()) : nullptr);
    return extents;
  };
  auto shape_operands = [&](NodeId shape, Type t) {
    return dynamic_dims(t, shape_extents(std::span<const NodeId>(&shape, 1), t));
  };

  switch (info.signature) {
    case sema::Signature::UnaryFloat:
    case sema::Signature::UnaryNumeric: {
      switch (builtin) {
        case BuiltinId::Exp: return unary("exp");
        case BuiltinId::Log: return unary("log");
        case BuiltinId::Sqrt: return unary("sqrt");
        case BuiltinId::Rsqrt: return unary("rsqrt");
        case BuiltinId::Tanh: return unary("tanh");
        case BuiltinId::Sin: return unary("sin");
        case BuiltinId::Cos: return unary("cos");
        case BuiltinId::Floor: return unary("floor");
        case BuiltinId::Ceil: return unary("ceil");
        case BuiltinId::Round: return unary("round");
        case BuiltinId::Abs: return unary("abs");
        default: break;
      }
      break;
    }
    case sema::Signature::Activation:
      switch (builtin) {
        case BuiltinId::Relu: return unary("relu");
        case BuiltinId::Gelu: return unary("gelu");
        case BuiltinId::Silu: return unary("silu");
        case BuiltinId::Sigmoid: return unary("sigmoid");
        default: break;
      }
      break;
    case sema::Signature::BinaryNumeric:  // pow
      return Bound{graph_elementwise("pow", {as_element(0), as_element(1)}, call), {}};
    case sema::Signature::CastArgs: {
      // A dtype with a rounding policy: graph.cast carries the policy as
      // arith.truncf does in a kernel store (docs/language/graph.md, "Casts").
      Value* x = tensor(0);
      if (loss_scale_of(node_type(call)) != 0.0)
        return Bound{graph_cast_to_loss_scale(x, typed_.types.info(node_type(call)).scalar, call, arg(1)), {}};
      std::optional<sema::Policy> policy = dtype_policy(arg(1));
      if (!policy || !is_float(element)) return Bound{to_element(x, element, call), {}};
      return Bound{graph_cast_by_policy(x, element, *policy, call, arg(1)), {}};
    }
    case sema::Signature::MinMax:
    case sema::Signature::Reduction: {
      if (builtin == BuiltinId::AnyOf || builtin == BuiltinId::AllOf) {
        // NumPy's any (all): whether some (every) element along the axes is
        // non-zero, NaN counting as non-zero: the elements that decide
        // counted by the sum's reduction, compared with 0.
        bool any = builtin == BuiltinId::AnyOf;
        if (!is_tensor_node(arg(0))) return Bound{value(arg(0), context_.bool_type()), {}};
        Value* x = tensor(0);
        Value* deciding = x;
        if (x->type().scalar() != ScalarType::Bool) {
          if (sema::is_storage_float(x->type().scalar())) x = to_element(x, ScalarType::F32, call);
          Type number = context_.scalar_type(x->type().scalar());
          Value* zero = float_element(number) ? builder_.constant_float(0.0, number) : builder_.constant_int(0, number);
          deciding = graph_elementwise(any ? "ne" : "eq", {x, zero}, call);
        } else if (!any) {
          deciding = graph_elementwise("not", {x}, call);
        }
        Value* count = reduce(to_element(deciding, ScalarType::I64, call), "sum", axes_argument(arg(1), x),
                              bool_argument(arg(2)));
        return Bound{graph_elementwise(any ? "gt" : "eq", {count, builder_.constant_int(0, context_.i64_type())}, call),
                     {}};
      }
      bool is_max = builtin == BuiltinId::Max || builtin == BuiltinId::Maximum;
      if (builtin == BuiltinId::Maximum || builtin == BuiltinId::Minimum ||
          ((builtin == BuiltinId::Max || builtin == BuiltinId::Min) && arg(1).valid() &&
           !is_builtin_keyword_axis(call) && !typed_.method_calls.count(call.index))) {
        // max(a, b): elementwise; max(a, b, c, ...) folded left.
        Value* folded = graph_elementwise(is_max ? "max" : "min", {as_element(0), as_element(1)}, call);
        for (size_t i = 2; arg(i).valid(); ++i)
          folded = graph_elementwise(is_max ? "max" : "min", {folded, as_element(i)}, call);
        return Bound{folded, {}};
      }
      Value* x = to_element(tensor(0), element, arg(0));
      std::string_view kind = builtin == BuiltinId::Sum    ? "sum"
                              : builtin == BuiltinId::Mean ? "mean"
                              : builtin == BuiltinId::Prod ? "prod"
                              : is_max                     ? "max"
                                                           : "min";
      // Adding bools (`dtype=bool`) is NumPy's logical or, not a count mod 2.
      if (element == ScalarType::Bool && kind == "sum") kind = "max";
      std::vector<int64_t> axes = axes_argument(arg(1), x);
      if (kind == "max" || kind == "min")
        require_elements(x, axes, is_max ? "zero-size array to reduction operation maximum which has no identity"
                                         : "zero-size array to reduction operation minimum which has no identity");
      return Bound{reduce(x, kind, axes, bool_argument(arg(2))), {}};
    }
    case sema::Signature::MatmulArgs: return Bound{lower_matmul(tensor(0), tensor(1), result, call), {}};
    case sema::Signature::SoftmaxArgs: {
      Value* x = to_element(tensor(0), element, arg(0));
      int64_t axis = arg(1).valid() ? *constant_of(arg(1)) : -1;
      if (axis < 0) axis += static_cast<int64_t>(x->type().rank());
      std::vector<NamedAttribute> attributes{{"axis", context_.int_attr(axis)}};
      if (builtin == BuiltinId::LogSoftmax) attributes.push_back({"log", context_.unit_attr()});
      return Bound{graph_op(OpKind::GraphSoftmax, {x}, x->type(), std::move(attributes), call), {}};
    }
    case sema::Signature::NormArgs: {
      bool layer = builtin == BuiltinId::LayernormSafe;
      Value* x = to_element(tensor(0), element, arg(0));
      std::vector<Value*> operands{x};
      size_t eps_index = layer ? 3 : 2;
      NodeId weight = arg(1), bias = layer ? arg(2) : NodeId{};
      auto present = [&](NodeId n) { return n.valid() && ast_.kind(n) != NodeKind::NoneLiteral; };
      if (present(weight) || present(bias)) {
        if (present(weight)) {
          operands.push_back(to_element(value(weight), element, weight));
        } else {  // a bias without a weight: a weight of ones
          int64_t last = x->type().shape().back();
          Type ones = context_.tensor_type(std::span<const int64_t>(&last, 1), element);
          std::vector<Value*> sizes;
          if (x->type().shape().back() == kDynamic)
            sizes.push_back(graph_dim(x, static_cast<int64_t>(x->type().rank()) - 1));
          operands.push_back(graph_op(OpKind::GraphConstant, sizes, ones, {{"value", context_.float_attr(1.0)}}, call));
        }
        if (present(bias)) operands.push_back(to_element(value(bias), element, bias));
      }
      double eps = number_argument(arg(eps_index), 1e-5);
      return Bound{graph_op(OpKind::GraphNorm, operands, x->type(),
                            {{"kind", context_.string_attr(layer ? "layer" : "rms")},
                             {"eps", context_.float_attr(eps)}},
                            call),
                   {}};
    }
    case sema::Signature::AttentionArgs: {
      Value* q = to_element(tensor(0), element, arg(0));
      Value* k = to_element(tensor(1), element, arg(1));
      Value* v = to_element(tensor(2), element, arg(2));
      std::vector<NamedAttribute> attributes;
      if (bool_argument(arg(3))) attributes.push_back({"causal", context_.unit_attr()});
      // The default scale 1/sqrt(D) is the op's when no `scale` attribute is given.
      if (arg(4).valid() && ast_.kind(arg(4)) != NodeKind::NoneLiteral)
        attributes.push_back({"scale", context_.float_attr(number_argument(arg(4), 1.0))});
      return Bound{graph_op(OpKind::GraphAttention, {q, k, v}, result, std::move(attributes), call), {}};
    }
    case sema::Signature::MseArgs: {
      Value* p = to_element(tensor(0), element, arg(0));
      Value* t = to_element(tensor(1), element, arg(1));
      Value* d = graph_elementwise("sub", {p, t}, call);
      Value* sq = graph_elementwise("mul", {d, d}, call);
      return Bound{reduce(sq, "mean", all_axes(sq), false), {}};
    }
    case sema::Signature::WhereArgs: {
      Value* c = value(arg(0));
      return Bound{graph_elementwise("select", {c, as_element(1), as_element(2)}, call), {}};
    }
    case sema::Signature::ReshapeArgs: {
      // The program holds this rank's block of a split tensor, and the
      // sizes are the global tensor's: no block of the result is known.
      if (program_)
        if (const sema::ShardingInfo* s = typed_.types.sharding(node_type(arg(0)));
            s && (s->unknown || std::ranges::any_of(s->dim_axes, [](int32_t a) { return a >= 0; })))
          unsupported(call, "reshaping a tensor split over a mesh in the program (all_gather it, or reshape its "
                            "block in a @jit function)");
      Value* x = tensor(0);
      // The shape argument, or the sizes as separate arguments (sema bound
      // them after x).
      std::vector<Value*> extents = shape_extents(call_arguments_in_order(call).subspan(1), result);
      // A `-1` extent known only at run time: the element count over the others.
      for (size_t d = 0; d < extents.size(); ++d) {
        if (!extents[d] || folded_int(extents[d]) != -1) continue;
        Value* total = builder_.constant_index(1);
        for (size_t a = 0; a < x->type().rank(); ++a)
          total = emit(OpKind::MulI, {total, x->type().shape()[a] == kDynamic ? graph_dim(x, static_cast<int64_t>(a))
                                                                               : builder_.constant_index(x->type().shape()[a])},
                       context_.index_type());
        Value* others = builder_.constant_index(1);
        for (size_t o = 0; o < extents.size(); ++o)
          if (o != d)
            others = emit(OpKind::MulI,
                          {others, extents[o] ? to_index(extents[o]) : builder_.constant_index(result.shape()[o])},
                          context_.index_type());
        extents[d] = emit(OpKind::DivSI, {total, others}, context_.index_type());
      }
      // Sizes known only at run time: the element counts must agree
      // (NumPy's "cannot reshape"), checked before anything reads the view.
      bool dynamic_in = std::ranges::any_of(x->type().shape(), [](int64_t e) { return e == kDynamic; });
      bool dynamic_out = std::ranges::any_of(result.shape(), [](int64_t e) { return e == kDynamic; });
      if (dynamic_in || dynamic_out) {
        auto count = [&](Value* t, Type type, const std::vector<Value*>* sizes) {
          Value* total = builder_.constant_index(1);
          for (size_t a = 0; a < type.rank(); ++a) {
            Value* e = type.shape()[a] != kDynamic ? builder_.constant_index(type.shape()[a])
                       : sizes                     ? to_index((*sizes)[a])
                                                   : graph_dim(t, static_cast<int64_t>(a));
            total = emit(OpKind::MulI, {total, e}, context_.index_type());
          }
          return total;
        };
        Value* same = emit(OpKind::CmpI, {count(x, x->type(), nullptr), count(nullptr, result, &extents)},
                           context_.bool_type(), {{"predicate", context_.string_attr("eq")}});
        builder_.create(OpKind::HostCheck, std::span<Value* const>(&same, 1), std::span<const Type>{},
                        {{"message", context_.string_attr(source_position(call) +
                                                          ": cannot reshape: the new shape's element count differs "
                                                          "from the tensor's")}});
      }
      std::vector<Value*> operands{x};
      for (Value* v : dynamic_dims(result, extents)) operands.push_back(v);
      return Bound{graph_op(OpKind::GraphReshape, operands, result, {}, call), {}};
    }
    case sema::Signature::TransposeArgs: {
      Value* x = tensor(0);
      size_t rank = x->type().rank();
      std::vector<int64_t> perm;
      NodeId order = arg(1);
      if (order.valid() && ast_.kind(order) != NodeKind::NoneLiteral) {
        std::vector<NodeId> nodes;
        if (NodeId literal = constant_tuple_of(order); literal.valid()) order = literal;  // a name for one
        if (ast_.kind(order) == NodeKind::Tuple || ast_.kind(order) == NodeKind::List)
          nodes.assign(ast_.children(order).begin(), ast_.children(order).end());
        else
          nodes.push_back(order);
        for (NodeId n : nodes) {
          int64_t a = *constant_of(n);
          perm.push_back(a < 0 ? a + static_cast<int64_t>(rank) : a);
        }
      } else {
        for (size_t d = rank; d-- > 0;) perm.push_back(static_cast<int64_t>(d));
      }
      return Bound{graph_op(OpKind::GraphTranspose, {x}, result, {{"perm", context_.int_array_attr(perm)}}, call), {}};
    }
    case sema::Signature::ConcatArgs: {
      std::vector<Value*> parts;
      for (Value* part : joined_parts(arg(0))) parts.push_back(to_element(part, element, arg(0)));
      int64_t axis = arg(1).valid() ? *constant_of(arg(1)) : 0;
      if (axis < 0) axis += static_cast<int64_t>(parts[0]->type().rank());
      return Bound{graph_op(OpKind::GraphConcat, parts, result, {{"axis", context_.int_attr(axis)}}, call), {}};
    }
    case sema::Signature::StackArgs: {
      // Each part gains a size-1 axis at `axis` (a view), then concat.
      int64_t axis = arg(1).valid() ? *constant_of(arg(1)) : 0;
      if (axis < 0) axis += static_cast<int64_t>(result.rank());
      std::vector<Value*> parts;
      for (Value* part : joined_parts(arg(0))) {
        NodeId part_node = arg(0);
        Value* v = to_element(part, element, part_node);
        std::vector<int64_t> shape(v->type().shape().begin(), v->type().shape().end());
        shape.insert(shape.begin() + axis, 1);
        std::vector<Value*> operands{v};
        for (size_t d = 0; d < shape.size(); ++d)
          if (shape[d] == kDynamic)
            operands.push_back(graph_dim(v, static_cast<int64_t>(d) < axis ? static_cast<int64_t>(d)
                                                                            : static_cast<int64_t>(d) - 1));
        parts.push_back(graph_op(OpKind::GraphReshape, operands, context_.tensor_type(shape, element), {}, call));
      }
      return Bound{graph_op(OpKind::GraphConcat, parts, result, {{"axis", context_.int_attr(axis)}}, call), {}};
    }
    case sema::Signature::FlattenArgs: return Bound{flatten(tensor(0), call), {}};
    case sema::Signature::ClipArgs: {
      Value* v = to_element(tensor(0), element, arg(0));
      for (size_t i = 1; i < 3; ++i) {
        if (ast_.kind(arg(i)) == NodeKind::NoneLiteral) continue;
        v = graph_elementwise(i == 1 ? "max" : "min", {v, as_element(i)}, call);
      }
      return Bound{v, {}};
    }
    case sema::Signature::SortArgs: {
      Value* x = tensor(0);
      auto rank = static_cast<int64_t>(x->type().rank());
      int64_t axis = arg(1).valid() ? *constant_of(arg(1)) : -1;
      if (axis < 0) axis += rank;
      std::vector<NamedAttribute> attributes{{"axis", context_.int_attr(axis)}};
      Type type = x->type();
      if (builtin == BuiltinId::Argsort) {
        attributes.push_back({"indices", context_.unit_attr()});
        type = context_.tensor_type(x->type().shape(), ScalarType::I64);
      }
      return Bound{graph_op(OpKind::GraphSort, {x}, type, std::move(attributes), call), {}};
    }
    case sema::Signature::TensorMapArgs: {
      Value* x = tensor(0);
      if (builtin == BuiltinId::Copy) return Bound{graph_elementwise("copy", {x}, call), {}};
      // sign: (x > 0) - (x < 0) in the element type (NaN gives 0, NumPy nan).
      x = to_element(x, element, arg(0));
      Value* zero = is_float(element) ? builder_.constant_float(0.0, context_.scalar_type(element))
                                      : builder_.constant_int(0, context_.scalar_type(element));
      Value* positive = to_element(graph_elementwise("gt", {x, zero}, call), element, call);
      Value* negative = to_element(graph_elementwise("lt", {x, zero}, call), element, call);
      return Bound{graph_elementwise("sub", {positive, negative}, call), {}};
    }
    case sema::Signature::ArgReduceArgs: {
      // The first position of the extreme: select(x == max(x), index,
      // INT64_MAX), then its min along the axis (NumPy's first occurrence).
      bool is_max = builtin == BuiltinId::Argmax;
      Value* x = tensor(0);
      ScalarType compare = x->type().scalar() == ScalarType::Bool  ? ScalarType::I32
                           : sema::is_storage_float(x->type().scalar()) ? ScalarType::F32
                                                                         : x->type().scalar();
      x = to_element(x, compare, arg(0));
      bool flat = !arg(1).valid() || ast_.kind(arg(1)) == NodeKind::NoneLiteral;
      bool keepdims = bool_argument(arg(2));
      int64_t axis = 0;
      if (flat) {
        x = flatten(x, call);
      } else {
        axis = *constant_of(arg(1));
        if (axis < 0) axis += static_cast<int64_t>(x->type().rank());
      }
      require_elements(x, {axis}, is_max ? "attempt to get argmax of an empty sequence"
                                         : "attempt to get argmin of an empty sequence");
      Value* extreme = reduce(x, is_max ? "max" : "min", {axis}, true);
      Value* hit = graph_elementwise("eq", {x, extreme}, call);
      // A NaN is the extreme (max and min propagate it) and equals nothing:
      // the first NaN, as NumPy's argmax/argmin.
      if (is_float(compare)) hit = graph_elementwise("or", {hit, graph_elementwise("ne", {x, x}, call)}, call);
      std::vector<Value*> sizes;
      for (size_t d = 0; d < x->type().rank(); ++d)
        if (x->type().shape()[d] == kDynamic) sizes.push_back(graph_dim(x, static_cast<int64_t>(d)));
      Value* positions = graph_op(OpKind::GraphIota, sizes, context_.tensor_type(x->type().shape(), ScalarType::I64),
                                  {{"axis", context_.int_attr(axis)}}, call);
      Value* none = builder_.constant_int(INT64_MAX, context_.i64_type());
      Value* first = reduce(graph_elementwise("select", {hit, positions, none}, call), "min", {axis}, keepdims && !flat);
      if (flat && keepdims) first = graph_op(OpKind::GraphReshape, {first}, result, {}, call);  // all ones
      return Bound{first, {}};
    }
    case sema::Signature::VarianceArgs: {
      // NumPy's two passes: the squared deviations from the mean, their mean
      // (ddof 0) or their sum divided by max(n - ddof, 0), n the count
      // reduced (ddof >= n gives inf, or NaN for a sum of 0, as NumPy); std
      // the square root.
      Value* x = to_element(tensor(0), element, arg(0));
      std::vector<int64_t> axes = normalized_axes(axes_argument(arg(1), x), x->type().rank());
      Value* mean = reduce(x, "mean", axes, true);
      Value* deviation = graph_elementwise("sub", {x, mean}, call);
      Value* squares = graph_elementwise("mul", {deviation, deviation}, call);
      double ddof = number_argument(arg(2), 0.0);
      bool keepdims = bool_argument(arg(3));
      Value* v;
      if (ddof == 0.0) {
        v = reduce(squares, "mean", axes, keepdims);
      } else {
        Type scalar = context_.scalar_type(element);
        bool known = std::all_of(axes.begin(), axes.end(), [&](int64_t a) { return x->type().shape()[a] != kDynamic; });
        Value* divisor;
        if (known) {
          double n = 1;
          for (int64_t a : axes) n *= static_cast<double>(x->type().shape()[a]);
          divisor = builder_.constant_float(std::max(n - ddof, 0.0), scalar);
        } else {
          Value* n = builder_.constant_index(1);
          for (int64_t a : axes)
            n = emit(OpKind::MulI, {n, x->type().shape()[a] == kDynamic ? graph_dim(x, a)
                                                                        : builder_.constant_index(x->type().shape()[a])},
                     context_.index_type());
          divisor = emit(OpKind::MaxF,
                         {emit(OpKind::SubF, {convert(n, scalar), builder_.constant_float(ddof, scalar)}, scalar),
                          builder_.constant_float(0.0, scalar)},
                         scalar);
        }
        v = graph_elementwise("div", {reduce(squares, "sum", axes, keepdims), divisor}, call);
      }
      if (builtin == BuiltinId::Std) v = graph_elementwise("sqrt", {v}, call);
      return Bound{v, {}};
    }
    case sema::Signature::SplitArgs: {
      Value* x = tensor(0);
      Type t = x->type();
      int64_t axis = arg(2).valid() ? *constant_of(arg(2)) : 0;
      if (axis < 0) axis += static_cast<int64_t>(t.rank());
      sema::TypeId parts_type = node_type(call);
      // Each part's start: NumPy's indices (sema::split_bounds), or equal
      // parts one after the other.
      std::vector<int64_t> starts_of_parts;
      if (ast_.kind(arg(1)) == NodeKind::Tuple || ast_.kind(arg(1)) == NodeKind::List) {
        std::vector<int64_t> indices;
        for (NodeId index : ast_.children(arg(1))) indices.push_back(*constant_of(index));
        sema::TypeId x_type = node_type(arg(0));  // sema checked the axis's size is a constant
        int64_t extent = *typed_.types.constant_value(typed_.types.dims(x_type)[static_cast<size_t>(axis)]);
        for (auto [first, last] : sema::split_bounds(indices, extent))
          starts_of_parts.push_back(first);
      }
      Bound out;
      int64_t start = 0;
      size_t part_index = 0;
      for (sema::TypeId part : std::vector<sema::TypeId>(typed_.types.tuple_elements(parts_type).begin(),
                                                          typed_.types.tuple_elements(parts_type).end())) {
        int64_t size = *typed_.types.constant_value(typed_.types.dims(part)[static_cast<size_t>(axis)]);
        if (!starts_of_parts.empty()) start = starts_of_parts[part_index++];
        std::vector<int64_t> starts(t.rank(), 0), limits, steps(t.rank(), 1);
        for (size_t d = 0; d < t.rank(); ++d) limits.push_back(t.shape()[d] == kDynamic ? -1 : t.shape()[d]);
        starts[static_cast<size_t>(axis)] = start;
        limits[static_cast<size_t>(axis)] = start + size;
        start += size;
        out.elements.push_back(graph_op(OpKind::GraphSlice, {x}, required_type(part, call, "a part"),
                                        {{"starts", context_.int_array_attr(starts)},
                                         {"limits", context_.int_array_attr(limits)},
                                         {"steps", context_.int_array_attr(steps)}},
                                        call));
      }
      return out;
    }
    case sema::Signature::SplitQkvArgs: {
      // [..., S, 3*H*Dh] -> [..., S, 3, H, Dh], then each third becomes
      // [..., H, S, Dh].
      Value* x = tensor(0);
      Type t = x->type();
      int64_t heads = *constant_of(arg(1));
      size_t rank = t.rank();
      int64_t width = t.shape().back();
      int64_t head_size = width / (3 * heads);
      std::vector<int64_t> split_dims(t.shape().begin(), t.shape().end() - 1);
      split_dims.push_back(3);
      split_dims.push_back(heads);
      split_dims.push_back(head_size);
      std::vector<Value*> extents;
      for (size_t d = 0; d < rank - 1; ++d)
        extents.push_back(t.shape()[d] == kDynamic ? graph_dim(x, static_cast<int64_t>(d)) : nullptr);
      extents.insert(extents.end(), {nullptr, nullptr, nullptr});
      Type split_type = context_.tensor_type(split_dims, t.scalar());
      std::vector<Value*> operands{x};
      for (Value* d : dynamic_dims(split_type, extents)) operands.push_back(d);
      Value* split = graph_op(OpKind::GraphReshape, operands, split_type, {}, call);
      Bound out;
      for (int64_t which = 0; which < 3; ++which) {
        std::vector<int64_t> starts(split_dims.size(), 0), steps(split_dims.size(), 1), limits;
        for (int64_t d : split_dims) limits.push_back(d == kDynamic ? -1 : d);
        starts[rank - 1] = which;
        limits[rank - 1] = which + 1;
        std::vector<int64_t> part_dims = split_dims;
        part_dims[rank - 1] = 1;
        Value* part = graph_op(OpKind::GraphSlice, {split}, context_.tensor_type(part_dims, t.scalar()),
                               {{"starts", context_.int_array_attr(starts)},
                                {"limits", context_.int_array_attr(limits)},
                                {"steps", context_.int_array_attr(steps)}},
                               call);
        // Drop the unit axis: [..., S, H, Dh].
        std::vector<int64_t> squeezed(split_dims.begin(), split_dims.begin() + static_cast<long>(rank) - 1);
        squeezed.push_back(heads);
        squeezed.push_back(head_size);
        std::vector<Value*> sq_extents(extents.begin(), extents.begin() + static_cast<long>(rank) - 1);
        sq_extents.insert(sq_extents.end(), {nullptr, nullptr});
        Type sq_type = context_.tensor_type(squeezed, t.scalar());
        std::vector<Value*> sq_operands{part};
        for (Value* d : dynamic_dims(sq_type, sq_extents)) sq_operands.push_back(d);
        Value* squeezed_part = graph_op(OpKind::GraphReshape, sq_operands, sq_type, {}, call);
        // [..., S, H, Dh] -> [..., H, S, Dh]
        std::vector<int64_t> perm;
        for (size_t d = 0; d + 3 < squeezed.size(); ++d) perm.push_back(static_cast<int64_t>(d));
        int64_t base = static_cast<int64_t>(squeezed.size()) - 3;
        perm.insert(perm.end(), {base + 1, base, base + 2});
        out.elements.push_back(graph_op(OpKind::GraphTranspose, {squeezed_part}, sq_type,
                                        {{"perm", context_.int_array_attr(perm)}}, call));
      }
      return out;
    }
    case sema::Signature::MergeHeadsArgs: {
      // [..., H, S, Dh] -> [..., S, H, Dh] -> [..., S, H*Dh]
      Value* x = tensor(0);
      Type t = x->type();
      size_t rank = t.rank();
      std::vector<int64_t> perm;
      for (size_t d = 0; d + 3 < rank; ++d) perm.push_back(static_cast<int64_t>(d));
      int64_t base = static_cast<int64_t>(rank) - 3;
      perm.insert(perm.end(), {base + 1, base, base + 2});
      std::vector<int64_t> tdims;
      for (int64_t p : perm) tdims.push_back(t.shape()[static_cast<size_t>(p)]);
      Value* moved = graph_op(OpKind::GraphTranspose, {x}, context_.tensor_type(tdims, t.scalar()),
                              {{"perm", context_.int_array_attr(perm)}}, call);
      std::vector<Value*> extents;
      for (size_t d = 0; d < result.rank(); ++d) {
        if (result.shape()[d] != kDynamic) {
          extents.push_back(nullptr);
        } else if (d + 1 < result.rank()) {
          extents.push_back(graph_dim(moved, static_cast<int64_t>(d)));
        } else {
          extents.push_back(emit(OpKind::MulI, {graph_dim(moved, static_cast<int64_t>(rank) - 2),
                                                graph_dim(moved, static_cast<int64_t>(rank) - 1)},
                                 context_.index_type()));
        }
      }
      std::vector<Value*> operands{moved};
      for (Value* d : dynamic_dims(result, extents)) operands.push_back(d);
      return Bound{graph_op(OpKind::GraphReshape, operands, result, {}, call), {}};
    }
    case sema::Signature::RandomArgs: {
      Value* seed = arg(1).valid() ? value(arg(1), context_.i64_type()) : builder_.constant_int(0, context_.i64_type());
      std::vector<Value*> operands{seed};
      for (Value* d : shape_operands(arg(0), result)) operands.push_back(d);
      return Bound{round_by_dtype(graph_op(OpKind::GraphRandom, operands, result,
                                           {{"distribution", context_.string_attr(builtin == BuiltinId::Randn ? "normal" : "uniform")}},
                                           call)),
                   {}};
    }
    case sema::Signature::FillArgs: {
      bool like = builtin == BuiltinId::ZerosLike || builtin == BuiltinId::OnesLike || builtin == BuiltinId::FullLike;
      bool full = builtin == BuiltinId::Full || builtin == BuiltinId::FullLike;
      std::optional<sema::Constant> fill;
      if (!full) {
        fill = sema::Constant{};
        fill->integer = builtin == BuiltinId::Ones || builtin == BuiltinId::OnesLike ? 1 : 0;
      } else if (const sema::Constant* c = known_constant(arg(1))) {
        fill = *c;
      }
      std::vector<Value*> sizes;
      if (like) {  // x's sizes (of a program's sharded x: this rank's block, as x holds it here)
        Value* x = tensor(0);
        if (x->type().is(TypeKind::Tensor)) result = context_.tensor_type(x->type().shape(), result.scalar());
        std::vector<Value*> extents;
        for (size_t d = 0; d < result.rank(); ++d)
          extents.push_back(result.shape()[d] == kDynamic ? graph_dim(x, static_cast<int64_t>(d)) : nullptr);
        sizes = dynamic_dims(result, extents);
      } else {
        sizes = shape_operands(arg(0), result);
      }
      if (!fill) {  // a value known only at run time: select(true, v, v) over the shape, exact
        Value* yes = graph_op(OpKind::GraphConstant, sizes, context_.tensor_type(result.shape(), ScalarType::Bool),
                              {{"value", context_.bool_attr(true)}}, call);
        Value* number = as_element(1);
        return Bound{round_by_dtype(graph_elementwise("select", {yes, number, number}, call)), {}};
      }
      // An integer constant is stored as its low 64 bits (NumPy's cast of a
      // Python int: 2**64 - 1 into u64, 2**53 + 1 into i64 exactly), never
      // through a double; a float into an integer truncates toward zero (NaN
      // and values outside i64: INT64_MIN, x86's answer to the same cast).
      Attribute constant =
          is_float(element)             ? context_.float_attr(fill->as_double())
          : element == ScalarType::Bool ? context_.bool_attr(fill->is_float ? fill->real != 0.0 : fill->integer != 0)
          : fill->is_float              ? context_.int_attr(std::fabs(fill->real) < 0x1p63 ? static_cast<int64_t>(fill->real)
                                                                                            : INT64_MIN)
                                        : context_.int_attr(static_cast<int64_t>(static_cast<uint64_t>(fill->integer)));
      return Bound{round_by_dtype(graph_op(OpKind::GraphConstant, sizes, result, {{"value", constant}}, call)), {}};
    }
    case sema::Signature::ArangeArgs: {
      // start + i * step for i < n (graph.iota), n = ceil((stop - start) /
      // step) and at least 0; integers in i64, floats in f64, then the
      // dtype (NumPy computes in double too).
      NodeId start_node = arg(1).valid() ? arg(0) : NodeId{}, stop_node = arg(1).valid() ? arg(1) : arg(0);
      double step = arg(2).valid() ? number_argument(arg(2), 1.0) : 1.0;
      bool floating = false;
      for (NodeId n : {start_node, stop_node, arg(2)}) {
        if (!n.valid()) continue;
        if (const sema::Constant* c = known_constant(n); c && c->is_float) floating = true;
        if (std::optional<Type> t = typed_type(n); t && t->is_scalar() && is_float(t->scalar())) floating = true;
      }
      Type index = context_.index_type();
      std::vector<Value*> sizes;
      if (result.shape()[0] == kDynamic) {  // integer bounds known only at run time
        Value* start = start_node.valid() ? to_index(value(start_node, context_.i64_type())) : builder_.constant_index(0);
        Value* stop = to_index(value(stop_node, context_.i64_type()));
        auto s = static_cast<int64_t>(step);
        Value* span = s > 0 ? emit(OpKind::SubI, {stop, start}, index) : emit(OpKind::SubI, {start, stop}, index);
        span = emit(OpKind::MaxSI, {span, builder_.constant_index(0)}, index);
        int64_t magnitude = s > 0 ? s : -s;
        Value* n = magnitude == 1 ? span
                                  : emit(OpKind::DivSI, {emit(OpKind::AddI, {span, builder_.constant_index(magnitude - 1)}, index),
                                                         builder_.constant_index(magnitude)},
                                         index);
        sizes.push_back(n);
      }
      Type positions_type = context_.tensor_type(result.shape(), ScalarType::I64);
      Value* positions = graph_op(OpKind::GraphIota, sizes, positions_type, {{"axis", context_.int_attr(0)}}, call);
      ScalarType compute = floating ? ScalarType::F64 : ScalarType::I64;
      Type compute_scalar = context_.scalar_type(compute);
      Value* start = start_node.valid() ? convert(value(start_node, compute_scalar), compute_scalar)
                                        : (floating ? builder_.constant_float(0.0, compute_scalar) : builder_.constant_int(0, compute_scalar));
      Value* step_value = floating ? builder_.constant_float(step, compute_scalar)
                                   : builder_.constant_int(static_cast<int64_t>(step), compute_scalar);
      Value* values = to_element(positions, compute, call);
      values = graph_elementwise("add", {graph_elementwise("mul", {values, step_value}, call), start}, call);
      return Bound{to_element(values, element, call), {}};
    }
    case sema::Signature::ArrayArgs: {
      // The numbers in row-major order, each a [1] tensor of the element
      // type, joined and shaped (sema checked the nesting).
      std::vector<Value*> parts;
      Type scalar = context_.scalar_type(element);
      std::function<void(NodeId)> walk = [&](NodeId n) {
        if (ast_.kind(n) == NodeKind::List || ast_.kind(n) == NodeKind::Tuple) {
          for (NodeId child : ast_.children(n)) walk(child);
          return;
        }
        Value* number = scalar_as_tensor(convert(value(n), scalar), element, n);
        parts.push_back(graph_op(OpKind::GraphReshape, {number}, context_.tensor_type(std::vector<int64_t>{1}, element),
                                 {}, n));
      };
      walk(arg(0));
      if (parts.empty())
        return Bound{graph_op(OpKind::GraphConstant, {}, result, {{"value", context_.int_attr(0)}}, call), {}};
      Value* flat = parts.size() == 1
                        ? parts[0]
                        : graph_op(OpKind::GraphConcat, parts,
                                   context_.tensor_type(std::vector<int64_t>{static_cast<int64_t>(parts.size())}, element),
                                   {{"axis", context_.int_attr(0)}}, call);
      return Bound{graph_op(OpKind::GraphReshape, {flat}, result, {}, call), {}};
    }
    case sema::Signature::LinspaceArgs: {
      // NumPy's: step = (stop - start) / (num - 1, or num without the
      // endpoint), start + i * step computed in f64, the last value `stop`
      // itself with the endpoint; floored for an integer dtype (NumPy
      // floors), then the dtype.
      int64_t num = result.shape()[0];
      bool endpoint = !arg(3).valid() || bool_argument(arg(3));
      Type f64 = context_.scalar_type(ScalarType::F64);
      Value* start = convert(value(arg(0), f64), f64);
      Value* stop = convert(value(arg(1), f64), f64);
      int64_t divisions = endpoint ? num - 1 : num;
      Value* step = divisions > 0 ? emit(OpKind::DivF, {emit(OpKind::SubF, {stop, start}, f64),
                                                         builder_.constant_float(static_cast<double>(divisions), f64)},
                                         f64)
                                  : builder_.constant_float(0.0, f64);
      Type positions_type = context_.tensor_type(result.shape(), ScalarType::I64);
      Value* positions = graph_op(OpKind::GraphIota, {}, positions_type, {{"axis", context_.int_attr(0)}}, call);
      Value* values = to_element(positions, ScalarType::F64, call);
      values = graph_elementwise("add", {graph_elementwise("mul", {values, step}, call), start}, call);
      if (endpoint && num > 1) {
        Value* last = graph_elementwise("eq", {positions, builder_.constant_int(num - 1, context_.i64_type())}, call);
        values = graph_elementwise("select", {last, stop, values}, call);
      }
      if (!is_float(element)) values = graph_elementwise("floor", {values}, call);
      return Bound{to_element(values, element, call), {}};
    }
    case sema::Signature::CumulativeArgs: {
      // NumPy's cumsum / cumprod along `axis` (of the flattened tensor
      // without one): out[..i..] = sum over j <= i of x[..j..], as a masked
      // reduction: x with a size-1 axis after `axis` (a view) broadcast
      // against the mask j <= i of shape [n, n, 1, ...], then reduced over
      // the j axis. n^2 work per line along the axis; the generated kernel
      // fuses the mask into the reduction, so nothing of size n^2 is stored.
      bool sum = builtin == BuiltinId::Cumsum;
      Value* x = to_element(tensor(0), element, arg(0));
      int64_t axis = 0;
      if (!arg(1).valid() || ast_.kind(arg(1)) == NodeKind::NoneLiteral) {
        x = flatten(x, call);
      } else {
        axis = *constant_of(arg(1));
        if (axis < 0) axis += static_cast<int64_t>(x->type().rank());
      }
      Type t = x->type();
      auto rank = static_cast<int64_t>(t.rank());
      // x as [..., n, 1, ...]: a size-1 axis for i after the j axis.
      std::vector<int64_t> spread(t.shape().begin(), t.shape().end());
      spread.insert(spread.begin() + axis + 1, 1);
      std::vector<Value*> spread_extents;
      for (int64_t d = 0; d <= rank; ++d) {
        int64_t from = d <= axis ? d : d - 1;
        spread_extents.push_back(d != axis + 1 && spread[static_cast<size_t>(d)] == kDynamic ? graph_dim(x, from)
                                                                                            : nullptr);
      }
      Type spread_type = context_.tensor_type(spread, t.scalar());
      std::vector<Value*> reshape{x};
      for (Value* d : dynamic_dims(spread_type, spread_extents)) reshape.push_back(d);
      Value* terms = graph_op(OpKind::GraphReshape, reshape, spread_type, {}, call);
      // The mask j <= i over [n(j), n(i), 1, ...] (the axes after `axis`).
      int64_t n = t.shape()[static_cast<size_t>(axis)];
      std::vector<int64_t> mask_shape{n, n};
      for (int64_t d = axis + 1; d < rank; ++d) mask_shape.push_back(1);
      std::vector<Value*> mask_sizes;
      if (n == kDynamic) mask_sizes = {graph_dim(x, axis), graph_dim(x, axis)};
      Type positions_type = context_.tensor_type(mask_shape, ScalarType::I64);
      Value* j = graph_op(OpKind::GraphIota, mask_sizes, positions_type, {{"axis", context_.int_attr(0)}}, call);
      Value* i = graph_op(OpKind::GraphIota, mask_sizes, positions_type, {{"axis", context_.int_attr(1)}}, call);
      Value* keep = graph_elementwise("le", {j, i}, call);
      Type scalar = context_.scalar_type(t.scalar());
      Value* identity = is_float(t.scalar()) ? builder_.constant_float(sum ? 0.0 : 1.0, scalar)
                                             : builder_.constant_int(sum ? 0 : 1, scalar);
      Value* masked = graph_elementwise("select", {keep, terms, identity}, call);
      return Bound{reduce(masked, sum ? "sum" : "prod", {axis}, false), {}};
    }
    case sema::Signature::DropoutArgs: {
      Value* x = to_element(tensor(0), element, arg(0));
      double p = number_argument(arg(1), 0.0);
      Value* seed = arg(2).valid() ? value(arg(2), context_.i64_type()) : builder_.constant_int(0, context_.i64_type());
      std::vector<Value*> operands{seed};
      std::vector<Value*> extents;
      for (size_t d = 0; d < x->type().rank(); ++d)
        extents.push_back(x->type().shape()[d] == kDynamic ? graph_dim(x, static_cast<int64_t>(d)) : nullptr);
      Type uniform_type = context_.tensor_type(x->type().shape(), ScalarType::F32);
      for (Value* d : dynamic_dims(uniform_type, extents)) operands.push_back(d);
      Value* u = graph_op(OpKind::GraphRandom, operands, uniform_type, {{"distribution", context_.string_attr("uniform")}},
                          call);
      Value* keep = graph_elementwise("ge", {u, builder_.constant_float(p, context_.f32_type())}, call);
      Value* scaled = graph_elementwise("mul", {x, builder_.constant_float(1.0 / (1.0 - p), context_.scalar_type(element))}, call);
      Value* zero = builder_.constant_float(0.0, context_.scalar_type(element));
      return Bound{graph_elementwise("select", {keep, scaled, zero}, call), {}};
    }
    case sema::Signature::NpyLoadArgs: {
      const std::string& path = values_.strings[ast_.node(arg(0)).payload];
      Operation* op = builder_.create(OpKind::GraphLoad, {}, {result}, {{"path", context_.string_attr(path)}});
      return Bound{op->result(), {}};
    }
    case sema::Signature::NpySaveArgs: {
      // A path known when compiling is `path`; one with values formatted
      // when the program runs (`f"ckpt_{step}.npy"` in a loop) is `path_text`
      // around them, as graph.print's text.
      Value* saved = global_view(value(arg(1)), arg(1));
      Text path = lower_text(arg(0));
      if (std::optional<std::string> known = folded_text(path)) {
        builder_.create(OpKind::GraphSave, {saved}, {}, {{"path", context_.string_attr(*known)}});
        return {};
      }
      std::vector<Value*> operands{saved};
      operands.insert(operands.end(), path.values.begin(), path.values.end());
      builder_.create(OpKind::GraphSave, std::span<Value* const>(operands), std::span<const Type>{},
                      text_attributes(path, "path_text"));
      return {};
    }
    case sema::Signature::PrintArgs: lower_print(call); return {};
    default: break;
  }
  unsupported(call, "the graph-level builtin '" + std::string(info.path) + "'");
}

bool Lowering::is_builtin_keyword_axis(NodeId call) const {
  for (NodeId a : ast_.children(call).subspan(1))
    if (ast_.kind(a) == NodeKind::KeywordArgument) return true;
  return false;
}

// The tensors concat and stack join: a list or tuple written out, or a list
// variable's elements (lower_lists.cpp).
std::vector<Value*> Lowering::joined_parts(NodeId list) {
  std::vector<Value*> parts;
  if (ast_.kind(list) == NodeKind::Tuple || ast_.kind(list) == NodeKind::List) {
    for (NodeId element : ast_.children(list)) parts.push_back(value(element));
    return parts;
  }
  Bound whole = lower(list);
  for (size_t i = 0; i < whole.size(); ++i) {
    Bound e = whole.element(i);
    if (!e.is_value()) unsupported(list, "joining a list whose elements are not tensors");
    parts.push_back(e.value);
  }
  if (parts.empty()) unsupported(list, "joining an empty list (NumPy raises ValueError)");
  return parts;
}

// x's elements in row-major order as a 1-D tensor (a view when x is
// contiguous, as ts.reshape's).
Value* Lowering::flatten(Value* x, NodeId where) {
  Type t = x->type();
  bool known = true;
  int64_t count = 1;
  Value* total = builder_.constant_index(1);
  for (size_t d = 0; d < t.rank(); ++d) {
    if (t.shape()[d] == kDynamic) {
      known = false;
      total = emit(OpKind::MulI, {total, graph_dim(x, static_cast<int64_t>(d))}, context_.index_type());
    } else {
      count *= t.shape()[d];
      total = emit(OpKind::MulI, {total, builder_.constant_index(t.shape()[d])}, context_.index_type());
    }
  }
  int64_t size = known ? count : kDynamic;
  std::vector<Value*> operands{x};
  if (!known) operands.push_back(total);
  return graph_op(OpKind::GraphReshape, operands, context_.tensor_type(std::span<const int64_t>(&size, 1), t.scalar()), {},
                  where);
}

// The arguments of a call of a @jit instance, as its parameters want them.
// `v` as a tensor of type `want` (the same elements): graph.reshape, whose
// `?` dimensions are read from `dims_of`'s.
Value* Lowering::reshape_as(Value* v, Type want, Value* dims_of) {
  std::vector<Value*> extents;
  for (size_t d = 0; d < want.rank(); ++d)
    extents.push_back(want.shape()[d] == kDynamic ? graph_dim(dims_of, static_cast<int64_t>(d)) : nullptr);
  std::vector<Value*> reshape{v};
  for (Value* d : dynamic_dims(want, extents)) reshape.push_back(d);
  return builder_.create(OpKind::GraphReshape, std::span<Value* const>(reshape), std::span<const Type>(&want, 1))->result();
}

// The arguments of a call of a @jit or plain function or of a kernel launch
// in parameter order: as sema bound them (keywords, defaults), else as
// written.
std::span<const NodeId> Lowering::call_arguments_in_order(NodeId call) const {
  if (auto it = typed_.call_arguments.find(call.index); it != typed_.call_arguments.end()) return it->second;
  return ast_.children(call).subspan(1);
}

std::vector<Value*> Lowering::jit_call_operands(NodeId call, Type fn, size_t first_argument) {
  return jit_call_operands(ast_.children(call).subspan(first_argument), fn);
}

std::vector<Value*> Lowering::jit_call_operands(std::span<const NodeId> arguments, Type fn) {
  std::vector<Value*> operands;
  auto pass = [&](NodeId argument, Value* v) {
    if (operands.size() >= fn.num_inputs()) unsupported(argument, "an argument of another structure than the parameter");
    Type want = fn.input(operands.size());
    if (v->type() != want && want.is(TypeKind::Tensor)) {
      if (v->type().scalar() != want.scalar()) unsupported(argument, "an argument of another element type");
      // Static dims where the callee has `?`: pass as they are (the verifier
      // of func.call compares types exactly, so reshape to the callee's view).
      v = reshape_as(v, want, v);
    }
    operands.push_back(convert(v, want));
  };
  for (NodeId argument : arguments) {
    if (none_argument(argument)) continue;  // a None parameter is no argument (no_argument_parameter)
    Type want = operands.size() < fn.num_inputs() ? fn.input(operands.size()) : Type{};
    Bound b = lower(argument, want && want.is_scalar() ? want : Type{});
    if (b.is_value()) {
      pass(argument, b.value);
      continue;
    }
    // A string: the callee's parameter takes its literal's text, known when
    // compiling (known_text_parameter), and is no argument. (Where sema made
    // no such instance, its function was refused before this call.)
    if (b.text) continue;
    // A tuple argument (`f(p, x)` with `p = (2.0, 1.0)`, tuples in it
    // included): the callee takes a tuple parameter as its leaves, depth
    // first (jit_function_op).
    // (A comprehension sema made a tuple, its elements of several types,
    // is built as a list is.)
    sema::TypeId argument_type = node_type(argument);
    const bool tuple_typed = argument_type.valid() && typed_.types.kind(argument_type) == SemaKind::Tuple;
    std::function<void(const Bound&)> pass_leaves = [&](const Bound& tuple) {
      if ((tuple.list_block && !tuple_typed) || tuple.text)
        unsupported(argument, "a list or a string passed to a @jit function");
      if (tuple.is_value()) return pass(argument, tuple.value);
      for (size_t i = 0; i < tuple.size(); ++i) pass_leaves(tuple.element(i));
    };
    pass_leaves(b);
  }
  if (operands.size() != fn.num_inputs() && !arguments.empty())
    unsupported(arguments.back(), "arguments of another structure than the parameters");
  return operands;
}

Bound Lowering::lower_jit_call(NodeId call) {
  uint32_t instance = *call_instance(call);
  Operation* callee = jit_function_op(instance);
  Type fn = callee->attr("function_type").type();
  std::vector<Value*> operands = jit_call_operands(call_arguments_in_order(call), fn);
  std::vector<Type> results;
  for (size_t i = 0; i < fn.num_results(); ++i) results.push_back(fn.result(i));
  Operation* op = builder_.create(OpKind::Call, std::span<Value* const>(operands), std::span<const Type>(results),
                                  {{"callee", context_.symbol_attr(callee->symbol_name())}});
  attach_custom_rule(op, instance);
  attach_custom_jvp(op, instance);
  std::vector<Value*> values = op->results();
  // The callee's results are its tuple's elements, flattened; a nested
  // tuple (`return a, (b, c)`) is rebuilt from the instance's result type.
  sema::TypeId returned = typed_.instances[instance].info.return_type;
  if (values.size() == 1 && !(returned.valid() && typed_.types.kind(returned) == SemaKind::Tuple))
    return Bound{values[0], {}};
  size_t next = 0;
  return bound_from_flat(returned, values, next);
}

// One axis of a launch's grid, in i64: + - * // % and cdiv, min, max
// (check_grid_axis) on the values in scope and the knobs env_ binds.
Value* Lowering::grid_axis(NodeId node) {
  Type i64 = context_.i64_type();
  const Node& n = ast_.node(node);
  if (n.kind == NodeKind::BinaryOp) {
    Value* a = grid_axis(ast_.child(node, 0));
    Value* b = grid_axis(ast_.child(node, 1));
    switch (static_cast<BinaryOperator>(n.op)) {
      case BinaryOperator::Add: return emit(OpKind::AddI, {a, b}, i64);
      case BinaryOperator::Sub: return emit(OpKind::SubI, {a, b}, i64);
      case BinaryOperator::Mul: return emit(OpKind::MulI, {a, b}, i64);
      case BinaryOperator::FloorDiv: return emit(OpKind::FloorDivSI, {a, b}, i64);
      case BinaryOperator::Mod:  // Python's: a - (a // b) * b
        return emit(OpKind::SubI, {a, emit(OpKind::MulI, {emit(OpKind::FloorDivSI, {a, b}, i64), b}, i64)}, i64);
      case BinaryOperator::MatMul:
      case BinaryOperator::Div:
      case BinaryOperator::Pow:
      case BinaryOperator::LShift:
      case BinaryOperator::RShift:
      case BinaryOperator::BitAnd:
      case BinaryOperator::BitOr:
      case BinaryOperator::BitXor: break;  // sema rejected them
    }
    unsupported(node, "this operator in a launch's grid");
  }
  if (n.kind == NodeKind::Call && ast_.kind(ast_.child(node, 0)) == NodeKind::Name) {
    std::string callee = name_of(ast_.node(ast_.child(node, 0)).payload);
    if (callee == "cdiv" || callee == "min" || callee == "max") {
      Value* a = grid_axis(ast_.child(node, 1));
      Value* b = grid_axis(ast_.child(node, 2));
      if (callee == "min") return emit(OpKind::MinSI, {a, b}, i64);
      if (callee == "max") return emit(OpKind::MaxSI, {a, b}, i64);
      // cdiv(a, b) = -((-a) // b): a / b rounded up
      Value* zero = builder_.constant_int(0, i64);
      return emit(OpKind::SubI, {zero, emit(OpKind::FloorDivSI, {emit(OpKind::SubI, {zero, a}, i64), b}, i64)}, i64);
    }
  }
  return value(node, i64);
}

// kernel[grid](args) / kernel[grid, group](args): graph.launch over the
// grid; each `mut` tensor argument's variable is rebound to the launch's
// result for it (the kernel updated it in place).
Bound Lowering::lower_kernel_launch(NodeId call) {
  NodeId subscript = ast_.child(call, 0);
  sema::TypeId k = node_type(ast_.child(subscript, 0));
  uint32_t index = typed_.types.info(k).payload;
  const sema::FunctionInfo& kernel = typed_.functions[index];
  // An autotuned kernel is not lowered with the others (skip_autotuned):
  // made here, its body lowered after the graph code.
  Operation* callee = nullptr;
  if (functions_.count(index)) {
    callee = functions_.at(index);
  } else {
    bool saved_graph = graph_;
    graph_ = false;  // a kernel's signature: memrefs, not graph tensors
    callee = function_op(index);
    graph_ = saved_graph;
  }
  NodeId configuration = ast_.child(subscript, 1);
  NodeId grid_node = configuration;
  if (ast_.kind(configuration) == NodeKind::Tuple && !(ast_.node(configuration).flags & 1))
    grid_node = ast_.children(configuration)[0];
  // An autotuned kernel is launched through the tuner (docs/autotuning.md,
  // "@jit launches"): a grid per point of its space that sema kept, each
  // with the point's knobs bound in the grid's lambdas; the driver keeps
  // the grids of the points that compile (driver/autotune.cpp).
  std::vector<int64_t> tuned_points;
  if (!kernel.autotune.empty() && !kernel.autotune_pinned)
    for (size_t p = 0; p < kernel.autotune_points.size(); ++p)
      if (kernel.autotune_points[p].pruned.empty()) tuned_points.push_back(static_cast<int64_t>(p));
  std::vector<Value*> operands;
  auto lower_grid = [&](const std::vector<int64_t>* knob_values) {
    std::vector<std::pair<uint32_t, std::optional<Bound>>> saved;
    if (knob_values)
      for (size_t knob = 0; knob < kernel.autotune.size(); ++knob) {
        uint32_t id = kernel.autotune[knob].name.index;
        auto it = env_.find(id);
        saved.emplace_back(id, it == env_.end() ? std::nullopt : std::optional<Bound>(it->second));
        env_[id] = Bound{builder_.constant_int((*knob_values)[knob], context_.i32_type()), {}};
      }
    std::vector<Value*> grid;
    auto axis = [&](NodeId g) {
      if (ast_.kind(g) == NodeKind::Lambda) g = ast_.child(g, 1);
      Value* size = grid_axis(g);
      // A size computed when it runs may be negative: the launch stops
      // there (it would wrap to 2^32 - 1 groups).
      if (std::optional<int64_t> known = folded_int(size); !known || *known < 0) {
        Value* zero = builder_.constant_int(0, size->type());
        Value* ok = emit(OpKind::CmpI, {size, zero}, context_.bool_type(), {{"predicate", context_.string_attr("sge")}});
        builder_.create(OpKind::HostCheck, std::span<Value* const>(&ok, 1), std::span<const Type>{},
                        {{"message", context_.string_attr(source_position(g) + ": a launch of '" +
                                                          name_of(kernel.name.index) +
                                                          "' with a negative grid size (a grid counts groups: 0 or "
                                                          "more)")}});
      }
      grid.push_back(to_index(size));
    };
    NodeId axes = grid_node;
    if (ast_.kind(axes) == NodeKind::Lambda &&
        (ast_.kind(ast_.child(axes, 1)) == NodeKind::Tuple || ast_.kind(ast_.child(axes, 1)) == NodeKind::List))
      axes = ast_.child(axes, 1);
    if (ast_.kind(axes) == NodeKind::Tuple || ast_.kind(axes) == NodeKind::List) {
      for (NodeId g : ast_.children(axes)) axis(g);
    } else {
      axis(axes);
    }
    while (grid.size() < 3) grid.push_back(builder_.constant_index(1));
    for (auto& [id, bound] : saved)
      if (bound)
        env_[id] = *bound;
      else
        env_.erase(id);
    operands.insert(operands.end(), grid.begin(), grid.end());
  };
  if (tuned_points.empty()) {
    lower_grid(nullptr);
  } else {
    for (int64_t p : tuned_points) lower_grid(&kernel.autotune_points[static_cast<size_t>(p)].values);
  }
  Type fn = callee->attr("function_type").type();
  std::span<const NodeId> arguments = call_arguments_in_order(call);
  std::vector<int64_t> mut;
  std::vector<Type> results;
  std::vector<NodeId> mut_nodes;
  size_t input = 0;
  for (size_t i = 0; i < arguments.size(); ++i) {
    sema::TypeInfo p = typed_.types.info(kernel.parameter_types[i]);
    Type want = fn.input(input++);
    if (p.kind == SemaKind::Tensor) {
      // (A @loss_scale tensor of graph code holds its decoded values, not
      // the storage the kernel reads.)
      if (loss_scale_of(node_type(arguments[i])) != 0.0)
        unsupported(arguments[i], "launching a kernel with a @loss_scale tensor from graph code");
      Value* v = value(arguments[i]);
      if (p.mut) {
        mut.push_back(static_cast<int64_t>(operands.size()));
        results.push_back(v->type());
        mut_nodes.push_back(arguments[i]);
      }
      operands.push_back(v);
      if (kernel_policy_class(kernel, i)) unsupported(arguments[i], "launching a kernel with a @precision_policy tensor from graph code");
    } else {
      operands.push_back(convert(value(arguments[i], want), want));
    }
  }
  std::vector<NamedAttribute> attributes{{"kernel", context_.symbol_attr(callee->symbol_name())},
                                         {"mut_operands", context_.int_array_attr(mut)}};
  if (!tuned_points.empty()) {
    attributes.push_back({"autotune_points", context_.int_array_attr(tuned_points)});
    attributes.push_back({"tune_of", context_.string_attr(name_of(kernel.name.index))});
  }
  Operation* op = builder_.create(OpKind::GraphLaunch, std::span<Value* const>(operands),
                                  std::span<const Type>(results), std::move(attributes));
  for (size_t r = 0; r < mut_nodes.size(); ++r) env_[ast_.node(mut_nodes[r]).payload] = Bound{op->result(static_cast<unsigned>(r)), {}};
  return {};
}

}  // namespace tessera::ir
