// Sema: the graph-level builtins on whole tensors (builtins.def,
// docs/language/graph.md). Each builtin's arguments are bound to its
// parameter names and its result is typed here, shapes included: axes are
// checked against ranks, dimensions against each other (constants exactly,
// symbolic names by name), so that what is accepted compiles and what is
// wrong is an error at the call.
//
// Element types follow the kernel rule: arithmetic on a storage float
// (bf16, f16, fp8, fp6, fp4) computes in its accumulation type (f32 unless
// @accum says otherwise) and the result is in that type; ts.cast converts
// back. Integers stay integers, except where a result is a mean or a
// probability (f32).
#include <algorithm>
#include <cmath>
#include <functional>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "sema/builtin_call.h"
#include "support/npy.h"
#include "sema/checker.h"
#include "support/diagnostics/internal_error.h"

namespace tessera::sema {

namespace {

// The leading dims of a shape and its last two, for matmul's rules.
struct MatmulShape {
  std::vector<DimId> batch;
  DimId rows, columns;
};

}  // namespace

std::optional<ScalarType> Checker::graph_element(TypeId type) {
  TypeInfo info = types_.info(type);
  switch (info.kind) {
    case TypeKind::Tensor: return types_.info(compute_type(types_.element_type(type))).scalar;
    case TypeKind::Scalar: return types_.info(compute_type(type)).scalar;
    case TypeKind::UntypedInt: return ScalarType::I32;
    case TypeKind::UntypedFloat: return ScalarType::F32;
    default: return std::nullopt;
  }
}

TypeId Checker::graph_tensor(ScalarType element, std::span<const DimId> dims) {
  return types_.tensor(element, {}, dims, AddressSpace::Global, false, false);
}

std::optional<std::vector<DimId>> Checker::broadcast_dims(NodeId node, std::string_view what, TypeId lhs, TypeId rhs,
                                                          std::span<const DimId> da, std::span<const DimId> db,
                                                          bool names_must_match) {
  size_t rank = std::max(da.size(), db.size());
  std::vector<DimId> dims(rank);
  for (size_t i = 0; i < rank; ++i) {
    DimId x = i < rank - da.size() ? types_.constant_dim(1) : da[i - (rank - da.size())];
    DimId y = i < rank - db.size() ? types_.constant_dim(1) : db[i - (rank - db.size())];
    auto cx = types_.constant_value(x), cy = types_.constant_value(y);
    if (x == y || (cy && *cy == 1)) {
      dims[i] = x;
    } else if (cx && *cx == 1) {
      dims[i] = y;
    } else if ((cx && cy) ||
               (names_must_match && types_.dim(x).kind == DimKind::Symbol && types_.dim(y).kind == DimKind::Symbol)) {
      // Two different constants (or names, where they must match): not the
      // same size.
      diags_.emit<diag::SemaShapeMismatch>(ast_.range(node), std::string(what), types_.to_string(lhs),
                                           types_.to_string(rhs));
      return std::nullopt;
    } else {
      dims[i] = types_.constant_value(x) ? y : x;  // one side known only at run time: checked there
    }
  }
  return dims;
}

std::optional<size_t> Checker::tensor_axis(NodeId where, int64_t axis, size_t rank) {
  int64_t r = static_cast<int64_t>(rank);
  if (axis < -r || axis >= r) {
    diags_.emit<diag::SemaTensorAxisOutOfRange>(ast_.range(where), axis, static_cast<unsigned>(rank),
                                                rank == 0 ? std::string("it has none")
                                                          : "valid axes are -" + std::to_string(r) + " to " +
                                                                std::to_string(r - 1));
    return std::nullopt;
  }
  return static_cast<size_t>(axis < 0 ? axis + r : axis);
}

std::optional<std::vector<size_t>> Checker::tensor_axes(BuiltinCall& bc, NodeId axes, size_t rank) {
  if (!axes.valid() || ast_.kind(axes) == NodeKind::NoneLiteral) {  // NumPy: every axis
    std::vector<size_t> every(rank);
    for (size_t i = 0; i < rank; ++i) every[i] = i;
    return every;
  }
  std::vector<NodeId> nodes;
  // A name for a tuple of constants (`axis=axes` of a parameter given
  // `(0, 1)`, a module constant): its literal's elements.
  NodeId literal = ast_.kind(axes) == NodeKind::Name ? constant_literal(axes) : NodeId{};
  if (literal.valid() && ast_.kind(literal) != NodeKind::StringLiteral) {
    nodes.assign(ast_.children(literal).begin(), ast_.children(literal).end());
  } else if (ast_.kind(axes) == NodeKind::Tuple || ast_.kind(axes) == NodeKind::List) {
    nodes.assign(ast_.children(axes).begin(), ast_.children(axes).end());
    set_type(axes, types_.dynamic());
  } else {
    nodes.push_back(axes);
  }
  std::vector<size_t> result;
  bool ok = true;
  for (NodeId node : nodes) {
    std::optional<int64_t> axis = bc.require_constant_integer(node, "axis");
    if (!axis) {
      ok = false;
      continue;
    }
    std::optional<size_t> normalized = tensor_axis(node, *axis, rank);
    if (!normalized) {
      ok = false;
      continue;
    }
    if (std::find(result.begin(), result.end(), *normalized) != result.end()) {
      diags_.emit<diag::SemaDuplicateAxis>(ast_.range(node), *axis);
      ok = false;
      continue;
    }
    result.push_back(*normalized);
  }
  if (!ok) return std::nullopt;
  std::sort(result.begin(), result.end());
  return result;
}

DimId Checker::dim_of_expression(NodeId node) {
  Value v = check_expression(node);
  if (v.constant && !v.constant->is_float) return types_.constant_dim(v.constant->integer);
  if (ast_.kind(node) == NodeKind::Name) {
    auto it = locals_.find(ast_.node(node).payload);
    if (it != locals_.end() && it->second.is_dimension) return types_.symbol_dim(IdentifierId{ast_.node(node).payload});
  }
  return types_.dynamic_dim();
}

// `axis=` of x (one axis; the last when absent) as softmax and sort take
// it: a constant in range for x's rank, and x not 0-d. Reports.
bool Checker::axis_argument(BuiltinCall& bc, NodeId x, NodeId axis, size_t rank) {
  if (!axis.valid()) {
    if (rank == 0) tensor_axis(x, -1, 0);
    return rank != 0;
  }
  std::optional<int64_t> value = bc.require_constant_integer(axis, "axis");
  return value && tensor_axis(axis, *value, rank);
}

std::optional<std::vector<DimId>> Checker::shape_argument(BuiltinCall& bc, NodeId shape) {
  std::vector<DimId> dims;
  // A shape given as a value (NumPy's `np.zeros(x.shape)`): `x.shape` has
  // x's sizes; any other tuple of integers (`s = x.shape`, a module
  // constant `SHAPE = (2, 3)`) its values, known when compiling or not.
  if (NodeKind k = ast_.kind(shape); k != NodeKind::Tuple && k != NodeKind::List) {
    Value v = bc.value_of(shape);
    if (types_.kind(v.type) == TypeKind::Tuple) {
      if (k == NodeKind::Attribute && name_of(ast_.node(shape).payload) == "shape") {
        TypeId of = out_.node_types[ast_.child(shape, 0).index];
        if (of.valid() && types_.kind(of) == TypeKind::Tensor) return std::vector<DimId>(types_.dims(of).begin(), types_.dims(of).end());
      }
      for (TypeId element : types_.tuple_elements(v.type)) {
        const TypeInfo& t = types_.info(element);
        if (!(t.kind == TypeKind::UntypedInt || (t.kind == TypeKind::Scalar && !is_float(t.scalar) && t.scalar != ScalarType::Bool))) {
          diags_.emit<diag::SemaArgumentType>(ast_.range(shape), "shape", bc.name, "a tuple of integers",
                                              types_.to_string(v.type));
          return std::nullopt;
        }
        dims.push_back(types_.dynamic_dim());
      }
      return dims;
    }
  }
  bool ok = true;
  for (NodeId extent : bc.shape_extents(shape)) {
    Value v = bc.require_integer(extent, "shape");
    if (types_.is_error(v.type)) {
      ok = false;
      continue;
    }
    if (v.constant && !v.constant->is_float && v.constant->integer < 0) {
      diags_.emit<diag::SemaNegativeExtent>(ast_.range(extent), v.constant->integer);
      ok = false;
      continue;
    }
    dims.push_back(dim_of_expression(extent));
  }
  if (!ok) return std::nullopt;
  return dims;
}

// A tensor argument of a graph builtin; scalars are not accepted. Reports.
std::optional<TypeId> Checker::graph_tensor_argument(BuiltinCall& bc, NodeId argument, const char* parameter) {
  Value v = bc.value_of(argument);
  if (types_.kind(v.type) == TypeKind::Tensor) return v.type;
  if (!types_.is_error(v.type) && types_.kind(v.type) != TypeKind::Dynamic)
    diags_.emit<diag::SemaArgumentType>(ast_.range(argument), parameter, bc.name, "a tensor", types_.to_string(v.type));
  return std::nullopt;
}

std::optional<ScalarType> Checker::float_element(BuiltinCall& bc, NodeId argument, TypeId type, const char* parameter) {
  std::optional<ScalarType> element = graph_element(type);
  if (!element || *element == ScalarType::Bool) {
    diags_.emit<diag::SemaArgumentType>(ast_.range(argument), parameter, bc.name, "a tensor of numbers",
                                        types_.to_string(type));
    return std::nullopt;
  }
  return is_float(*element) ? *element : ScalarType::F32;
}

std::optional<bool> Checker::constant_bool(BuiltinCall& bc, NodeId argument, const char* parameter) {
  Value v = bc.value_of(argument);
  if (types_.is_error(v.type)) return std::nullopt;
  if (!v.constant) {
    diags_.emit<diag::SemaNotConstant>(ast_.range(argument), not_constant_subject(argument, parameter, bc.name));
    return std::nullopt;
  }
  // A flag is True or False, not a number that Python would find truthy.
  TypeId t = default_type(v.type);
  if (types_.kind(t) != TypeKind::Scalar || types_.info(t).scalar != ScalarType::Bool) {
    diags_.emit<diag::SemaArgumentType>(ast_.range(argument), std::string(parameter), std::string(bc.name),
                                        "True or False", std::string(source_text(argument)));
    return std::nullopt;
  }
  return v.constant->integer != 0;
}

std::optional<double> Checker::constant_number(BuiltinCall& bc, NodeId argument, const char* parameter) {
  Value v = bc.value_of(argument);
  if (types_.is_error(v.type)) return std::nullopt;
  if (!v.constant) {
    diags_.emit<diag::SemaNotConstant>(ast_.range(argument), not_constant_subject(argument, parameter, bc.name));
    return std::nullopt;
  }
  return v.constant->as_double();
}

Value Checker::check_graph_builtin(BuiltinCall& bc) {
  TypeId error = types_.error();
  auto dims_of = [&](TypeId t) { return std::vector<DimId>(types_.dims(t).begin(), types_.dims(t).end()); };
  switch (bc.info.signature) {
    case Signature::Activation: {
      auto bound = bc.bind({"x"}, 1);
      if (bound.empty()) return Value{error};
      Value x = bc.value_of(bound[0]);
      TypeKind kind = types_.kind(x.type);
      if (kind == TypeKind::Error || kind == TypeKind::Dynamic) return Value{x.type};
      std::optional<ScalarType> element = float_element(bc, bound[0], x.type, "x");
      if (!element) return Value{error};
      if (kind == TypeKind::Tensor) return Value{graph_tensor(*element, dims_of(x.type))};
      return Value{types_.scalar(*element)};
    }
    case Signature::MinMax:  // max(x) / min(x): reductions, like sum
    case Signature::Reduction: {
      // NumPy's dtype= of sum, mean and prod: the elements converted to it
      // and reduced in it (`ts.sum(h, dtype=f32)` of bf16 values).
      bool takes_dtype = bc.id == BuiltinId::Sum || bc.id == BuiltinId::Mean || bc.id == BuiltinId::Prod;
      auto bound = takes_dtype ? bc.bind({"x", "axis", "keepdims", "dtype"}, 1) : bc.bind({"x", "axis", "keepdims"}, 1);
      if (bound.empty()) return Value{error};
      std::optional<ScalarType> dtype;
      if (takes_dtype && bound[3].valid() && ast_.kind(bound[3]) != NodeKind::NoneLiteral) {
        dtype = bc.require_dtype(bound[3], "dtype");
        if (!dtype) return Value{error};
        if (bc.id == BuiltinId::Mean && !is_float(*dtype)) {
          diags_.emit<diag::SemaArgumentType>(ast_.range(bound[3]), "dtype", bc.name, "a float dtype",
                                              std::string(source_text(bound[3])));
          return Value{error};
        }
      }
      // Python's sum(l), max(l), min(l) of a list (the builtins, not ts.sum:
      // NumPy's would reduce every element): the elements added (compared)
      // one by one, of the elements' type.
      if (Value v = bc.value_of(bound[0]); types_.kind(v.type) == TypeKind::List && !bound[1].valid() &&
                                           !bound[2].valid() && ast_.kind(ast_.child(bc.call, 0)) == NodeKind::Name &&
                                           (bc.id == BuiltinId::Sum || bc.id == BuiltinId::Max || bc.id == BuiltinId::Min)) {
        TypeId e{types_.info(v.type).payload};
        if (types_.is_numeric_scalar(e) || types_.kind(e) == TypeKind::Tensor) return Value{e};
        if (types_.kind(e) == TypeKind::Dynamic) return Value{types_.dynamic()};
        diags_.emit<diag::SemaArgumentType>(ast_.range(bound[0]), "iterable", bc.name, "a list of numbers or tensors",
                                            types_.to_string(v.type));
        return Value{error};
      }
      // Of a tuple (a list of tensors of several types is one): the
      // elements folded as `a + b` (max, min: elementwise) would type them,
      // shapes broadcast (sema.shape-mismatch, NumPy's ValueError, otherwise).
      if (Value v = bc.value_of(bound[0]); types_.kind(v.type) == TypeKind::Tuple && !bound[1].valid() &&
                                           !bound[2].valid() && ast_.kind(ast_.child(bc.call, 0)) == NodeKind::Name &&
                                           (bc.id == BuiltinId::Sum || bc.id == BuiltinId::Max || bc.id == BuiltinId::Min)) {
        std::span<const TypeId> elements = types_.tuple_elements(v.type);
        bool numbers = !elements.empty() && std::ranges::all_of(elements, [&](TypeId e) {
          return types_.is_numeric_scalar(e) || types_.kind(e) == TypeKind::Tensor;
        });
        if (elements.empty() && bc.id == BuiltinId::Sum) return Value{types_.untyped_int(), Constant{false, 0}};
        if (!numbers) {
          diags_.emit<diag::SemaArgumentType>(ast_.range(bound[0]), "iterable", bc.name,
                                              "a non-empty tuple of numbers or tensors", types_.to_string(v.type));
          return Value{error};
        }
        BinaryUse use = bc.id == BuiltinId::Sum ? BinaryUse::of(BinaryOperator::Add) : BinaryUse::builtin(bc.name);
        TypeId folded = default_type(elements.front());
        for (TypeId e : elements.subspan(1)) {
          folded = binary_result(bc.call, use, folded, e);
          if (types_.is_error(folded)) return Value{error};
        }
        return Value{default_type(folded)};
      }
      bool logical = bc.id == BuiltinId::AnyOf || bc.id == BuiltinId::AllOf;
      // A number reduces to itself (NumPy: a 0-d array), in its compute type
      // (any and all: whether it is non-zero).
      if (Value v = bc.value_of(bound[0]); types_.is_numeric_scalar(v.type) && !bound[1].valid()) {
        if (logical) return Value{types_.scalar(ScalarType::Bool)};
        if (bound[2].valid()) constant_bool(bc, bound[2], "keepdims");
        TypeId t = default_type(v.type);
        if (bc.id == BuiltinId::Mean && !is_float(types_.info(t).scalar)) return Value{types_.scalar(ScalarType::F32)};
        return Value{types_.kind(t) == TypeKind::Scalar ? compute_type(t) : t};
      }
      std::optional<TypeId> x = graph_tensor_argument(bc, bound[0], "x");
      if (bound[1].valid()) bc.value_of(bound[1]);
      if (!x) return Value{types_.kind(bc.value_of(bound[0]).type) == TypeKind::Dynamic ? types_.dynamic() : error};
      std::vector<DimId> dims = dims_of(*x);
      std::optional<std::vector<size_t>> listed = tensor_axes(bc, bound[1], dims.size());
      if (!listed) return Value{error};
      const std::vector<size_t>& axes = *listed;
      bool keepdims = false;
      if (bound[2].valid()) {
        auto k = constant_bool(bc, bound[2], "keepdims");
        if (!k) return Value{error};
        keepdims = *k;
      }
      std::vector<DimId> result;
      for (size_t i = 0; i < dims.size(); ++i) {
        bool reduced = std::find(axes.begin(), axes.end(), i) != axes.end();
        if (!reduced) result.push_back(dims[i]);
        else if (keepdims) result.push_back(types_.constant_dim(1));
      }
      std::optional<ScalarType> element = graph_element(*x);
      // NumPy's any and all: a bool, of any numbers or bools.
      if (logical && element) return Value{graph_tensor(ScalarType::Bool, result)};
      // NumPy counts a bool tensor: its sum and product are i64 (NumPy's
      // default integer), its mean f32 as for integers; max and min of
      // bools (NumPy's any/all: ts.any, ts.all) are not reductions here.
      bool counts = element && *element == ScalarType::Bool &&
                    (bc.id == BuiltinId::Sum || bc.id == BuiltinId::Prod || bc.id == BuiltinId::Mean);
      if (!element || (*element == ScalarType::Bool && !counts)) {
        diags_.emit<diag::SemaArgumentType>(ast_.range(bound[0]), "x", bc.name, "a tensor of numbers",
                                            types_.to_string(*x));
        return Value{error};
      }
      if (counts) element = ScalarType::I64;
      // NumPy sums and multiplies narrower integers in its default integer
      // (i64, u64 for unsigned), so that sum(i8[...]) does not wrap.
      if ((bc.id == BuiltinId::Sum || bc.id == BuiltinId::Prod) && is_integer(*element) &&
          scalar_info(*element).bits < 64)
        element = scalar_info(*element).category == ScalarCategory::UnsignedInt ? ScalarType::U64 : ScalarType::I64;
      if (bc.id == BuiltinId::Mean && !is_float(*element)) element = ScalarType::F32;
      if (dtype) element = *dtype;
      return Value{graph_tensor(*element, result)};
    }
    case Signature::MatmulArgs: {
      auto bound = bc.bind({"a", "b"}, 2);
      if (bound.empty()) return Value{error};
      std::optional<TypeId> a = graph_tensor_argument(bc, bound[0], "a");
      std::optional<TypeId> b = graph_tensor_argument(bc, bound[1], "b");
      if (!a || !b) return Value{(a || b) ? error : types_.dynamic()};
      return Value{matmul_result(bc.call, bound[0], bound[1], *a, *b)};
    }
    case Signature::SoftmaxArgs: {
      auto bound = bc.bind({"x", "axis"}, 1);
      if (bound.empty()) return Value{error};
      std::optional<TypeId> x = graph_tensor_argument(bc, bound[0], "x");
      if (!x) return Value{types_.kind(bc.value_of(bound[0]).type) == TypeKind::Dynamic ? types_.dynamic() : error};
      std::vector<DimId> dims = dims_of(*x);
      if (!axis_argument(bc, bound[0], bound[1], dims.size())) return Value{error};
      std::optional<ScalarType> element = float_element(bc, bound[0], *x, "x");
      if (!element) return Value{error};
      return Value{graph_tensor(*element, dims)};
    }
    case Signature::NormArgs: {
      bool layer = bc.id == BuiltinId::LayernormSafe;
      auto bound = layer ? bc.bind({"x", "weight", "bias", "eps"}, 1) : bc.bind({"x", "weight", "eps"}, 1);
      if (bound.empty()) return Value{error};
      std::optional<TypeId> x = graph_tensor_argument(bc, bound[0], "x");
      if (!x) return Value{types_.kind(bc.value_of(bound[0]).type) == TypeKind::Dynamic ? types_.dynamic() : error};
      std::vector<DimId> dims = dims_of(*x);
      if (dims.empty()) {
        tensor_axis(bound[0], -1, 0);
        return Value{error};
      }
      std::optional<ScalarType> element = float_element(bc, bound[0], *x, "x");
      if (!element) return Value{error};
      // The weight and bias scale the normalised last axis: one value per
      // element of it (shape [D]).
      size_t eps_index = layer ? 3 : 2;
      for (size_t i = 1; i < eps_index; ++i) {
        if (!bound[i].valid() || ast_.kind(bound[i]) == NodeKind::NoneLiteral) {
          if (bound[i].valid()) bc.value_of(bound[i]);
          continue;
        }
        const char* parameter = i == 1 ? "weight" : "bias";
        std::optional<TypeId> w = graph_tensor_argument(bc, bound[i], parameter);
        if (!w) return Value{error};
        std::vector<DimId> wd = dims_of(*w);
        if (wd.size() != 1 || !float_element(bc, bound[i], *w, parameter)) {
          diags_.emit<diag::SemaShapeMismatch>(ast_.range(bound[i]), std::string(bc.name) + "(" + parameter + ")",
                                               types_.to_string(*w), "a vector over the last axis of " +
                                                                         types_.to_string(*x));
          return Value{error};
        }
        if (!broadcast_dims(bound[i], std::string(bc.name) + "(" + parameter + ")", *w, *x, wd,
                            std::span<const DimId>(&dims.back(), 1)))
          return Value{error};
      }
      if (bound[eps_index].valid()) {
        auto eps = constant_number(bc, bound[eps_index], "eps");
        if (!eps) return Value{error};
        if (*eps < 0) {
          diags_.emit<diag::SemaArgumentType>(ast_.range(bound[eps_index]), "eps", bc.name,
                                              "a non-negative constant", std::to_string(*eps));
          return Value{error};
        }
      }
      return Value{graph_tensor(*element, dims)};
    }
    case Signature::AttentionArgs: {
      auto bound = bc.bind({"q", "k", "v", "causal", "scale"}, 3);
      if (bound.empty()) return Value{error};
      std::optional<TypeId> q = graph_tensor_argument(bc, bound[0], "q");
      std::optional<TypeId> k = graph_tensor_argument(bc, bound[1], "k");
      std::optional<TypeId> v = graph_tensor_argument(bc, bound[2], "v");
      if (bound[3].valid() && !constant_bool(bc, bound[3], "causal")) return Value{error};
      if (bound[4].valid() && ast_.kind(bound[4]) != NodeKind::NoneLiteral && !constant_number(bc, bound[4], "scale"))
        return Value{error};
      if (!q || !k || !v) return Value{(q || k || v) ? error : types_.dynamic()};
      return Value{attention_result(bc, bound, *q, *k, *v)};
    }
    case Signature::MseArgs: {
      auto bound = bc.bind({"prediction", "target"}, 2);
      if (bound.empty()) return Value{error};
      std::optional<TypeId> p = graph_tensor_argument(bc, bound[0], "prediction");
      std::optional<TypeId> t = graph_tensor_argument(bc, bound[1], "target");
      if (!p || !t) return Value{(p || t) ? error : types_.dynamic()};
      if (!broadcast_dims(bc.call, bc.name, *p, *t, dims_of(*p), dims_of(*t))) return Value{error};
      std::optional<ScalarType> element = float_element(bc, bound[0], *p, "prediction");
      if (!element) return Value{error};
      return Value{graph_tensor(*element, {})};
    }
    case Signature::WhereArgs: {
      auto bound = bc.bind({"condition", "x", "y"}, 3);
      if (bound.empty()) return Value{error};
      Value c = bc.value_of(bound[0]), a = bc.value_of(bound[1]), b = bc.value_of(bound[2]);
      for (const Value* v : {&c, &a, &b})
        if (types_.is_error(v->type)) return Value{error};
      for (const Value* v : {&c, &a, &b})
        if (types_.kind(v->type) == TypeKind::Dynamic) return Value{types_.dynamic()};
      std::optional<ScalarType> condition = graph_element(c.type);
      if (condition != ScalarType::Bool) {
        diags_.emit<diag::SemaArgumentType>(ast_.range(bound[0]), "condition", bc.name, "a bool tensor or scalar",
                                            types_.to_string(c.type));
        return Value{error};
      }
      TypeId chosen = binary_result(bc.call, BinaryUse::builtin(bc.name), a.type, b.type);
      if (types_.is_error(chosen)) return Value{error};
      if (types_.kind(c.type) == TypeKind::Tensor) {
        std::vector<DimId> cd = dims_of(c.type);
        std::vector<DimId> vd =
            types_.kind(chosen) == TypeKind::Tensor ? dims_of(chosen) : std::vector<DimId>{};
        auto dims = broadcast_dims(bc.call, bc.name, c.type, chosen, cd, vd);
        if (!dims) return Value{error};
        std::optional<ScalarType> element = graph_element(chosen);
        if (!element) return Value{error};
        return Value{graph_tensor(*element, *dims)};
      }
      return Value{chosen};
    }
    case Signature::ReshapeArgs: {
      // NumPy's x.reshape(2, 6): the sizes as separate arguments, bound
      // (for lowering) after x in order.
      if (bc.method && bc.args.positional.size() > 2 && bc.args.keywords.empty()) {
        std::vector<NodeId> bound(bc.args.positional.begin(), bc.args.positional.end());
        out_.call_arguments[bc.call.index] = bound;
        std::optional<TypeId> x = graph_tensor_argument(bc, bound[0], "x");
        if (!x) return Value{error};
        return Value{reshape_result(bc, std::span<const NodeId>(bound).subspan(1), *x)};
      }
      auto bound = bc.bind({"x", "shape"}, 2);
      if (bound.empty()) return Value{error};
      std::optional<TypeId> x = graph_tensor_argument(bc, bound[0], "x");
      if (!x) return Value{error};
      return Value{reshape_result(bc, std::span<const NodeId>(&bound[1], 1), *x)};
    }
    case Signature::TransposeArgs: {
      bool permute = bc.id == BuiltinId::Permute;
      auto bound = permute ? bc.bind({"x", "dims"}, 2) : bc.bind({"x", "axes"}, 1);
      if (bound.empty()) return Value{error};
      std::optional<TypeId> x = graph_tensor_argument(bc, bound[0], "x");
      if (!x) return Value{error};
      std::vector<DimId> dims = dims_of(*x);
      std::vector<size_t> order;
      if (bound[1].valid() && ast_.kind(bound[1]) != NodeKind::NoneLiteral) {
        std::vector<NodeId> nodes = bc.shape_extents(bound[1]);
        for (NodeId node : nodes) {
          std::optional<int64_t> axis = bc.require_constant_integer(node, permute ? "dims" : "axes");
          if (!axis) return Value{error};
          std::optional<size_t> a = tensor_axis(node, *axis, dims.size());
          if (!a) return Value{error};
          order.push_back(*a);
        }
        std::vector<size_t> sorted = order;
        std::sort(sorted.begin(), sorted.end());
        bool is_permutation = sorted.size() == dims.size();
        for (size_t i = 0; is_permutation && i < sorted.size(); ++i) is_permutation = sorted[i] == i;
        if (!is_permutation) {
          diags_.emit<diag::SemaNotPermutation>(ast_.range(bound[1]), source_text(bound[1]),
                                                static_cast<unsigned>(dims.size()));
          return Value{error};
        }
      } else {
        for (size_t i = dims.size(); i-- > 0;) order.push_back(i);  // NumPy: reverse the axes
      }
      std::vector<DimId> result;
      for (size_t a : order) result.push_back(dims[a]);
      return Value{types_.tensor(types_.info(*x).scalar, types_.info(*x).policy, result, AddressSpace::Global, false,
                                 false)};
    }
    case Signature::ConcatArgs: {
      auto bound = bc.bind({"tensors", "axis"}, 1);
      if (bound.empty()) return Value{error};
      return Value{concat_result(bc, bound)};
    }
    case Signature::StackArgs: {
      auto bound = bc.bind({"tensors", "axis"}, 1);
      if (bound.empty()) return Value{error};
      return Value{stack_result(bc, bound)};
    }
    case Signature::ClipArgs: {
      // NumPy's clip(a, a_min, a_max): minimum(maximum(a, a_min), a_max),
      // broadcasting; a bound may be None (not both).
      auto bound = bc.bind({"a", "a_min", "a_max"}, 3);
      if (bound.empty()) return Value{error};
      std::optional<TypeId> a = graph_tensor_argument(bc, bound[0], "a");
      if (!a) return Value{types_.kind(bc.value_of(bound[0]).type) == TypeKind::Dynamic ? types_.dynamic() : error};
      TypeId result = *a;
      bool any_bound = false;
      for (size_t i = 1; i < 3; ++i) {
        if (ast_.kind(bound[i]) == NodeKind::NoneLiteral) {
          set_type(bound[i], types_.none());
          continue;
        }
        any_bound = true;
        result = binary_result(bc.call, BinaryUse::builtin(bc.name), result, bc.value_of(bound[i]).type);
        if (types_.is_error(result)) return Value{error};
      }
      if (!any_bound) {
        diags_.emit<diag::SemaArgumentType>(ast_.range(bound[1]), "a_min", bc.name, "a bound (a_min and a_max are both None)",
                                            "None");
        return Value{error};
      }
      return Value{result};
    }
    case Signature::TensorMapArgs: {
      // copy(x): a new tensor of x's type; sign(x): -1, 0 or 1 in x's
      // element type (its compute type for narrow floats).
      auto bound = bc.bind({"x"}, 1);
      if (bound.empty()) return Value{error};
      std::optional<TypeId> x = graph_tensor_argument(bc, bound[0], "x");
      if (!x) return Value{types_.kind(bc.value_of(bound[0]).type) == TypeKind::Dynamic ? types_.dynamic() : error};
      if (bc.id == BuiltinId::Copy) return Value{types_.with_mut(*x, false)};
      std::optional<ScalarType> element = graph_element(*x);
      if (!element || *element == ScalarType::Bool) {
        diags_.emit<diag::SemaArgumentType>(ast_.range(bound[0]), "x", bc.name, "a tensor of numbers",
                                            types_.to_string(*x));
        return Value{error};
      }
      return Value{graph_tensor(*element, dims_of(*x))};
    }
    case Signature::SortArgs: {
      // sort(x, axis=-1): x's values ascending along one axis (NaN last), of
      // x's type; argsort: the positions along it (i64) that sort x, equal
      // values in their order (np.argsort(kind="stable")).
      auto bound = bc.bind({"x", "axis"}, 1);
      if (bound.empty()) return Value{error};
      std::optional<TypeId> x = graph_tensor_argument(bc, bound[0], "x");
      if (!x) return Value{types_.kind(bc.value_of(bound[0]).type) == TypeKind::Dynamic ? types_.dynamic() : error};
      std::vector<DimId> dims = dims_of(*x);
      if (!axis_argument(bc, bound[0], bound[1], dims.size())) return Value{error};
      ScalarType element = types_.info(*x).scalar;
      if (element == ScalarType::Bool || scalar_info(element).bits < 8) {
        diags_.emit<diag::SemaArgumentType>(ast_.range(bound[0]), "x", bc.name,
                                            "a tensor of integers or floats of 8 bits or more", types_.to_string(*x));
        return Value{error};
      }
      if (bc.id == BuiltinId::Argsort) return Value{graph_tensor(ScalarType::I64, dims)};
      return Value{types_.with_mut(*x, false)};
    }
    case Signature::FlattenArgs: {
      // NumPy's x.flatten() / ravel: the elements in row-major order, 1-D.
      auto bound = bc.bind({"x"}, 1);
      if (bound.empty()) return Value{error};
      std::optional<TypeId> x = graph_tensor_argument(bc, bound[0], "x");
      if (!x) return Value{types_.kind(bc.value_of(bound[0]).type) == TypeKind::Dynamic ? types_.dynamic() : error};
      DimId count = types_.constant_dim(1);
      for (DimId d : std::vector<DimId>(types_.dims(*x).begin(), types_.dims(*x).end()))
        count = types_.binary_dim(DimKind::Mul, count, d);
      DimId flat[] = {count};
      return Value{types_.tensor(types_.info(*x).scalar, types_.info(*x).policy, flat, AddressSpace::Global, false,
                                 false)};
    }
    case Signature::ArgReduceArgs: {
      // NumPy's argmax / argmin: the index (i64) of the first largest
      // (smallest) element along one axis, or of the flattened tensor.
      auto bound = bc.bind({"x", "axis", "keepdims"}, 1);
      if (bound.empty()) return Value{error};
      std::optional<TypeId> x = graph_tensor_argument(bc, bound[0], "x");
      if (!x) return Value{types_.kind(bc.value_of(bound[0]).type) == TypeKind::Dynamic ? types_.dynamic() : error};
      std::vector<DimId> dims = dims_of(*x);
      std::optional<size_t> axis;
      if (bound[1].valid() && ast_.kind(bound[1]) != NodeKind::NoneLiteral) {
        std::optional<int64_t> a = bc.require_constant_integer(bound[1], "axis");
        if (!a) return Value{error};
        axis = tensor_axis(bound[1], *a, dims.size());
        if (!axis) return Value{error};
      }
      bool keepdims = false;
      if (bound[2].valid()) {
        auto k = constant_bool(bc, bound[2], "keepdims");
        if (!k) return Value{error};
        keepdims = *k;
      }
      if (!graph_element(*x)) {
        diags_.emit<diag::SemaArgumentType>(ast_.range(bound[0]), "x", bc.name, "a tensor of numbers",
                                            types_.to_string(*x));
        return Value{error};
      }
      std::vector<DimId> result;
      for (size_t i = 0; i < dims.size(); ++i) {
        if (!axis || i == *axis) {
          if (keepdims) result.push_back(types_.constant_dim(1));
        } else {
          result.push_back(dims[i]);
        }
      }
      return Value{graph_tensor(ScalarType::I64, result)};
    }
    case Signature::VarianceArgs: {
      // NumPy's var / std: the mean squared deviation from the mean over
      // `axis` (an int, a tuple or None), divided by n - ddof.
      auto bound = bc.bind({"x", "axis", "ddof", "keepdims"}, 1);
      if (bound.empty()) return Value{error};
      std::optional<TypeId> x = graph_tensor_argument(bc, bound[0], "x");
      if (bound[1].valid()) bc.value_of(bound[1]);
      if (!x) return Value{types_.kind(bc.value_of(bound[0]).type) == TypeKind::Dynamic ? types_.dynamic() : error};
      std::vector<DimId> dims = dims_of(*x);
      std::optional<std::vector<size_t>> listed = tensor_axes(bc, bound[1], dims.size());
      if (!listed) return Value{error};
      const std::vector<size_t>& axes = *listed;
      if (bound[2].valid()) {
        Value ddof = bc.value_of(bound[2]);
        if (!ddof.constant || ddof.constant->from_local) {
          diags_.emit<diag::SemaNotConstant>(ast_.range(bound[2]), "'ddof' of '" + std::string(bc.name) + "'");
          return Value{error};
        }
      }
      bool keepdims = false;
      if (bound[3].valid()) {
        auto k = constant_bool(bc, bound[3], "keepdims");
        if (!k) return Value{error};
        keepdims = *k;
      }
      std::optional<ScalarType> element = graph_element(*x);
      if (!element) {
        diags_.emit<diag::SemaArgumentType>(ast_.range(bound[0]), "x", bc.name, "a tensor of numbers",
                                            types_.to_string(*x));
        return Value{error};
      }
      if (!is_float(*element)) element = ScalarType::F32;  // of integers and bools, as ts.mean
      std::vector<DimId> result;
      for (size_t i = 0; i < dims.size(); ++i) {
        bool reduced = std::find(axes.begin(), axes.end(), i) != axes.end();
        if (!reduced) result.push_back(dims[i]);
        else if (keepdims) result.push_back(types_.constant_dim(1));
      }
      return Value{graph_tensor(*element, result)};
    }
    case Signature::SplitArgs: {
      auto bound = bc.bind({"x", "sections", "axis"}, 2);
      if (bound.empty()) return Value{error};
      std::optional<TypeId> x = graph_tensor_argument(bc, bound[0], "x");
      if (!x) return Value{error};
      return Value{split_result(bc, bound, *x)};
    }
    case Signature::SplitQkvArgs: {
      auto bound = bc.bind({"qkv", "heads"}, 2);
      if (bound.empty()) return Value{error};
      std::optional<TypeId> x = graph_tensor_argument(bc, bound[0], "qkv");
      std::optional<int64_t> heads = bc.require_constant_integer(bound[1], "heads");
      if (!x || !heads) return Value{error};
      std::vector<DimId> dims = dims_of(*x);
      std::optional<int64_t> width = dims.empty() ? std::nullopt : types_.constant_value(dims.back());
      if (dims.size() < 2 || *heads <= 0 || !width || *width % (3 * *heads) != 0) {
        diags_.emit<diag::SemaSplitUneven>(ast_.range(bc.call), types_.to_string(*x),
                                           "q, k and v of " + std::to_string(*heads) +
                                               " heads each (the last axis must be a constant multiple of 3 x heads)");
        return Value{error};
      }
      // [..., S, 3*H*Dh] -> 3 x [..., H, S, Dh]
      std::vector<DimId> out(dims.begin(), dims.end() - 2);
      out.push_back(types_.constant_dim(*heads));
      out.push_back(dims[dims.size() - 2]);
      out.push_back(types_.constant_dim(*width / (3 * *heads)));
      TypeId part = types_.tensor(types_.info(*x).scalar, types_.info(*x).policy, out, AddressSpace::Global, false,
                                  false);
      TypeId parts[] = {part, part, part};
      return Value{types_.tuple(parts)};
    }
    case Signature::MergeHeadsArgs: {
      auto bound = bc.bind({"x"}, 1);
      if (bound.empty()) return Value{error};
      std::optional<TypeId> x = graph_tensor_argument(bc, bound[0], "x");
      if (!x) return Value{error};
      std::vector<DimId> dims = dims_of(*x);
      if (dims.size() < 3) {
        diags_.emit<diag::SemaArgumentType>(ast_.range(bound[0]), "x", bc.name, "a tensor [..., H, S, D]",
                                            types_.to_string(*x));
        return Value{error};
      }
      // [..., H, S, Dh] -> [..., S, H*Dh]
      std::vector<DimId> out(dims.begin(), dims.end() - 3);
      out.push_back(dims[dims.size() - 2]);
      out.push_back(types_.binary_dim(DimKind::Mul, dims[dims.size() - 3], dims.back()));
      return Value{
          types_.tensor(types_.info(*x).scalar, types_.info(*x).policy, out, AddressSpace::Global, false, false)};
    }
    case Signature::RandomArgs:
    case Signature::FillArgs: {
      bool full = bc.id == BuiltinId::Full || bc.id == BuiltinId::FullLike;
      // zeros_like(x), ones_like(x), full_like(x, v): x's shape, and its
      // element type unless dtype= says another (NumPy's rule).
      bool like = bc.id == BuiltinId::ZerosLike || bc.id == BuiltinId::OnesLike || bc.id == BuiltinId::FullLike;
      bool random = bc.info.signature == Signature::RandomArgs;
      auto bound = random ? bc.bind({"shape", "seed", "dtype"}, 1)
                   : like ? (full ? bc.bind({"x", "value", "dtype"}, 2) : bc.bind({"x", "dtype"}, 1))
                   : full ? bc.bind({"shape", "value", "dtype"}, 2)
                          : bc.bind({"shape", "dtype"}, 1);
      if (bound.empty()) return Value{error};
      std::optional<std::vector<DimId>> dims;
      ScalarType element = ScalarType::F32;
      if (like) {
        std::optional<TypeId> x = graph_tensor_argument(bc, bound[0], "x");
        if (x) {
          dims = std::vector<DimId>(types_.dims(*x).begin(), types_.dims(*x).end());
          element = types_.info(*x).scalar;
        }
      } else if (NodeKind k = ast_.kind(bound[0]);
                 k != NodeKind::Tuple && k != NodeKind::List &&
                 types_.kind(bc.value_of(bound[0]).type) == TypeKind::Dynamic) {
        // A shape sema cannot know here (`x.shape` of a generic function's
        // parameter): each instance's check decides.
        return Value{types_.dynamic()};
      } else {
        dims = shape_argument(bc, bound[0]);
      }
      size_t dtype_index = bound.size() - 1;
      if (bound[dtype_index].valid()) {
        std::optional<ScalarType> dtype = bc.require_dtype(bound[dtype_index], "dtype");
        if (!dtype) return Value{error};
        element = *dtype;
      }
      if (random) {
        if (bound[1].valid()) bc.require_integer(bound[1], "seed");
        if (!is_float(element)) {
          diags_.emit<diag::SemaArgumentType>(ast_.range(bound[dtype_index]), "dtype", bc.name, "a float dtype",
                                              std::string(scalar_info(element).name));
          return Value{error};
        }
      }
      if (full) {
        // A number, or a 0-d tensor (NumPy's fill value may be a 0-d array:
        // ts.full(shape, ts.sum(x))).
        Value value = bc.value_of(bound[1]);
        bool zero_d = types_.kind(value.type) == TypeKind::Tensor && types_.dims(value.type).empty();
        if (!types_.is_error(value.type) && !types_.is_numeric_scalar(value.type) && !zero_d) {
          diags_.emit<diag::SemaArgumentType>(ast_.range(bound[1]), "value", bc.name, "a number or a 0-d tensor",
                                              types_.to_string(value.type));
          return Value{error};
        }
      }
      if (!dims) return Value{error};
      return Value{graph_tensor(element, *dims)};
    }
    case Signature::ArangeArgs: {
      // arange(stop), arange(start, stop[, step]), dtype=: NumPy's. Start
      // and stop may be integers known only at run time; the step is a
      // constant other than 0; float bounds are constants. The dtype is f32
      // when a bound is a float, else i32, or i64 when a bound is i64, u32,
      // u64 or a constant outside i32 (as range() counts), unless dtype=
      // says.
      auto bound = bc.bind({"start", "stop", "step", "dtype"}, 1);
      if (bound.empty()) return Value{error};
      bool any_float = false, all_constant = true, wide = false;
      double values[3] = {0.0, 0.0, 1.0};
      ConstantInt integers[3] = {0, 0, 1};  // exact, for the length of integer bounds
      const char* names[] = {"start", "stop", "step"};
      for (size_t i = 0; i < 3; ++i) {
        if (!bound[i].valid()) continue;
        Value v = bc.value_of(bound[i]);
        if (types_.is_error(v.type)) return Value{error};
        if (types_.kind(v.type) == TypeKind::Dynamic) return Value{types_.dynamic()};  // an instance's check decides
        TypeId t = default_type(v.type);
        bool number = types_.kind(t) == TypeKind::Scalar && types_.info(t).scalar != ScalarType::Bool;
        if (!number) {
          diags_.emit<diag::SemaArgumentType>(ast_.range(bound[i]), names[i], bc.name, "a number",
                                              types_.to_string(v.type));
          return Value{error};
        }
        ScalarType scalar = types_.info(t).scalar;
        bool is_float_value = is_float(scalar);
        any_float = any_float || is_float_value;
        wide = wide || scalar == ScalarType::I64 || scalar == ScalarType::U32 || scalar == ScalarType::U64;
        if (v.constant) {
          values[i] = v.constant->as_double();
          integers[i] = v.constant->integer;
          wide = wide || (!v.constant->is_float && !integer_range(ScalarType::I32).contains(v.constant->integer));
        } else if (i == 2 || is_float_value) {
          diags_.emit<diag::SemaNotConstant>(ast_.range(bound[i]),
                                             "argument '" + std::string(names[i]) + "' of '" + std::string(bc.name) +
                                                 "' (" + (i == 2 ? "the step" : "a float bound") + ")");
          return Value{error};
        } else {
          all_constant = false;
        }
      }
      if (!bound[1].valid()) {  // arange(stop)
        values[1] = values[0];
        values[0] = 0.0;
        integers[1] = integers[0];
        integers[0] = 0;
      }
      if (values[2] == 0.0) {
        diags_.emit<diag::SemaRangeStepZero>(ast_.range(bound[2]), std::string(bc.name));
        return Value{error};
      }
      ScalarType element = any_float ? ScalarType::F32 : wide ? ScalarType::I64 : ScalarType::I32;
      if (bound[3].valid()) {
        std::optional<ScalarType> dtype = bc.require_dtype(bound[3], "dtype");
        if (!dtype) return Value{error};
        element = *dtype;
      }
      DimId length = types_.dynamic_dim();
      if (all_constant && !any_float) {  // ceil((stop - start) / step) in exact integers
        ConstantInt span = integers[1] - integers[0], step = integers[2];
        ConstantInt n = span / step + (span % step != 0 && (span > 0) == (step > 0) ? 1 : 0);
        length = types_.constant_dim(n > 0 ? static_cast<int64_t>(n) : 0);
      } else if (all_constant) {
        double n = std::ceil((values[1] - values[0]) / values[2]);
        length = types_.constant_dim(n > 0 ? static_cast<int64_t>(n) : 0);
      }
      std::vector<DimId> dims{length};
      return Value{graph_tensor(element, dims)};
    }
    case Signature::LinspaceArgs: {
      // linspace(start, stop, num=50, endpoint=True, dtype=None): NumPy's.
      // start and stop are numbers (known at run time too); num and
      // endpoint are constants. The dtype is f32 unless dtype= says.
      auto bound = bc.bind({"start", "stop", "num", "endpoint", "dtype"}, 2);
      if (bound.empty()) return Value{error};
      const char* names[] = {"start", "stop"};
      for (size_t i = 0; i < 2; ++i) {
        Value v = bc.value_of(bound[i]);
        if (types_.is_error(v.type)) return Value{error};
        TypeId t = default_type(v.type);
        if (types_.kind(t) != TypeKind::Scalar || types_.info(t).scalar == ScalarType::Bool) {
          diags_.emit<diag::SemaArgumentType>(ast_.range(bound[i]), names[i], bc.name, "a number",
                                              types_.to_string(v.type));
          return Value{error};
        }
      }
      int64_t num = 50;
      if (bound[2].valid()) {
        std::optional<int64_t> n = bc.require_constant_integer(bound[2], "num");
        if (!n) return Value{error};
        if (*n < 0) {
          diags_.emit<diag::SemaArgumentType>(ast_.range(bound[2]), "num", bc.name, "a count of 0 or more",
                                              source_text(bound[2]));
          return Value{error};
        }
        num = *n;
      }
      if (bound[3].valid() && !constant_bool(bc, bound[3], "endpoint")) return Value{error};
      ScalarType element = ScalarType::F32;
      if (bound[4].valid()) {
        std::optional<ScalarType> dtype = bc.require_dtype(bound[4], "dtype");
        if (!dtype) return Value{error};
        element = *dtype;
      }
      std::vector<DimId> dims{types_.constant_dim(num)};
      return Value{graph_tensor(element, dims)};
    }
    case Signature::ArrayArgs: {
      // array(object, dtype=None): NumPy's np.array of numbers written out,
      // lists or tuples nested to the tensor's rank, each level of one
      // length (`ts.array([[1.0, 2.0], [3.0, 4.0]])`; a number is a 0-d
      // tensor). The elements may be known only at run time. The dtype: f32
      // when an element is a float (Tessera's default float), bool when all
      // are bools, else i32, or i64 when an element is i64, u32, u64 or a
      // constant outside i32 (as ts.arange), unless dtype= says.
      auto bound = bc.bind({"object", "dtype"}, 1);
      if (bound.empty()) return Value{error};
      Value whole = bc.value_of(bound[0]);
      if (types_.is_error(whole.type)) return Value{error};
      std::vector<int64_t> shape;
      bool ragged = false, any_float = false, all_bool = true, numbers = true, wide = false;
      std::optional<size_t> leaf_depth;
      std::function<void(NodeId, size_t)> walk = [&](NodeId n, size_t depth) {
        if (ast_.kind(n) == NodeKind::List || ast_.kind(n) == NodeKind::Tuple) {
          auto children = ast_.children(n);
          if (shape.size() == depth) shape.push_back(static_cast<int64_t>(children.size()));
          else if (shape.size() < depth || shape[depth] != static_cast<int64_t>(children.size())) ragged = true;
          if (children.empty() && (leaf_depth && *leaf_depth != depth + 1)) ragged = true;
          for (NodeId child : children) walk(child, depth + 1);
          return;
        }
        if (leaf_depth && *leaf_depth != depth) ragged = true;
        leaf_depth = depth;
        TypeId t = default_type(out_.node_types[n.index]);
        if (!t.valid() || !types_.is_numeric_scalar(t)) {
          numbers = false;
          return;
        }
        bool is_bool = types_.kind(t) == TypeKind::Scalar && types_.info(t).scalar == ScalarType::Bool;
        all_bool = all_bool && is_bool;
        if (types_.kind(t) == TypeKind::Scalar) {
          ScalarType e = types_.info(t).scalar;
          wide = wide || e == ScalarType::I64 || e == ScalarType::U32 || e == ScalarType::U64;
        }
        if (auto c = constants_.find(n.index); c != constants_.end() && !c->second.is_float)
          wide = wide || !integer_range(ScalarType::I32).contains(c->second.integer);
        any_float = any_float || (types_.kind(t) == TypeKind::Scalar && is_float(types_.info(t).scalar));
      };
      walk(bound[0], 0);
      if (leaf_depth && *leaf_depth != shape.size()) ragged = true;
      if (!numbers || ragged) {
        diags_.emit<diag::SemaArgumentType>(ast_.range(bound[0]), "object", bc.name,
                                            ragged ? "numbers nested to one depth, each level of one length (NumPy "
                                                     "refuses a ragged array)"
                                                   : "numbers written out in (nested) lists or tuples",
                                            source_text(bound[0]));
        return Value{error};
      }
      ScalarType element = any_float                   ? ScalarType::F32
                           : (all_bool && leaf_depth) ? ScalarType::Bool
                           : wide                     ? ScalarType::I64
                                                      : ScalarType::I32;
      if (!leaf_depth) element = ScalarType::F32;  // ts.array([]): NumPy's float
      if (bound[1].valid()) {
        std::optional<ScalarType> dtype = bc.require_dtype(bound[1], "dtype");
        if (!dtype) return Value{error};
        element = *dtype;
      }
      std::vector<DimId> dims;
      for (int64_t n : shape) dims.push_back(types_.constant_dim(n));
      return Value{graph_tensor(element, dims)};
    }
    case Signature::CumulativeArgs: {
      // cumsum(x, axis=None), cumprod(...): NumPy's running sum (product)
      // along one axis, of the flattened tensor without one. The element
      // type is the sum's (prod's): narrower integers and bools in i64
      // (u64), narrow floats in f32.
      auto bound = bc.bind({"x", "axis"}, 1);
      if (bound.empty()) return Value{error};
      std::optional<TypeId> x = graph_tensor_argument(bc, bound[0], "x");
      if (!x) return Value{types_.kind(bc.value_of(bound[0]).type) == TypeKind::Dynamic ? types_.dynamic() : error};
      std::vector<DimId> dims = dims_of(*x);
      if (bound[1].valid() && ast_.kind(bound[1]) != NodeKind::NoneLiteral) {
        std::optional<int64_t> a = bc.require_constant_integer(bound[1], "axis");
        if (!a || !tensor_axis(bound[1], *a, dims.size())) return Value{error};
      } else {
        // The flattened tensor: one axis of the element count.
        std::optional<int64_t> count = 1;
        for (DimId d : dims) {
          std::optional<int64_t> size = types_.constant_value(d);
          count = count && size ? std::optional<int64_t>(*count * *size) : std::nullopt;
        }
        dims = {count ? types_.constant_dim(*count) : types_.dynamic_dim()};
      }
      std::optional<ScalarType> element = graph_element(*x);
      if (!element) {
        diags_.emit<diag::SemaArgumentType>(ast_.range(bound[0]), "x", bc.name, "a tensor of numbers or bools",
                                            types_.to_string(*x));
        return Value{error};
      }
      if (*element == ScalarType::Bool) element = ScalarType::I64;
      if (is_integer(*element) && scalar_info(*element).bits < 64)
        element = scalar_info(*element).category == ScalarCategory::UnsignedInt ? ScalarType::U64 : ScalarType::I64;
      return Value{graph_tensor(*element, dims)};
    }
    case Signature::DropoutArgs: {
      auto bound = bc.bind({"x", "p", "seed"}, 2);
      if (bound.empty()) return Value{error};
      std::optional<TypeId> x = graph_tensor_argument(bc, bound[0], "x");
      std::optional<double> p = constant_number(bc, bound[1], "p");
      if (bound[2].valid()) bc.require_integer(bound[2], "seed");
      if (!x || !p) return Value{error};
      if (*p < 0 || *p >= 1) {
        diags_.emit<diag::SemaArgumentType>(ast_.range(bound[1]), "p", bc.name, "a probability in [0, 1)",
                                            source_text(bound[1]));
        return Value{error};
      }
      std::optional<ScalarType> element = float_element(bc, bound[0], *x, "x");
      if (!element) return Value{error};
      return Value{graph_tensor(*element, dims_of(*x))};
    }
    case Signature::NpyLoadArgs: {
      auto bound = bc.bind({"path", "dtype", "shape"}, 1);
      if (bound.empty()) return Value{error};
      return Value{npy_load_result(bc, bound)};
    }
    case Signature::NpySaveArgs: {
      auto bound = bc.bind({"path", "tensor"}, 2);
      if (bound.empty()) return Value{types_.none()};
      Value path = bc.value_of(bound[0]);
      if (!types_.is_error(path.type) && types_.kind(path.type) != TypeKind::String)
        diags_.emit<diag::SemaArgumentType>(ast_.range(bound[0]), "path", bc.name, "a string",
                                            types_.to_string(path.type));
      graph_tensor_argument(bc, bound[1], "tensor");
      return Value{types_.none()};
    }
    case Signature::PrintArgs: {
      for (auto& [keyword, value] : bc.args.keywords) {
        diags_.emit<diag::SemaUnknownKeyword>(ast_.range(value), bc.name, keyword);
        bc.value_of(value);
      }
      // Tensors, numbers, strings and tuples of them (`print(x.shape)`).
      std::function<bool(TypeId)> printable = [&](TypeId t) {
        TypeKind kind = types_.kind(t);
        if (kind == TypeKind::Tuple) {
          for (TypeId e : types_.tuple_elements(t))
            if (!printable(e) || types_.kind(e) == TypeKind::String) return false;
          return true;
        }
        // A list (`print(losses)`); its elements' type is dynamic until the
        // first append.
        if (kind == TypeKind::List) {
          TypeId e{types_.info(t).payload};
          return printable(e) && types_.kind(e) != TypeKind::String;
        }
        return kind == TypeKind::Tensor || kind == TypeKind::String || kind == TypeKind::Error ||
               kind == TypeKind::Dynamic || kind == TypeKind::Dtype || kind == TypeKind::None ||
               types_.is_numeric_scalar(t);
      };
      for (NodeId argument : bc.args.positional) {
        Value v = bc.value_of(argument);
        if (!printable(v.type))
          diags_.emit<diag::SemaArgumentType>(ast_.range(argument), "values", bc.name,
                                              "tensors, numbers, strings, dtypes, None or tuples and lists of tensors and numbers",
                                              types_.to_string(v.type));
      }
      out_.call_arguments[bc.call.index] = bc.args.positional;
      return Value{types_.none()};
    }
    case Signature::Deferred: {
      // Not compiled yet (autodiff, distribution): arguments are checked as
      // expressions; lowering reports lower.unsupported for the call.
      bc.check_all_arguments();
      if (bc.id == BuiltinId::Matmul) return Value{types_.dynamic()};
      return Value{types_.dynamic()};
    }
    default: break;
  }
  internal_error("sema", "check_graph_builtin called for another family's builtin");
}

TypeId Checker::matmul_result(NodeId call, NodeId a_node, NodeId b_node, TypeId a, TypeId b) {
  std::vector<DimId> da(types_.dims(a).begin(), types_.dims(a).end());
  std::vector<DimId> db(types_.dims(b).begin(), types_.dims(b).end());
  if (da.empty() || db.empty()) {
    diags_.emit<diag::SemaArgumentType>(ast_.range(da.empty() ? a_node : b_node), da.empty() ? "a" : "b", "matmul",
                                        "a tensor of rank 1 or more", types_.to_string(da.empty() ? a : b));
    return types_.error();
  }
  // NumPy: a vector operand gains an axis (a: in front, b: behind) that the
  // result then drops.
  bool a_vector = da.size() == 1, b_vector = db.size() == 1;
  if (a_vector) da.insert(da.begin(), types_.constant_dim(1));
  if (b_vector) db.push_back(types_.constant_dim(1));
  DimId k1 = da.back(), k2 = db[db.size() - 2];
  auto c1 = types_.constant_value(k1), c2 = types_.constant_value(k2);
  bool mismatch =
      k1 != k2 && ((c1 && c2) || (types_.dim(k1).kind == DimKind::Symbol && types_.dim(k2).kind == DimKind::Symbol));
  if (mismatch) {
    diags_.emit<diag::SemaMatmulInnerDim>(ast_.range(call), source_text(a_node), types_.dim_to_string(k1),
                                          source_text(b_node), types_.dim_to_string(k2));
    return types_.error();
  }
  std::vector<DimId> batch_a(da.begin(), da.end() - 2), batch_b(db.begin(), db.end() - 2);
  auto batch = broadcast_dims(call, "matmul (batch dimensions)", a, b, batch_a, batch_b);
  if (!batch) return types_.error();
  std::vector<DimId> dims = *batch;
  if (!a_vector) dims.push_back(da[da.size() - 2]);
  if (!b_vector) dims.push_back(db.back());
  // The accumulation type: the operands' @accum (a's first), else their
  // compute types promoted as by `*`.
  Policy pa = types_.policy(types_.info(a).policy), pb = types_.policy(types_.info(b).policy);
  // bool operands are refused as matmul's (not as the '*' it is typed by).
  if (types_.info(a).scalar == ScalarType::Bool || types_.info(b).scalar == ScalarType::Bool) {
    diags_.emit<diag::SemaInvalidOperands>(ast_.range(call), "matmul", types_.to_string(a), types_.to_string(b));
    return types_.error();
  }
  ScalarType element;
  if (pa.accum || pb.accum) {
    element = pa.accum.value_or(*pb.accum);
  } else {
    TypeId e = binary_result(call, BinaryUse::of(BinaryOperator::Mul), compute_type(types_.element_type(a)),
                             compute_type(types_.element_type(b)));
    if (types_.is_error(e)) return e;
    element = types_.info(e).scalar;
  }
  return graph_tensor(element, dims);
}

TypeId Checker::attention_result(BuiltinCall& bc, const std::vector<NodeId>& bound, TypeId q, TypeId k, TypeId v) {
  std::vector<DimId> dq(types_.dims(q).begin(), types_.dims(q).end());
  std::vector<DimId> dk(types_.dims(k).begin(), types_.dims(k).end());
  std::vector<DimId> dv(types_.dims(v).begin(), types_.dims(v).end());
  for (auto [dims, node, name] : {std::tuple{&dq, bound[0], "q"}, std::tuple{&dk, bound[1], "k"},
                                  std::tuple{&dv, bound[2], "v"}}) {
    if (dims->size() < 2) {
      diags_.emit<diag::SemaArgumentType>(ast_.range(node), name, bc.name, "a tensor [..., S, D]",
                                          types_.to_string(name[0] == 'q' ? q : name[0] == 'k' ? k : v));
      return types_.error();
    }
  }
  for (TypeId t : {q, k, v}) {
    if (!float_element(bc, bound[0], t, "q")) return types_.error();
  }
  // q [..., Sq, D] . k [..., Sk, D]^T -> [..., Sq, Sk]; . v [..., Sk, Dv].
  auto same = [&](DimId x, DimId y) {
    auto cx = types_.constant_value(x), cy = types_.constant_value(y);
    return !(x != y && ((cx && cy) || (types_.dim(x).kind == DimKind::Symbol && types_.dim(y).kind == DimKind::Symbol)));
  };
  if (!same(dq.back(), dk.back())) {
    diags_.emit<diag::SemaShapeMismatch>(bc.where, "flash_attention (q and k must have the same head size)",
                                         types_.to_string(q), types_.to_string(k));
    return types_.error();
  }
  if (!same(dk[dk.size() - 2], dv[dv.size() - 2])) {
    diags_.emit<diag::SemaShapeMismatch>(bc.where, "flash_attention (k and v must have the same sequence length)",
                                         types_.to_string(k), types_.to_string(v));
    return types_.error();
  }
  std::vector<DimId> bq(dq.begin(), dq.end() - 2), bk(dk.begin(), dk.end() - 2), bv(dv.begin(), dv.end() - 2);
  auto batch = broadcast_dims(bc.call, "flash_attention (batch dimensions)", q, k, bq, bk, true);
  if (!batch) return types_.error();
  batch = broadcast_dims(bc.call, "flash_attention (batch dimensions)", q, v, *batch, bv, true);
  if (!batch) return types_.error();
  std::vector<DimId> dims = *batch;
  dims.push_back(dq[dq.size() - 2]);
  dims.push_back(dv.back());
  return graph_tensor(*float_element(bc, bound[0], q, "q"), dims);
}

// The type of x reshaped to `sizes`: one shape argument (a tuple written
// out, one extent, or a tuple value as ts.zeros takes it: shape_argument),
// or the sizes as separate arguments (`x.reshape(2, 6)`).
TypeId Checker::reshape_result(BuiltinCall& bc, std::span<const NodeId> sizes, TypeId x) {
  NodeId shape = sizes.front();
  std::string shape_text = source_text(shape);
  std::vector<NodeId> extents;
  if (sizes.size() > 1) {
    SourceRange all{ast_.range(sizes.front()).begin, ast_.range(sizes.back()).end};
    shape_text = "(" + std::string(diags_.sources().pointer(all.begin), all.end - all.begin) + ")";
    extents.assign(sizes.begin(), sizes.end());
  } else if (NodeKind k = ast_.kind(shape);
             k != NodeKind::Tuple && k != NodeKind::List && types_.kind(bc.value_of(shape).type) == TypeKind::Tuple) {
    // A tuple value (`y.shape`, `s = (2, 6)`): its sizes as ts.zeros reads
    // them (a `-1` among values known only at run time is not inferred).
    std::optional<std::vector<DimId>> dims = shape_argument(bc, shape);
    if (!dims) return types_.error();
    return checked_reshape(x, shape, shape_text, *dims, std::nullopt);
  } else {
    extents = bc.shape_extents(shape);
  }
  std::vector<DimId> dims;
  std::optional<size_t> inferred;
  for (size_t i = 0; i < extents.size(); ++i) {
    Value v = bc.require_integer(extents[i], "shape");
    if (types_.is_error(v.type)) return types_.error();
    if (v.constant && !v.constant->is_float && v.constant->integer == -1) {
      if (inferred) {
        diags_.emit<diag::SemaReshape>(ast_.range(extents[i]), types_.to_string(x), shape_text,
                                       "only one extent may be -1");
        return types_.error();
      }
      inferred = i;
      dims.push_back(types_.dynamic_dim());
      continue;
    }
    if (v.constant && !v.constant->is_float && v.constant->integer < 0) {
      diags_.emit<diag::SemaNegativeExtent>(ast_.range(extents[i]), v.constant->integer);
      return types_.error();
    }
    dims.push_back(dim_of_expression(extents[i]));
  }
  return checked_reshape(x, shape, shape_text, dims, inferred);
}

// x reshaped to `dims` (the `-1` one at `inferred`, if any): element counts
// must agree where they are known, and the `-1` one is computed when it can be.
TypeId Checker::checked_reshape(TypeId x, NodeId shape, const std::string& shape_text, std::vector<DimId> dims,
                                std::optional<size_t> inferred) {
  int64_t known = 1;
  bool all_known = true;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (inferred && i == *inferred) continue;
    if (auto c = types_.constant_value(dims[i])) known *= *c;
    else all_known = false;
  }
  std::optional<int64_t> total = 1;
  for (DimId d : types_.dims(x)) {
    auto c = types_.constant_value(d);
    if (!c) {
      total.reset();
      break;
    }
    *total *= *c;
  }
  if (total && inferred && all_known) {
    if (known == 0 || *total % known != 0) {
      diags_.emit<diag::SemaReshape>(ast_.range(shape), types_.to_string(x), shape_text,
                                     std::to_string(*total) + " elements do not divide into it");
      return types_.error();
    }
    dims[*inferred] = types_.constant_dim(*total / known);
  } else if (total && !inferred && all_known && known != *total) {
    diags_.emit<diag::SemaReshape>(ast_.range(shape), types_.to_string(x), shape_text,
                                   std::to_string(*total) + " elements cannot become " + std::to_string(known));
    return types_.error();
  } else if (!total && inferred && all_known && known > 0 &&
             std::ranges::none_of(types_.dims(x), [&](DimId d) { return types_.dim(d).kind == DimKind::Dynamic; })) {
    // Sizes known by name (`a.reshape(-1)` of f32[M, K]): M*K, which a
    // caller binding M and K computes (check_jit_call's substitute_dims).
    DimId product = types_.constant_dim(1);
    for (DimId d : types_.dims(x)) product = types_.binary_dim(DimKind::Mul, product, d);
    dims[*inferred] = known == 1 ? product : types_.binary_dim(DimKind::FloorDiv, product, types_.constant_dim(known));
  }
  return types_.tensor(types_.info(x).scalar, types_.info(x).policy, dims, AddressSpace::Global, false, false);
}

