// Lowering of builtin calls: ids, math and casts (lower_builtins.cpp), memory
// (lower_memory_builtins.cpp), synchronisation, atomics, warps and mma
// (lower_sync_builtins.cpp), one function per family as sema has them.
#include "lower/lowering.h"

namespace tessera::ir {

using sema::BuiltinId;

// The arguments sema bound to the builtin's parameters, by position
// (TypedModule::call_arguments); invalid when absent.
NodeId Lowering::call_argument(NodeId call, size_t i) const {
  auto found = typed_.call_arguments.find(call.index);
  if (found == typed_.call_arguments.end() || i >= found->second.size()) return NodeId{};
  return found->second[i];
}

// One lowering per family of builtins, as sema checks them (builtin_call.h).
Bound Lowering::lower_builtin_call(NodeId call, BuiltinId builtin) {
  switch (sema::builtin_info(builtin).signature) {
    case sema::Signature::LaneIndex:
    case sema::Signature::WarpIndex:
    case sema::Signature::LaneIndexAxis:
    case sema::Signature::GroupIndexAxis:
    case sema::Signature::UnaryFloat:
    case sema::Signature::UnaryNumeric:
    case sema::Signature::MinMax:
    case sema::Signature::BinaryNumeric:
    case sema::Signature::CastArgs: return lower_math_builtin(call, builtin);
    case sema::Signature::AllocShared:
    case sema::Signature::AllocLocal:
    case sema::Signature::AllocRegister:
    case sema::Signature::LoadArgs:
    case sema::Signature::StoreArgs:
    case sema::Signature::LoadVectorArgs:
    case sema::Signature::StoreVectorArgs:
    case sema::Signature::CpAsyncArgs:
    case sema::Signature::NoArgs:
    case sema::Signature::WaitGroupArgs: return lower_memory_builtin(call, builtin);
    case sema::Signature::Barrier:
    case sema::Signature::AtomicArgs:
    case sema::Signature::AtomicCasArgs:
    case sema::Signature::ShuffleArgs:
    case sema::Signature::ShuffleIdxArgs:
    case sema::Signature::WarpReduceArgs:
    case sema::Signature::MmaArgs: return lower_sync_builtin(call, builtin);
    case sema::Signature::RangeArgs:
    case sema::Signature::TileRangeArgs: unsupported(call, "range() outside a 'for' loop");
    case sema::Signature::Activation:
    case sema::Signature::Reduction:
    case sema::Signature::MatmulArgs:
    case sema::Signature::SoftmaxArgs:
    case sema::Signature::NormArgs:
    case sema::Signature::AttentionArgs:
    case sema::Signature::MseArgs:
    case sema::Signature::WhereArgs:
    case sema::Signature::ReshapeArgs:
    case sema::Signature::TransposeArgs:
    case sema::Signature::ConcatArgs:
    case sema::Signature::StackArgs:
    case sema::Signature::FlattenArgs:
    case sema::Signature::ClipArgs:
    case sema::Signature::TensorMapArgs:
    case sema::Signature::SortArgs:
    case sema::Signature::ArgReduceArgs:
    case sema::Signature::VarianceArgs:
    case sema::Signature::SplitArgs:
    case sema::Signature::SplitQkvArgs:
    case sema::Signature::MergeHeadsArgs:
    case sema::Signature::RandomArgs:
    case sema::Signature::DropoutArgs:
    case sema::Signature::FillArgs:
    case sema::Signature::ArangeArgs:
    case sema::Signature::LinspaceArgs:
    case sema::Signature::ArrayArgs:
    case sema::Signature::CumulativeArgs:
    case sema::Signature::NpyLoadArgs:
    case sema::Signature::NpySaveArgs:
    case sema::Signature::PrintArgs:
    case sema::Signature::TransformArgs:
    case sema::Signature::ScheduleArgs:
    case sema::Signature::Deferred: break;  // graph level: sema rejects them in kernels
  }
  unsupported(call, "the builtin '" + std::string(sema::builtin_info(builtin).path) + "'");
}

// Ids of lanes and groups, math functions and casts.
Bound Lowering::lower_math_builtin(NodeId call, BuiltinId builtin) {
  auto arg = [&](size_t i) { return call_argument(call, i); };
  std::optional<Type> result = typed_type(call);
  Type i32 = context_.i32_type();
  Type index = context_.index_type();
  auto axis_op = [&](OpKind kind, int64_t axis) {
    return emit(kind, {}, index, {{"axis", context_.int_attr(axis)}});
  };
  auto id_op = [&](OpKind kind, bool has_axis) {
    if (!has_axis) return Bound{convert(emit(kind, {}, index), i32), {}};
    if (arg(0).valid()) return Bound{convert(axis_op(kind, constant_of(arg(0)).value_or(0)), i32), {}};
    // Without an axis the ids are flattened (axis 0 fastest) and the sizes
    // are products over the axes. A kernel's group shape is known, so a 1-D
    // group needs axis 0 only; grids may have up to 3 axes at any launch.
    bool group_axes = kind == OpKind::LocalId || kind == OpKind::GroupSize;
    int64_t axes = group_axes && function_ && !function_->group_shape.empty()
                       ? static_cast<int64_t>(function_->group_shape.size())
                       : 3;
    bool is_size = kind == OpKind::GroupSize || kind == OpKind::NumGroups;
    OpKind size_kind = group_axes ? OpKind::GroupSize : OpKind::NumGroups;
    Value* total = axis_op(kind, axes - 1);
    for (int64_t axis = axes - 2; axis >= 0; --axis) {
      Value* here = axis_op(kind, axis);
      total = is_size ? emit(OpKind::MulI, {total, here}, index)
                      : emit(OpKind::AddI, {here, emit(OpKind::MulI, {axis_op(size_kind, axis), total}, index)}, index);
    }
    return Bound{convert(total, i32), {}};
  };
  auto math = [&](OpKind kind) {
    Type t = result.value_or(context_.f32_type());
    return Bound{emit(kind, {value(arg(0), t)}, t), {}};
  };
  switch (builtin) {
    case BuiltinId::TileLinearId: return id_op(OpKind::LinearId, false);
    case BuiltinId::TileLaneId: return id_op(OpKind::LaneId, false);
    case BuiltinId::TileWarpId: return id_op(OpKind::WarpId, false);
    case BuiltinId::TileLocalId: return id_op(OpKind::LocalId, true);
    case BuiltinId::TileGroupId: return id_op(OpKind::GroupId, true);
    case BuiltinId::TileGroupSize: return id_op(OpKind::GroupSize, true);
    case BuiltinId::TileNumGroups: return id_op(OpKind::NumGroups, true);
    case BuiltinId::Exp: return math(OpKind::Exp);
    case BuiltinId::Log: return math(OpKind::Log);
    case BuiltinId::Sqrt: return math(OpKind::Sqrt);
    case BuiltinId::Rsqrt: return math(OpKind::Rsqrt);
    case BuiltinId::Tanh: return math(OpKind::Tanh);
    case BuiltinId::Sin: return math(OpKind::Sin);
    case BuiltinId::Cos: return math(OpKind::Cos);
    case BuiltinId::Floor: return math(OpKind::Floor);
    case BuiltinId::Ceil: return math(OpKind::Ceil);
    case BuiltinId::Round: return math(OpKind::Round);
    case BuiltinId::Abs: {
      Type t = result.value_or(i32);
      return Bound{emit(float_element(t) ? OpKind::AbsF : OpKind::AbsI, {value(arg(0), t)}, t), {}};
    }
    case BuiltinId::Min:
    case BuiltinId::Max:
    case BuiltinId::Minimum:
    case BuiltinId::Maximum: {
      Type t = result.value_or(common_type(arg(0), arg(1)));
      bool is_min = builtin == BuiltinId::Min || builtin == BuiltinId::Minimum;
      OpKind kind = float_element(t) ? (is_min ? OpKind::MinF : OpKind::MaxF)
                    : is_unsigned(t) ? (is_min ? OpKind::MinUI : OpKind::MaxUI)
                                     : (is_min ? OpKind::MinSI : OpKind::MaxSI);
      // Python's min(a, b, c, ...) of numbers: folded left.
      Value* folded = emit(kind, {value(arg(0), t), value(arg(1), t)}, t);
      for (size_t i = 2; arg(i).valid(); ++i) folded = emit(kind, {folded, value(arg(i), t)}, t);
      return Bound{folded, {}};
    }
    case BuiltinId::Pow: {
      Type t = result.value_or(context_.f32_type());
      return Bound{emit(OpKind::PowF, {value(arg(0), t), value(arg(1), t)}, t), {}};
    }
    case BuiltinId::Cast: {
      // A register vector (tile.load_vector's) widens element by element, as
      // vector arithmetic promotes its operands.
      if (result && !result->is_scalar()) {
        // A register vector (tile.load_vector's) widens element by element,
        // exactly, as vector arithmetic promotes its operands; narrowing
        // would need the dtype's rounding policy per element.
        Value* v = value(arg(0));
        if (!v->type().is(TypeKind::Vector)) unsupported(call, "casting a tensor");
        ScalarType from = v->type().scalar(), to = result->scalar();
        if (from == to) return Bound{v, {}};
        bool widening = to == ScalarType::F32 && (from == ScalarType::F16 || from == ScalarType::BF16 ||
                                                   (!is_float(from) && from != ScalarType::Bool));
        if (!widening)
          unsupported(call, "casting a vector of " + std::string(scalar_info(from).name) + " to " +
                                std::string(scalar_info(to).name) +
                                " (a vector widens to f32: f16, bf16 or an integer type; cast its elements one by one)");
        return Bound{convert_vector(v, context_.vector_type(v->type().shape()[0], to), call), {}};
      }
      if (!result) unsupported(call, "casting a tensor");
      Value* x = value(arg(0));
      if (x->type().is_index()) x = convert(x, context_.i64_type());
      std::optional<sema::Policy> policy = dtype_policy(arg(1));
      if (!policy || !float_element(*result)) return Bound{convert(x, *result), {}};
      // A policy on the dtype rounds as a store into such a tensor does
      // (docs/numerics.md, "Policies").
      if (policy->stochastic_round)
        unsupported(call, "@stochastic_round in a cast of a scalar (its random bits are numbered by a tensor element's index)");
      check_rounding_source(x->type().scalar(), result->scalar(), *policy, call, "casting",
                            dtype_text(arg(1)));
      if (!rounding_conversion_takes(x->type())) x = convert(x, context_.f32_type());
      return Bound{emit_rounding_conversion(builder_, x, *result, rounding_policy(*policy), nullptr), {}};
    }
    default: unsupported(call, "the builtin '" + std::string(sema::builtin_info(builtin).path) + "'");
  }
}

}  // namespace tessera::ir
