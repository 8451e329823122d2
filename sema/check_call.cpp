// Sema: calls of user functions and builtins (the signatures of builtins.def).
#include <algorithm>
#include <unordered_map>

#include "sema/checker.h"

namespace tessera::sema {

std::string dotted_path_of(const Ast& ast, const ValueStores& values, NodeId node);

namespace {

struct Arguments {
  std::vector<NodeId> positional;
  std::vector<std::pair<std::string_view, NodeId>> keywords;  // name (interned, stable), value node
};

// Positional arguments, and keyword arguments by name, in source order.
Arguments split_arguments(const Ast& ast, const ValueStores& values, std::span<const NodeId> arguments) {
  Arguments args;
  for (NodeId argument : arguments) {
    if (ast.kind(argument) == NodeKind::KeywordArgument) {
      args.keywords.emplace_back(values.identifiers.name(IdentifierId{ast.node(argument).payload}),
                                 ast.child(argument, 0));
    } else {
      args.positional.push_back(argument);
    }
  }
  return args;
}

}  // namespace

Value Checker::check_call(NodeId node) {
  auto children = ast_.children(node);
  NodeId callee = children[0];
  Arguments args = split_arguments(ast_, values_, children.subspan(1));

  // `tshared.alloc[f16](BM, BK, swizzle="xor")`: the element type as a subscript.
  if (ast_.kind(callee) == NodeKind::Subscript) {
    NodeId alloc = ast_.child(callee, 0);
    if (auto builtin = lookup_builtin(dotted_path_of(ast_, values_, alloc));
        builtin && *builtin == BuiltinId::TileAllocShared) {
      set_type(alloc, types_.builtin(static_cast<uint32_t>(*builtin)));
      return check_builtin_call(node, BuiltinId::TileAllocShared);
    }
  }

  // `x.astype(T)`: the method spelling of `cast(x, T)` (NumPy's), typed and
  // lowered as that builtin (its arguments: the object, then the dtype).
  if (ast_.kind(callee) == NodeKind::Attribute && name_of(ast_.node(callee).payload) == "astype" &&
      args.positional.size() == 1 && args.keywords.empty()) {
    NodeId object = ast_.child(callee, 0);
    Value x = check_expression(object);
    TypeKind kind = types_.kind(x.type);
    if (kind == TypeKind::Scalar || kind == TypeKind::UntypedInt || kind == TypeKind::UntypedFloat ||
        kind == TypeKind::Tensor) {
      set_type(callee, types_.builtin(static_cast<uint32_t>(BuiltinId::Cast)));
      Value dtype = check_expression(args.positional[0]);
      const TypeInfo& d = types_.info(dtype.type);
      if (d.kind != TypeKind::Dtype || types_.kind(TypeId{d.payload}) != TypeKind::Scalar) {
        if (d.kind != TypeKind::Error)
          diags_.emit<diag::SemaArgumentType>(ast_.range(args.positional[0]), "dtype", "astype", "a dtype such as f32",
                                              types_.to_string(dtype.type));
        return Value{types_.error()};
      }
      ScalarType to = types_.info(TypeId{d.payload}).scalar;
      out_.call_arguments[node.index] = {object, args.positional[0]};
      if (kind == TypeKind::Tensor) {
        std::vector<DimId> dims(types_.dims(x.type).begin(), types_.dims(x.type).end());
        return Value{types_.tensor(to, {}, dims, value_space(), false, false)};
      }
      return Value{types_.scalar(to)};
    }
    if (kind == TypeKind::Dynamic || kind == TypeKind::Error) {
      check_expression(args.positional[0]);
      return Value{x.type};
    }
    // Anything else: reported as an unknown member below.
  }

  Value target = check_expression(callee);
  const TypeInfo& info = types_.info(target.type);
  switch (info.kind) {
    case TypeKind::Builtin:
      return check_builtin_call(node, static_cast<BuiltinId>(info.payload));
    case TypeKind::Function: {
      uint32_t index = info.payload;
      check_function(index);  // for its effect and result type (no-op when done or in progress)
      const FunctionInfo& callee_info = out_.functions[index];
      for (NodeId argument : children.subspan(1)) check_expression(argument);
      if (in_kernel() && callee_info.kind != FunctionKind::Helper) {
        diags_.emit<diag::SemaCallUnknownFunction>(ast_.range(callee), name_of(callee_info.name));
        return Value{types_.error()};
      }
      size_t expected = callee_info.parameter_types.size();
      if (args.keywords.empty() && args.positional.size() != expected && callee_info.kind == FunctionKind::Helper &&
          std::none_of(children.begin() + 1, children.end(), [&](NodeId a) {
            return ast_.kind(a) == NodeKind::StarArgument || ast_.kind(a) == NodeKind::DoubleStarArgument;
          })) {
        diags_.emit<diag::SemaArgumentCount>(ast_.range(node), name_of(callee_info.name),
                                             std::to_string(expected) + " argument" + (expected == 1 ? "" : "s"),
                                             static_cast<unsigned>(args.positional.size()));
      }
      bind_call_shapes(callee_info, args.positional);
      raise_effect(callee_info.effect, ast_.range(node));
      return Value{callee_info.return_type.valid() ? callee_info.return_type : types_.dynamic()};
    }
    case TypeKind::Dtype: {
      // `f32(x)`: a conversion.
      for (NodeId argument : children.subspan(1)) check_expression(argument);
      return Value{TypeId{info.payload}};
    }
    case TypeKind::Object:
    case TypeKind::Dynamic:
      for (NodeId argument : children.subspan(1)) check_expression(argument);
      if (in_kernel()) {
        diags_.emit<diag::SemaCallUnknownFunction>(ast_.range(callee), source_text(callee));
        return Value{types_.error()};
      }
      return Value{types_.dynamic()};
    case TypeKind::Error:
      for (NodeId argument : children.subspan(1)) check_expression(argument);
      return Value{types_.error()};
    default:
      for (NodeId argument : children.subspan(1)) check_expression(argument);
      diags_.emit<diag::SemaNotCallable>(ast_.range(callee), types_.to_string(target.type));
      return Value{types_.error()};
  }
}

// At a call of a user function, symbolic dimensions of the parameters are
// bound to the arguments' dimensions: a symbol bound twice must denote the same
// size, and constant dimensions must match.
void Checker::bind_call_shapes(const FunctionInfo& callee, const std::vector<NodeId>& arguments) {
  std::unordered_map<uint32_t, DimId> bound;  // symbol -> argument dimension
  for (size_t i = 0; i < arguments.size() && i < callee.parameter_types.size(); ++i) {
    TypeId parameter = callee.parameter_types[i];
    TypeId argument = out_.node_types[arguments[i].index];
    if (!argument.valid() || types_.kind(parameter) != TypeKind::Tensor || types_.kind(argument) != TypeKind::Tensor) {
      continue;
    }
    auto expected = types_.dims(parameter);
    auto actual = types_.dims(argument);
    bool mismatch = expected.size() != actual.size();
    for (size_t d = 0; !mismatch && d < expected.size(); ++d) {
      const Dim& want = types_.dim(expected[d]);
      auto have = types_.constant_value(actual[d]);
      if (want.kind == DimKind::Constant) {
        mismatch = have && *have != want.value;
      } else if (want.kind == DimKind::Symbol) {
        auto [it, inserted] = bound.emplace(want.symbol.index, actual[d]);
        if (!inserted && it->second != actual[d]) {
          auto previous = types_.constant_value(it->second);
          const Dim& a = types_.dim(it->second);
          const Dim& b = types_.dim(actual[d]);
          // Two different constants, or two different symbols, cannot be equal sizes.
          mismatch =
              (previous && have && *previous != *have) || (a.kind == DimKind::Symbol && b.kind == DimKind::Symbol);
        }
      }
    }
    if (mismatch) {
      diags_.emit<diag::SemaShapeMismatch>(ast_.range(arguments[i]), "call of '" + name_of(callee.name) + "'",
                                           types_.to_string(parameter), types_.to_string(argument));
    }
  }
}

Value Checker::check_builtin_call(NodeId call, BuiltinId builtin) {
  const BuiltinInfo& b = builtin_info(builtin);
  std::string_view name = b.path;
  auto children = ast_.children(call);
  SourceRange where = ast_.range(call);

  Arguments args = split_arguments(ast_, values_, children.subspan(1));
  std::vector<std::pair<uint32_t, Value>> checked;  // argument node -> value; few per call
  auto value_of = [&](NodeId argument) -> Value {
    for (auto& [index, value] : checked) {
      if (index == argument.index) return value;
    }
    Value v = check_expression(argument);
    checked.emplace_back(argument.index, v);
    return v;
  };

  if (b.context == CallContext::Kernel && !in_kernel()) {
    for (NodeId argument : children.subspan(1)) value_of(argument);
    diags_.emit<diag::SemaKernelOnlyBuiltin>(ast_.range(children[0]), name);
    return Value{types_.error()};
  }
  if (b.context == CallContext::Host && in_kernel()) {
    for (NodeId argument : children.subspan(1)) value_of(argument);
    diags_.emit<diag::SemaHostOnlyBuiltin>(ast_.range(children[0]), name);
    return Value{types_.error()};
  }
  raise_effect(b.effect, where);

  // Named parameters of each signature, in positional order.
  auto bind = [&](std::initializer_list<const char*> parameters, size_t required) -> std::vector<NodeId> {
    std::vector<NodeId> bound(parameters.size());
    bool ok = true;
    if (args.positional.size() > parameters.size()) ok = false;
    for (size_t i = 0; i < args.positional.size() && i < bound.size(); ++i) bound[i] = args.positional[i];
    for (auto& [keyword, value] : args.keywords) {
      auto it = std::find_if(parameters.begin(), parameters.end(), [&](const char* p) { return keyword == p; });
      if (it == parameters.end()) {
        diags_.emit<diag::SemaUnknownKeyword>(ast_.range(value), name, keyword);
        value_of(value);
        continue;
      }
      bound[static_cast<size_t>(it - parameters.begin())] = value;
    }
    size_t present = 0;
    for (size_t i = 0; i < required; ++i) present += bound[i].valid() ? 1 : 0;
    if (!ok || present < required) {
      std::string expected = required == parameters.size()
                                 ? std::to_string(required)
                                 : std::to_string(required) + " to " + std::to_string(parameters.size());
      expected += parameters.size() == 1 && required == 1 ? " argument" : " arguments";
      diags_.emit<diag::SemaArgumentCount>(where, name, expected,
                                           static_cast<unsigned>(args.positional.size() + args.keywords.size()));
      for (NodeId argument : children.subspan(1)) value_of(argument);
      return {};
    }
    out_.call_arguments[call.index] = bound;
    return bound;
  };
  auto require_integer = [&](NodeId argument, const char* parameter) {
    Value v = value_of(argument);
    TypeId t = default_type(v.type);
    const TypeInfo& ti = types_.info(t);
    if (ti.kind == TypeKind::Error || ti.kind == TypeKind::Dynamic) return v;
    if (ti.kind != TypeKind::Scalar || !is_integer(ti.scalar)) {
      diags_.emit<diag::SemaArgumentType>(ast_.range(argument), parameter, name, "an integer",
                                          types_.to_string(v.type));
    }
    return v;
  };
  auto require_constant_integer = [&](NodeId argument, const char* parameter) -> std::optional<int64_t> {
    Value v = require_integer(argument, parameter);
    if (types_.is_error(v.type)) return std::nullopt;  // already reported
    if (!v.constant || v.constant->is_float) {
      diags_.emit<diag::SemaNotConstant>(ast_.range(argument),
                                         "argument '" + std::string(parameter) + "' of '" + std::string(name) + "'");
      return std::nullopt;
    }
    return v.constant->integer;
  };
  // A shape argument: a tuple or list of extents, or one extent.
  auto shape_extents = [&](NodeId shape) {
    std::vector<NodeId> extents;
    if (ast_.kind(shape) == NodeKind::Tuple || ast_.kind(shape) == NodeKind::List) {
      extents.assign(ast_.children(shape).begin(), ast_.children(shape).end());
      set_type(shape, types_.dynamic());
    } else {
      extents.push_back(shape);
    }
    return extents;
  };
  auto require_dtype = [&](NodeId argument, const char* parameter) -> std::optional<ScalarType> {
    Value v = value_of(argument);
    const TypeInfo& ti = types_.info(v.type);
    if (ti.kind == TypeKind::Dtype && types_.kind(TypeId{ti.payload}) == TypeKind::Scalar) {
      return types_.info(TypeId{ti.payload}).scalar;
    }
    if (ti.kind != TypeKind::Error) {
      diags_.emit<diag::SemaArgumentType>(ast_.range(argument), parameter, name, "a dtype such as f32",
                                          types_.to_string(v.type));
    }
    return std::nullopt;
  };
  auto require_tensor = [&](NodeId argument, const char* parameter, bool shared) -> std::optional<TypeId> {
    Value v = value_of(argument);
    const TypeInfo& ti = types_.info(v.type);
    if (ti.kind == TypeKind::Tensor && (!shared || ti.space == AddressSpace::Shared)) return v.type;
    if (ti.kind != TypeKind::Error && ti.kind != TypeKind::Dynamic) {
      diags_.emit<diag::SemaArgumentType>(ast_.range(argument), parameter, name,
                                          shared ? "a shared-memory tensor" : "a tensor", types_.to_string(v.type));
    }
    return std::nullopt;
  };
  auto axis_argument = [&](const std::vector<NodeId>& bound) {
    if (!bound.empty() && bound[0].valid()) {
      if (auto axis = require_constant_integer(bound[0], "axis"); axis && (*axis < 0 || *axis > 2)) {
        diags_.emit<diag::SemaAxisOutOfRange>(ast_.range(bound[0]), *axis);
      }
    }
  };
  TypeId i32 = types_.scalar(ScalarType::I32);

  switch (b.signature) {
    case Signature::LaneIndex:
    case Signature::WarpIndex:
      bind({}, 0);
      return Value{i32, std::nullopt, builtin == BuiltinId::TileLinearId};
    case Signature::LaneIndexAxis:
    case Signature::GroupIndexAxis: {
      auto bound = bind({"axis"}, 0);
      axis_argument(bound);
      return Value{i32};
    }
    case Signature::RangeArgs: {
      auto bound = bind({"start", "stop", "step"}, 1);
      for (size_t i = 0; i < bound.size(); ++i) {
        if (bound[i].valid()) require_integer(bound[i], i == 0 ? "start" : i == 1 ? "stop" : "step");
      }
      return Value{types_.range()};
    }
    case Signature::TileRangeArgs: {
      auto bound = bind({"start", "stop", "step", "prefetch"}, 1);
      const char* names[] = {"start", "stop", "step", "prefetch"};
      for (size_t i = 0; i < bound.size(); ++i) {
        if (!bound[i].valid()) continue;
        if (i == 3) {
          require_constant_integer(bound[i], names[i]);
        } else {
          require_integer(bound[i], names[i]);
        }
      }
      return Value{types_.range()};
    }
    case Signature::UnaryFloat:
    case Signature::UnaryNumeric: {
      auto bound = bind({"x"}, 1);
      if (bound.empty()) return Value{types_.error()};
      Value x = value_of(bound[0]);
      const TypeInfo& t = types_.info(x.type);
      if (t.kind == TypeKind::Error || t.kind == TypeKind::Dynamic) return Value{x.type};
      if (t.kind == TypeKind::Tensor && !in_kernel()) return Value{x.type};
      if (!types_.is_numeric_scalar(x.type)) {
        diags_.emit<diag::SemaArgumentType>(ast_.range(bound[0]), "x", name, "a number", types_.to_string(x.type));
        return Value{types_.error()};
      }
      TypeId result = t.kind == TypeKind::Scalar ? compute_type(x.type) : default_type(x.type);
      if (b.signature == Signature::UnaryFloat && !is_float(types_.info(result).scalar)) {
        result = types_.scalar(ScalarType::F32);
      }
      return Value{result};
    }
    case Signature::MinMax: {
      if (args.positional.size() == 1 && !in_kernel()) {
        for (NodeId argument : children.subspan(1)) value_of(argument);
        return Value{types_.dynamic()};  // a reduction over an axis
      }
      auto bound = bind({"a", "b"}, 2);
      if (bound.empty()) return Value{types_.error()};
      Value a = value_of(bound[0]), c = value_of(bound[1]);
      return Value{binary_result(call, name, a.type, c.type, true)};
    }
    case Signature::BinaryNumeric: {
      auto bound = bind({"x", "y"}, 2);
      if (bound.empty()) return Value{types_.error()};
      Value a = value_of(bound[0]), c = value_of(bound[1]);
      TypeId result = binary_result(call, name, a.type, c.type, true);
      if (types_.kind(result) == TypeKind::Scalar && !is_float(types_.info(result).scalar)) {
        result = types_.scalar(ScalarType::F32);
      }
      return Value{result};
    }
    case Signature::CastArgs: {
      auto bound = bind({"x", "dtype"}, 2);
      if (bound.empty()) return Value{types_.error()};
      Value x = value_of(bound[0]);
      auto dtype = require_dtype(bound[1], "dtype");
      if (!dtype) return Value{types_.error()};
      const TypeInfo& t = types_.info(x.type);
      if (t.kind == TypeKind::Tensor) {
        std::vector<DimId> dims(types_.dims(x.type).begin(), types_.dims(x.type).end());
        return Value{types_.tensor(*dtype, {}, dims, value_space(), false, false)};
      }
      if (t.kind == TypeKind::Dynamic) return Value{types_.dynamic()};
      return Value{types_.scalar(*dtype)};
    }
    case Signature::AllocShared: {
      // Two spellings: tile.alloc_shared(shape, dtype, swizzle=, alignment=, padding=)
      // and tshared.alloc[dtype](dim, dim, ..., swizzle=...).
      std::optional<ScalarType> element;
      std::vector<NodeId> dim_nodes;
      NodeId callee = children[0];
      std::vector<std::pair<std::string, NodeId>> options;
      for (auto& [keyword, value] : args.keywords) {
        if (keyword == "swizzle" || keyword == "alignment" || keyword == "padding" ||
            (keyword == "dtype" && ast_.kind(callee) != NodeKind::Subscript) ||
            (keyword == "shape" && ast_.kind(callee) != NodeKind::Subscript)) {
          options.emplace_back(keyword, value);
        } else {
          diags_.emit<diag::SemaUnknownKeyword>(ast_.range(value), name, keyword);
        }
      }
      auto option = [&](std::string_view key) {
        for (auto& [k, v] : options) {
          if (k == key) return v;
        }
        return NodeId{};
      };
      if (ast_.kind(callee) == NodeKind::Subscript) {
        set_type(callee, types_.dynamic());
        element = resolve_dtype_name(ast_.child(callee, 1), true);
        if (!element)
          diags_.emit<diag::SemaNotAType>(ast_.range(ast_.child(callee, 1)), source_text(ast_.child(callee, 1)));
        dim_nodes = args.positional;
      } else {
        NodeId shape = args.positional.size() > 0 ? args.positional[0] : option("shape");
        NodeId dtype = args.positional.size() > 1 ? args.positional[1] : option("dtype");
        if (!shape.valid() || !dtype.valid() || args.positional.size() > 2) {
          diags_.emit<diag::SemaArgumentCount>(where, name, std::string("a shape and a dtype"),
                                               static_cast<unsigned>(args.positional.size()));
          return Value{types_.error()};
        }
        element = require_dtype(dtype, "dtype");
        dim_nodes = shape_extents(shape);
      }
      std::vector<DimId> dims;
      uint64_t count = 1;
      bool constant = true;
      for (NodeId d : dim_nodes) {
        auto extent = require_constant_integer(d, "shape");
        if (!extent || *extent <= 0) {
          constant = false;
          dims.push_back(types_.dynamic_dim());
          continue;
        }
        dims.push_back(types_.constant_dim(*extent));
        count *= static_cast<uint64_t>(*extent);
      }
      int64_t padding = 0, alignment = 16;
      if (NodeId p = option("padding"); p.valid()) padding = require_constant_integer(p, "padding").value_or(0);
      if (NodeId a = option("alignment"); a.valid()) alignment = require_constant_integer(a, "alignment").value_or(16);
      if (NodeId s = option("swizzle"); s.valid()) value_of(s);
      if (!element) return Value{types_.error()};
      if (constant && !dims.empty() && padding > 0) {
        // Padding widens every row of the innermost dimension.
        uint64_t rows = count / static_cast<uint64_t>(*types_.constant_value(dims.back()));
        count += rows * static_cast<uint64_t>(padding);
      }
      uint64_t bytes = (count * scalar_info(*element).bits + 7) / 8;
      if (alignment > 0)
        bytes = (bytes + static_cast<uint64_t>(alignment) - 1) / static_cast<uint64_t>(alignment) *
                static_cast<uint64_t>(alignment);
      if (constant && function_) function_->shared_bytes += bytes;
      return Value{types_.tensor(*element, {}, dims, AddressSpace::Shared, true, false)};
    }
    case Signature::AllocLocal: {
      // tile.alloc_local(shape, dtype): a private array of each lane, of a
      // shape known at compile time (an int or a tuple of ints).
      auto bound = bind({"shape", "dtype"}, 2);
      if (bound.empty()) return Value{types_.error()};
      auto element = require_dtype(bound[1], "dtype");
      std::vector<DimId> dims;
      for (NodeId d : shape_extents(bound[0])) {
        auto extent = require_constant_integer(d, "shape");
        dims.push_back(extent && *extent > 0 ? types_.constant_dim(*extent) : types_.dynamic_dim());
      }
      if (!element) return Value{types_.error()};
      return Value{types_.tensor(*element, {}, dims, AddressSpace::Local, true, false)};
    }
    case Signature::AllocRegister: {
      auto bound = bind({"dtype"}, 1);
      if (bound.empty()) return Value{types_.error()};
      auto dtype = require_dtype(bound[0], "dtype");
      return Value{dtype ? types_.scalar(*dtype) : types_.error()};
    }
    case Signature::Barrier:
    case Signature::NoArgs:
      bind({}, 0);
      return Value{types_.none()};
    case Signature::WaitGroupArgs: {
      auto bound = bind({"n"}, 1);
      if (!bound.empty()) require_constant_integer(bound[0], "n");
      return Value{types_.none()};
    }
    case Signature::LoadArgs: {
      auto bound = bind({"tensor", "index"}, 2);
      if (bound.empty()) return Value{types_.error()};
      auto tensor = require_tensor(bound[0], "tensor", false);
      require_integer(bound[1], "index");
      return Value{tensor ? types_.element_type(*tensor) : types_.error()};
    }
    case Signature::StoreArgs: {
      auto bound = bind({"tensor", "index", "value"}, 3);
      if (bound.empty()) return Value{types_.none()};
      auto tensor = require_tensor(bound[0], "tensor", false);
      require_integer(bound[1], "index");
      Value v = value_of(bound[2]);
      if (tensor) {
        write_tensor_element(call, *tensor, bound[0]);
        // As for `t[i] = v`: floats into integer tensors need a cast.
        TypeInfo element = types_.info(types_.element_type(*tensor));
        TypeInfo value = types_.info(v.type);
        bool float_value =
            value.kind == TypeKind::UntypedFloat || (value.kind == TypeKind::Scalar && is_float(value.scalar));
        if (float_value && is_integer(element.scalar)) {
          diags_.emit<diag::SemaNarrowingConversion>(ast_.range(bound[2]), types_.to_string(v.type),
                                                     std::string(scalar_info(element.scalar).name));
        }
      }
      return Value{types_.none()};
    }
    case Signature::LoadVectorArgs: {
      auto bound = bind({"source", "width"}, 1);
      if (bound.empty()) return Value{types_.error()};
      Value source = value_of(bound[0]);
      int64_t width = 4;
      if (bound[1].valid()) width = require_constant_integer(bound[1], "width").value_or(4);
      const TypeInfo& t = types_.info(source.type);
      if (t.kind == TypeKind::Error) return Value{types_.error()};
      ScalarType element = t.kind == TypeKind::Tensor || t.kind == TypeKind::Scalar ? t.scalar : ScalarType::F32;
      DimId dims[] = {types_.constant_dim(width)};
      return Value{types_.tensor(element, t.policy, dims, AddressSpace::Local, false, false)};
    }
    case Signature::StoreVectorArgs: {
      auto bound = bind({"destination", "value"}, 2);
      if (bound.empty()) return Value{types_.none()};
      Value destination = value_of(bound[0]);
      value_of(bound[1]);
      NodeId root = bound[0];
      while (ast_.kind(root) == NodeKind::Subscript) root = ast_.child(root, 0);
      TypeId object = ast_.kind(bound[0]) == NodeKind::Subscript ? out_.node_types[ast_.child(bound[0], 0).index]
                                                                 : destination.type;
      if (object.valid() && types_.kind(object) == TypeKind::Tensor) write_tensor_element(call, object, root);
      return Value{types_.none()};
    }
    case Signature::CpAsyncArgs: {
      auto bound = bind({"destination", "source"}, 2);
      if (bound.empty()) return Value{types_.none()};
      Value source = value_of(bound[1]);
      NodeId destination = bound[0];
      // The first copy into a bare `tshared.alloc` fixes its element type.
      if (ast_.kind(destination) == NodeKind::Name && types_.kind(source.type) == TypeKind::Tensor) {
        finalize_bare_shared(IdentifierId{ast_.node(destination).payload}, types_.element_type(source.type));
      }
      require_tensor(destination, "destination", true);
      if (types_.kind(source.type) != TypeKind::Tensor && !types_.is_error(source.type) &&
          types_.kind(source.type) != TypeKind::Dynamic) {
        diags_.emit<diag::SemaArgumentType>(ast_.range(bound[1]), "source", name, "a tensor slice",
                                            types_.to_string(source.type));
      }
      return Value{types_.none()};
    }
    case Signature::AtomicArgs:
    case Signature::AtomicCasArgs: {
      bool cas = b.signature == Signature::AtomicCasArgs;
      auto bound = cas ? bind({"ref", "compare", "value"}, 3) : bind({"ref", "value"}, 2);
      if (bound.empty()) return Value{types_.error()};
      NodeId ref = bound[0];
      Value slot = value_of(ref);
      for (size_t i = 1; i < bound.size(); ++i) value_of(bound[i]);
      if (ast_.kind(ref) != NodeKind::Subscript || types_.kind(slot.type) != TypeKind::Scalar) {
        if (!types_.is_error(slot.type)) {
          diags_.emit<diag::SemaArgumentType>(ast_.range(ref), "ref", name, "one tensor element such as out[i]",
                                              types_.to_string(slot.type));
        }
        return Value{types_.error()};
      }
      NodeId root = ref;
      while (ast_.kind(root) == NodeKind::Subscript) root = ast_.child(root, 0);
      TypeId object = out_.node_types[ast_.child(ref, 0).index];
      if (object.valid() && types_.kind(object) == TypeKind::Tensor) write_tensor_element(ref, object, root);
      bool bitwise = b.id == BuiltinId::TileAtomicAnd || b.id == BuiltinId::TileAtomicOr || b.id == BuiltinId::TileAtomicXor;
      if (bitwise && !is_integer(types_.info(slot.type).scalar)) {
        diags_.emit<diag::SemaArgumentType>(ast_.range(ref), "ref", name, "an integer tensor element",
                                            types_.to_string(slot.type));
        return Value{types_.error()};
      }
      return Value{slot.type};
    }
    case Signature::ShuffleArgs:
    case Signature::ShuffleIdxArgs: {
      bool idx = b.signature == Signature::ShuffleIdxArgs;
      auto bound = bind({"value", idx ? "lane" : "offset"}, 2);
      if (bound.empty()) return Value{types_.error()};
      Value v = value_of(bound[0]);
      require_integer(bound[1], idx ? "lane" : "offset");
      return Value{default_type(v.type)};
    }
    case Signature::WarpReduceArgs: {
      auto bound = bind({"value"}, 1);
      if (bound.empty()) return Value{types_.error()};
      // A storage float reduces in its accumulation type (default f32).
      return Value{compute_type(default_type(value_of(bound[0]).type))};
    }
    case Signature::MmaArgs: {
      auto bound = bind({"a", "b", "accum"}, 2);
      if (bound.empty()) return Value{types_.error()};
      auto a = require_tensor(bound[0], "a", false);
      auto c = require_tensor(bound[1], "b", false);
      if (!a || !c) return Value{types_.error()};
      // The accumulation type: `accum=`, else the operands' @accum (a's
      // first), else f32.
      ScalarType accum = types_.policy(types_.info(*a).policy)
                             .accum.value_or(types_.policy(types_.info(*c).policy).accum.value_or(ScalarType::F32));
      if (bound[2].valid()) accum = require_dtype(bound[2], "accum").value_or(ScalarType::F32);
      auto da = types_.dims(*a), db = types_.dims(*c);
      if (da.size() != 2 || db.size() != 2) {
        diags_.emit<diag::SemaArgumentType>(where, "a", name, "two 2-D tiles", types_.to_string(*a));
        return Value{types_.error()};
      }
      if (da[1] != db[0] && types_.constant_value(da[1]) && types_.constant_value(db[0])) {
        diags_.emit<diag::SemaMatmulInnerDim>(where, source_text(bound[0]), types_.dim_to_string(da[1]),
                                              source_text(bound[1]), types_.dim_to_string(db[0]));
        return Value{types_.error()};
      }
      DimId dims[] = {da[0], db[1]};
      return Value{types_.tensor(accum, {}, dims, AddressSpace::Local, true, false)};
    }
    case Signature::GraphOp: {
      for (NodeId argument : children.subspan(1)) value_of(argument);
      if ((builtin == BuiltinId::Matmul) && args.positional.size() == 2) {
        Value a = value_of(args.positional[0]), c = value_of(args.positional[1]);
        if (types_.kind(a.type) == TypeKind::Tensor && types_.kind(c.type) == TypeKind::Tensor) {
          auto da = types_.dims(a.type), db = types_.dims(c.type);
          if (da.size() == 2 && db.size() == 2) {
            bool mismatch = da[1] != db[0] &&
                            ((types_.constant_value(da[1]) && types_.constant_value(db[0])) ||
                             (types_.dim(da[1]).kind == DimKind::Symbol && types_.dim(db[0]).kind == DimKind::Symbol));
            if (mismatch) {
              diags_.emit<diag::SemaMatmulInnerDim>(where, source_text(args.positional[0]), types_.dim_to_string(da[1]),
                                                    source_text(args.positional[1]), types_.dim_to_string(db[0]));
              return Value{types_.error()};
            }
            ScalarType element = types_.info(compute_type(types_.element_type(a.type))).scalar;
            DimId dims[] = {da[0], db[1]};
            return Value{types_.tensor(element, {}, dims, value_space(), false, false)};
          }
        }
      }
      return Value{types_.dynamic()};
    }
  }
  return Value{types_.error()};
}

}  // namespace tessera::sema