// The `tensors` argument of concat and stack: a list or tuple of at least
// one tensor (each typed as a graph tensor); nullopt after a diagnostic.
std::optional<std::vector<TypeId>> Checker::tensor_list_argument(BuiltinCall& bc, NodeId list) {
  if (ast_.kind(list) != NodeKind::Tuple && ast_.kind(list) != NodeKind::List) {
    Value v = bc.value_of(list);
    // A list variable (`ts.stack(losses)`): its elements' type, once; its
    // length is known to lowering only (docs/language/graph.md, "Lists").
    if (types_.kind(v.type) == TypeKind::List && types_.kind(TypeId{types_.info(v.type).payload}) == TypeKind::Tensor)
      return std::vector<TypeId>{TypeId{types_.info(v.type).payload}};
    // A tuple variable (`l = [a, b]` of tensors of two types is one): its elements.
    if (types_.kind(v.type) == TypeKind::Tuple && !types_.tuple_elements(v.type).empty() &&
        std::ranges::all_of(types_.tuple_elements(v.type), [&](TypeId t) { return types_.kind(t) == TypeKind::Tensor; })) {
      std::span<const TypeId> elements = types_.tuple_elements(v.type);
      return std::vector<TypeId>(elements.begin(), elements.end());
    }
    // The generic check of a body whose list holds values of parameters'
    // types (unknown until an instance): nothing to say yet.
    bool unknown_elements = types_.kind(v.type) == TypeKind::Dynamic ||
                            (types_.kind(v.type) == TypeKind::List &&
                             types_.kind(TypeId{types_.info(v.type).payload}) == TypeKind::Dynamic);
    if (check_generic_bodies_ && unknown_elements) return std::nullopt;
    if (!types_.is_error(v.type))
      diags_.emit<diag::SemaArgumentType>(ast_.range(list), "tensors", bc.name, "a list or tuple of tensors",
                                          types_.to_string(v.type));
    return std::nullopt;
  }
  set_type(list, types_.dynamic());
  std::vector<TypeId> parts;
  for (NodeId element : ast_.children(list)) {
    std::optional<TypeId> t = graph_tensor_argument(bc, element, "tensors");
    if (!t) return std::nullopt;
    parts.push_back(*t);
  }
  if (parts.empty()) {
    diags_.emit<diag::SemaArgumentType>(ast_.range(list), "tensors", bc.name, "at least one tensor", "an empty list");
    return std::nullopt;
  }
  return parts;
}

