// Register tiles and tile.mma (emitter.h): where a lane's share of a tile
// lives (tile_position), C (+)= A x B on the SIMT cores or the tensor cores
// (ldmatrix + mma.sync, wgmma) and the CPU's emulations of the tensor-core
// instructions (HostTarget::emulate_mma), and tile.store_tile.
#include <algorithm>
#include <optional>

#include "codegen/emitter/cpu_hooks.h"
#include "codegen/emitter/emitter.h"
#include "support/diagnostics/internal_error.h"

namespace tessera::codegen::emitter {

// Row and column of element j of this lane's share of an M x N tile, in
// the tile's layout (ir/core/tile_layout.h).
std::pair<llvm::Value*, llvm::Value*> Emitter::tile_position(Type t, int64_t j, llvm::Value* lane) {
  int64_t columns = t.shape()[1];
  if (t.layout() == ir::TileLayout::MmaAccumulator) {
    ir::MmaTiling tiling = mma_tiling(t);
    // The position is affine in the lane's warp coordinates and its quad:
    // the constant part comes from j, the rest from the lane.
    ir::TilePosition at = ir::mma_accumulator_position(tiling, 0, j);
    llvm::Value* warp = builder_.CreateUDiv(lane, builder_.getInt64(ir::kWarpLanes));
    llvm::Value* q = builder_.CreateURem(lane, builder_.getInt64(ir::kWarpLanes));
    llvm::Value* warp_row = builder_.CreateURem(warp, builder_.getInt64(tiling.warps_m));
    llvm::Value* warp_column = builder_.CreateUDiv(warp, builder_.getInt64(tiling.warps_m));
    llvm::Value* row = builder_.CreateAdd(
        builder_.CreateMul(warp_row, builder_.getInt64(ir::kMmaBlockRows)),
        builder_.CreateAdd(builder_.CreateUDiv(q, builder_.getInt64(4)), builder_.getInt64(at.row)));
    llvm::Value* column = builder_.CreateAdd(
        builder_.CreateMul(warp_column, builder_.getInt64(tiling.tiles_n * ir::kMmaBlockColumns)),
        builder_.CreateAdd(builder_.CreateMul(builder_.CreateURem(q, builder_.getInt64(4)), builder_.getInt64(2)),
                           builder_.getInt64(at.column)));
    return {row, column};
  }
  llvm::Value* e = builder_.CreateAdd(lane, builder_.getInt64(j * group_size_static()));
  return {builder_.CreateUDiv(e, builder_.getInt64(columns)), builder_.CreateURem(e, builder_.getInt64(columns))};
}

ir::MmaTiling Emitter::mma_tiling(Type t) {
  auto tiling = ir::mma_accumulator_tiling(t.shape()[0], t.shape()[1], group_size_static());
  internal_check(tiling.has_value(), "codegen", "an mma_acc tile whose shape has no warp tiling");
  return *tiling;
}

Emitter::TensorCoreMma Emitter::tensor_core_mma(Operation* op) {
  TensorCoreMma m{op->operand(0)->type(), op->operand(1)->type(), op->result()->type(), {}, nullptr, nullptr, false};
  m.tiling = mma_tiling(m.c_type);
  m.share_type = llvm::cast<llvm::FixedVectorType>(value_type(m.c_type, op));
  m.accumulator = op->num_operands() == 3 ? get(op->operand(2)) : llvm::Constant::getNullValue(m.share_type);
  m.bf16 = m.a_type.scalar() == ScalarType::BF16;
  m.a = &memref(op->operand(0));
  m.b = &memref(op->operand(1));
  return m;
}

// The k loop of an mma: for (k = 0; k < end; k += step) carrying the
// accumulator; begin leaves the builder in the body, end after the loop
// and returns the final accumulator.
std::pair<llvm::PHINode*, llvm::PHINode*> Emitter::begin_k_loop(int64_t end, llvm::Value* init) {
  llvm::BasicBlock* preheader = builder_.GetInsertBlock();
  auto* header = llvm::BasicBlock::Create(context_, "mma.k", current_function_);
  auto* body = llvm::BasicBlock::Create(context_, "mma.body", current_function_);
  auto* exit = llvm::BasicBlock::Create(context_, "mma.end", current_function_);
  builder_.CreateBr(header);
  builder_.SetInsertPoint(header);
  llvm::PHINode* k = builder_.CreatePHI(builder_.getInt64Ty(), 2);
  llvm::PHINode* acc = builder_.CreatePHI(init->getType(), 2);
  k->addIncoming(builder_.getInt64(0), preheader);
  acc->addIncoming(init, preheader);
  builder_.CreateCondBr(builder_.CreateICmpSLT(k, builder_.getInt64(end)), body, exit);
  builder_.SetInsertPoint(body);
  return {k, acc};
}

llvm::Value* Emitter::end_k_loop(llvm::PHINode* k, llvm::PHINode* acc, int64_t step, llvm::Value* next) {
  llvm::BasicBlock* header = k->getParent();
  llvm::BasicBlock* exit = llvm::cast<llvm::BranchInst>(header->getTerminator())->getSuccessor(1);
  k->addIncoming(builder_.CreateAdd(k, builder_.getInt64(step)), builder_.GetInsertBlock());
  acc->addIncoming(next, builder_.GetInsertBlock());
  builder_.CreateBr(header);
  builder_.SetInsertPoint(exit);
  return acc;
}

// Whether a tile.mma takes the tensor-core path: on the GPU, and on the CPU
// when it emulates it (HostTarget::emulate_mma).
bool Emitter::tensor_core_path(Operation* op) {
  if (!target_->tensor_cores()) return false;
  if (!op->operand(0)->type().is(TypeKind::MemRef) || !op->operand(1)->type().is(TypeKind::MemRef)) return false;
  Type c_type = op->result()->type();
  return c_type.layout() == ir::TileLayout::MmaAccumulator &&
         ir::mma_sync_types(op->operand(0)->type(), op->operand(1)->type(), c_type);
}

// C (+)= A x B with A and B in shared memory: on the tensor cores where the
// types and the layout allow it (tensor_core_path: wgmma or mma.sync), else
// on the SIMT cores, a loop over k in which each lane updates its share of C
// (tile_share).
void Emitter::emit_mma(Operation* op) {
  Type a_type = op->operand(0)->type(), b_type = op->operand(1)->type(), c_type = op->result()->type();
  if (!a_type.is(TypeKind::MemRef) || !b_type.is(TypeKind::MemRef))
    unsupported(op, "'tile.mma' of register tiles (operands must be shared memory)");
  if (tensor_core_path(op)) {
    ir::MmaTiling tiling = mma_tiling(c_type);
    bool warpgroups = tiling.warps_n == 1 && tiling.warps_m % 4 == 0;
    if (target_->wgmma() && warpgroups && wgmma_operand(op, 0) && wgmma_operand(op, 1)) return emit_wgmma(op);
    return emit_mma_sync(op);
  }
  MemRef& a = memref(op->operand(0));
  MemRef& b = memref(op->operand(1));
  auto* vector_type = llvm::cast<llvm::FixedVectorType>(value_type(c_type, op));
  int64_t share = vector_type->getNumElements();
  llvm::Type* accum = vector_type->getElementType();
  llvm::Value* init = op->num_operands() == 3 ? get(op->operand(2)) : llvm::Constant::getNullValue(vector_type);
  llvm::Value* lane = local_linear();
  std::vector<std::pair<llvm::Value*, llvm::Value*>> positions;
  for (int64_t j = 0; j < share; ++j) positions.push_back(tile_position(c_type, j, lane));

  auto [k, acc] = begin_k_loop(a_type.shape()[1], init);
  llvm::Value* next = acc;
  for (int64_t j = 0; j < share; ++j) {
    auto [row, col] = positions[static_cast<size_t>(j)];
    llvm::Value *a_bit = nullptr, *b_bit = nullptr;
    llvm::Value* a_address = element_address(a, {row, k}, a_type, op, &a_bit);
    llvm::Value* b_address = element_address(b, {k, col}, b_type, op, &b_bit);
    llvm::Value* x = widen_to(load_element(a_address, a_type, op, a_bit), a_type.scalar(), accum);
    llvm::Value* y = widen_to(load_element(b_address, b_type, op, b_bit), b_type.scalar(), accum);
    llvm::Value* c = builder_.CreateExtractElement(next, builder_.getInt64(j));
    llvm::Value* sum = accum->isIntegerTy() ? builder_.CreateAdd(builder_.CreateMul(x, y), c)
                                            : intrinsic(llvm::Intrinsic::fma, {x, y, c}, {accum});
    next = builder_.CreateInsertElement(next, sum, builder_.getInt64(j));
  }
  set(op->result(), end_k_loop(k, acc, 1, next));
}

// C (+)= A x B on the tensor cores: mma.sync.aligned.m16n8k16.row.col with
// f16 or bf16 operands and f32 accumulators (sm_80+). The result is in the
// mma_acc layout (ir/core/tile_layout.h), so each lane's share is its
// accumulator fragments, block after block of the warp. For each k
// step of 16, a lane loads its A fragment of every block row and its B
// fragment of every block column of the warp from shared memory (through
// the views' swizzle and padding, element by element), then issues
// tiles_m x tiles_n mma.sync. Fragment positions: PTX ISA, "Matrix
// Fragments for mma.m16n8k16 with floating point type".
void Emitter::emit_mma_sync(Operation* op) {
  auto [a_type, b_type, c_type, tiling, vector_type, init, bf16, a_view, b_view] = tensor_core_mma(op);
  MemRef& a = *a_view;
  MemRef& b = *b_view;
  llvm::Type* element = element_type(a_type, op);
  auto* pair_type = llvm::FixedVectorType::get(element, 2);

  auto constant = [&](int64_t v) { return builder_.getInt64(v); };
  llvm::Value* lane = local_linear();
  llvm::Value* warp = builder_.CreateUDiv(lane, constant(ir::kWarpLanes));
  llvm::Value* q = builder_.CreateURem(lane, constant(ir::kWarpLanes));
  llvm::Value* group = builder_.CreateUDiv(q, constant(4));
  llvm::Value* pair = builder_.CreateMul(builder_.CreateURem(q, constant(4)), constant(2));
  // The warp's first A row and B column, and the lane's: block rows are
  // strided over the warps (warps_m apart), block columns contiguous.
  llvm::Value* warp_row0 =
      builder_.CreateMul(builder_.CreateURem(warp, constant(tiling.warps_m)), constant(ir::kMmaBlockRows));
  llvm::Value* warp_column0 = builder_.CreateMul(builder_.CreateUDiv(warp, constant(tiling.warps_m)),
                                                 constant(tiling.tiles_n * ir::kMmaBlockColumns));
  llvm::Value* row0 = builder_.CreateAdd(warp_row0, group);
  llvm::Value* column0 = builder_.CreateAdd(warp_column0, group);

  // Two elements as one 32-bit fragment register, the first in the low half.
  auto load_pair = [&](MemRef& m, Type t, llvm::Value* row0_, llvm::Value* col0_, llvm::Value* row1_,
                       llvm::Value* col1_) -> llvm::Value* {
    llvm::Value* x = load_element(element_address(m, {row0_, col0_}, t, op), t, op);
    llvm::Value* y = load_element(element_address(m, {row1_, col1_}, t, op), t, op);
    llvm::Value* v = builder_.CreateInsertElement(llvm::PoisonValue::get(pair_type), x, uint64_t{0});
    v = builder_.CreateInsertElement(v, y, uint64_t{1});
    return bf16 ? builder_.CreateBitCast(v, builder_.getInt32Ty()) : v;
  };

  auto [k, acc] = begin_k_loop(a_type.shape()[1], init);

  llvm::Value* k_lane = builder_.CreateAdd(k, pair);  // this lane's first k in the step
  auto plus = [&](llvm::Value* v, int64_t c) { return c == 0 ? v : builder_.CreateAdd(v, constant(c)); };
  // ldmatrix: lane q gives the address of row q % 8 of 8 x 8 matrix q / 8.
  bool a_ldmatrix = ldmatrix_operand(a), b_ldmatrix = ldmatrix_operand(b);
  llvm::Value *matrix_row = nullptr, *second_half = nullptr, *second_pair = nullptr;
  if (a_ldmatrix || b_ldmatrix) {
    llvm::Value* matrix = builder_.CreateUDiv(q, constant(8));
    matrix_row = builder_.CreateURem(q, constant(8));
    second_half = builder_.CreateMul(builder_.CreateAnd(matrix, constant(1)), constant(8));
    second_pair = builder_.CreateMul(builder_.CreateLShr(matrix, constant(1)), constant(8));
  }
  auto fragment_register = [&](llvm::Value* word) {
    return bf16 ? word : builder_.CreateBitCast(word, pair_type);
  };
  std::vector<std::array<llvm::Value*, 4>> a_fragments;
  for (int64_t tm = 0; tm < tiling.tiles_m; ++tm) {
    // a0 a1: (g, k..k+1), a2 a3: (g+8, k..k+1), a4 a5: (g, k+8..), a6 a7: (g+8, k+8..)
    std::array<llvm::Value*, 4> regs{};
    int64_t block_row = tm * tiling.warps_m * ir::kMmaBlockRows;
    if (a_ldmatrix) {
      // Matrices: rows 0-7 / 8-15 (q/8 odd) by columns k.. / k+8.. (q/8 >= 2).
      llvm::Value* row = builder_.CreateAdd(plus(warp_row0, block_row), builder_.CreateAdd(matrix_row, second_half));
      llvm::Value* col = builder_.CreateAdd(k, second_pair);
      std::vector<llvm::Value*> words = target_->ldmatrix(element_address(a, {row, col}, a_type, op), 4, false);
      for (size_t r = 0; r < 4; ++r) regs[r] = fragment_register(words[r]);
    } else {
      for (int r = 0; r < 4; ++r) {
        llvm::Value* row = plus(row0, block_row + (r & 1) * 8);
        llvm::Value* col = plus(k_lane, r >= 2 ? 8 : 0);
        regs[static_cast<size_t>(r)] = load_pair(a, a_type, row, col, row, plus(col, 1));
      }
    }
    a_fragments.push_back(regs);
  }
  std::vector<std::array<llvm::Value*, 2>> b_fragments(static_cast<size_t>(tiling.tiles_n));
  if (b_ldmatrix) {
    // Transposed 8 x 8 matrices of B's rows k.. / k+8.. (q/8 odd) and, with
    // x4, of two blocks' columns (q/8 >= 2: the next block).
    for (int64_t tn = 0; tn < tiling.tiles_n; tn += 2) {
      int count = tn + 1 < tiling.tiles_n ? 4 : 2;
      llvm::Value* row = builder_.CreateAdd(k, builder_.CreateAdd(matrix_row, second_half));
      llvm::Value* col = plus(warp_column0, tn * ir::kMmaBlockColumns);
      if (count == 4) col = builder_.CreateAdd(col, second_pair);
      std::vector<llvm::Value*> words = target_->ldmatrix(element_address(b, {row, col}, b_type, op), count, true);
      for (int i = 0; i < count; ++i)
        b_fragments[static_cast<size_t>(tn + i / 2)][static_cast<size_t>(i % 2)] = fragment_register(words[static_cast<size_t>(i)]);
    }
  } else {
    for (int64_t tn = 0; tn < tiling.tiles_n; ++tn) {
      // b0 b1: (k..k+1, g), b2 b3: (k+8..k+9, g)
      llvm::Value* col = plus(column0, tn * ir::kMmaBlockColumns);
      for (int r = 0; r < 2; ++r) {
        llvm::Value* row = plus(k_lane, r * 8);
        b_fragments[static_cast<size_t>(tn)][static_cast<size_t>(r)] = load_pair(b, b_type, row, col, plus(row, 1), col);
      }
    }
  }
  llvm::Value* next = acc;
  for (int64_t tm = 0; tm < tiling.tiles_m; ++tm)
    for (int64_t tn = 0; tn < tiling.tiles_n; ++tn) {
      int64_t first = (tm * tiling.tiles_n + tn) * 4;
      std::array<llvm::Value*, 4> c{};
      for (int64_t i = 0; i < 4; ++i) c[static_cast<size_t>(i)] = builder_.CreateExtractElement(next, constant(first + i));
      c = target_->mma_m16n8k16(a_fragments[static_cast<size_t>(tm)], b_fragments[static_cast<size_t>(tn)], c, bf16);
      for (int64_t i = 0; i < 4; ++i)
        next = builder_.CreateInsertElement(next, c[static_cast<size_t>(i)], constant(first + i));
    }
  set(op->result(), end_k_loop(k, acc, 16, next));
}

// Whether mma.sync's fragments of a 16-bit operand view can be loaded with
// ldmatrix: every 8 consecutive elements of a row from a column that is a
// multiple of 8 must be 16 contiguous bytes at a 16-byte aligned address.
// So: unit column stride, a row pitch of a multiple of 8 elements (padding
// included), a column origin that is a known multiple of 8, a buffer in
// shared memory (16-byte aligned on the GPU whatever its `alignment`; the XOR
// swizzle moves whole 16-byte chunks).
bool Emitter::ldmatrix_operand(MemRef& m) {
  size_t rank = m.sizes.size();
  if (!m.root.is(TypeKind::MemRef) || m.root.space() != ir::MemorySpace::Shared) return false;
  auto known = [](llvm::Value* v) -> std::optional<int64_t> {
    if (auto* c = llvm::dyn_cast<llvm::ConstantInt>(v)) return c->getSExtValue();
    return std::nullopt;
  };
  if (rank < 2 || known(m.strides[rank - 1]) != 1) return false;
  std::optional<int64_t> pitch = known(m.strides[rank - 2]), column = known(m.origin[rank - 1]);
  if (!pitch || *pitch % 8 != 0 || !column || *column % 8 != 0) return false;
  for (size_t d = 0; d + 2 < rank; ++d) {  // leading dimensions (a stage of a buffer list) keep the alignment
    std::optional<int64_t> stride = known(m.strides[d]);
    if (!stride || *stride % 8 != 0) return false;
  }
  return m.base->getType()->getPointerAddressSpace() == target_->address_space(ir::MemorySpace::Shared);
}

// Whether operand `operand` of a tile.mma is a whole swizzled shared buffer
// whose rows are one of the tensor cores' swizzle widths, so that wgmma reads
// it in place: the view must be the allocation itself (origin 0, its shape),
// without padding. A run-time choice between
// such buffers (double buffering) is fine: the base pointer is a value.
bool Emitter::wgmma_operand(Operation* op, unsigned operand) {
  Type t = op->operand(operand)->type();
  MemRef& m = memref(op->operand(operand));
  if (m.root.swizzle() != ir::Swizzle::Xor || m.root.padding() != 0 || m.root.rank() != 2 ||
      !std::ranges::equal(t.shape(), m.root.shape()) || !ir::tensor_core_swizzle_row(ir::shared_row_bytes(m.root)))
    return false;
  for (llvm::Value* o : m.origin)
    if (!llvm::isa<llvm::ConstantInt>(o) || !llvm::cast<llvm::ConstantInt>(o)->isZero()) return false;
  return true;
}

// C (+)= A x B with wgmma.mma_async (sm_90a): each warpgroup (4 warps)
// computes 64 rows of the tile per instruction, m64nNk16 with N the tile's
// width, A and B read by the tensor cores straight from shared memory
// through matrix descriptors. The mma_acc layout with warps_n == 1 is
// exactly wgmma's accumulator (ir/core/tile_layout.h): warpgroup g's
// instruction for block row step tm covers rows 16 * (tm * warps_m + 4g)
// and up, and its N/2 registers are that slice of the lane's share.
//
// Operands (wgmma_operand): A is M x K row-major = K-major, B is K x N
// row-major = MN-major (transposed, imm-trans-b = 1); both are XOR-swizzled
// buffers with rows of 32, 64 or 128 bytes, which is the tensor cores'
// 32/64/128-byte swizzle on addresses aligned to 8 rows (swizzle_alignment),
// so the canonical layouts (PTX ISA, "Shared Memory Matrix Layout"):
// K-major ((8,m),(T,2k)):((W,SBO),(1,T)) and MN-major
// ((T,W/T,m),(8,k)):((1,T,LBO),(W,SBO)), W the row in elements, with
// SBO = 8 rows. A k step moves A's start 32 bytes along its row and B's 16
// rows down; the start addresses are linear (the hardware applies the
// swizzle to the absolute address).
//
// Ordering: the group's earlier shared-memory writes (st.shared, cp.async)
// are generic-proxy writes, and wgmma reads through the async proxy: every
// lane fences (fence.proxy.async.shared::cta) and the group meets at a
// barrier before the first wgmma; wgmma.fence, the instructions,
// commit_group and wait_group 0 follow, so the accumulators are final when
// the operation ends (NvptxHooks::begin_wgmma, end_wgmma).
void Emitter::emit_wgmma(Operation* op) {
  auto [a_type, b_type, c_type, tiling, vector_type, acc, bf16, a_view, b_view] = tensor_core_mma(op);
  MemRef& a = *a_view;
  MemRef& b = *b_view;
  int64_t k_total = a_type.shape()[1], n = c_type.shape()[1];
  int64_t a_row_bytes = ir::shared_row_bytes(a.root), b_row_bytes = ir::shared_row_bytes(b.root);
  auto constant = [&](int64_t v) { return builder_.getInt64(v); };

  // A descriptor: bits 0-13 start >> 4, 16-29 leading byte offset >> 4,
  // 32-45 stride byte offset >> 4, 62-63 the swizzle (1: 128 B, 2: 64 B, 3: 32 B).
  auto swizzle_mode = [](int64_t row_bytes) -> uint64_t { return row_bytes == 128 ? 1 : row_bytes == 64 ? 2 : 3; };
  auto descriptor = [&](llvm::Value* start, int64_t leading, int64_t stride, int64_t row_bytes) {
    uint64_t fields = (static_cast<uint64_t>(leading >> 4) & 0x3FFF) << 16 |
                      (static_cast<uint64_t>(stride >> 4) & 0x3FFF) << 32 | swizzle_mode(row_bytes) << 62;
    llvm::Value* address = builder_.CreateAnd(builder_.CreateLShr(start, constant(4)), constant(0x3FFF));
    return builder_.CreateOr(address, builder_.getInt64(fields));
  };
  // The shared-memory address (on the CPU: the offset in the group's block).
  auto shared_address = [&](MemRef& m) {
    return target_->wgmma_address(builder_.CreatePtrToInt(m.base, builder_.getInt64Ty()));
  };

  target_->begin_wgmma();
  llvm::Value* warpgroup = builder_.CreateUDiv(local_linear(), constant(4 * ir::kWarpLanes));
  llvm::Value* a_base = shared_address(a);
  llvm::Value* b_base = shared_address(b);
  for (int64_t k = 0; k < k_total; k += 16) {
    llvm::Value* b_start = builder_.CreateAdd(b_base, constant(k * b_row_bytes));
    llvm::Value* b_descriptor = descriptor(b_start, 16, 8 * b_row_bytes, b_row_bytes);
    for (int64_t tm = 0; tm < tiling.tiles_m; ++tm) {
      // First row of this warpgroup's 64: 16 * (tm * warps_m + 4 * g).
      llvm::Value* row = builder_.CreateAdd(constant(16 * tm * tiling.warps_m),
                                            builder_.CreateMul(warpgroup, constant(64)));
      llvm::Value* a_start =
          builder_.CreateAdd(a_base, builder_.CreateAdd(builder_.CreateMul(row, constant(a_row_bytes)), constant(2 * k)));
      llvm::Value* a_descriptor = descriptor(a_start, 16, 8 * a_row_bytes, a_row_bytes);
      int64_t first = tm * tiling.tiles_n * 4;
      acc = target_->wgmma_m64nNk16(acc, a_descriptor, b_descriptor, first, n, bf16);
    }
  }
  target_->end_wgmma();
  set(op->result(), acc);
}

void Emitter::emit_store_tile(Operation* op) {
  Type t = op->operand(0)->type();
  MemRef& m = memref(op->operand(1));
  llvm::Value* v = get(op->operand(0));
  llvm::Value* lane = local_linear();
  int64_t share = llvm::cast<llvm::FixedVectorType>(v->getType())->getNumElements();
  for (int64_t j = 0; j < share; ++j) {
    auto [row, col] = tile_position(t, j, lane);
    llvm::Value* element = builder_.CreateExtractElement(v, builder_.getInt64(j));
    Type memory = op->operand(1)->type();
    if (memory.scalar() != t.scalar()) internal_check(false, "codegen", "store_tile element types differ");
    llvm::Value* bit = nullptr;
    llvm::Value* address = element_address(m, {row, col}, memory, op, &bit);
    store_element(element, address, memory, bit);
  }
}

// --- the CPU's emulations of the tensor-core instructions (CpuHooks) -----------------

// ldmatrix.sync.aligned.m8n8.x{count}[.trans].shared.b16: lane q gives
// `row_address`, the address of row q % 8 of matrix q / 8 (lanes 0-15 for
// x2); register j of lane q = 4g + t receives elements 2t, 2t + 1 of row g
// of matrix j, or with .trans elements g of rows 2t and 2t + 1 (PTX ISA,
// "ldmatrix"). On the CPU the lanes exchange the row addresses and load the
// same elements (HostTarget::emulate_mma).
std::vector<llvm::Value*> Emitter::emulate_ldmatrix(CpuHooks& cpu, llvm::Value* row_address, int count,
                                                    bool transpose) {
  std::vector<llvm::Value*> words;
  llvm::Type* i32 = builder_.getInt32Ty();
  llvm::Type* i16 = builder_.getInt16Ty();
  llvm::Value* address = builder_.CreatePtrToInt(row_address, builder_.getInt64Ty());
  llvm::Value* q = warp_lane();
  llvm::Value* g = builder_.CreateUDiv(q, builder_.getInt64(4));
  llvm::Value* two_t = builder_.CreateMul(builder_.CreateURem(q, builder_.getInt64(4)), builder_.getInt64(2));
  auto row_of = [&](int64_t j, llvm::Value* row) {  // lane 8j + row's address
    return cpu.shuffle(address, builder_.CreateAdd(row, builder_.getInt64(8 * j)), ir::ShuffleMode::Idx);
  };
  auto load = [&](llvm::Type* type, llvm::Value* at, llvm::Value* elements) {
    llvm::Value* byte = builder_.CreateAdd(at, builder_.CreateMul(elements, builder_.getInt64(2)));
    return builder_.CreateLoad(type, builder_.CreateIntToPtr(byte, builder_.getPtrTy()));
  };
  for (int64_t j = 0; j < count; ++j) {
    if (!transpose) {
      words.push_back(load(i32, row_of(j, g), two_t));
      continue;
    }
    llvm::Value* even = row_of(j, two_t);
    llvm::Value* odd = row_of(j, builder_.CreateAdd(two_t, builder_.getInt64(1)));
    llvm::Value* low = builder_.CreateZExt(load(i16, even, g), i32);
    llvm::Value* high = builder_.CreateZExt(load(i16, odd, g), i32);
    words.push_back(builder_.CreateOr(low, builder_.CreateShl(high, 16)));
  }
  return words;
}

// One mma.m16n8k16 (f32 accumulators) on this lane's fragments: the
// instruction on the GPU; on the CPU (EmulatedMma) the lanes of the warp
// exchange fragments as the tensor cores do. Lane q = 4g + t holds A(g, k)
// and A(g + 8, k) for k = 2t, 2t + 1 (a0 a1, row g and g + 8) and k + 8 (a2
// a3), B(k, g) for the same k (b0 b1), and computes C(g, 2t + {0,1}) and
// C(g + 8, 2t + {0,1}): for each pair of k it reads A's pair from lane 4g +
// k/2 % 4 and B's from lanes 4(2t) + k/2 % 4 and 4(2t + 1) + k/2 % 4. Sums
// run in k order, one fma at a time (the tensor cores' internal order and
// rounding are not specified; integer-valued tests are exact either way).
std::array<llvm::Value*, 4> Emitter::emulate_mma_m16n8k16(CpuHooks& cpu, const std::array<llvm::Value*, 4>& a,
                                                          const std::array<llvm::Value*, 2>& b,
                                                          std::array<llvm::Value*, 4> c, bool bf16) {
  llvm::Type* i32 = builder_.getInt32Ty();
  llvm::Type* f32 = builder_.getFloatTy();
  auto* pair_type = llvm::FixedVectorType::get(bf16 ? builder_.getBFloatTy() : builder_.getHalfTy(), 2);
  auto word = [&](llvm::Value* r) { return builder_.CreateBitCast(r, i32); };
  // The two elements of a fragment register as f32, the first from the low half.
  auto widen = [&](llvm::Value* w) -> std::array<llvm::Value*, 2> {
    llvm::Value* pair = builder_.CreateBitCast(w, pair_type);
    return {builder_.CreateFPExt(builder_.CreateExtractElement(pair, uint64_t{0}), f32),
            builder_.CreateFPExt(builder_.CreateExtractElement(pair, uint64_t{1}), f32)};
  };
  llvm::Value* q = warp_lane();
  llvm::Value* g4 = builder_.CreateMul(builder_.CreateUDiv(q, builder_.getInt64(4)), builder_.getInt64(4));
  llvm::Value* t8 = builder_.CreateMul(builder_.CreateURem(q, builder_.getInt64(4)), builder_.getInt64(8));
  for (int64_t pair = 0; pair < 8; ++pair) {  // k = 2 * pair, 2 * pair + 1
    int64_t half = pair / 4, holder = pair % 4;
    auto from = [&](llvm::Value* base) { return builder_.CreateAdd(base, builder_.getInt64(holder)); };
    auto row_g = widen(cpu.shuffle(word(a[static_cast<size_t>(2 * half)]), from(g4), ir::ShuffleMode::Idx));
    auto row_g8 = widen(cpu.shuffle(word(a[static_cast<size_t>(2 * half + 1)]), from(g4), ir::ShuffleMode::Idx));
    auto column_0 = widen(cpu.shuffle(word(b[static_cast<size_t>(half)]), from(t8), ir::ShuffleMode::Idx));
    auto column_1 = widen(cpu.shuffle(word(b[static_cast<size_t>(half)]),
                                      from(builder_.CreateAdd(t8, builder_.getInt64(4))), ir::ShuffleMode::Idx));
    const std::array<llvm::Value*, 2>* rows[2] = {&row_g, &row_g8};
    const std::array<llvm::Value*, 2>* columns[2] = {&column_0, &column_1};
    for (size_t i = 0; i < 4; ++i)
      for (size_t e = 0; e < 2; ++e)
        c[i] = intrinsic(llvm::Intrinsic::fma, {(*rows[i / 2])[e], (*columns[i % 2])[e], c[i]}, {f32});
  }
  return c;
}

// One wgmma.mma_async.m64nNk16 (f32 += f16/bf16 x f16/bf16, A K-major, B
// MN-major) on the CPU, for this lane's N/2 accumulators (elements first ..
// first + N/2 - 1 of `acc`): the operands are read through the descriptors
// by the PTX ISA's definitions, written here independently of the code that
// makes them, so that a wrong field, shift or layout choice there gives wrong
// results. Descriptor: start address, leading and stride byte offsets (each
// bits 0-13 of value >> 4, at bits 0, 16, 32), swizzle mode at bits 62-63
// (1: 128 B, 2: 64 B, 3: 32 B). Canonical layouts ("Shared Memory Matrix
// Layout"; T = 8 two-byte elements, W the swizzle width in elements):
// K-major ((8,m),(T,2k)):((W,SBO),(1,T)) and MN-major
// ((T,W/T,m),(8,k)):((1,T,LBO),(W,SBO)); the swizzle then XORs address bits
// 4.. with bits 7.. (3, 2 or 1 bits). Accumulator register r of lane q of
// warp w in the warpgroup: row 16w + q/4 + 8((r/2) % 2), column 8(r/4) +
// 2(q % 4) + r % 2.
llvm::Value* Emitter::emulate_wgmma(CpuHooks& cpu, llvm::Value* a_descriptor, llvm::Value* b_descriptor,
                                    llvm::Value* acc, int64_t first, int64_t registers, bool bf16) {
  auto constant = [&](int64_t v) { return builder_.getInt64(v); };
  auto field = [&](llvm::Value* d, int64_t bit) {
    return builder_.CreateShl(builder_.CreateAnd(builder_.CreateLShr(d, constant(bit)), constant(0x3FFF)), constant(4));
  };
  struct Operand {
    llvm::Value *start, *leading, *stride, *mode, *width;
  };
  auto decode = [&](llvm::Value* d) {
    Operand o{field(d, 0), field(d, 16), field(d, 32), builder_.CreateLShr(d, constant(62)), nullptr};
    o.width = builder_.CreateLShr(constant(256), o.mode);  // bytes: 128, 64, 32
    return o;
  };
  Operand a = decode(a_descriptor), b = decode(b_descriptor);
  llvm::Value* block = cpu.shared_block();
  llvm::Type* f32 = builder_.getFloatTy();
  llvm::Type* sixteen_bit = bf16 ? builder_.getBFloatTy() : builder_.getHalfTy();
  auto load = [&](const Operand& o, llvm::Value* address) {
    llvm::Value* xor_mask = builder_.CreateSub(builder_.CreateShl(constant(1), builder_.CreateSub(constant(4), o.mode)),
                                               constant(1));
    llvm::Value* swizzled = builder_.CreateXor(
        address, builder_.CreateShl(builder_.CreateAnd(builder_.CreateLShr(address, constant(7)), xor_mask), constant(4)));
    return builder_.CreateFPExt(
        builder_.CreateLoad(sixteen_bit, builder_.CreateInBoundsGEP(builder_.getInt8Ty(), block, swizzled)), f32);
  };
  llvm::Value* q = warp_lane();
  llvm::Value* warp = builder_.CreateURem(builder_.CreateUDiv(local_linear(), constant(ir::kWarpLanes)), constant(4));
  llvm::Value* row0 = builder_.CreateAdd(builder_.CreateMul(warp, constant(16)), builder_.CreateUDiv(q, constant(4)));
  llvm::Value* column0 = builder_.CreateMul(builder_.CreateURem(q, constant(4)), constant(2));
  auto [r, registers_in] = begin_k_loop(registers, acc);
  llvm::Value* row = builder_.CreateAdd(
      row0, builder_.CreateMul(builder_.CreateAnd(builder_.CreateLShr(r, constant(1)), constant(1)), constant(8)));
  llvm::Value* column = builder_.CreateAdd(
      column0, builder_.CreateAdd(builder_.CreateMul(builder_.CreateLShr(r, constant(2)), constant(8)),
                                  builder_.CreateAnd(r, constant(1))));
  llvm::Value* element = builder_.CreateAdd(r, constant(first));
  auto [k, sum] = begin_k_loop(16, builder_.CreateExtractElement(registers_in, element));
  // A(row, k): K-major.
  llvm::Value* a_address = builder_.CreateAdd(
      a.start, builder_.CreateAdd(builder_.CreateMul(k, constant(2)),
                                  builder_.CreateAdd(builder_.CreateMul(builder_.CreateURem(row, constant(8)), a.width),
                                                     builder_.CreateMul(builder_.CreateUDiv(row, constant(8)), a.stride))));
  // B(k, column): MN-major, W = width / 2 elements.
  llvm::Value* b_elements = builder_.CreateUDiv(b.width, constant(2));
  llvm::Value* b_address = builder_.CreateAdd(
      b.start,
      builder_.CreateAdd(
          builder_.CreateAdd(builder_.CreateMul(builder_.CreateURem(column, b_elements), constant(2)),
                             builder_.CreateMul(builder_.CreateUDiv(column, b_elements), b.leading)),
          builder_.CreateAdd(builder_.CreateMul(builder_.CreateURem(k, constant(8)), b.width),
                             builder_.CreateMul(builder_.CreateUDiv(k, constant(8)), b.stride))));
  llvm::Value* next_sum = intrinsic(llvm::Intrinsic::fma, {load(a, a_address), load(b, b_address), sum}, {f32});
  llvm::Value* total = end_k_loop(k, sum, 1, next_sum);
  return end_k_loop(r, registers_in, 1, builder_.CreateInsertElement(registers_in, total, element));
}

}  // namespace tessera::codegen::emitter
