// Sema: calls of user functions and builtins (the signatures of builtins.def).
#include <algorithm>
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
  if (ast_.kind(callee) == NodeKind::Subscript && ast_.kind(ast_.child(callee, 0)) == NodeKind::Name && !in_kernel()) {
    auto symbol = module_symbols_.find(ast_.node(ast_.child(callee, 0)).payload);
    if (symbol != module_symbols_.end() && symbol->second.kind == ModuleSymbol::Kind::Function &&
        !locals_.count(ast_.node(ast_.child(callee, 0)).payload)) {
      check_function(symbol->second.function_index);
      if (out_.functions[symbol->second.function_index].kind == FunctionKind::Kernel)
        return check_kernel_launch(node, callee, symbol->second.function_index, children.subspan(1));
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
      if (callee_info.kind == FunctionKind::Jit && !in_kernel()) return check_jit_call(node, index, children.subspan(1));
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
      diags_.emit<diag::SemaShapeMismatch>(ast_.range(arguments[i]), "call of '" + name_of(callee.name) + "'",
                                           types_.to_string(parameter), types_.to_string(argument));
    }
  }
  return bound;
}

Value Checker::check_builtin_call(NodeId call, BuiltinId builtin) {
  BuiltinCall bc(*this, call, builtin);
  if (bc.info.context == CallContext::Kernel && !in_kernel()) {
    bc.check_all_arguments();
    diags_.emit<diag::SemaKernelOnlyBuiltin>(ast_.range(bc.children[0]), bc.name);
    return Value{types_.error()};
  }
  if (bc.info.context == CallContext::Host && in_kernel()) {
    bc.check_all_arguments();
    diags_.emit<diag::SemaHostOnlyBuiltin>(ast_.range(bc.children[0]), bc.name);
    return Value{types_.error()};
  }
  raise_effect(bc.info.effect, bc.where);
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
    case Signature::SplitArgs:
    case Signature::SplitQkvArgs:
    case Signature::MergeHeadsArgs:
    case Signature::RandomArgs:
    case Signature::DropoutArgs:
    case Signature::FillArgs:
    case Signature::NpyLoadArgs:
    case Signature::NpySaveArgs:
    case Signature::PrintArgs:
    case Signature::Deferred: return check_graph_builtin(bc);
  }
  return Value{types_.error()};
}

}  // namespace tessera::sema