// concat's and stack's `tensors` written out or a tuple (its parts are
// tensor_list_argument's, one each), not a list variable (one type for all).
bool Checker::parts_known(NodeId list) const {
  if (ast_.kind(list) == NodeKind::Tuple || ast_.kind(list) == NodeKind::List) return true;
  TypeId t = out_.node_types[list.index];
  return t.valid() && types_.kind(t) == TypeKind::Tuple;
}

TypeId Checker::concat_result(BuiltinCall& bc, const std::vector<NodeId>& bound) {
  NodeId list = bound[0];
  std::optional<std::vector<TypeId>> tensors = tensor_list_argument(bc, list);
  if (!tensors) return types_.error();
  const std::vector<TypeId>& parts = *tensors;
  size_t rank = types_.dims(parts[0]).size();
  int64_t axis_value = 0;
  if (bound[1].valid()) {
    std::optional<int64_t> a = bc.require_constant_integer(bound[1], "axis");
    if (!a) return types_.error();
    axis_value = *a;
  }
  std::optional<size_t> axis = tensor_axis(bound[1].valid() ? bound[1] : list, axis_value, rank);
  if (!axis) return types_.error();
  std::vector<DimId> dims(types_.dims(parts[0]).begin(), types_.dims(parts[0]).end());
  std::optional<ScalarType> result = joined_element(bc, list, parts, axis, dims);
  if (!result) return types_.error();
  if (!parts_known(list)) dims[*axis] = types_.dynamic_dim();
  return graph_tensor(*result, dims);
}

