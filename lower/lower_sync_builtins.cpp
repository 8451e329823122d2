// Lowering of barriers, atomics, warp operations and mma (lower_builtins.cpp).
#include "ir/core/tile_attr_kinds.h"
#include "lower/lowering.h"

namespace tessera::ir {

using sema::BuiltinId;

// Barriers, atomics, shuffles, warp reductions, tile.mma.
Bound Lowering::lower_sync_builtin(NodeId call, BuiltinId builtin) {
  auto arg = [&](size_t i) { return call_argument(call, i); };
  std::optional<Type> result = typed_type(call);
  Type i32 = context_.i32_type();
  switch (builtin) {
    case BuiltinId::TileBarrier:
      builder_.create(OpKind::Barrier, {}, {});
      return {};
    case BuiltinId::TileAtomicAdd:
    case BuiltinId::TileAtomicMax:
    case BuiltinId::TileAtomicMin:
    case BuiltinId::TileAtomicExch:
    case BuiltinId::TileAtomicAnd:
    case BuiltinId::TileAtomicOr:
    case BuiltinId::TileAtomicXor:
    case BuiltinId::TileAtomicCas: {
      NodeId ref = arg(0);
      if (ast_.kind(ref) != NodeKind::Subscript) unsupported(ref, "an atomic on something other than t[i]");
      Place place = place_of(ref);
      if (place.has_slice) unsupported(ref, "an atomic on a slice");
      Type element = context_.scalar_type(place.memref->type().scalar());
      std::vector<Value*> operands{place.memref};
      operands.insert(operands.end(), place.indices.begin(), place.indices.end());
      if (builtin == BuiltinId::TileAtomicCas) {
        operands.push_back(value(arg(1), element));
        operands.push_back(value(arg(2), element));
        return Bound{builder_.create(OpKind::AtomicCas, std::span<Value* const>(operands),
                                     std::span<const Type>(&element, 1))->result(),
                     {}};
      }
      operands.push_back(value(arg(1), element));
      AtomicKind kind = builtin == BuiltinId::TileAtomicAdd    ? AtomicKind::Add
                        : builtin == BuiltinId::TileAtomicMax  ? AtomicKind::Max
                        : builtin == BuiltinId::TileAtomicMin  ? AtomicKind::Min
                        : builtin == BuiltinId::TileAtomicExch ? AtomicKind::Exch
                        : builtin == BuiltinId::TileAtomicAnd  ? AtomicKind::And
                        : builtin == BuiltinId::TileAtomicOr   ? AtomicKind::Or
                                                               : AtomicKind::Xor;
      return Bound{builder_.create(OpKind::Atomic, std::span<Value* const>(operands), std::span<const Type>(&element, 1),
                                   {{"kind", context_.string_attr(atomic_kind_name(kind))}})->result(),
                   {}};
    }
    case BuiltinId::TileShuffleDown:
    case BuiltinId::TileShuffleXor:
    case BuiltinId::TileShuffleUp:
    case BuiltinId::TileShuffleIdx: {
      Value* v = value(arg(0), result.value_or(Type{}));
      Value* offset = value(arg(1), i32);
      ShuffleMode mode = builtin == BuiltinId::TileShuffleDown ? ShuffleMode::Down
                         : builtin == BuiltinId::TileShuffleXor ? ShuffleMode::Xor
                         : builtin == BuiltinId::TileShuffleUp  ? ShuffleMode::Up
                                                                : ShuffleMode::Idx;
      Attribute mode_name = context_.string_attr(shuffle_mode_name(mode));
      return Bound{emit(OpKind::Shuffle, {v, offset}, v->type(), {{"mode", mode_name}}), {}};
    }
    case BuiltinId::TileWarpReduceSum:
    case BuiltinId::TileWarpReduceMax:
    case BuiltinId::TileWarpReduceMin: {
      Value* v = value(arg(0), result.value_or(Type{}));
      WarpReduceKind kind = builtin == BuiltinId::TileWarpReduceSum   ? WarpReduceKind::Sum
                            : builtin == BuiltinId::TileWarpReduceMax ? WarpReduceKind::Max
                                                                      : WarpReduceKind::Min;
      Attribute kind_name = context_.string_attr(warp_reduce_kind_name(kind));
      return Bound{emit(OpKind::WarpReduce, {v}, v->type(), {{"kind", kind_name}}), {}};
    }
    case BuiltinId::TileMma: {
      // The operands' @accum chose the result type (sema); other policies
      // of theirs are rejected.
      require_policy(arg(0), PolicyUse::AccumOnly);
      require_policy(arg(1), PolicyUse::AccumOnly);
      Value* a = memref_of(arg(0), true);
      Value* b = memref_of(arg(1), true);
      // A helper's parameter given global memory (sema checks kernels).
      for (auto [operand, node] : {std::pair{a, arg(0)}, std::pair{b, arg(1)}})
        if (operand->type().is(TypeKind::MemRef) && operand->type().space() != MemorySpace::Shared)
          unsupported(node, "tile.mma on a tensor that is not in shared memory (copy it there with tile.cp_async)");
      if (!result || !result->is(TypeKind::Tile)) unsupported(call, "an MMA whose result shape is not static");
      return Bound{emit(OpKind::Mma, {a, b}, *result), {}};
    }
    default: unsupported(call, "the builtin '" + std::string(sema::builtin_info(builtin).path) + "'");
  }
}

}  // namespace tessera::ir
