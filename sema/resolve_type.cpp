// Type annotations -> types: dtypes and their aliases, tensor types with
// symbolic shapes (`f32[n]`, `ts.Tensor["M", "N", bf16]`), `mut`, numeric
// policies and `type` aliases.
#include <algorithm>

#include "frontend/parse/parse.h"
#include "sema/checker.h"

namespace tessera::sema {

namespace {

// The dotted spelling of a Name/Attribute chain without a leading `ts.` or
// `tessera.` ("ts.tile.range" -> "tile.range"); empty for other nodes.
std::string dotted_path(const Ast& ast, const ValueStores& values, NodeId node) {
  std::vector<std::string_view> parts;
  while (ast.kind(node) == NodeKind::Attribute) {
    parts.push_back(values.identifiers.name(IdentifierId{ast.node(node).payload}));
    node = ast.child(node, 0);
  }
  if (ast.kind(node) != NodeKind::Name) return {};
  std::string_view root = values.identifiers.name(IdentifierId{ast.node(node).payload});
  std::string path;
  if (root != "ts" && root != "tessera") path = std::string(root);
  for (auto it = parts.rbegin(); it != parts.rend(); ++it) {
    if (!path.empty()) path += ".";
    path += *it;
  }
  return path;
}

}  // namespace

std::string dotted_path_of(const Ast& ast, const ValueStores& values, NodeId node) {
  return dotted_path(ast, values, node);
}

std::optional<ScalarType> Checker::resolve_dtype_name(NodeId node, bool report) {
  std::string path = dotted_path(ast_, values_, node);
  if (path.empty()) return std::nullopt;
  // `from tessera import f32 as F`: F names what it imports.
  if (ast_.kind(node) == NodeKind::Name)
    if (auto symbol = module_symbols_.find(ast_.node(node).payload);
        symbol != module_symbols_.end() && symbol->second.kind == ModuleSymbol::Kind::Import)
      path = module_path(symbol->second.module_id);
  auto found = lookup_dtype(path);
  if (!found) {
    // An alias of a dtype (`T = bf16`) names that dtype (its policies are
    // the alias's type's, which callers wanting them take from alias_type).
    if (auto alias = alias_type(node); alias && types_.kind(*alias) == TypeKind::Scalar)
      return types_.info(*alias).scalar;
    return std::nullopt;
  }
  if (found->defaulted_format && report) {
    diags_.emit<diag::SemaDefaultedFormat>(ast_.range(node), path, std::string(scalar_info(found->type).name))
        .fix_it_replace(ast_.range(node), std::string(scalar_info(found->type).name));
  }
  return found->type;
}

std::optional<DimId> Checker::resolve_dim(NodeId node) {
  const Node& n = ast_.node(node);
  switch (n.kind) {
    case NodeKind::IntLiteral:
      return types_.constant_dim(static_cast<int64_t>(values_.integers[n.payload]));
    case NodeKind::Name: {
      auto symbol = module_symbols_.find(n.payload);
      if (symbol != module_symbols_.end() && symbol->second.constant && !symbol->second.constant->is_float) {
        return types_.constant_dim(symbol->second.constant->integer);
      }
      auto local = locals_.find(n.payload);
      if (local != locals_.end() && local->second.constant && !local->second.constant->is_float) {
        return types_.constant_dim(local->second.constant->integer);
      }
      return types_.symbol_dim(IdentifierId{n.payload});
    }
    case NodeKind::StringLiteral:
      return types_.symbol_dim(values_.identifiers.intern(values_.strings[n.payload]));
    case NodeKind::DynamicDim:
      return types_.dynamic_dim();
    case NodeKind::BinaryOp: {
      DimKind kind;
      switch (static_cast<BinaryOperator>(n.op)) {
        case BinaryOperator::Add:
          kind = DimKind::Add;
          break;
        case BinaryOperator::Sub:
          kind = DimKind::Sub;
          break;
        case BinaryOperator::Mul:
          kind = DimKind::Mul;
          break;
        case BinaryOperator::Div:
          kind = DimKind::Div;
          break;
        case BinaryOperator::FloorDiv:
          kind = DimKind::FloorDiv;
          break;
        case BinaryOperator::Mod:
          kind = DimKind::Mod;
          break;
        default:
          return std::nullopt;
      }
      auto lhs = resolve_dim(ast_.child(node, 0));
      auto rhs = resolve_dim(ast_.child(node, 1));
      if (!lhs || !rhs) return std::nullopt;
      return types_.binary_dim(kind, *lhs, *rhs);
    }
    default:
      return std::nullopt;
  }
}

PolicyId Checker::resolve_policies(std::span<const NodeId> policies, ScalarType base, PolicyId start, bool bare) {
  Policy policy = types_.policy(start);
  std::vector<std::string> seen;  // the policies written in this list
  for (NodeId policy_node : policies) {
    NodeId expression = bare ? policy_node : ast_.child(policy_node, 0);
    NodeId callee = ast_.kind(expression) == NodeKind::Call ? ast_.child(expression, 0) : expression;
    std::vector<NodeId> arguments;
    if (ast_.kind(expression) == NodeKind::Call) {
      auto children = ast_.children(expression);
      arguments.assign(children.begin() + 1, children.end());
    }
    std::string name = dotted_path(ast_, values_, callee);
    SourceRange where = ast_.range(policy_node);
    auto require_float = [&] {
      if (is_float(base)) return true;
      diags_.emit<diag::SemaPolicyOnNonFloat>(where, name, std::string(scalar_info(base).name));
      return false;
    };
    auto bad_argument = [&](const char* what) {
      diags_.emit<diag::SemaInvalidPolicyArgument>(where, name, std::string(what));
    };
    // `@accum(f32) @accum(bf16)`: the second would silently replace the first.
    if (!name.empty() && std::find(seen.begin(), seen.end(), name) != seen.end()) {
      bad_argument("is given twice; the second would replace the first: keep one");
      continue;
    }
    if (!name.empty()) seen.push_back(name);
    if (name == "accum") {
      if (!require_float()) continue;
      std::optional<ScalarType> accum;
      if (arguments.size() == 1) accum = resolve_dtype_name(arguments[0], true);
      if (!accum || !is_float(*accum)) {
        bad_argument("takes one floating-point dtype, as in @accum(f32)");
        continue;
      }
      policy.accum = accum;
    } else if (name == "stochastic_round" && !arguments.empty()) {
      // @stochastic_round(seed): an integer constant, or the name of a
      // kernel scalar parameter (the lowering reads it; docs/numerics.md).
      if (!require_float()) continue;
      if (arguments.size() == 1 && ast_.kind(arguments[0]) == NodeKind::Name &&
          !module_symbols_.count(ast_.node(arguments[0]).payload)) {
        policy.stochastic_round = true;
        policy.seed_name = IdentifierId{ast_.node(arguments[0]).payload};
        continue;
      }
      std::optional<int64_t> seed;
      if (arguments.size() == 1) {
        Value v = check_expression(arguments[0]);
        if (v.constant && !v.constant->is_float) seed = v.constant->integer;
      }
      if (!seed) {
        bad_argument("takes no argument, an integer constant or the name of an integer parameter, as in @stochastic_round(seed)");
        continue;
      }
      policy.stochastic_round = true;
      policy.seed = *seed;
    } else if (name == "stochastic_round" || name == "saturate") {
      if (!require_float()) continue;
      if (!arguments.empty()) {
        bad_argument("takes no arguments");
        continue;
      }
      (name == "saturate" ? policy.saturate : policy.stochastic_round) = true;
    } else if (name == "rounding") {
      if (!require_float()) continue;
      std::optional<RoundingMode> mode;
      if (arguments.size() == 1 && ast_.kind(arguments[0]) == NodeKind::StringLiteral) {
        mode = rounding_mode_by_name(values_.strings[ast_.node(arguments[0]).payload]);
      }
      if (!mode) {
        bad_argument("takes one of \"rne\", \"rz\", \"rd\", \"ru\", \"rna\"");
        continue;
      }
      policy.rounding = *mode;
    } else if (name == "loss_scale") {
      if (!require_float()) continue;
      std::optional<double> scale;
      if (arguments.size() == 1) {
        Value v = check_expression(arguments[0]);
        if (v.constant && v.constant->as_double() > 0) scale = v.constant->as_double();
      }
      if (!scale) {
        bad_argument("takes one positive constant, as in @loss_scale(128.0)");
        continue;
      }
      policy.loss_scale = *scale;
    } else {
      auto symbol =
          ast_.kind(callee) == NodeKind::Name ? module_symbols_.find(ast_.node(callee).payload) : module_symbols_.end();
      if (symbol != module_symbols_.end() && symbol->second.kind == ModuleSymbol::Kind::Class) {
        policy.custom = IdentifierId{ast_.node(callee).payload};
      } else {
        diags_.emit<diag::SemaUnknownPolicy>(where, name.empty() ? source_text(callee) : name);
      }
    }
  }
  return types_.intern_policy(policy);
}

namespace {

bool names_tensor(const Ast& ast, const ValueStores& values, NodeId node) {
  return dotted_path(ast, values, node) == "Tensor";
}

}  // namespace

TypeId Checker::resolve_type(NodeId node) {
  const Node& n = ast_.node(node);
  switch (n.kind) {
    case NodeKind::MutType: {
      TypeId inner = resolve_type(ast_.child(node, 0));
      if (types_.kind(inner) == TypeKind::Tensor) return set_type(node, types_.with_mut(inner, true));
      if (!types_.is_error(inner)) diags_.emit<diag::SemaMutOnNonTensor>(n.range, types_.to_string(inner));
      return set_type(node, inner);
    }
    case NodeKind::PolicyType: {
      auto children = ast_.children(node);
      TypeId base = resolve_type(children[0]);
      const TypeInfo& info = types_.info(base);
      if (info.kind != TypeKind::Scalar && info.kind != TypeKind::Tensor) {
        if (!types_.is_error(base)) diags_.emit<diag::SemaNotAType>(ast_.range(children[0]), source_text(children[0]));
        return set_type(node, types_.error());
      }
      PolicyId policy = resolve_policies(children.subspan(1), info.scalar, info.policy);
      if (info.kind == TypeKind::Scalar) return set_type(node, types_.scalar(info.scalar, policy));
      std::vector<DimId> dims(types_.dims(base).begin(), types_.dims(base).end());
      return set_type(node, types_.tensor(info.scalar, policy, dims, info.space, info.mut, info.seed_style));
    }
    case NodeKind::BinaryOp: {
      // A dtype with policies written as a value, as the right side of an
      // alias (`T = fp8_e4m3 @accum(f32)`): there `@` parsed as a matmul.
      NodeId lhs = ast_.child(node, 0), rhs = ast_.child(node, 1);
      if (static_cast<BinaryOperator>(n.op) != BinaryOperator::MatMul) {
        diags_.emit<diag::SemaNotAType>(n.range, source_text(node));
        return set_type(node, types_.error());
      }
      TypeId base = resolve_type(lhs);
      if (types_.is_error(base)) return set_type(node, base);
      const TypeInfo& info = types_.info(base);
      if (info.kind != TypeKind::Scalar) {
        diags_.emit<diag::SemaNotAType>(ast_.range(lhs), source_text(lhs));
        return set_type(node, types_.error());
      }
      ScalarType scalar = info.scalar;
      PolicyId policy = resolve_policies(std::span<const NodeId>(&rhs, 1), scalar, info.policy, /*bare=*/true);
      return set_type(node, types_.scalar(scalar, policy));
    }
    case NodeKind::NoneLiteral:
      return set_type(node, types_.none());
    case NodeKind::Tuple: {
      std::vector<TypeId> elements;
      for (NodeId child : ast_.children(node)) elements.push_back(resolve_type(child));
      return set_type(node, types_.tuple(elements));
    }
    case NodeKind::Name:
    case NodeKind::Attribute: {
      if (auto alias = alias_type(node)) return set_type(node, *alias);
      if (auto scalar = resolve_dtype_name(node, true)) return set_type(node, types_.scalar(*scalar));
      if (names_tensor(ast_, values_, node)) {
        diags_.emit<diag::SemaTensorWithoutDtype>(n.range);
        return set_type(node, types_.error());
      }
      if (n.kind == NodeKind::Name) {
        auto symbol = module_symbols_.find(n.payload);
        if (symbol != module_symbols_.end() && symbol->second.kind == ModuleSymbol::Kind::Class) {
          // A @precision_policy class used as an element type: its `storage`
          // dtype with the class as custom policy.
          ScalarType storage = ScalarType::F32;
          NodeId body = ast_.child(symbol->second.node, 2);
          for (NodeId statement : ast_.children(body)) {
            if (ast_.kind(statement) != NodeKind::Assign || ast_.children(statement).size() != 2) continue;
            NodeId target = ast_.child(statement, 0);
            if (ast_.kind(target) == NodeKind::Name && name_of(ast_.node(target).payload) == "storage") {
              if (auto s = resolve_dtype_name(ast_.child(statement, 1), false)) storage = *s;
            }
          }
          Policy policy;
          policy.custom = IdentifierId{n.payload};
          return set_type(node, types_.scalar(storage, types_.intern_policy(policy)));
        }
      }
      {
        // Python's number types have no width in Tessera: offer the
        // default one NumPy and JAX would give.
        std::string written = source_text(node);
        auto diagnostic = diags_.emit<diag::SemaNotAType>(n.range, written);
        if (written == "float") diagnostic.fix_it_replace(n.range, "f32");
        if (written == "int") diagnostic.fix_it_replace(n.range, "i32");
      }
      return set_type(node, types_.error());
    }
    case NodeKind::Subscript: {
      NodeId object = ast_.child(node, 0);
      NodeId index = ast_.child(node, 1);
      std::vector<NodeId> arguments;
      if (ast_.kind(index) == NodeKind::Tuple && !(ast_.node(index).flags & 1)) {
        arguments.assign(ast_.children(index).begin(), ast_.children(index).end());
      } else {
        arguments.push_back(index);
      }
      bool seed_style = names_tensor(ast_, values_, object);
      ScalarType element = ScalarType::F32;
      PolicyId policy;
      std::vector<NodeId> dim_nodes = arguments;
      if (seed_style) {
        if (arguments.empty()) {
          diags_.emit<diag::SemaTensorWithoutDtype>(n.range);
          return set_type(node, types_.error());
        }
        NodeId last = arguments.back();
        dim_nodes.pop_back();
        NodeKind last_kind = ast_.kind(last);
        if (last_kind == NodeKind::StringLiteral || last_kind == NodeKind::IntLiteral ||
            last_kind == NodeKind::DynamicDim) {
          diags_.emit<diag::SemaTensorWithoutDtype>(n.range);
          return set_type(node, types_.error());
        }
        TypeId element_type = resolve_type(last);
        if (types_.is_error(element_type)) return set_type(node, types_.error());
        if (types_.kind(element_type) != TypeKind::Scalar) {
          diags_.emit<diag::SemaTensorWithoutDtype>(ast_.range(last));
          return set_type(node, types_.error());
        }
        element = types_.info(element_type).scalar;
        policy = types_.info(element_type).policy;
      } else if (ast_.kind(object) == NodeKind::Subscript) {
        // `fp8[e5m2][n, k]`: a tensor of the format the inner subscript names.
        TypeId element_type = resolve_type(object);
        if (types_.is_error(element_type)) return set_type(node, types_.error());
        if (types_.kind(element_type) != TypeKind::Scalar) {
          diags_.emit<diag::SemaNotAType>(ast_.range(object), source_text(object));
          return set_type(node, types_.error());
        }
        element = types_.info(element_type).scalar;
        policy = types_.info(element_type).policy;
      } else {
        std::string path = dotted_path(ast_, values_, object);
        // fp8[e4m3]: the format as a subscript.
        if ((path == "fp8" || path == "fp6" || path == "fp4") && arguments.size() == 1 &&
            ast_.kind(arguments[0]) == NodeKind::Name) {
          auto format = lookup_dtype(path + "_" + name_of(ast_.node(arguments[0]).payload));
          if (format) return set_type(node, types_.scalar(format->type));
        }
        auto symbol = ast_.kind(object) == NodeKind::Name ? module_symbols_.find(ast_.node(object).payload)
                                                          : module_symbols_.end();
        if (symbol != module_symbols_.end() && symbol->second.kind == ModuleSymbol::Kind::Class) {
          // `Q[m, k]`: a tensor of a @precision_policy class, like `Tensor["m", "k", Q]`.
          TypeId element_type = resolve_type(object);
          element = types_.info(element_type).scalar;
          policy = types_.info(element_type).policy;
        } else if (auto alias = alias_type(object)) {
          // `T[m, k]` with `T = bf16` (or a dtype with policies).
          if (types_.is_error(*alias)) return set_type(node, *alias);
          if (types_.kind(*alias) != TypeKind::Scalar) {
            diags_.emit<diag::SemaNotAType>(ast_.range(object), source_text(node));
            return set_type(node, types_.error());
          }
          element = types_.info(*alias).scalar;
          policy = types_.info(*alias).policy;
        } else {
          auto scalar = resolve_dtype_name(object, true);
          if (!scalar) {
            diags_.emit<diag::SemaNotAType>(ast_.range(object), source_text(object));
            return set_type(node, types_.error());
          }
          element = *scalar;
        }
      }
      std::vector<DimId> dims;
      for (NodeId d : dim_nodes) {
        auto dim = resolve_dim(d);
        if (!dim) {
          diags_.emit<diag::SemaInvalidDimension>(ast_.range(d));
          dim = types_.dynamic_dim();
        }
        dims.push_back(*dim);
      }
      return set_type(node, types_.tensor(element, policy, dims, AddressSpace::Global, false, seed_style));
    }
    default:
      diags_.emit<diag::SemaNotAType>(n.range, source_text(node));
      return set_type(node, types_.error());
  }
}

}  // namespace tessera::sema