// concat's and stack's parts against the first, `dims` its dimensions:
// the same shape but along `joined` (concat's axis, whose sizes add up in
// `dims`; none for stack). The result's element type: the parts' when they
// share it (a copy computes nothing), else their promotion; nullopt after a
// diagnostic.
std::optional<ScalarType> Checker::joined_element(BuiltinCall& bc, NodeId list, const std::vector<TypeId>& parts,
                                                  std::optional<size_t> joined, std::vector<DimId>& dims) {
  TypeId promoted = types_.scalar(*graph_element(parts[0]));
  for (size_t p = 1; p < parts.size(); ++p) {
    std::vector<DimId> d(types_.dims(parts[p]).begin(), types_.dims(parts[p]).end());
    bool ok = d.size() == dims.size();
    for (size_t i = 0; ok && i < dims.size(); ++i) {
      if (i == joined) continue;
      auto cx = types_.constant_value(dims[i]), cy = types_.constant_value(d[i]);
      ok = !(dims[i] != d[i] && ((cx && cy) || (types_.dim(dims[i]).kind == DimKind::Symbol &&
                                                types_.dim(d[i]).kind == DimKind::Symbol)));
    }
    if (!ok) {
      bool literal = ast_.kind(list) == NodeKind::Tuple || ast_.kind(list) == NodeKind::List;
      diags_.emit<diag::SemaShapeMismatch>(ast_.range(literal ? ast_.children(list)[p] : list), std::string(bc.name),
                                           types_.to_string(parts[0]), types_.to_string(parts[p]));
      return std::nullopt;
    }
    if (joined) dims[*joined] = types_.binary_dim(DimKind::Add, dims[*joined], d[*joined]);
    promoted = binary_result(bc.call, BinaryUse::builtin(bc.name), promoted, types_.scalar(*graph_element(parts[p])));
    if (types_.is_error(promoted)) return std::nullopt;
  }
  bool same = std::all_of(parts.begin(), parts.end(),
                          [&](TypeId t) { return types_.info(t).scalar == types_.info(parts[0]).scalar; });
  return same ? types_.info(parts[0]).scalar : types_.info(promoted).scalar;
}

