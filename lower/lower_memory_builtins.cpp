// Lowering of the builtins that allocate and move memory (lower_builtins.cpp).
#include <algorithm>

#include "lower/lowering.h"

namespace tessera::ir {

using sema::BuiltinId;

// Shared and local buffers, loads and stores, vectors, async copies.
Bound Lowering::lower_memory_builtin(NodeId call, BuiltinId builtin) {
  auto arg = [&](size_t i) { return call_argument(call, i); };
  std::optional<Type> result = typed_type(call);
  Type i32 = context_.i32_type();
  switch (builtin) {
    case BuiltinId::TileAllocShared: {
      if (!result || !result->is(TypeKind::MemRef) || !result->has_static_shape())
        unsupported(call, "a shared-memory allocation of a size not known at compile time");  // sema: sema.not-constant
      int64_t padding = 0, alignment = 16;
      Swizzle swizzle = Swizzle::None;
      for (NodeId a : ast_.children(call).subspan(1)) {
        if (ast_.kind(a) != NodeKind::KeywordArgument) continue;
        std::string_view key = values_.identifiers.name(IdentifierId{ast_.node(a).payload});
        NodeId v = ast_.child(a, 0);
        if (key == "padding") padding = constant_of(v).value_or(0);
        if (key == "alignment") alignment = constant_of(v).value_or(16);
        if (key == "swizzle") {
          if (ast_.kind(v) != NodeKind::StringLiteral) unsupported(v, "a swizzle that is not a string literal");
          const std::string& mode = values_.strings[ast_.node(v).payload];
          if (mode == "xor") swizzle = Swizzle::Xor;
          else if (mode != "none") unsupported(v, "the swizzle mode '" + mode + "'");
        }
      }
      Type m = context_.memref_type(result->shape(), result->scalar(), MemorySpace::Shared, padding, swizzle);
      return Bound{emit(OpKind::AllocShared, {}, m, {{"alignment", context_.int_attr(alignment)}}), {}};
    }
    case BuiltinId::TileAllocLocal: {
      // A memref in local memory (sema's local space).
      if (!result || !result->is(TypeKind::MemRef))
        unsupported(call, "a local-memory allocation of a size not known at compile time");  // sema: sema.not-constant
      return Bound{emit(OpKind::AllocLocal, {}, *result), {}};
    }
    case BuiltinId::TileAllocRegister: {
      // A register value: zero until assigned (its initial value is unspecified).
      Type t = result.value_or(context_.f32_type());
      return Bound{float_element(t) ? builder_.constant_float(0.0, t) : builder_.constant_int(0, t), {}};
    }
    case BuiltinId::TileLoad:
    case BuiltinId::TileStore: {
      // One element, like t[i]: the tensor's policy applies.
      require_policy(arg(0), builtin == BuiltinId::TileLoad ? PolicyUse::ElementLoad : PolicyUse::ElementStore);
      Value* memref = memref_of(arg(0), true);
      if (!memref->type().is(TypeKind::MemRef) || memref->type().rank() != 1)
        unsupported(call, "tile.load/tile.store on a tensor that is not one-dimensional");
      std::vector<Value*> operands{memref, to_index(value(arg(1), i32))};
      Type element = context_.scalar_type(memref->type().scalar());
      if (builtin == BuiltinId::TileLoad)
        return Bound{apply_load_policy(builder_.create(OpKind::Load, std::span<Value* const>(operands),
                                                       std::span<const Type>(&element, 1))
                                           ->result(),
                                       arg(0)),
                     {}};
      Value* stored = nullptr;
      if (policy_of(arg(0))) {
        Place place;
        place.memref = memref;
        place.indices = {operands[1]};
        // A typed value keeps its type (an f64 is rejected, not rounded twice).
        Value* v = typed_type(arg(2)) ? value(arg(2)) : value(arg(2), float_element(element) ? context_.f32_type() : element);
        stored = convert_for_store(v, arg(0), place);
      } else {
        stored = value(arg(2), element);
      }
      operands.insert(operands.begin(), stored);
      builder_.create(OpKind::Store, std::span<Value* const>(operands), std::span<const Type>{});
      return {};
    }
    case BuiltinId::TileLoadVector:
    case BuiltinId::TileStoreVector: {
      bool load = builtin == BuiltinId::TileLoadVector;
      NodeId source = arg(0);
      if (ast_.kind(source) != NodeKind::Subscript) unsupported(source, "a vector access that is not a subscript");
      Place place = place_of(source);
      std::vector<Value*> operands{place.memref};
      operands.insert(operands.end(), place.indices.begin(), place.indices.end());
      Type element = context_.scalar_type(place.memref->type().scalar());
      if (load) {
        // The width sema typed the call with (`local T[width]`): `width=` may
        // be any constant sema knows, a local assigned one included (which
        // constant_of does not trust, and which silently became 4).
        int64_t width = arg(1).valid() ? constant_of(arg(1)).value_or(4) : 4;
        if (result && result->is(TypeKind::Tile) && result->rank() == 1 && result->has_static_shape())
          width = result->shape()[0];
        Type vector = context_.vector_type(width, element.scalar());
        return Bound{builder_.create(OpKind::LoadVector, std::span<Value* const>(operands),
                                     std::span<const Type>(&vector, 1))->result(),
                     {}};
      }
      Value* v = value(arg(1));
      if (!v->type().is(TypeKind::Vector)) unsupported(arg(1), "storing a value that is not a vector");
      operands.insert(operands.begin(), v);
      builder_.create(OpKind::StoreVector, std::span<Value* const>(operands), std::span<const Type>{});
      return {};
    }
    case BuiltinId::TileCpAsync: {
      Value* destination = memref_of(arg(0));
      Value* source = memref_of(arg(1));
      Type d = destination->type(), s = source->type();
      if (d.is(TypeKind::MemRef) && s.is(TypeKind::MemRef) && d.rank() == s.rank() && !std::ranges::equal(d.shape(), s.shape()) &&
          s.has_static_shape() && d.has_static_shape()) {
        // A smaller block copies into the start of a larger buffer.
        Place start;
        start.memref = destination;
        for (size_t axis = 0; axis < d.rank(); ++axis) {
          if (s.shape()[axis] > d.shape()[axis]) unsupported(call, "copying a block larger than its destination");
          start.indices.push_back(builder_.constant_index(0));
          start.extents.push_back(s.shape()[axis]);
          start.indexed.push_back(false);
        }
        destination = view_of(start, call);
      }
      Value* token = emit(OpKind::CpAsync, {destination, source}, context_.token_type());
      pending_tokens_.push_back(token);
      return {};
    }
    case BuiltinId::TileCpCommitGroup: {
      Type token = context_.token_type();
      builder_.create(OpKind::CpCommitGroup, std::span<Value* const>(pending_tokens_), std::span<const Type>(&token, 1));
      pending_tokens_.clear();
      return {};
    }
    case BuiltinId::TileCpWaitGroup:
      builder_.create(OpKind::CpWaitGroup, {}, {},
                      {{"pending", context_.int_attr(arg(0).valid() ? constant_of(arg(0)).value_or(0) : 0)}});
      return {};
    default: unsupported(call, "the builtin '" + std::string(sema::builtin_info(builtin).path) + "'");
  }
}

}  // namespace tessera::ir
