// Sema: calls of user functions and builtins (the signatures of builtins.def).
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <unordered_map>

#include "sema/builtin_call.h"
#include "sema/checker.h"

namespace tessera::sema {

std::string dotted_path_of(const Ast& ast, const ValueStores& values, NodeId node);


Value Checker::check_call(NodeId node) {
  auto children = ast_.children(node);
  NodeId callee = children[0];
  Arguments args = split_arguments(ast_, values_, children.subspan(1));

  // `kernel[grid](args)` / `kernel[grid, group](args)`: a launch from graph-level code.
  // Device code cannot launch one (there is no dynamic parallelism): say
  // so at the kernel's name, as for a call of it, rather than that a
  // function cannot be indexed.
  if (ast_.kind(callee) == NodeKind::Subscript && ast_.kind(ast_.child(callee, 0)) == NodeKind::Name) {
    NodeId kernel_name = ast_.child(callee, 0);
    auto symbol = module_symbols_.find(ast_.node(kernel_name).payload);
    if (symbol != module_symbols_.end() && symbol->second.kind == ModuleSymbol::Kind::Function &&
        !locals_.count(ast_.node(kernel_name).payload)) {
      check_function(symbol->second.function_index);
      const FunctionInfo& target = out_.functions[symbol->second.function_index];
      if (target.kind == FunctionKind::Kernel && !in_device())
        return check_kernel_launch(node, callee, symbol->second.function_index, children.subspan(1));
      if (target.kind == FunctionKind::Kernel) {
        for (NodeId argument : children.subspan(1)) check_expression(argument);
        diags_.emit<diag::SemaCallUnknownFunction>(ast_.range(kernel_name), name_of(target.name));
        return Value{types_.error()};
      }
    }
  }

  // `tshared.alloc[f16](BM, BK, swizzle="xor")`: the element type as a subscript.
  if (ast_.kind(callee) == NodeKind::Subscript) {
    NodeId alloc = ast_.child(callee, 0);
    if (auto builtin = lookup_builtin(dotted_path_of(ast_, values_, alloc));
        builtin && *builtin == BuiltinId::TileAllocShared) {
      set_type(alloc, types_.builtin(static_cast<uint32_t>(*builtin)));
      return check_builtin_call(node, BuiltinId::TileAllocShared);
    }
  }

  // `l.append(x)` of a list variable in graph code (docs/language/graph.md,
  // "Lists"): the first append of an empty list (`l = []`) gives its
  // elements their type; later ones must be of that type.
  if (ast_.kind(callee) == NodeKind::Attribute && !in_device() && name_of(ast_.node(callee).payload) == "append" &&
      ast_.kind(ast_.child(callee, 0)) == NodeKind::Name) {
    NodeId object = ast_.child(callee, 0);
    auto local = locals_.find(ast_.node(object).payload);
    if (local != locals_.end() && types_.kind(local->second.type) == TypeKind::List) {
      set_type(object, local->second.type);
      set_type(callee, types_.object(IdentifierId{ast_.node(callee).payload}));
      if (args.positional.size() != 1 || !args.keywords.empty()) {
        for (NodeId a : children.subspan(1)) check_expression(a);
        diags_.emit<diag::SemaArgumentCount>(ast_.range(node), "append", "1 argument",
                                             static_cast<unsigned>(children.size() - 1));
        return Value{types_.error()};
      }
      Value x = check_expression(args.positional[0]);
      if (types_.is_error(x.type)) return Value{types_.none()};
      TypeId element{types_.info(local->second.type).payload};
      if (types_.kind(element) == TypeKind::Dynamic) {
        local->second.type = types_.list(default_type(x));
        set_type(object, local->second.type);
      } else if (!is_assignable(x.type, element) || !same_tensor_kind(x.type, element)) {
        diags_.emit<diag::SemaArgumentType>(ast_.range(args.positional[0]), "object", "append",
                                            "'" + types_.to_string(element) + "', the type of the list's elements",
                                            types_.to_string(x.type));
      }
      return Value{types_.none()};
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

  // NumPy's reduction, reshape and transpose methods of a tensor in graph
  // code (`x.sum(axis=1)`, `x.max(0)`, `x.reshape((4, 3))`, `x.transpose()`):
  // typed and lowered as the builtin with the tensor as argument 0 (a
  // positional argument after it is the axis, as in NumPy).
  if (ast_.kind(callee) == NodeKind::Attribute && !in_device()) {
    static constexpr std::pair<std::string_view, BuiltinId> methods[] = {
        {"sum", BuiltinId::Sum},   {"mean", BuiltinId::Mean},       {"max", BuiltinId::Max},
        {"min", BuiltinId::Min},   {"prod", BuiltinId::Prod},       {"reshape", BuiltinId::Reshape},
        {"transpose", BuiltinId::Transpose}, {"argmax", BuiltinId::Argmax}, {"argmin", BuiltinId::Argmin},
        {"var", BuiltinId::Var},   {"std", BuiltinId::Std},         {"flatten", BuiltinId::Flatten},
        {"ravel", BuiltinId::Flatten},   {"clip", BuiltinId::Clip}, {"copy", BuiltinId::Copy},
        {"cumsum", BuiltinId::Cumsum}, {"cumprod", BuiltinId::Cumprod}, {"any", BuiltinId::AnyOf},
        {"all", BuiltinId::AllOf}};
    const std::string member = name_of(ast_.node(callee).payload);  // owned: name_of returns a temporary
    for (auto [method, builtin] : methods) {
      if (member != method) continue;
      NodeId object = ast_.child(callee, 0);
      Value x = check_expression(object);
      if (types_.kind(x.type) != TypeKind::Tensor) {
        if (types_.kind(x.type) == TypeKind::Error) return Value{types_.error()};
        break;  // reported as an unknown member below
      }
      if (builtin == BuiltinId::Transpose && args.positional.size() > 1) {
        // NumPy's x.transpose(1, 0): here the axes are one tuple (the sizes
        // of x.reshape(4, 3) are taken as NumPy takes them, ReshapeArgs).
        SourceRange sizes{ast_.range(args.positional.front()).begin, ast_.range(args.positional.back()).end};
        std::string listed(diags_.sources().pointer(sizes.begin), sizes.end - sizes.begin);
        std::string fixed = source_text(callee) + "((" + listed + "))";
        diags_.emit<diag::SemaMethodSizesAsArguments>(ast_.range(node), source_text(callee), "axes", fixed)
            .fix_it_replace(sizes, "(" + listed + ")");
        return Value{types_.error()};
      }
      set_type(callee, types_.builtin(static_cast<uint32_t>(builtin)));
      out_.method_calls.insert(node.index);
      return check_builtin_call(node, builtin, object, x);
    }
  }

  // `float("inf")`, `float("-inf")`, `float("nan")` (and any other float
  // Python reads from a string), `float(2)`: a float constant, as Python
  // computes it (docs/language/types.md, "Infinity and NaN").
  if (ast_.kind(callee) == NodeKind::Name && name_of(ast_.node(callee).payload) == "float" &&
      !locals_.count(ast_.node(callee).payload) && !module_symbols_.count(ast_.node(callee).payload) &&
      args.positional.size() == 1 && args.keywords.empty()) {
    set_type(callee, types_.object(IdentifierId{ast_.node(callee).payload}));
    if (auto c = float_constant(args.positional[0])) return Value{types_.untyped_float(), c};
    // float(t) of a 0-d tensor in graph code (NumPy's float(a)): its value
    // read back to the host, in f32 (a float literal's type) or f64.
    if (TypeId t = out_.node_types[args.positional[0].index];
        !in_device() && t.valid() && types_.kind(t) == TypeKind::Tensor && types_.dims(t).empty())
      return Value{types_.scalar(types_.info(t).scalar == ScalarType::F64 ? ScalarType::F64 : ScalarType::F32)};
    if (in_device()) {
      diags_.emit<diag::SemaFloatConversion>(ast_.range(node), source_text(args.positional[0]));
      return Value{types_.error()};
    }
    // float(x) of a number in graph code: a constant folds (above, or
    // here when it is computed), any other number converts to f32 (f64
    // stays f64).
    TypeId t = out_.node_types[args.positional[0].index];
    if (t.valid() && types_.is_numeric_scalar(t)) {
      if (auto c = constants_.find(args.positional[0].index); c != constants_.end() && !c->second.from_local)
        return Value{types_.untyped_float(), Constant{true, 0, c->second.as_double()}};
      const TypeInfo& info = types_.info(t);
      bool f64 = info.kind == TypeKind::Scalar && info.scalar == ScalarType::F64;
      return Value{types_.scalar(f64 ? ScalarType::F64 : ScalarType::F32)};
    }
    return Value{types_.dynamic()};
  }

  // str(x) in graph code: x as print shows it, a string
  // (docs/language/graph.md, "Strings"); str() is "".
  if (ast_.kind(callee) == NodeKind::Name && name_of(ast_.node(callee).payload) == "str" && !in_device() &&
      !locals_.count(ast_.node(callee).payload) && !module_symbols_.count(ast_.node(callee).payload) &&
      args.positional.size() <= 1 && args.keywords.empty()) {
    set_type(callee, types_.object(IdentifierId{ast_.node(callee).payload}));
    if (args.positional.empty()) return Value{types_.string()};
    Value x = check_expression(args.positional[0]);
    TypeKind kind = types_.kind(x.type);
    if (kind == TypeKind::Error) return x;
    bool shown = kind == TypeKind::Tensor || kind == TypeKind::String || kind == TypeKind::Dtype ||
                 kind == TypeKind::None || kind == TypeKind::Tuple || kind == TypeKind::List ||
                 types_.is_numeric_scalar(x.type);
    if (!shown) {
      diags_.emit<diag::SemaArgumentType>(ast_.range(args.positional[0]), "object", "str",
                                          "a tensor, number, string, dtype, None, tuple or list",
                                          types_.to_string(x.type));
      return Value{types_.error()};
    }
    return Value{types_.string()};
  }

  // `int(t)`, `bool(t)` of a 0-d tensor in graph code (NumPy's): its value
  // read back to the host as an i64 (truncated toward zero, as Python's
  // int()) or its truth value. Other arguments are not modeled (dynamic).
  if (ast_.kind(callee) == NodeKind::Name && !in_device() && args.positional.size() == 1 && args.keywords.empty() &&
      (name_of(ast_.node(callee).payload) == "int" || name_of(ast_.node(callee).payload) == "bool") &&
      !locals_.count(ast_.node(callee).payload) && !module_symbols_.count(ast_.node(callee).payload)) {
    set_type(callee, types_.object(IdentifierId{ast_.node(callee).payload}));
    Value x = check_expression(args.positional[0]);
    bool to_int = name_of(ast_.node(callee).payload) == "int";
    // int(x), bool(x) of a number (Python's): a constant folds (int()
    // truncates toward zero); any other number converts when it runs.
    if (types_.is_numeric_scalar(x.type)) {
      if (x.constant && !x.constant->from_local) {
        if (!to_int) return Value{types_.scalar(ScalarType::Bool), Constant{false, x.constant->as_double() != 0.0}};
        if (!x.constant->is_float) return Value{types_.untyped_int(), Constant{false, x.constant->integer}};
        double v = std::trunc(x.constant->real);
        if (std::isfinite(v) && std::fabs(v) < 9.2e18)
          return Value{types_.untyped_int(), Constant{false, static_cast<ConstantInt>(static_cast<int64_t>(v))}};
        diags_.emit<diag::SemaArgumentType>(ast_.range(args.positional[0]), "x", "int", "a finite number",
                                            source_text(args.positional[0]));
        return Value{types_.error()};
      }
      return Value{types_.scalar(to_int ? ScalarType::I64 : ScalarType::Bool)};
    }
    if (types_.kind(x.type) != TypeKind::Tensor || !types_.dims(x.type).empty()) return Value{types_.dynamic()};
    return Value{types_.scalar(to_int ? ScalarType::I64 : ScalarType::Bool)};
  }

  // `t.item()` of a tensor of one element in graph code (NumPy's): its
  // value read back to the host, a number of its element type.
  if (ast_.kind(callee) == NodeKind::Attribute && !in_device() && name_of(ast_.node(callee).payload) == "item" &&
      args.positional.empty() && args.keywords.empty()) {
    NodeId object = ast_.child(callee, 0);
    Value x = check_expression(object);
    if (types_.kind(x.type) == TypeKind::Tensor) {
      bool one = true;
      for (DimId d : types_.dims(x.type)) one = one && types_.constant_value(d) == std::optional<int64_t>(1);
      if (!one) {
        diags_.emit<diag::SemaArgumentType>(ast_.range(object), "self", "item", "a tensor of one element",
                                            types_.to_string(x.type));
        return Value{types_.error()};
      }
      set_type(callee, types_.object(IdentifierId{ast_.node(callee).payload}));
      return Value{compute_type(types_.element_type(x.type))};
    }
    if (types_.kind(x.type) == TypeKind::Error) return Value{types_.error()};
    // Anything else: reported as an unknown member below.
  }

  // `len(x)` of a tensor in graph code: the size of its first axis, as
  // `x.shape[0]` (a constant where the size is one).
  if (ast_.kind(callee) == NodeKind::Name && name_of(ast_.node(callee).payload) == "len" && !in_device() &&
      !locals_.count(ast_.node(callee).payload) && !module_symbols_.count(ast_.node(callee).payload) &&
      args.positional.size() == 1 && args.keywords.empty()) {
    set_type(callee, types_.object(IdentifierId{ast_.node(callee).payload}));
    Value x = check_expression(args.positional[0]);
    // len(l) of a list: its length, which lowering knows (lists have a
    // length known when compiling).
    if (types_.kind(x.type) == TypeKind::List) return Value{types_.scalar(ScalarType::I32)};
    // len(t) of a tuple (or a list of tensors of several types, a tuple).
    if (types_.kind(x.type) == TypeKind::Tuple)
      return Value{types_.untyped_int(), Constant{false, static_cast<ConstantInt>(types_.tuple_elements(x.type).size())}};
    if (types_.kind(x.type) != TypeKind::Tensor) return Value{types_.dynamic()};
    auto dims = types_.dims(x.type);
    if (dims.empty()) {
      diags_.emit<diag::SemaArgumentType>(ast_.range(args.positional[0]), "obj", "len", "a tensor of rank 1 or more",
                                          types_.to_string(x.type));
      return Value{types_.error()};
    }
    if (auto size = types_.constant_value(dims[0])) return Value{types_.untyped_int(), Constant{false, *size, 0.0}};
    return Value{types_.scalar(ScalarType::I32)};
  }

  // enumerate(l), zip(a, b, ...) of lists in graph code (docs/language/graph.md,
  // "Lists"): a list of tuples, (index, element) or one element of each.
  if (ast_.kind(callee) == NodeKind::Name && !in_device() &&
      (name_of(ast_.node(callee).payload) == "enumerate" || name_of(ast_.node(callee).payload) == "zip") &&
      !locals_.count(ast_.node(callee).payload) && !module_symbols_.count(ast_.node(callee).payload)) {
    std::string name = name_of(ast_.node(callee).payload);
    set_type(callee, types_.object(IdentifierId{ast_.node(callee).payload}));
    bool enumerate = name == "enumerate";
    if (!args.keywords.empty() || args.positional.empty() || (enumerate && args.positional.size() != 1)) {
      for (NodeId a : children.subspan(1)) check_expression(a);
      diags_.emit<diag::SemaArgumentCount>(ast_.range(node), name, enumerate ? "1 list" : "1 or more lists",
                                           static_cast<unsigned>(children.size() - 1));
      return Value{types_.error()};
    }
    std::vector<TypeId> parts;
    if (enumerate) parts.push_back(types_.scalar(ScalarType::I32));
    // Each a list, a tuple, or a tensor (its rows): what `for` unrolls
    // (check_iteration.cpp). Beside a tuple whose elements differ in type
    // the result is a tuple of tuples (a list holds one type), so every
    // argument's length must be known here.
    std::vector<TypeId> sequences;
    bool mixed = false;
    for (NodeId a : args.positional) {
      Value l = check_expression(a);
      if (types_.is_error(l.type)) return Value{types_.error()};
      // (A generic function's parameter before its instances: they decide.)
      if (types_.kind(l.type) == TypeKind::Dynamic) return Value{types_.dynamic()};
      sequences.push_back(l.type);
      TypeKind kind = types_.kind(l.type);
      if (kind == TypeKind::Tuple && !mixed_elements(l.type).empty()) mixed = true;
      if (kind == TypeKind::List || (kind == TypeKind::Tensor && !types_.dims(l.type).empty()) ||
          (kind == TypeKind::Tuple && !types_.tuple_elements(l.type).empty()))
        continue;
      diags_.emit<diag::SemaArgumentType>(ast_.range(a), "iterable", name, "a list, a tuple or a tensor of rank 1 or more",
                                          types_.to_string(l.type));
      return Value{types_.error()};
    }
    // The element of each argument at i (nullopt: its length is not known here).
    auto length = [&](TypeId l) -> std::optional<size_t> {
      if (types_.kind(l) == TypeKind::Tuple) return types_.tuple_elements(l).size();
      if (types_.kind(l) == TypeKind::Tensor)
        if (auto size = types_.constant_value(types_.dims(l).front())) return static_cast<size_t>(*size);
      return std::nullopt;
    };
    auto element = [&](TypeId l, size_t i) {
      if (types_.kind(l) == TypeKind::List) return TypeId{types_.info(l).payload};
      if (types_.kind(l) == TypeKind::Tensor) return first_axis_element(l);
      return types_.tuple_elements(l)[i];
    };
    if (!mixed) {
      for (TypeId l : sequences) parts.push_back(element(l, 0));
      return Value{types_.list(types_.tuple(parts))};
    }
    size_t n = SIZE_MAX;
    for (size_t k = 0; k < sequences.size(); ++k) {
      std::optional<size_t> known = length(sequences[k]);
      if (!known) {
        diags_.emit<diag::SemaArgumentType>(ast_.range(args.positional[k]), "iterable", name,
                                            "a tuple or a tensor whose first axis' size is known when compiling (beside a "
                                            "tuple whose elements differ in type)",
                                            types_.to_string(sequences[k]));
        return Value{types_.error()};
      }
      n = std::min(n, *known);
    }
    std::vector<TypeId> tuples;
    for (size_t i = 0; i < n; ++i) {
      std::vector<TypeId> tuple = parts;  // enumerate's index
      for (TypeId l : sequences) tuple.push_back(element(l, i));
      tuples.push_back(types_.tuple(tuple));
    }
    return Value{types_.tuple(tuples)};
  }

  // round(x), round(x, ndigits) of a number in graph code: Python's. One
  // argument: an integer (halves to even); with ndigits a float (an integer
  // stays one). A constant folds (correctly rounded, as Python's, through
  // the exact decimal expansion); a number known at run time rounds when it
  // runs. round() of a tensor is ts.round (NumPy's), below.
  if (ast_.kind(callee) == NodeKind::Name && name_of(ast_.node(callee).payload) == "round" && !in_device() &&
      !locals_.count(ast_.node(callee).payload) && !module_symbols_.count(ast_.node(callee).payload) &&
      args.keywords.empty() && (args.positional.size() == 1 || args.positional.size() == 2)) {
    Value x = check_expression(args.positional[0]);
    if (types_.is_numeric_scalar(x.type) && !(types_.kind(x.type) == TypeKind::Scalar &&
                                              types_.info(x.type).scalar == ScalarType::Bool)) {
      set_type(callee, types_.object(IdentifierId{ast_.node(callee).payload}));
      bool exact = x.constant && !x.constant->from_local;
      bool integer = !is_float(types_.info(default_type(x.type)).scalar);
      auto not_finite = [&] {
        diags_.emit<diag::SemaArgumentType>(ast_.range(args.positional[0]), "number", "round", "a finite number",
                                            source_text(args.positional[0]));
        return Value{types_.error()};
      };
      if (args.positional.size() == 1) {
        if (exact && integer) return Value{types_.untyped_int(), Constant{false, x.constant->integer}};
        if (exact) {
          double r = std::nearbyint(x.constant->real);  // the default rounding mode: halves to even
          if (!std::isfinite(r) || std::fabs(r) >= 9.2e18) return not_finite();
          return Value{types_.untyped_int(), Constant{false, static_cast<ConstantInt>(static_cast<int64_t>(r))}};
        }
        return Value{types_.scalar(ScalarType::I64)};
      }
      Value n = check_expression(args.positional[1]);
      std::optional<int64_t> digits = n.constant && !n.constant->is_float ? n.constant->as_int64() : std::nullopt;
      if (!digits || *digits < -300 || *digits > 300) {
        diags_.emit<diag::SemaNotConstant>(ast_.range(args.positional[1]),
                                           "argument 'ndigits' of 'round' (an integer from -300 to 300)");
        return Value{types_.error()};
      }
      if (integer) {
        // An integer stays one; a negative ndigits rounds to tens,
        // hundreds, ... (halves to even), as Python's.
        if (*digits >= 0 || !exact) {
          if (*digits < 0)
            diags_.emit<diag::SemaNotConstant>(ast_.range(args.positional[0]),
                                               "the integer rounded to a negative ndigits");
          return exact ? Value{types_.untyped_int(), Constant{false, x.constant->integer}} : Value{default_type(x)};
        }
        double r = std::nearbyint(static_cast<double>(x.constant->integer) / std::pow(10.0, static_cast<double>(-*digits))) *
                   std::pow(10.0, static_cast<double>(-*digits));
        return Value{types_.untyped_int(), Constant{false, static_cast<ConstantInt>(static_cast<int64_t>(r))}};
      }
      if (exact) {
        double v = x.constant->real;
        if (!std::isfinite(v)) return Value{types_.untyped_float(), Constant{true, 0, v}};
        double r;
        if (*digits >= 0) {
          // The exact decimal expansion rounded to ndigits, halves to even
          // (glibc's printf is exact, as Python's round()).
          std::vector<char> text(static_cast<size_t>(std::snprintf(nullptr, 0, "%.*f", static_cast<int>(*digits), v)) + 1);
          std::snprintf(text.data(), text.size(), "%.*f", static_cast<int>(*digits), v);
          r = std::strtod(text.data(), nullptr);
        } else {
          double scale = std::pow(10.0, static_cast<double>(-*digits));
          r = std::nearbyint(v / scale) * scale;
        }
        return Value{types_.untyped_float(), Constant{true, 0, r}};
      }
      return Value{default_type(x)};
    }
  }

  // `F.defvjp(fwd, bwd)`: registers F's custom rule (check_autodiff.cpp).
  if (!in_device() && ast_.kind(callee) == NodeKind::Attribute && defvjp_function(node)) return check_defvjp(node);
  // `F.defjvp(rule)` likewise (check_jvp.cpp).
  if (!in_device() && ast_.kind(callee) == NodeKind::Attribute && defjvp_function(node)) return check_defjvp(node);

  Value target = check_expression(callee);
  const TypeInfo& info = types_.info(target.type);
  switch (info.kind) {
    case TypeKind::Builtin:
      return check_builtin_call(node, static_cast<BuiltinId>(info.payload));
    case TypeKind::Function: {
      uint32_t index = info.payload;
      check_function(index);  // for its effect and result type (no-op when done or in progress)
      const FunctionInfo& callee_info = out_.functions[index];
      if (in_device() && callee_info.kind == FunctionKind::Helper) return check_helper_call(node, index);
      if (callee_info.kind == FunctionKind::Jit && !in_device()) return check_jit_call(node, index, children.subspan(1), true);
      // `saxpy(x, y, a)` in graph code: a kernel runs on a grid, which the
      // launch names (device code calling a kernel is reported below).
      if (callee_info.kind == FunctionKind::Kernel && !in_device()) {
        for (NodeId argument : children.subspan(1)) check_expression(argument);
        diags_.emit<diag::SemaKernelLaunchConfig>(ast_.range(node), name_of(callee_info.name));
        return Value{types_.error()};
      }
      // A plain function called from graph code (a @jit function or the
      // program) is generic graph code too: instantiated per signature,
      // inlined when compiled.
      if (callee_info.kind == FunctionKind::Helper && !in_device() && !callee_info.uses_kernel_builtins &&
          (!function_ || function_->kind == FunctionKind::Jit))
        return check_jit_call(node, index, children.subspan(1), true);
      for (NodeId argument : children.subspan(1)) check_expression(argument);
      if (in_device()) {
        diags_.emit<diag::SemaCallUnknownFunction>(ast_.range(callee), name_of(callee_info.name));
        return Value{types_.error()};
      }
      if (callee_info.uses_kernel_builtins) {
        diags_.emit<diag::SemaDeviceHelperOnHost>(ast_.range(callee), name_of(callee_info.name))
            .note<diag::NoteKernelBuiltinUse>(callee_info.kernel_builtin, name_of(callee_info.name));
        return Value{types_.error()};
      }
      // Parameters with a default may be left out (`scale(x)` of `def
      // scale(x, k=2.0)`, a plain function calling another).
      size_t expected = callee_info.parameter_types.size(), required = 0;
      for (NodeId parameter : ast_.children(ast_.child(callee_info.def, 1)).subspan(callee_info.first_parameter))
        required += ast_.child(parameter, 1).valid() ? 0 : 1;
      required = std::min(required, expected);
      if (args.keywords.empty() && (args.positional.size() < required || args.positional.size() > expected) &&
          callee_info.kind == FunctionKind::Helper && std::none_of(children.begin() + 1, children.end(), [&](NodeId a) {
            return ast_.kind(a) == NodeKind::StarArgument || ast_.kind(a) == NodeKind::DoubleStarArgument;
          })) {
        std::string count = required == expected ? std::to_string(expected)
                                                 : std::to_string(required) + " to " + std::to_string(expected);
        diags_.emit<diag::SemaArgumentCount>(ast_.range(node), name_of(callee_info.name),
                                             count + " argument" + (expected == 1 && required == 1 ? "" : "s"),
                                             static_cast<unsigned>(args.positional.size()));
      }
      bind_call_shapes(callee_info, args.positional);
      raise_effect(callee_info.effect, ast_.range(node));
      return Value{callee_info.return_type.valid() ? callee_info.return_type : types_.dynamic()};
    }
    case TypeKind::Dtype: {
      // `f32(x)` of a number: a conversion, as cast(x, f32) (C's `float(x)`,
      // NumPy's np.float32(3)): a float to an integer truncates toward zero.
      for (NodeId argument : children.subspan(1)) check_expression(argument);
      TypeId to{info.payload};
      std::string name = types_.to_string(to);
      if (args.positional.size() != 1 || !args.keywords.empty()) {
        diags_.emit<diag::SemaArgumentCount>(ast_.range(node), name, "1 argument",
                                             static_cast<unsigned>(children.size() - 1));
        return Value{types_.error()};
      }
      TypeId x = out_.node_types[args.positional[0].index];
      if (types_.is_error(x)) return Value{types_.error()};
      if (types_.kind(to) != TypeKind::Scalar || !types_.is_numeric_scalar(x)) {
        diags_.emit<diag::SemaArgumentType>(ast_.range(args.positional[0]), "x", name,
                                            "a number (a tensor converts with " +
                                                std::string(in_device() ? "cast" : "ts.cast") + "(x, " + name +
                                                ") or x.astype(" + name + "))",
                                            types_.to_string(x));
        return Value{types_.error()};
      }
      return Value{to};
    }
    case TypeKind::Object:
    case TypeKind::Mesh:
    case TypeKind::Layout:
    case TypeKind::Dynamic:
      for (NodeId argument : children.subspan(1)) check_expression(argument);
      if (in_device()) {
        diags_.emit<diag::SemaCallUnknownFunction>(ast_.range(callee), source_text(callee));
        return Value{types_.error()};
      }
      return Value{types_.dynamic()};
    case TypeKind::Transform: return check_transform_call(node, target.type, children.subspan(1));
    case TypeKind::Error:
      for (NodeId argument : children.subspan(1)) check_expression(argument);
      return Value{types_.error()};
    default:
      for (NodeId argument : children.subspan(1)) check_expression(argument);
      diags_.emit<diag::SemaNotCallable>(ast_.range(callee), types_.to_string(target.type));
      return Value{types_.error()};
  }
}

std::optional<Constant> Checker::float_constant(NodeId argument) {
  if (ast_.kind(argument) == NodeKind::StringLiteral) {
    set_type(argument, types_.string());
    std::string text = values_.strings[ast_.node(argument).payload];
    // Python's float(str): surrounding whitespace, a sign, digits or
    // inf/infinity/nan in any case.
    size_t first = text.find_first_not_of(" \t\n\r"), last = text.find_last_not_of(" \t\n\r");
    if (first == std::string::npos) return std::nullopt;
    text = text.substr(first, last - first + 1);
    std::string lower;
    for (char ch : text) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    std::string_view body = lower;
    double sign = 1.0;
    if (!body.empty() && (body[0] == '+' || body[0] == '-')) {
      sign = body[0] == '-' ? -1.0 : 1.0;
      body.remove_prefix(1);
    }
    if (body == "inf" || body == "infinity") return Constant{true, 0, sign * HUGE_VAL};
    if (body == "nan") return Constant{true, 0, std::copysign(std::nan(""), sign)};
    if (body.empty() || lower.find_first_not_of("0123456789.e+-_") != std::string::npos) return std::nullopt;
    char* end = nullptr;
    double v = std::strtod(text.c_str(), &end);
    if (end != text.c_str() + text.size()) return std::nullopt;
    return Constant{true, 0, v};
  }
  Value v = check_expression(argument);
  if (v.constant && !v.constant->from_local) return Constant{true, 0, v.constant->as_double()};
  return std::nullopt;
}

std::optional<Checker::BoundArguments> Checker::bind_arguments(NodeId call, std::span<const NodeId> arguments,
                                                               const FunctionInfo& callee,
                                                               const std::string& callee_name) {
  auto parameters = ast_.children(ast_.child(callee.def, 1)).subspan(callee.first_parameter);
  auto check_all = [&] {
    for (NodeId argument : arguments)
      check_expression(ast_.kind(argument) == NodeKind::KeywordArgument ? ast_.child(argument, 0) : argument);
  };
  for (NodeId parameter : parameters) {
    auto kind = static_cast<ParameterKind>(ast_.node(parameter).op);
    if (kind != ParameterKind::Normal && kind != ParameterKind::KeywordOnly) {
      check_all();
      // A kernel's or device helper's is reported at the parameter
      // (check_function); graph code's at the call, as the construct not
      // compiled that it is (lowering reports it so where sema binds no
      // arguments, a program's call).
      if (callee.kind != FunctionKind::Kernel && !callee.device)
        diags_.emit<diag::LowerUnsupported>(
            ast_.range(call), variadic_call_phrase(callee_name, name_of(ast_.node(parameter).payload),
                                                   kind == ParameterKind::VarKeyword));
      return std::nullopt;
    }
  }
  BoundArguments bound{std::vector<NodeId>(parameters.size()), std::vector<bool>(parameters.size())};
  bool ok = true;
  bool miscounted = false;  // too many positional arguments
  size_t next = 0;
  for (NodeId argument : arguments) {
    NodeKind kind = ast_.kind(argument);
    if (kind == NodeKind::StarArgument || kind == NodeKind::DoubleStarArgument) {
      check_expression(argument);
      if (in_device())
        diags_.emit<diag::SemaUnsupportedInKernel>(ast_.range(argument), std::string("unpacking arguments with * or **"));
      else
        diags_.emit<diag::SemaUnsupportedCall>(ast_.range(argument), "unpacking arguments with * or **");
      ok = false;
      continue;
    }
    if (kind == NodeKind::KeywordArgument) {
      size_t slot = parameters.size();
      for (size_t i = 0; i < parameters.size(); ++i)
        if (ast_.node(parameters[i]).payload == ast_.node(argument).payload) slot = i;
      if (slot == parameters.size()) {
        check_expression(ast_.child(argument, 0));
        diags_.emit<diag::SemaUnknownKeyword>(ast_.range(argument), callee_name, name_of(ast_.node(argument).payload));
        ok = false;
      } else if (bound.given[slot]) {
        check_expression(ast_.child(argument, 0));
        diags_.emit<diag::SemaDuplicateArgument>(ast_.range(argument), callee_name, name_of(ast_.node(argument).payload));
        ok = false;
      } else {
        bound.nodes[slot] = ast_.child(argument, 0);
        bound.given[slot] = true;
      }
      continue;
    }
    while (next < parameters.size() && static_cast<ParameterKind>(ast_.node(parameters[next]).op) != ParameterKind::Normal)
      ++next;
    if (next >= parameters.size()) {
      check_expression(argument);
      ok = false;
      miscounted = true;
      continue;
    }
    bound.nodes[next] = argument;
    bound.given[next] = true;
    ++next;
  }
  size_t required = 0;
  for (NodeId parameter : parameters) required += ast_.child(parameter, 1).valid() ? 0 : 1;
  std::vector<std::string> missing;
  for (size_t i = 0; i < parameters.size(); ++i) {
    if (bound.given[i]) continue;
    NodeId default_value = ast_.child(parameters[i], 1);
    if (!default_value.valid()) {
      ok = false;
      missing.push_back(name_of(ast_.node(parameters[i]).payload));
      continue;
    }
    bound.nodes[i] = default_value;
  }
  if (ok) return bound;
  // Too many arguments: the count; else the required parameters left out.
  if (!miscounted && !missing.empty()) report_missing_arguments(ast_.range(call), callee_name, missing);
  if (miscounted) {
    std::string expected = required == parameters.size()
                               ? std::to_string(required)
                               : std::to_string(required) + " to " + std::to_string(parameters.size());
    expected += parameters.size() == 1 && required == 1 ? " argument" : " arguments";
    diags_.emit<diag::SemaArgumentCount>(ast_.range(call), callee_name, expected, static_cast<unsigned>(arguments.size()));
  }
  return std::nullopt;
}

// A call of a helper from device code: its arguments bound to the
// parameters (bind_arguments; the defaults are constants, check_function),
// recorded for lowering in TypedModule::call_arguments, and each checked
// against its parameter as a store into it would be: no silent narrowing,
// constants that fit, tensors of the parameter's element type and rank (of
// any memory: global, shared or local), and a `mut` parameter only given a
// writable tensor.
Value Checker::check_helper_call(NodeId node, uint32_t index) {
  const FunctionInfo& callee = out_.functions[index];
  std::string callee_name = name_of(callee.name);
  auto parameters = ast_.children(ast_.child(callee.def, 1)).subspan(callee.first_parameter);
  std::optional<BoundArguments> arguments = bind_arguments(node, ast_.children(node).subspan(1), callee, callee_name);
  if (!arguments) return Value{types_.error()};
  std::vector<NodeId>& bound = arguments->nodes;
  std::vector<bool>& given = arguments->given;
  std::vector<Value> values(parameters.size());
  for (size_t i = 0; i < parameters.size(); ++i) {
    if (given[i]) {
      values[i] = check_expression(bound[i]);
      continue;
    }
    values[i] = Value{out_.node_types[bound[i].index]};  // a default: typed in the callee
    if (auto c = constants_.find(bound[i].index); c != constants_.end()) values[i].constant = c->second;
  }
  for (size_t i = 0; i < parameters.size() && i < callee.parameter_types.size(); ++i) {
    if (!given[i]) continue;
    check_argument(bound[i], values[i], callee.parameter_types[i], name_of(ast_.node(parameters[i]).payload),
                   callee_name);
  }
  out_.call_arguments[node.index] = bound;
  bind_call_shapes(callee, bound);
  raise_effect(callee.effect, ast_.range(node));
  if (callee.uses_kernel_builtins && function_ && function_->kind == FunctionKind::Helper) {
    function_->uses_kernel_builtins = true;
    if (function_->kernel_builtin.begin == 0) function_->kernel_builtin = ast_.range(node);
  }
  return Value{callee.return_type.valid() ? callee.return_type : types_.dynamic()};
}

void Checker::check_argument(NodeId argument, const Value& value, TypeId parameter, const std::string& parameter_name,
                             const std::string& callee_name) {
  if (types_.is_error(value.type) || types_.is_error(parameter)) return;
  TypeInfo want = types_.info(parameter);
  TypeInfo have = types_.info(value.type);
  auto mismatch = [&] {
    diags_.emit<diag::SemaArgumentType>(ast_.range(argument), parameter_name, callee_name,
                                        "'" + types_.to_string(parameter) + "'", types_.to_string(value.type));
  };
  if (want.kind == TypeKind::Tensor) {
    if (have.kind != TypeKind::Tensor || have.scalar != want.scalar ||
        types_.dims(value.type).size() != types_.dims(parameter).size()) {
      mismatch();
      return;
    }
    if (have.space == AddressSpace::Register && types_.dims(value.type).size() != 1) {
      // A register tile is spread over the lanes of a warp (tile.mma's
      // layout): it is no memory a helper could index.
      diags_.emit<diag::SemaRegisterTileArgument>(ast_.range(argument), parameter_name, callee_name);
      return;
    }
    // Writing through a `mut` parameter writes the argument.
    if (want.mut && have.space == AddressSpace::Global && !have.mut) {
      NodeId root = argument;
      while (ast_.kind(root) == NodeKind::Subscript) root = ast_.child(root, 0);
      write_tensor_element(argument, value.type, root);
    }
    return;
  }
  if (want.kind != TypeKind::Scalar) return;
  if (have.kind == TypeKind::Tensor) {
    mismatch();
    return;
  }
  if (!is_assignable(value.type, parameter)) {
    bool narrowing = (have.kind == TypeKind::Scalar && is_float(have.scalar) && is_integer(want.scalar)) ||
                     (have.kind == TypeKind::UntypedFloat && !is_float(want.scalar));
    if (narrowing) {
      diags_.emit<diag::SemaNarrowingConversion>(ast_.range(argument), types_.to_string(value.type),
                                                 std::string(scalar_info(want.scalar).name));
    } else {
      mismatch();
    }
    return;
  }
  check_constant_fits(argument, value, parameter);
}

// At a call of a user function, symbolic dimensions of the parameters are
// bound to the arguments' dimensions: a symbol bound twice must denote the same
// size, and constant dimensions must match.
std::unordered_map<uint32_t, DimId> Checker::bind_call_shapes(const FunctionInfo& callee,
                                                               const std::vector<NodeId>& arguments) {
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
      // Named as `f(x)`: the function and its parameter (the message quotes it).
      // The sizes earlier arguments gave its names, with them: 'f32[n] (f32[4] here)'.
      NodeId parameter_node = ast_.children(ast_.child(callee.def, 1))[callee.first_parameter + i];
      std::string wanted = types_.to_string(parameter);
      if (TypeId here = substitute_dims(parameter, bound); here != parameter)
        wanted += " (" + types_.to_string(here) + " here)";
      diags_.emit<diag::SemaShapeMismatch>(ast_.range(arguments[i]),
                                           name_of(callee.name) + "(" + name_of(ast_.node(parameter_node).payload) + ")",
                                           wanted, types_.to_string(argument));
    }
  }
  return bound;
}

Value Checker::check_builtin_call(NodeId call, BuiltinId builtin, NodeId self, Value self_value) {
  BuiltinCall bc(*this, call, builtin, self, self_value);
  if (bc.info.context == CallContext::Kernel && !in_device()) {
    bc.check_all_arguments();
    diags_.emit<diag::SemaKernelOnlyBuiltin>(ast_.range(bc.children[0]), bc.name);
    return Value{types_.error()};
  }
  if (bc.info.context == CallContext::Kernel && function_ && function_->kind == FunctionKind::Helper) {
    // What a helper may not do (docs/language/kernels.md, "Helper
    // functions"): shared memory is allocated, and async copies grouped, by
    // the kernel, whose budget and commit groups they are.
    const char* reason = nullptr;
    switch (builtin) {
      case BuiltinId::TileAllocShared:
        reason = "shared memory is allocated by the kernel (its budget counts it); pass the buffer to the helper";
        break;
      case BuiltinId::TileCpAsync:
      case BuiltinId::TileCpCommitGroup:
      case BuiltinId::TileCpWaitGroup:
        reason = "async copies and their commit groups belong to the kernel; issue them there";
        break;
      default: break;
    }
    function_->uses_kernel_builtins = true;
    if (function_->kernel_builtin.begin == 0) function_->kernel_builtin = bc.where;
    if (reason) {
      bc.check_all_arguments();
      diags_.emit<diag::SemaNotInHelper>(ast_.range(bc.children[0]), bc.name, std::string(reason));
      return Value{types_.error()};
    }
  }
  if (bc.info.context == CallContext::Host && in_device()) {
    bc.check_all_arguments();
    diags_.emit<diag::SemaHostOnlyBuiltin>(ast_.range(bc.children[0]), bc.name);
    return Value{types_.error()};
  }
  raise_effect(bc.info.effect, bc.where);
  Value result = check_builtin_family(bc);
  // Graph code: the result's sharding from its arguments' (check_dist.cpp).
  if (!types_.is_error(result.type) && types_.kind(result.type) == TypeKind::Tensor)
    result.type = propagate_builtin_sharding(bc, result.type);
  if (!types_.is_error(result.type) && types_.kind(result.type) == TypeKind::Tuple) {
    std::vector<TypeId> elements(types_.tuple_elements(result.type).begin(), types_.tuple_elements(result.type).end());
    bool changed = false;
    for (TypeId& e : elements)
      if (types_.kind(e) == TypeKind::Tensor) {
        TypeId p = propagate_builtin_sharding(bc, e);
        changed = changed || p != e;
        e = p;
      }
    if (changed) result.type = types_.tuple(elements);
  }
  return result;
}

Value Checker::check_builtin_family(BuiltinCall& bc) {
  // One checker per family of builtins (builtins.def), each in its own file.
  switch (bc.info.signature) {
    case Signature::LaneIndex:
    case Signature::WarpIndex:
    case Signature::LaneIndexAxis:
    case Signature::GroupIndexAxis:
    case Signature::RangeArgs:
    case Signature::TileRangeArgs:
    case Signature::Barrier:
    case Signature::NoArgs:
    case Signature::WaitGroupArgs:
    case Signature::AtomicArgs:
    case Signature::AtomicCasArgs:
    case Signature::ShuffleArgs:
    case Signature::ShuffleIdxArgs:
    case Signature::WarpReduceArgs:
    case Signature::MmaArgs: return check_kernel_builtin(bc);
    case Signature::AllocShared:
    case Signature::AllocLocal:
    case Signature::AllocRegister:
    case Signature::LoadArgs:
    case Signature::StoreArgs:
    case Signature::LoadVectorArgs:
    case Signature::StoreVectorArgs:
    case Signature::CpAsyncArgs: return check_memory_builtin(bc);
    case Signature::UnaryFloat:
    case Signature::UnaryNumeric:
    case Signature::MinMax:
    case Signature::BinaryNumeric:
    case Signature::CastArgs: return check_math_builtin(bc);
    case Signature::Activation:
    case Signature::Reduction:
    case Signature::MatmulArgs:
    case Signature::SoftmaxArgs:
    case Signature::NormArgs:
    case Signature::AttentionArgs:
    case Signature::MseArgs:
    case Signature::WhereArgs:
    case Signature::ReshapeArgs:
    case Signature::TransposeArgs:
    case Signature::ConcatArgs:
    case Signature::StackArgs:
    case Signature::FlattenArgs:
    case Signature::ClipArgs:
    case Signature::TensorMapArgs:
    case Signature::SortArgs:
    case Signature::ArgReduceArgs:
    case Signature::VarianceArgs:
    case Signature::SplitArgs:
    case Signature::SplitQkvArgs:
    case Signature::MergeHeadsArgs:
    case Signature::RandomArgs:
    case Signature::DropoutArgs:
    case Signature::FillArgs:
    case Signature::ArangeArgs:
    case Signature::LinspaceArgs:
    case Signature::ArrayArgs:
    case Signature::CumulativeArgs:
    case Signature::NpyLoadArgs:
    case Signature::NpySaveArgs:
    case Signature::PrintArgs: return check_graph_builtin(bc);
    case Signature::TransformArgs: return check_transform_builtin(bc);
    case Signature::ScheduleArgs: return check_schedule_directive(bc);
    case Signature::Deferred:
      switch (bc.id) {
        case BuiltinId::DistMesh:
        case BuiltinId::DistTensor:
        case BuiltinId::ShardSpec:
        case BuiltinId::AllReduce:
        case BuiltinId::AllGather:
        case BuiltinId::ReduceScatter:
        case BuiltinId::Broadcast:
        case BuiltinId::Send:
        case BuiltinId::Recv:
        case BuiltinId::SendRecv: return check_dist_builtin(bc);
        default: return check_graph_builtin(bc);
      }
  }
  return Value{types_.error()};
}

std::string variadic_call_phrase(std::string_view callee, std::string_view parameter, bool keywords) {
  return "calling '" + std::string(callee) + "', whose parameter '" + (keywords ? "**" : "*") + std::string(parameter) +
         "' takes a variable number of arguments";
}

}  // namespace tessera::sema