// ts.stack(tensors, axis=0): tensors of one shape, joined along a new axis
// (NumPy's: `axis` counts in the result, from -(rank + 1) to rank).
TypeId Checker::stack_result(BuiltinCall& bc, const std::vector<NodeId>& bound) {
  NodeId list = bound[0];
  std::optional<std::vector<TypeId>> tensors = tensor_list_argument(bc, list);
  if (!tensors) return types_.error();
  const std::vector<TypeId>& parts = *tensors;
  std::vector<DimId> dims(types_.dims(parts[0]).begin(), types_.dims(parts[0]).end());
  int64_t axis_value = 0;
  if (bound[1].valid()) {
    std::optional<int64_t> a = bc.require_constant_integer(bound[1], "axis");
    if (!a) return types_.error();
    axis_value = *a;
  }
  std::optional<size_t> axis = tensor_axis(bound[1].valid() ? bound[1] : list, axis_value, dims.size() + 1);
  if (!axis) return types_.error();
  std::optional<ScalarType> result = joined_element(bc, list, parts, std::nullopt, dims);
  if (!result) return types_.error();
  dims.insert(dims.begin() + static_cast<std::ptrdiff_t>(*axis),
              parts_known(list) ? types_.constant_dim(static_cast<int64_t>(parts.size())) : types_.dynamic_dim());
  return graph_tensor(*result, dims);
}

