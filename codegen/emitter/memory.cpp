// Memory (emitter.h): element addresses (swizzle, packed fp6/fp4), bounds
// checks, loads and stores, vectors, shared and local buffers, views and
// async copies.
#include <bit>

#include "codegen/emitter/emitter.h"

namespace tessera::codegen::emitter {

// The address of an element. For the packed types (fp6, fp4: element i in
// bits [w*i, w*i + w) of the buffer, docs/abi.md) it is the byte holding the
// element's first bit, and *bit receives the bit offset in it (i32, < 8);
// operations that cannot handle packed elements pass no `bit`.
llvm::Value* Emitter::element_address(MemRef& m, llvm::ArrayRef<llvm::Value*> indices, Type elem, Operation* op,
                                      llvm::Value** bit, int64_t span) {
  size_t rank = m.sizes.size();
  std::vector<llvm::Value*> position;
  for (size_t d = 0; d < rank; ++d) position.push_back(builder_.CreateAdd(m.origin[d], indices[d]));
  if (m.root.swizzle() == ir::Swizzle::Xor && rank >= 2) {
    // 16-byte chunks of a row are permuted: chunk ^= (row >> s) % min(8,
    // chunks per row), s = 3 - log2(chunks) for rows shorter than 128
    // bytes, else 0: for rows of 32, 64 and 128 bytes the tensor cores'
    // 32/64/128-byte swizzle (the byte offset's bits 4..6 xor bits 7..9),
    // so wgmma reads these buffers as they are (docs/codegen.md). The same
    // mapping on every target.
    int64_t bytes = std::max<int64_t>(1, scalar_info(elem.scalar()).bits / 8);
    int64_t per_chunk = std::max<int64_t>(1, 16 / bytes);
    int64_t columns = m.root.shape()[m.root.rank() - 1];  // a view may have dropped leading dimensions
    int64_t chunks = columns / per_chunk;
    if (chunks >= 2 && (chunks & (chunks - 1)) == 0 && columns % per_chunk == 0) {
      int64_t mask = std::min<int64_t>(8, chunks) - 1;
      int64_t shift = chunks >= 8 ? 0 : 3 - std::countr_zero(static_cast<uint64_t>(chunks));
      llvm::Value* row = position[rank - 2];
      if (shift != 0) row = builder_.CreateLShr(row, builder_.getInt64(shift));
      llvm::Value* col = position[rank - 1];
      llvm::Value* chunk = builder_.CreateUDiv(col, builder_.getInt64(per_chunk));
      llvm::Value* within = builder_.CreateURem(col, builder_.getInt64(per_chunk));
      llvm::Value* swizzled = builder_.CreateXor(chunk, builder_.CreateAnd(row, builder_.getInt64(mask)));
      position[rank - 1] = builder_.CreateAdd(builder_.CreateMul(swizzled, builder_.getInt64(per_chunk)), within);
    }
  }
  llvm::Value* linear = builder_.getInt64(0);
  for (size_t d = 0; d < rank; ++d) linear = builder_.CreateAdd(linear, builder_.CreateMul(position[d], m.strides[d]));
  llvm::Value* address;
  if (unsigned w = packed_element_bits(elem.scalar())) {
    if (!bit) unsupported(op, "'" + std::string(op->name()) + "' on packed " + std::string(scalar_info(elem.scalar()).name) + " elements");
    llvm::Value* first_bit = builder_.CreateMul(linear, builder_.getInt64(w));
    address = builder_.CreateInBoundsGEP(builder_.getInt8Ty(), m.base, builder_.CreateAShr(first_bit, 3));
    *bit = builder_.CreateTrunc(builder_.CreateAnd(first_bit, builder_.getInt64(7)), builder_.getInt32Ty());
  } else {
    address = builder_.CreateInBoundsGEP(element_type(elem, op), m.base, linear);
  }
  if (bounds_check_) address = check_bounds(m, indices, address, op, span);
  return address;
}

// --bounds-check: every index must lie in its view (0 <= i < size; one
// unsigned compare), and a vector's `span` elements along the last
// dimension too. Out of bounds, the GPU fails the launch through CUDA's
// assert (the driver prints file, line, block and thread); the CPU reports
// the indices and the shape with the .tsr location and goes on with a
// harmless address, and the launch fails with that message. A view is
// checked against the view it was sliced from when it is made
// (check_slice), so an index within a view is within its tensor.
llvm::Value* Emitter::check_bounds(MemRef& m, llvm::ArrayRef<llvm::Value*> indices, llvm::Value* address, Operation* op,
                                   int64_t span) {
  llvm::Value* inside = builder_.getTrue();
  for (size_t d = 0; d < indices.size(); ++d) {
    llvm::Value* size = m.sizes[d];
    if (span > 1 && d + 1 == indices.size()) {
      // i + span <= size: span <= size and i <= size - span (unsigned).
      llvm::Value* room = builder_.CreateICmpULE(builder_.getInt64(span), size);
      inside = builder_.CreateAnd(inside, room);
      size = builder_.CreateSub(size, builder_.getInt64(span - 1));
    }
    inside = builder_.CreateAnd(inside, builder_.CreateICmpULT(indices[d], size));
  }
  return report_if_outside(
      inside, OutOfBounds{op, m, indices, address, source_location(op), nullptr, nullptr, nullptr, span, {}});
}

std::string Emitter::source_location(Operation* op) {
  ir::Location loc = op->loc().primary();
  return loc.known() ? std::string(loc.file()) + ":" + std::to_string(loc.line()) + ":" + std::to_string(loc.column())
                     : std::string("<unknown location>");
}

// Branches on `inside` to the target's report (report_out_of_bounds) and
// returns what it gives; `failure`'s blocks are filled in here. Nothing is
// emitted when `inside` is known to be true.
llvm::Value* Emitter::report_if_outside(llvm::Value* inside, OutOfBounds failure) {
  if (auto* known = llvm::dyn_cast<llvm::ConstantInt>(inside); known && known->isOne()) return failure.address;
  failure.fail = llvm::BasicBlock::Create(context_, "out_of_bounds", current_function_);
  failure.next = llvm::BasicBlock::Create(context_, "in_bounds", current_function_);
  failure.before = builder_.GetInsertBlock();
  builder_.CreateCondBr(inside, failure.next, failure.fail);
  builder_.SetInsertPoint(failure.fail);
  return target_->report_out_of_bounds(failure);
}

// --bounds-check: a slice (tile.subview) of `sizes` at `offsets` must lie
// in its source view: size <= extent and offset <= extent - size, per
// dimension (unsigned). Element checks only compare with the view's own
// sizes, so without this a slice past the end of its tensor (a
// tile.cp_async source, a tile.mma operand, a store_tile destination)
// would reach memory it does not own. On the CPU, a view out of bounds
// maps every element to the target's harmless address (base there, origin
// and strides 0) after the report, so no access through it touches memory.
void Emitter::check_slice(Operation* op, MemRef& source, llvm::ArrayRef<llvm::Value*> offsets,
                          llvm::ArrayRef<int64_t> sizes, MemRef& view) {
  llvm::Value* inside = builder_.getTrue();
  for (size_t d = 0; d < sizes.size(); ++d) {
    llvm::Value* size = builder_.getInt64(sizes[d]);
    inside = builder_.CreateAnd(inside, builder_.CreateICmpULE(size, source.sizes[d]));
    inside = builder_.CreateAnd(inside, builder_.CreateICmpULE(offsets[d], builder_.CreateSub(source.sizes[d], size)));
  }
  llvm::Value* harmless = report_if_outside(
      inside, OutOfBounds{op, source, offsets, nullptr, source_location(op), nullptr, nullptr, nullptr, 1, sizes});
  if (!harmless) return;
  view.base = builder_.CreateSelect(inside, view.base, harmless);
  llvm::Value* zero = builder_.getInt64(0);
  for (llvm::Value*& o : view.origin)
    if (!llvm::isa<llvm::ConstantInt>(o) || !llvm::cast<llvm::ConstantInt>(o)->isZero())
      o = builder_.CreateSelect(inside, o, zero);  // a zero stays a constant (wgmma_operand asks)
  for (llvm::Value*& s : view.strides) s = builder_.CreateSelect(inside, s, zero);
}

llvm::Value* Emitter::address_of(Operation* op, unsigned memref_operand, unsigned first_index, llvm::Value** bit,
                                 int64_t span) {
  MemRef& m = memref(op->operand(memref_operand));
  std::vector<llvm::Value*> indices;
  for (unsigned i = 0; i < m.sizes.size(); ++i) indices.push_back(get(op->operand(first_index + i)));
  return element_address(m, indices, op->operand(memref_operand)->type(), op, bit, span);
}

// `bit`: the bit offset of a packed element in the byte at `address`
// (element_address), null for every other type.
llvm::Value* Emitter::load_element(llvm::Value* address, Type elem, Operation* op, llvm::Value* bit) {
  if (unsigned w = packed_element_bits(elem.scalar())) return load_packed(address, bit, w);
  llvm::Value* v = builder_.CreateLoad(element_type(elem, op), address);
  return elem.scalar() == ScalarType::Bool ? builder_.CreateTrunc(v, builder_.getInt1Ty()) : v;
}

void Emitter::store_element(llvm::Value* v, llvm::Value* address, Type elem, llvm::Value* bit) {
  if (unsigned w = packed_element_bits(elem.scalar())) return store_packed(v, address, bit, w);
  if (elem.scalar() == ScalarType::Bool) v = builder_.CreateZExt(v, builder_.getInt8Ty());
  builder_.CreateStore(v, address);
}

// A packed element of w bits (4 or 6) starting at bit `bit` (< 8) of the
// byte at `address`, as numerics::packed_get: it may continue in the next
// byte (fp6, bit > 2), which is read only then. Without a branch: the
// second load reads the next byte or, when the element does not straddle,
// the first byte again, so no byte past the element's last is touched.
llvm::Value* Emitter::load_packed(llvm::Value* address, llvm::Value* bit, unsigned w) {
  llvm::Type* i32 = builder_.getInt32Ty();
  llvm::Value* low = builder_.CreateZExt(builder_.CreateLoad(builder_.getInt8Ty(), address), i32);
  llvm::Value* v = builder_.CreateLShr(low, bit);
  if (w > 4) {
    llvm::Value* straddles = builder_.CreateICmpUGT(bit, builder_.getInt32(8 - w));
    llvm::Value* next = builder_.CreateGEP(builder_.getInt8Ty(), address, builder_.CreateZExt(straddles, builder_.getInt64Ty()));
    llvm::Value* high = builder_.CreateZExt(builder_.CreateLoad(builder_.getInt8Ty(), next), i32);
    v = builder_.CreateOr(v, builder_.CreateSelect(straddles, builder_.CreateShl(high, builder_.CreateSub(builder_.getInt32(8), bit)),
                                                   builder_.getInt32(0)));
  }
  return builder_.CreateTrunc(builder_.CreateAnd(v, builder_.getInt32((1u << w) - 1)), builder_.getInt8Ty());
}

// Stores the low w bits of `code` as the packed element at (address, bit),
// leaving every other bit alone (numerics::packed_set). Lanes of a group
// and of other groups may write other elements of the same byte at the
// same time, so each byte is updated by two atomic operations, an `and`
// clearing the element's bits and an `or` setting them: relaxed
// `atomicrmw and/or` on the byte on the CPU, and on the GPU (PTX has no
// 8-bit atomics) `atom.and.b32`/`atom.or.b32` on the aligned 32-bit word
// holding the byte. A fp6 element straddling two bytes updates both (the
// second under a branch). Two lanes writing the same element race, as
// plain stores do.
void Emitter::store_packed(llvm::Value* code, llvm::Value* address, llvm::Value* bit, unsigned w) {
  llvm::Type* i32 = builder_.getInt32Ty();
  llvm::Value* mask = builder_.getInt32((1u << w) - 1);
  llvm::Value* value = builder_.CreateAnd(builder_.CreateZExt(code, i32), mask);
  update_byte(address, builder_.CreateShl(mask, bit), builder_.CreateShl(value, bit));
  if (w <= 4) return;
  auto* straddle = llvm::BasicBlock::Create(context_, "packed.straddle", current_function_);
  auto* done = llvm::BasicBlock::Create(context_, "packed.done", current_function_);
  builder_.CreateCondBr(builder_.CreateICmpUGT(bit, builder_.getInt32(8 - w)), straddle, done);
  builder_.SetInsertPoint(straddle);
  llvm::Value* rest = builder_.CreateSub(builder_.getInt32(8), bit);
  update_byte(builder_.CreateConstGEP1_64(builder_.getInt8Ty(), address, 1), builder_.CreateLShr(mask, rest),
              builder_.CreateLShr(value, rest));
  builder_.CreateBr(done);
  builder_.SetInsertPoint(done);
}

// byte = (byte & ~clear) | set, for the low 8 bits of the i32s `clear` and
// `set` (set within clear), atomically as seen by other elements' bits.
void Emitter::update_byte(llvm::Value* address, llvm::Value* clear, llvm::Value* set) {
  clear = builder_.CreateAnd(clear, builder_.getInt32(0xFF));
  set = builder_.CreateAnd(set, builder_.getInt32(0xFF));
  target_->update_byte_atomically(address, clear, set);
}

// A buffer of static shape `m` allocated by the kernel (shared or local):
// origin 0, its sizes, row-major strides whose innermost row is `pitch`
// elements long (the shape's last extent, or more with padding).
void Emitter::describe_static_buffer(MemRef& desc, Type m, int64_t pitch) {
  desc.root = m;
  std::vector<int64_t> strides(m.rank());
  int64_t stride = 1;
  for (size_t d = m.rank(); d-- > 0;) {
    strides[d] = stride;
    stride *= d + 1 == m.rank() ? pitch : m.shape()[d];
  }
  for (size_t d = 0; d < m.rank(); ++d) {
    desc.origin.push_back(builder_.getInt64(0));
    desc.sizes.push_back(builder_.getInt64(m.shape()[d]));
    desc.strides.push_back(builder_.getInt64(strides[d]));
  }
}

void Emitter::emit_dim(Operation* op) {
  set(op->result(), memref(op->operand(0)).sizes.at(static_cast<size_t>(op->int_attr("axis"))));
}

void Emitter::emit_alloc_shared(Operation* op) {
  Type m = op->result()->type();
  int64_t rows = 1;
  for (size_t d = 0; d + 1 < m.rank(); ++d) rows *= m.shape()[d];
  int64_t pitch = m.shape()[m.rank() - 1] + m.padding();
  auto elements = static_cast<uint64_t>(rows * pitch);
  unsigned packed = packed_element_bits(m.scalar());
  auto* array = packed ? llvm::ArrayType::get(builder_.getInt8Ty(), numerics::packed_bytes(elements, packed))
                       : llvm::ArrayType::get(element_type(m, op), elements);
  auto desc = std::make_shared<MemRef>();
  desc->base = target_->allocate_shared(op, m, array);
  describe_static_buffer(*desc, m, pitch);
  values_[op->result()] = Lowered{nullptr, desc};
}

void Emitter::emit_alloc_local(Operation* op) {
  // A private array of each lane: an alloca in the entry block (so that
  // an allocation inside a loop does not grow the stack), in the local
  // address space on NVPTX (ld/st.local), on the stack on the host.
  Type m = op->result()->type();
  int64_t count = 1;
  for (int64_t extent : m.shape()) count *= extent;
  auto* array = llvm::ArrayType::get(element_type(m, op), static_cast<uint64_t>(count));
  llvm::IRBuilder<> entry(&current_function_->getEntryBlock(), current_function_->getEntryBlock().begin());
  unsigned alloca_space = module_->getDataLayout().getAllocaAddrSpace();
  llvm::AllocaInst* slot = entry.CreateAlloca(array, alloca_space, nullptr, "local");
  slot->setAlignment(llvm::Align(target_->local_alignment(static_cast<uint64_t>(op->int_attr("alignment", 16)))));
  llvm::Value* base = slot;
  unsigned local_space = target_->address_space(ir::MemorySpace::Local);
  if (alloca_space != local_space) base = entry.CreateAddrSpaceCast(slot, builder_.getPtrTy(local_space));
  auto desc = std::make_shared<MemRef>();
  desc->base = base;
  describe_static_buffer(*desc, m, m.rank() ? m.shape().back() : 1);
  values_[op->result()] = Lowered{nullptr, desc};
}

void Emitter::emit_subview(Operation* op) {
  MemRef& source = memref(op->operand(0));
  auto view = std::make_shared<MemRef>(source);
  std::vector<int64_t> sizes = op->attr("sizes").int_array();
  std::vector<llvm::Value*> offsets;
  for (size_t d = 0; d < sizes.size(); ++d) {
    offsets.push_back(get(op->operand(static_cast<unsigned>(d + 1))));
    view->origin[d] = builder_.CreateAdd(source.origin[d], offsets.back());
    view->sizes[d] = builder_.getInt64(sizes[d]);
  }
  if (ir::Attribute drop = op->attr("drop")) {
    // A rank-reducing view: each dropped dimension's offset moves into
    // the base pointer. A swizzle needs the row and column of the root,
    // so only leading dimensions of a swizzled buffer may be dropped.
    std::vector<int64_t> dropped = drop.int_array();
    llvm::Value* offset = builder_.getInt64(0);
    for (int64_t d : dropped) {
      if (source.root.swizzle() == ir::Swizzle::Xor && d + 2 >= static_cast<int64_t>(sizes.size()))
        unsupported(op, "indexing a row or column of a swizzled shared buffer by an integer in a slice");
      offset = builder_.CreateAdd(offset, builder_.CreateMul(view->origin[static_cast<size_t>(d)],
                                                             view->strides[static_cast<size_t>(d)]));
    }
    view->base = builder_.CreateInBoundsGEP(element_type(op->result()->type(), op), view->base, offset);
    for (size_t i = dropped.size(); i-- > 0;) {
      auto at = static_cast<std::ptrdiff_t>(dropped[i]);
      view->origin.erase(view->origin.begin() + at);
      view->sizes.erase(view->sizes.begin() + at);
      view->strides.erase(view->strides.begin() + at);
    }
  }
  // After the view is made, so that the CPU's replacement of a view out of
  // bounds also covers the dropped dimensions' offsets folded into the base.
  if (bounds_check_) check_slice(op, source, offsets, sizes, *view);
  values_[op->result()] = Lowered{nullptr, view};
}

void Emitter::emit_load(Operation* op) {
  llvm::Value* bit = nullptr;
  llvm::Value* address = address_of(op, 0, 1, &bit);
  set(op->result(), load_element(address, op->operand(0)->type(), op, bit));
}

void Emitter::emit_store(Operation* op) {
  llvm::Value* bit = nullptr;
  llvm::Value* address = address_of(op, 1, 2, &bit);
  store_element(get(op->operand(0)), address, op->operand(1)->type(), bit);
}

// A vector access reads or writes `span` consecutive elements of the last
// axis. They are adjacent in memory only when that axis's stride is 1: true
// of shared and local buffers and of contiguous variants (a constant 1), and
// of most views at run time. Otherwise (a transposed view, a step slice) the
// elements are `stride` apart. And where the target's vector access needs
// more than its element's alignment (the GPU: ld.v4.f32 needs 16 bytes, and
// a misaligned one faults), the address in a tensor must be aligned:
// `x[6:10]` of a float tensor is not. So the access takes the whole vector
// at once only where both hold, tested when it runs unless LLVM proves them
// (a constant stride 1; an address whose known bits show the alignment),
// and otherwise goes element by element: every target computes the same
// for every view of a tensor. Shared and local buffers are the program's
// own, laid out by it: their vector accesses must be aligned, as the
// language says (docs/language/kernels.md, "Vectors"), and are not tested
// (a test would keep a local array from living in registers).
llvm::Value* Emitter::strided_last_axis(Operation* op, unsigned memref_operand) {
  MemRef& m = memref(op->operand(memref_operand));
  if (m.strides.empty()) return nullptr;
  llvm::Value* stride = m.strides.back();
  if (auto* c = llvm::dyn_cast<llvm::ConstantInt>(stride); c && c->isOne()) return nullptr;
  return stride;
}

// Whether `address` is a multiple of `alignment` (a power of two) bytes.
static llvm::Value* address_is_aligned(llvm::IRBuilder<>& builder, llvm::Value* address, uint64_t alignment) {
  llvm::Value* low = builder.CreateAnd(builder.CreatePtrToInt(address, builder.getInt64Ty()), alignment - 1);
  return builder.CreateICmpEQ(low, builder.getInt64(0));
}

// The condition for one whole-vector access of `vector` at `address` in
// `space` whose last axis has run-time stride `stride` (nullptr: the
// constant 1); nullptr when it always holds.
llvm::Value* Emitter::whole_vector_condition(ir::MemorySpace space, llvm::Value* address, llvm::Value* stride,
                                             llvm::Type* vector) {
  llvm::Value* condition = stride ? builder_.CreateICmpEQ(stride, builder_.getInt64(1)) : nullptr;
  uint64_t alignment = target_->vector_alignment(vector).value();
  uint64_t element_alignment = module_->getDataLayout().getABITypeAlign(vector->getScalarType()).value();
  bool program_buffer = space == ir::MemorySpace::Shared || space == ir::MemorySpace::Local;
  if (alignment > element_alignment && !program_buffer) {
    llvm::Value* aligned = address_is_aligned(builder_, address, alignment);
    condition = condition ? builder_.CreateAnd(condition, aligned) : aligned;
  }
  if (auto* c = llvm::dyn_cast_or_null<llvm::ConstantInt>(condition); c && c->isOne()) return nullptr;
  return condition;
}

// Emits `whole` where `condition` holds at run time and `elements` where it
// does not, both then joining; returns the blocks each ended in (for a phi).
std::pair<llvm::BasicBlock*, llvm::BasicBlock*> Emitter::branch_on_whole_vector(
    llvm::Value* condition, const std::function<void()>& whole, const std::function<void()>& elements) {
  auto* whole_block = llvm::BasicBlock::Create(context_, "vector.whole", current_function_);
  auto* elements_block = llvm::BasicBlock::Create(context_, "vector.elements", current_function_);
  auto* join = llvm::BasicBlock::Create(context_, "vector.join", current_function_);
  builder_.CreateCondBr(condition, whole_block, elements_block);
  builder_.SetInsertPoint(whole_block);
  whole();
  llvm::BasicBlock* whole_end = builder_.GetInsertBlock();
  builder_.CreateBr(join);
  builder_.SetInsertPoint(elements_block);
  elements();
  llvm::BasicBlock* elements_end = builder_.GetInsertBlock();
  builder_.CreateBr(join);
  builder_.SetInsertPoint(join);
  return {whole_end, elements_end};
}

// --bounds-check: a vector access into a shared or local buffer must be
// aligned as a GPU needs (gpu_vector_alignment), which no run-time test
// makes up for (strided_last_axis). Checked on every target, so that a
// kernel tested on the CPU does not fault on a GPU; reported like an index
// out of bounds, with the location. Returns the address to use.
llvm::Value* Emitter::check_vector_alignment(Operation* op, unsigned memref_operand, llvm::Value* address,
                                             llvm::Type* vector, int64_t span) {
  ir::MemorySpace space = op->operand(memref_operand)->type().space();
  if (space != ir::MemorySpace::Shared && space != ir::MemorySpace::Local) return address;
  MemRef& m = memref(op->operand(memref_operand));
  uint64_t alignment = gpu_vector_alignment(module_->getDataLayout().getTypeStoreSize(vector));
  if (alignment <= module_->getDataLayout().getABITypeAlign(vector->getScalarType()).value()) return address;
  OutOfBounds failure{op, m, {}, address, source_location(op), nullptr, nullptr, nullptr, span, {}};
  failure.misaligned_to = alignment;
  return report_if_outside(address_is_aligned(builder_, address, alignment), failure);
}

void Emitter::emit_load_vector(Operation* op) {
  llvm::Type* vt = value_type(op->result()->type(), op);
  auto* vector = llvm::dyn_cast<llvm::FixedVectorType>(vt);
  int64_t span = vector ? static_cast<int64_t>(vector->getNumElements()) : 1;
  llvm::Value* address = address_of(op, 0, 1, nullptr, span);
  if (bounds_check_ && vector) address = check_vector_alignment(op, 0, address, vt, span);
  auto load_whole = [&] {
    auto* load = builder_.CreateLoad(vt, address);
    load->setAlignment(target_->vector_alignment(vt));
    return load;
  };
  llvm::Value* stride = vector ? strided_last_axis(op, 0) : nullptr;
  llvm::Value* condition = vector ? whole_vector_condition(op->operand(0)->type().space(), address, stride, vt) : nullptr;
  if (!condition) return set(op->result(), load_whole());
  llvm::Value *whole = nullptr, *gathered = llvm::PoisonValue::get(vt);
  auto [from_whole, from_elements] = branch_on_whole_vector(
      condition, [&] { whole = load_whole(); },
      [&] {
        llvm::Type* element = vector->getElementType();
        for (int64_t e = 0; e < span; ++e) {
          llvm::Value* at = builder_.CreateGEP(element, address,
                                               stride ? builder_.CreateMul(builder_.getInt64(e), stride) : builder_.getInt64(e));
          gathered = builder_.CreateInsertElement(gathered, builder_.CreateLoad(element, at), builder_.getInt64(e));
        }
      });
  llvm::PHINode* v = builder_.CreatePHI(vt, 2);
  v->addIncoming(whole, from_whole);
  v->addIncoming(gathered, from_elements);
  set(op->result(), v);
}

void Emitter::emit_store_vector(Operation* op) {
  llvm::Value* value = get(op->operand(0));
  auto* vector = llvm::dyn_cast<llvm::FixedVectorType>(value->getType());
  int64_t span = vector ? static_cast<int64_t>(vector->getNumElements()) : 1;
  llvm::Value* address = address_of(op, 1, 2, nullptr, span);
  if (bounds_check_ && vector)
    address = check_vector_alignment(op, 1, address, value->getType(), span);
  auto store_whole = [&] {
    builder_.CreateStore(value, address)->setAlignment(target_->vector_alignment(value->getType()));
  };
  llvm::Value* stride = vector ? strided_last_axis(op, 1) : nullptr;
  llvm::Value* condition = vector ? whole_vector_condition(op->operand(1)->type().space(), address, stride, value->getType()) : nullptr;
  if (!condition) return store_whole();
  branch_on_whole_vector(condition, store_whole, [&] {
    llvm::Type* element = vector->getElementType();
    for (int64_t e = 0; e < span; ++e) {
      llvm::Value* at = builder_.CreateGEP(element, address,
                                           stride ? builder_.CreateMul(builder_.getInt64(e), stride) : builder_.getInt64(e));
      builder_.CreateStore(builder_.CreateExtractElement(value, builder_.getInt64(e)), at);
    }
  });
}

// The group copies a block element by element, each lane a strided share:
// cp.async for 4-, 8- and 16-byte elements, a plain copy otherwise (PTX's
// cp.async moves 4, 8 or 16 aligned bytes). Either way the data is in place
// at the matching wait.
void Emitter::emit_cp_async(Operation* op) {
  MemRef& dst = memref(op->operand(0));
  MemRef& src = memref(op->operand(1));
  Type elem = op->operand(0)->type();
  Type shape = op->operand(1)->type();
  int64_t count = shape.num_elements();
  if (count == ir::kDynamic) unsupported(op, "an async copy of a dynamically sized block");
  unsigned bytes = scalar_info(elem.scalar()).bits / 8;
  llvm::BasicBlock* preheader = builder_.GetInsertBlock();
  llvm::Value* first = local_linear();
  llvm::Value* stride = group_lanes();
  auto* header = llvm::BasicBlock::Create(context_, "copy.header", current_function_);
  auto* body = llvm::BasicBlock::Create(context_, "copy.body", current_function_);
  auto* exit = llvm::BasicBlock::Create(context_, "copy.end", current_function_);
  builder_.CreateBr(header);
  builder_.SetInsertPoint(header);
  llvm::PHINode* e = builder_.CreatePHI(builder_.getInt64Ty(), 2);
  e->addIncoming(first, preheader);
  builder_.CreateCondBr(builder_.CreateICmpSLT(e, builder_.getInt64(count)), body, exit);
  builder_.SetInsertPoint(body);
  // Element e of the block, row-major.
  std::vector<llvm::Value*> index(shape.rank());
  llvm::Value* rest = e;
  for (size_t d = shape.rank(); d-- > 0;) {
    llvm::Value* extent = builder_.getInt64(shape.shape()[d]);
    index[d] = builder_.CreateURem(rest, extent);
    rest = builder_.CreateUDiv(rest, extent);
  }
  llvm::Value *to_bit = nullptr, *from_bit = nullptr;
  llvm::Value* to = element_address(dst, index, elem, op, &to_bit);
  llvm::Value* from = element_address(src, index, elem, op, &from_bit);
  if (packed_element_bits(elem.scalar())) {
    store_element(load_element(from, elem, op, from_bit), to, elem, to_bit);
  } else if (!target_->copy_async(to, from, bytes)) {
    builder_.CreateStore(builder_.CreateLoad(element_type(elem, op), from), to);
  }
  llvm::Value* next = builder_.CreateAdd(e, stride);
  e->addIncoming(next, builder_.GetInsertBlock());
  builder_.CreateBr(header);
  builder_.SetInsertPoint(exit);
  values_[op->result()] = Lowered{};
}

void Emitter::emit_cp_commit_group(Operation* op) {
  target_->commit_async_copies();
  values_[op->result()] = Lowered{};
}

void Emitter::emit_cp_wait_group(Operation* op) { target_->wait_async_copies(op->int_attr("pending")); }

}  // namespace tessera::codegen::emitter
