#include "sema/builtin_call.h"

#include <algorithm>
#include <string>

namespace tessera::sema {

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

BuiltinCall::BuiltinCall(Checker& c, NodeId call_node, BuiltinId builtin, NodeId self, Value self_value)
    : checker(c),
      info(builtin_info(builtin)),
      id(builtin),
      name(info.path),
      call(call_node),
      children(c.ast_.children(call_node)),
      where(c.ast_.range(call_node)),
      args(split_arguments(c.ast_, c.values_, children.subspan(1))),
      i32(c.types_.scalar(ScalarType::I32)) {
  if (self.valid()) {
    method = true;
    args.positional.insert(args.positional.begin(), self);
    checked_.emplace_back(self.index, self_value);
  }
}

Value BuiltinCall::value_of(NodeId argument) {
  for (auto& [index, value] : checked_) {
    if (index == argument.index) return value;
  }
  Value v = checker.check_expression(argument);
  checked_.emplace_back(argument.index, v);
  return v;
}

void BuiltinCall::check_all_arguments() {
  for (NodeId argument : children.subspan(1)) value_of(argument);
}

std::vector<NodeId> BuiltinCall::bind(std::initializer_list<const char*> parameters, size_t required) {
  std::vector<NodeId> bound(parameters.size());
  bool ok = true;
  if (args.positional.size() > parameters.size()) ok = false;
  for (size_t i = 0; i < args.positional.size() && i < bound.size(); ++i) bound[i] = args.positional[i];
  for (auto& [keyword, value] : args.keywords) {
    auto it = std::find_if(parameters.begin(), parameters.end(), [&](const char* p) { return keyword == p; });
    if (it == parameters.end()) {
      // `keepdim=` (PyTorch's spelling) for `keepdims=`: name the nearest;
      // PyTorch's `dim=` is NumPy's `axis=`, too far from it by spelling.
      std::vector<std::string> names(parameters.begin(), parameters.end());
      std::optional<std::string> near;
      if (keyword == "dim" && std::find(names.begin(), names.end(), "axis") != names.end())
        near = "axis";
      else
        near = checker.closest_name(keyword, names);
      if (near)
        checker.diags_.emit<diag::SemaUnknownKeywordSuggest>(checker.ast_.range(value), name, keyword, *near);
      else
        checker.diags_.emit<diag::SemaUnknownKeyword>(checker.ast_.range(value), name, keyword);
      value_of(value);
      continue;
    }
    bound[static_cast<size_t>(it - parameters.begin())] = value;
  }
  size_t present = 0;
  std::vector<std::string> missing;
  for (size_t i = 0; i < required; ++i) {
    present += bound[i].valid() ? 1 : 0;
    if (!bound[i].valid()) missing.emplace_back(parameters.begin()[i]);
  }
  if (ok && present < required) {
    checker.report_missing_arguments(where, std::string(name), missing);
    check_all_arguments();
    return {};
  }
  if (!ok) {
    std::string expected = required == parameters.size()
                               ? std::to_string(required)
                               : std::to_string(required) + " to " + std::to_string(parameters.size());
    expected += parameters.size() == 1 && required == 1 ? " argument" : " arguments";
    checker.diags_.emit<diag::SemaArgumentCount>(where, name, expected,
                                                 static_cast<unsigned>(args.positional.size() + args.keywords.size()));
    check_all_arguments();
    return {};
  }
  checker.out_.call_arguments[call.index] = bound;
  return bound;
}

Value BuiltinCall::require_integer(NodeId argument, const char* parameter) {
  TypeStore& types = checker.types_;
  Value v = value_of(argument);
  TypeId t = checker.default_type(v.type);
  const TypeInfo& ti = types.info(t);
  if (ti.kind == TypeKind::Error || ti.kind == TypeKind::Dynamic) return v;
  if (ti.kind != TypeKind::Scalar || !is_integer(ti.scalar)) {
    checker.diags_.emit<diag::SemaArgumentType>(checker.ast_.range(argument), parameter, name, "an integer",
                                                types.to_string(v.type));
  }
  return v;
}

bool BuiltinCall::require_scalar(const Value& v, NodeId argument, const char* parameter, const char* what) {
  TypeStore& types = checker.types_;
  const TypeInfo& ti = types.info(checker.default_type(v.type));
  if (ti.kind == TypeKind::Scalar || ti.kind == TypeKind::Error || ti.kind == TypeKind::Dynamic) return true;
  checker.diags_.emit<diag::SemaArgumentType>(checker.ast_.range(argument), parameter, name, what, types.to_string(v.type));
  return false;
}

std::optional<int64_t> BuiltinCall::require_constant_integer(NodeId argument, const char* parameter) {
  Value v = require_integer(argument, parameter);
  if (checker.types_.is_error(v.type)) return std::nullopt;  // already reported
  // Not an integer (`axis=1.0`): require_integer said so; one error is enough.
  if (const TypeInfo& t = checker.types_.info(checker.default_type(v.type));
      t.kind != TypeKind::Dynamic && (t.kind != TypeKind::Scalar || !is_integer(t.scalar)))
    return std::nullopt;
  if (!v.constant || v.constant->is_float) {
    checker.diags_.emit<diag::SemaNotConstant>(checker.ast_.range(argument),
                                               checker.not_constant_subject(argument, parameter, name));
    return std::nullopt;
  }
  return v.constant->integer;
}

std::vector<NodeId> BuiltinCall::shape_extents(NodeId shape) {
  const Ast& ast = checker.ast_;
  std::vector<NodeId> extents;
  // A name for a tuple of integer constants (a parameter given `(1, 0, 2)`,
  // a module constant): its literal's elements (Checker::constant_literal).
  if (NodeId literal = ast.kind(shape) == NodeKind::Name ? checker.constant_literal(shape) : NodeId{};
      literal.valid() && ast.kind(literal) != NodeKind::StringLiteral) {
    extents.assign(ast.children(literal).begin(), ast.children(literal).end());
  } else if (ast.kind(shape) == NodeKind::Tuple || ast.kind(shape) == NodeKind::List) {
    extents.assign(ast.children(shape).begin(), ast.children(shape).end());
    checker.set_type(shape, checker.types_.dynamic());
  } else {
    extents.push_back(shape);
  }
  return extents;
}

std::optional<ScalarType> BuiltinCall::require_dtype(NodeId argument, const char* parameter) {
  TypeStore& types = checker.types_;
  Value v = value_of(argument);
  const TypeInfo& ti = types.info(v.type);
  if (ti.kind == TypeKind::Dtype && types.kind(TypeId{ti.payload}) == TypeKind::Scalar) {
    return types.info(TypeId{ti.payload}).scalar;
  }
  if (ti.kind != TypeKind::Error) {
    checker.diags_.emit<diag::SemaArgumentType>(checker.ast_.range(argument), parameter, name, "a dtype such as f32",
                                                types.to_string(v.type));
  }
  return std::nullopt;
}

std::optional<TypeId> BuiltinCall::require_tensor(NodeId argument, const char* parameter, bool shared) {
  TypeStore& types = checker.types_;
  Value v = value_of(argument);
  const TypeInfo& ti = types.info(v.type);
  if (ti.kind == TypeKind::Tensor && (!shared || ti.space == AddressSpace::Shared)) return v.type;
  if (ti.kind != TypeKind::Error && ti.kind != TypeKind::Dynamic) {
    checker.diags_.emit<diag::SemaArgumentType>(checker.ast_.range(argument), parameter, name,
                                                shared ? "a shared-memory tensor" : "a tensor", types.to_string(v.type));
  }
  return std::nullopt;
}

void BuiltinCall::axis_argument(const std::vector<NodeId>& bound) {
  if (!bound.empty() && bound[0].valid()) {
    if (auto axis = require_constant_integer(bound[0], "axis"); axis && (*axis < 0 || *axis > 2)) {
      checker.diags_.emit<diag::SemaAxisOutOfRange>(checker.ast_.range(bound[0]), *axis);
    }
  }
}

}  // namespace tessera::sema