std::vector<std::pair<int64_t, int64_t>> split_bounds(const std::vector<int64_t>& indices, int64_t extent) {
  auto clamp = [&](int64_t i) { return std::clamp(i < 0 ? i + extent : i, int64_t{0}, extent); };
  std::vector<std::pair<int64_t, int64_t>> bounds;
  int64_t start = 0;
  for (size_t k = 0; k <= indices.size(); ++k) {
    int64_t stop = k < indices.size() ? clamp(indices[k]) : extent;
    bounds.emplace_back(start, std::max(start, stop));
    start = stop;
  }
  return bounds;
}

TypeId Checker::split_result(BuiltinCall& bc, const std::vector<NodeId>& bound, TypeId x) {
  std::vector<DimId> dims(types_.dims(x).begin(), types_.dims(x).end());
  int64_t axis_value = 0;
  if (bound[2].valid()) {
    std::optional<int64_t> a = bc.require_constant_integer(bound[2], "axis");
    if (!a) return types_.error();
    axis_value = *a;
  }
  std::optional<size_t> axis = tensor_axis(bound[2].valid() ? bound[2] : bound[0], axis_value, dims.size());
  if (!axis) return types_.error();
  std::optional<int64_t> extent = types_.constant_value(dims[*axis]);
  std::vector<int64_t> sizes;
  NodeId sections = bound[1];
  if (ast_.kind(sections) == NodeKind::Tuple || ast_.kind(sections) == NodeKind::List) {
    // NumPy's indices: the parts are x[0:i0], x[i0:i1], ..., x[ik:], each a
    // Python slice of the axis (negative indices count from the end, bounds
    // clamp, a part whose stop is before its start is empty).
    set_type(sections, types_.dynamic());
    std::vector<int64_t> indices;
    for (NodeId s : ast_.children(sections)) {
      std::optional<int64_t> index = bc.require_constant_integer(s, "sections");
      if (!index) return types_.error();
      indices.push_back(*index);
    }
    if (!extent) {
      diags_.emit<diag::SemaSplitUneven>(ast_.range(sections), types_.to_string(x),
                                         "parts at the indices " + source_text(sections) + " along axis " +
                                             std::to_string(*axis) + " (its size is not constant)");
      return types_.error();
    }
    for (auto [start, stop] : split_bounds(indices, *extent)) sizes.push_back(stop - start);
  } else {
    std::optional<int64_t> count = bc.require_constant_integer(sections, "sections");
    if (!count) return types_.error();
    if (*count <= 0 || !extent || *extent % *count != 0) {
      diags_.emit<diag::SemaSplitUneven>(ast_.range(sections), types_.to_string(x),
                                         std::to_string(*count) + " equal parts along axis " + std::to_string(*axis) +
                                             (extent ? "" : " (its size is not constant)"));
      return types_.error();
    }
    sizes.assign(static_cast<size_t>(*count), *extent / *count);
  }
  std::vector<TypeId> parts;
  for (int64_t size : sizes) {
    std::vector<DimId> d = dims;
    d[*axis] = types_.constant_dim(size);
    parts.push_back(types_.tensor(types_.info(x).scalar, types_.info(x).policy, d, AddressSpace::Global, false, false));
  }
  return types_.tuple(parts);
}

