// Lowering of slice assignments and of vector elements.
//
// `t[a:b, c:d] = v` in a kernel (docs/language/kernels.md, "Slice
// assignment"): each lane that executes the statement stores every element
// of the slice, as `t[i, j] = ...` would one by one, in a loop nest: a
// scalar fills the slice; a tensor of the slice's shape (global, shared or
// local memory, a slice of one, a tile.load_vector result) is copied element
// by element. Copying within one tensor (`x[1:9] = x[0:8]`) reads every
// element before it is overwritten, as NumPy does: the loops run backward
// when the destination starts after the source. A register tile
// (`tile.mma`'s result) is stored by its warps together (tile.store_tile).
//
// An element of a vector (`v[i]`) is read through a small local buffer the
// vector is stored into: the IR has no element extraction, and LLVM turns
// the buffer back into registers.
#include "lower/lowering.h"

namespace tessera::ir {

using SemaKind = sema::TypeKind;

namespace {

// The index nodes of a subscript, one per written index.
std::vector<NodeId> index_nodes(const Ast& ast, NodeId subscript) {
  NodeId index = ast.child(subscript, 1);
  if (ast.kind(index) == NodeKind::Tuple && !(ast.node(index).flags & 1))
    return {ast.children(index).begin(), ast.children(index).end()};
  return {index};
}

}  // namespace

std::vector<Value*> Lowering::slice_extents(NodeId subscript, const Place& place) {
  std::vector<NodeId> indices = index_nodes(ast_, subscript);
  std::vector<Value*> extents;
  Type i32 = context_.i32_type();
  for (size_t axis = 0; axis < place.extents.size(); ++axis) {
    if (place.indexed[axis]) continue;
    if (place.extents[axis] != kDynamic) {
      extents.push_back(builder_.constant_index(place.extents[axis]));
      continue;
    }
    // A length known at run time: the slice's end (the axis's size when
    // omitted) minus its start, at least 0.
    NodeId slice = axis < indices.size() ? indices[axis] : NodeId{};
    NodeId upper = slice.valid() ? ast_.child(slice, 1) : NodeId{};
    Value* end = upper.valid() ? to_index(value(upper, i32))
                               : emit(OpKind::Dim, {place.memref}, context_.index_type(),
                                      {{"axis", context_.int_attr(static_cast<int64_t>(axis))}});
    Value* length = emit(OpKind::SubI, {end, place.indices[axis]}, context_.index_type());
    extents.push_back(emit(OpKind::MaxSI, {length, builder_.constant_index(0)}, context_.index_type()));
  }
  return extents;
}

Value* Lowering::vector_buffer(Type vector) {
  std::string key(vector.str());
  if (auto it = vector_buffers_.find(key); it != vector_buffers_.end()) return it->second;
  // One buffer per vector type for the whole function, at its entry (not in
  // a loop): each use stores the vector right before it reads.
  Block* saved_block = builder_.insertion_block();
  Operation* saved_point = builder_.insertion_point();
  builder_.set_insertion_point_to_start(entry_);
  if (!builder_.insertion_point()) builder_.set_insertion_point_to_end(entry_);
  int64_t width = vector.shape()[0];
  int64_t bytes = width * ((sema::scalar_info(vector.scalar()).bits + 7) / 8);
  int64_t alignment = 1;
  while (alignment < bytes && alignment < 64) alignment *= 2;
  Type m = context_.memref_type(std::vector<int64_t>{width}, vector.scalar(), MemorySpace::Local);
  Value* buffer = emit(OpKind::AllocLocal, {}, m, {{"alignment", context_.int_attr(alignment)}});
  if (saved_point)
    builder_.set_insertion_point(saved_point);
  else
    builder_.set_insertion_point_to_end(saved_block);
  vector_buffers_[key] = buffer;
  return buffer;
}

Value* Lowering::spill_vector(Value* vector) {
  Value* buffer = vector_buffer(vector->type());
  builder_.create(OpKind::StoreVector, {vector, buffer, builder_.constant_index(0)}, {});
  return buffer;
}

Value* Lowering::vector_element(Value* vector, Value* index) {
  Value* buffer = spill_vector(vector);
  Type element = context_.scalar_type(vector->type().scalar());
  return emit(OpKind::Load, {buffer, index}, element);
}

bool Lowering::is_list_element(NodeId subscript) const {
  NodeId object = ast_.child(subscript, 0);
  if (ast_.kind(object) != NodeKind::Name) return false;
  auto it = env_.find(ast_.node(object).payload);
  return it != env_.end() && !it->second.is_value();
}

void Lowering::store_slice(NodeId target, NodeId value_node, Value* lowered) {
  Place place = place_of(target, true);
  require_policy(target, PolicyUse::ElementStore);
  std::vector<Value*> extents = slice_extents(target, place);
  std::vector<size_t> axes;
  for (size_t axis = 0; axis < place.indexed.size(); ++axis)
    if (!place.indexed[axis]) axes.push_back(axis);

  // The source: a scalar, a vector (read through its buffer), or memory at
  // a place of its own (a name of a memref is the whole of it).
  Value* scalar = nullptr;
  Place source;
  bool from_memory = false;
  if (lowered) {
    if (lowered->type().is(TypeKind::Vector) || lowered->type().is(TypeKind::MemRef)) {
      source.memref = lowered->type().is(TypeKind::Vector) ? spill_vector(lowered) : lowered;
      for (size_t axis = 0; axis < source.memref->type().rank(); ++axis) {
        source.indices.push_back(builder_.constant_index(0));
        source.indexed.push_back(false);
      }
      from_memory = true;
    } else {
      scalar = lowered;
    }
  } else {
    require_policy(value_node, PolicyUse::Other);
    if (ast_.kind(value_node) == NodeKind::Subscript && !is_list_element(value_node)) {
      source = place_of(value_node, true);
    } else {
      Value* v = value(value_node);
      if (v->type().is(TypeKind::Vector)) {
        source.memref = spill_vector(v);
      } else if (v->type().is(TypeKind::MemRef)) {
        source.memref = v;
      } else {
        scalar = v;
      }
      if (!scalar)
        for (size_t axis = 0; axis < source.memref->type().rank(); ++axis) {
          source.indices.push_back(builder_.constant_index(0));
          source.indexed.push_back(false);
        }
    }
    from_memory = scalar == nullptr;
  }
  std::vector<size_t> source_axes;
  if (from_memory) {
    for (size_t axis = 0; axis < source.indexed.size(); ++axis)
      if (!source.indexed[axis]) source_axes.push_back(axis);
    if (source_axes.size() != axes.size()) unsupported(value_node, "copying a tensor of another rank into this slice");
  }

  // Within one tensor, when the destination starts after the source, copy
  // from the last element back (a lexicographic comparison of the starts).
  Value* backward = nullptr;
  if (from_memory && source.memref == place.memref) {
    Type flag = context_.bool_type();
    Value* after = builder_.constant_bool(false);
    Value* equal = builder_.constant_bool(true);
    for (size_t axis = 0; axis < place.indices.size(); ++axis) {
      Value* a = place.indices[axis];
      Value* b = source.indices[axis];
      Value* greater = emit(OpKind::CmpI, {a, b}, flag, {{"predicate", context_.string_attr("sgt")}});
      after = emit(OpKind::OrI, {after, emit(OpKind::AndI, {equal, greater}, flag)}, flag);
      equal = emit(OpKind::AndI, {equal, emit(OpKind::CmpI, {a, b}, flag, {{"predicate", context_.string_attr("eq")}})},
                   flag);
    }
    backward = after;
  }

  // The loop nest, one scf.for per axis of the slice.
  Value* zero = builder_.constant_index(0);
  Value* one = builder_.constant_index(1);
  std::vector<Value*> offsets;  // per slice axis, the element's offset from the slice's start
  Block* saved = builder_.insertion_block();
  std::vector<Operation*> loops;
  for (size_t k = 0; k < axes.size(); ++k) {
    Operation* loop = builder_.create(OpKind::For, {zero, extents[k], one}, {}, {}, 1);
    loops.push_back(loop);
    Block* body = loop->region(0).add_block();
    Value* iv = body->add_argument(context_.index_type());
    builder_.set_insertion_point_to_end(body);
    if (backward) {
      Value* last = emit(OpKind::SubI, {emit(OpKind::SubI, {extents[k], one}, context_.index_type()), iv},
                         context_.index_type());
      iv = emit(OpKind::Select, {backward, last, iv}, context_.index_type());
    }
    offsets.push_back(iv);
  }
  Value* v = scalar;
  if (from_memory) {
    std::vector<Value*> operands{source.memref};
    for (size_t axis = 0; axis < source.indices.size(); ++axis) {
      auto k = std::find(source_axes.begin(), source_axes.end(), axis);
      operands.push_back(k == source_axes.end() ? source.indices[axis]
                                                : emit(OpKind::AddI, {source.indices[axis], offsets[k - source_axes.begin()]},
                                                       context_.index_type()));
    }
    Type source_element = context_.scalar_type(source.memref->type().scalar());
    v = builder_.create(OpKind::Load, std::span<Value* const>(operands), std::span<const Type>(&source_element, 1))
            ->result();
  }
  // The element's place in the destination; it is stored as `t[i] = v` is
  // (the tensor's numeric policy, a @precision_policy class's quantize).
  Place at;
  at.memref = place.memref;
  for (size_t axis = 0; axis < place.indices.size(); ++axis) {
    auto k = std::find(axes.begin(), axes.end(), axis);
    at.indices.push_back(k == axes.end() ? place.indices[axis]
                                         : emit(OpKind::AddI, {place.indices[axis], offsets[k - axes.begin()]},
                                                context_.index_type()));
    at.extents.push_back(1);
    at.indexed.push_back(true);
  }
  const sema::PolicyClass* custom = element_policy_class(target);
  std::vector<Value*> operands{custom ? quantize_element(v, target, *custom) : convert_for_store(v, target, at), at.memref};
  operands.insert(operands.end(), at.indices.begin(), at.indices.end());
  builder_.create(OpKind::Store, std::span<Value* const>(operands), std::span<const Type>{});
  for (size_t k = loops.size(); k-- > 0;) {
    builder_.create(OpKind::Yield, {}, {});
    builder_.set_insertion_point_to_end(k == 0 ? saved : &loops[k - 1]->region(0).front());
  }
  builder_.set_insertion_point_to_end(saved);
}

}  // namespace tessera::ir