TypeId Checker::npy_load_result(BuiltinCall& bc, const std::vector<NodeId>& bound) {
  Value path = bc.value_of(bound[0]);
  if (types_.is_error(path.type)) return types_.error();
  if (types_.kind(path.type) != TypeKind::String || ast_.kind(bound[0]) != NodeKind::StringLiteral) {
    diags_.emit<diag::SemaArgumentType>(ast_.range(bound[0]), "path", bc.name, "a string literal",
                                        types_.to_string(path.type));
    return types_.error();
  }
  std::optional<ScalarType> dtype;
  if (bound[1].valid()) {
    dtype = bc.require_dtype(bound[1], "dtype");
    if (!dtype) return types_.error();
  }
  std::optional<std::vector<DimId>> shape;
  if (bound[2].valid()) {
    shape = shape_argument(bc, bound[2]);
    if (!shape) return types_.error();
  }
  if (dtype && shape) return graph_tensor(*dtype, *shape);
  // Otherwise from the file's header, read now: the types of a program are
  // fixed when it is compiled (docs/language/graph.md, "Programs").
  const std::string& file = values_.strings[ast_.node(bound[0]).payload];
  std::string why;
  std::optional<NpyHeader> header = read_npy_header(file, why);
  if (!header) {
    // Only a file that is not there is helped by dtype= and shape=: one
    // that is there but unreadable would fail when the program runs too.
    std::error_code ec;
    if (!std::filesystem::exists(file, ec))
      why += "; a program's types are fixed when it is compiled, so the file must exist then, or give dtype= and shape=";
    diags_.emit<diag::SemaNpyHeader>(ast_.range(bound[0]), file, why);
    return types_.error();
  }
  std::vector<DimId> dims;
  for (int64_t extent : header->shape) dims.push_back(types_.constant_dim(extent));
  if (dtype && *dtype != header->dtype) {
    diags_.emit<diag::SemaNpyHeader>(ast_.range(bound[1]), file,
                                     "it holds " + std::string(scalar_info(header->dtype).name) + ", not " +
                                         std::string(scalar_info(*dtype).name));
    return types_.error();
  }
  if (shape) dims = *shape;
  return graph_tensor(header->dtype, dims);
}

}  // namespace tessera::sema

namespace tessera::sema {

std::optional<NpyHeader> read_npy_header(const std::string& path, std::string& why) {
  std::optional<npy::Header> header = npy::read_header(path, why);
  if (!header) return std::nullopt;
  std::optional<DtypeLookup> dtype = lookup_dtype(npy::tessera_dtype_of(header->descr));
  if (!dtype) {
    why = "its dtype '" + header->descr + "' is not one of Tessera's";
    return std::nullopt;
  }
  return NpyHeader{dtype->type, header->shape};
}

}  // namespace tessera::sema
