// The emitter's NVPTX target (target_hooks.h; docs/codegen.md): special
// registers, bar.sync, shfl.sync, cp.async, CUDA's assert, libdevice, the
// hardware float conversions of newer architectures, and the tensor cores'
// instructions (ldmatrix, mma.sync, wgmma).
#include <llvm/IR/InlineAsm.h>
#include <llvm/IR/IntrinsicsNVPTX.h>
#include <llvm/TargetParser/Triple.h>

#include <algorithm>

#include "codegen/emitter/emitter.h"

namespace tessera::codegen::emitter {

constexpr unsigned kGlobalSpace = 1, kSharedSpace = 3, kLocalSpace = 5;

class NvptxHooks final : public TargetHooks {
 public:
  NvptxHooks(Emitter& emitter, const GpuArch& arch)
      : e_(emitter), builder_(emitter.builder_), context_(emitter.context_), arch_(arch) {}

  const char* name() const override { return "NVPTX"; }
  bool host_code() const override { return false; }
  void set_up_module(llvm::Module& module) override;
  void finish_module() override {}
  std::vector<llvm::Type*> context_parameters() override { return {}; }
  std::vector<llvm::Value*> context_arguments() override { return {}; }
  llvm::Function* create_function(Operation* f, llvm::FunctionType* type) override;
  unsigned begin_function(Operation*, llvm::Function*) override { return 0; }
  void begin_body(Operation* f) override;
  void end_function(Operation*) override {}

  llvm::Value* read_group_quantity(GroupQuantity quantity, int64_t axis) override;
  llvm::Value* lane_in_group() override;
  llvm::Value* lane_in_warp() override { return sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_laneid); }
  // %ntid.x for a one-dimensional group (equal to the declared size: a
  // kernel runs only with it), as CUDA's blockIdx.x * blockDim.x +
  // threadIdx.x: LLVM keeps `ctaid * ntid + tid` a mad.lo, where a
  // constant power of two becomes shl and or, which costs ptxas a register
  // (block_reduce on sm_90: 13 instead of nvcc's 12).
  llvm::Value* linear_id_lanes(llvm::Value* declared) override {
    ir::Attribute shape = e_.current_ir_function_ ? e_.current_ir_function_->attr("group_shape") : ir::Attribute{};
    if (shape && shape.size() == 1) return read_group_quantity(GroupQuantity::GroupSize, 0);
    return declared;
  }

  unsigned address_space(ir::MemorySpace space) override;
  // The vector's size up to 16 bytes: PTX's widest access on sm_80 and sm_90
  // (ld.v4.f32, ld.v2.f64); a wider vector is several such accesses.
  llvm::Align vector_alignment(llvm::Type* vector) override {
    return llvm::Align(gpu_vector_alignment(e_.module_->getDataLayout().getTypeStoreSize(vector)));
  }
  uint64_t local_alignment(uint64_t requested) override { return requested; }
  llvm::Value* allocate_shared(Operation* op, Type m, llvm::ArrayType* array) override;
  void update_byte_atomically(llvm::Value* address, llvm::Value* clear, llvm::Value* set) override;
  llvm::Value* report_out_of_bounds(const OutOfBounds& failure) override;
  bool copy_async(llvm::Value* to, llvm::Value* from, unsigned bytes) override;
  void commit_async_copies() override { e_.intrinsic(llvm::Intrinsic::nvvm_cp_async_commit_group); }
  void wait_async_copies(int64_t pending) override {
    e_.intrinsic(llvm::Intrinsic::nvvm_cp_async_wait_group, {builder_.getInt32(static_cast<uint32_t>(pending))});
  }

  void barrier() override {
    e_.intrinsic(llvm::Intrinsic::nvvm_barrier_cta_sync_aligned_all, {builder_.getInt32(0)});
  }
  llvm::Value* shuffle(llvm::Value* v, llvm::Value* offset, ir::ShuffleMode mode) override;

  llvm::Value* truncate_float(llvm::Value* value, llvm::Type* to) override { return builder_.CreateFPTrunc(value, to); }
  llvm::Value* decode_narrow(const numerics::Format& format, llvm::Value* code) override;
  llvm::Value* encode_fp8_saturating(const numerics::Format& format, llvm::Value* f32, llvm::Type* to) override;
  llvm::Value* math(Operation* op, MathFunction function, llvm::ArrayRef<llvm::Value*> args) override;

  bool contiguous_variants() override { return true; }
  bool tensor_cores() override { return true; }
  bool wgmma() override { return arch_.wgmma && arch_.sm == 90 && arch_.arch_specific; }
  std::vector<llvm::Value*> ldmatrix(llvm::Value* row_address, int count, bool transpose) override;
  std::array<llvm::Value*, 4> mma_m16n8k16(const std::array<llvm::Value*, 4>& a, const std::array<llvm::Value*, 2>& b,
                                           std::array<llvm::Value*, 4> c, bool bf16) override;
  void begin_wgmma() override;
  void end_wgmma() override;
  llvm::Value* wgmma_address(llvm::Value* pointer_bits) override { return pointer_bits; }
  llvm::Value* wgmma_m64nNk16(llvm::Value* acc, llvm::Value* a_descriptor, llvm::Value* b_descriptor, int64_t first,
                              int64_t n, bool bf16) override;

 private:
  llvm::Value* sreg(llvm::Intrinsic::ID id) { return builder_.CreateZExt(e_.intrinsic(id), builder_.getInt64Ty()); }

  Emitter& e_;
  llvm::IRBuilder<>& builder_;
  llvm::LLVMContext& context_;
  GpuArch arch_;
  unsigned shared_count_ = 0;  // the module's shared buffers, for their names
};

// --- the module and its functions ----------------------------------------------------

void NvptxHooks::set_up_module(llvm::Module& module) {
  module.setTargetTriple(llvm::Triple("nvptx64-nvidia-cuda"));
  module.setDataLayout("e-p3:32:32-p4:32:32-p5:32:32-p6:32:32-p7:32:32-i64:64-i128:128-v16:16-v32:32-n16:32:64");
}

// Kernels use the PTX_Kernel calling convention (LLVM 22 ignores
// nvvm.annotations in modules built in memory).
llvm::Function* NvptxHooks::create_function(Operation* f, llvm::FunctionType* type) {
  bool kernel = f->has_attr("kernel");
  auto* function = llvm::Function::Create(type,
                                          kernel ? llvm::GlobalValue::ExternalLinkage : llvm::GlobalValue::InternalLinkage,
                                          std::string(f->symbol_name()), e_.module_.get());
  if (kernel) {
    function->setCallingConv(llvm::CallingConv::PTX_Kernel);
    // The group shape is known: ptxas allocates registers for it.
    if (int64_t threads = ir::group_lanes(f)) {
      function->addFnAttr("nvvm.maxntid", std::to_string(threads));
      // With .maxntid alone ptxas aims at an occupancy that caps registers
      // at 64 for 128 lanes, and spills the tensor cores' accumulators
      // and fragments; a kernel with an mma in registers may use what the
      // register file gives its group (64 K / lanes, at most 255).
      bool tensor_cores = false;
      f->walk([&](Operation* op) {
        if (op->is(OpKind::Mma) && op->result()->type().layout() == ir::TileLayout::MmaAccumulator) tensor_cores = true;
      });
      if (tensor_cores)
        function->addFnAttr("nvvm.maxnreg", std::to_string(std::min<int64_t>(255, 65536 / threads / 8 * 8)));
    }
  }
  return function;
}

// grid_rank=N on the GPU: a launch on a grid with more axes traps (the
// launch fails) instead of computing ids from N axes. A trap, not CUDA's
// assert with a message: a call costs registers in every such kernel
// (block_reduce: 24 instead of 10). The CPU target checks in its entries,
// with a message.
void NvptxHooks::begin_body(Operation* f) {
  if (!f->has_attr("kernel") || Emitter::grid_rank(f) >= 3) return;
  llvm::Function* function = e_.current_function_;
  auto* fail = llvm::BasicBlock::Create(context_, "grid_rank_exceeded", function);
  auto* next = llvm::BasicBlock::Create(context_, "grid_rank_ok", function);
  builder_.CreateCondBr(builder_.CreateICmpEQ(e_.grid_sizes_past_rank(f), builder_.getInt64(1)), next, fail);
  builder_.SetInsertPoint(fail);
  e_.intrinsic(llvm::Intrinsic::trap);
  builder_.CreateUnreachable();
  builder_.SetInsertPoint(next);
}

// --- lanes and groups --------------------------------------------------------------------

llvm::Value* NvptxHooks::read_group_quantity(GroupQuantity quantity, int64_t axis) {
  static constexpr llvm::Intrinsic::ID kTid[3] = {llvm::Intrinsic::nvvm_read_ptx_sreg_tid_x,
                                                  llvm::Intrinsic::nvvm_read_ptx_sreg_tid_y,
                                                  llvm::Intrinsic::nvvm_read_ptx_sreg_tid_z};
  static constexpr llvm::Intrinsic::ID kNtid[3] = {llvm::Intrinsic::nvvm_read_ptx_sreg_ntid_x,
                                                   llvm::Intrinsic::nvvm_read_ptx_sreg_ntid_y,
                                                   llvm::Intrinsic::nvvm_read_ptx_sreg_ntid_z};
  static constexpr llvm::Intrinsic::ID kCtaid[3] = {llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_x,
                                                    llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_y,
                                                    llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_z};
  static constexpr llvm::Intrinsic::ID kNctaid[3] = {llvm::Intrinsic::nvvm_read_ptx_sreg_nctaid_x,
                                                     llvm::Intrinsic::nvvm_read_ptx_sreg_nctaid_y,
                                                     llvm::Intrinsic::nvvm_read_ptx_sreg_nctaid_z};
  auto a = static_cast<size_t>(axis);
  switch (quantity) {
    case GroupQuantity::LocalId: return sreg(kTid[a]);
    case GroupQuantity::GroupSize: return sreg(kNtid[a]);
    case GroupQuantity::GroupId: return sreg(kCtaid[a]);
    case GroupQuantity::NumGroups: return sreg(kNctaid[a]);
  }
  return nullptr;
}

// %tid.x + %ntid.x * (%tid.y + %ntid.y * %tid.z), over the group's rank.
llvm::Value* NvptxHooks::lane_in_group() {
  llvm::Value* x = read_group_quantity(GroupQuantity::LocalId, 0);
  if (e_.group_rank() == 1) return x;
  llvm::Value* nx = e_.group_quantity(GroupQuantity::GroupSize, 0);
  llvm::Value* id = builder_.CreateAdd(x, builder_.CreateMul(read_group_quantity(GroupQuantity::LocalId, 1), nx));
  if (e_.group_rank() == 2) return id;
  return builder_.CreateAdd(id, builder_.CreateMul(read_group_quantity(GroupQuantity::LocalId, 2),
                                                   builder_.CreateMul(nx, e_.group_quantity(GroupQuantity::GroupSize, 1))));
}

// --- memory ------------------------------------------------------------------------------

unsigned NvptxHooks::address_space(ir::MemorySpace space) {
  switch (space) {
    case ir::MemorySpace::Shared: return kSharedSpace;
    case ir::MemorySpace::Local: return kLocalSpace;
    case ir::MemorySpace::Global:
    case ir::MemorySpace::Constant: return kGlobalSpace;
  }
  return kGlobalSpace;
}

// A module-level buffer in the shared address space.
llvm::Value* NvptxHooks::allocate_shared(Operation* op, Type m, llvm::ArrayType* array) {
  auto* global = new llvm::GlobalVariable(*e_.module_, array, false, llvm::GlobalValue::InternalLinkage,
                                          llvm::UndefValue::get(array),
                                          std::string(e_.current_ir_function_->symbol_name()) + "_shared_" +
                                              std::to_string(shared_count_++),
                                          nullptr, llvm::GlobalValue::NotThreadLocal, kSharedSpace);
  // At least 16 bytes whatever the alignment asked for: ldmatrix and
  // 16-byte cp.async rely on it (ldmatrix_operand).
  int64_t alignment = std::max<int64_t>(op->int_attr("alignment", 16), 16);
  if (m.swizzle() == ir::Swizzle::Xor) alignment = std::max(alignment, ir::swizzle_alignment(m));
  global->setAlignment(llvm::Align(static_cast<uint64_t>(alignment)));
  return global;
}

// PTX has no 8-bit atomics: `atom.and.b32` / `atom.or.b32` on the aligned
// 32-bit word holding the byte.
void NvptxHooks::update_byte_atomically(llvm::Value* address, llvm::Value* clear, llvm::Value* set) {
  using B = llvm::AtomicRMWInst::BinOp;
  auto relaxed = llvm::AtomicOrdering::Monotonic;
  llvm::Type* i32 = builder_.getInt32Ty();
  // The aligned word holding the byte; little-endian: the byte is bits
  // 8 * (address & 3) of it.
  llvm::Value* within = builder_.CreateAnd(builder_.CreatePtrToInt(address, builder_.getInt64Ty()), builder_.getInt64(3));
  llvm::Value* word = builder_.CreateGEP(builder_.getInt8Ty(), address, builder_.CreateNeg(within));
  llvm::Value* shift = builder_.CreateShl(builder_.CreateTrunc(within, i32), 3);
  builder_.CreateAtomicRMW(B::And, word, builder_.CreateNot(builder_.CreateShl(clear, shift)), llvm::Align(4), relaxed);
  builder_.CreateAtomicRMW(B::Or, word, builder_.CreateShl(set, shift), llvm::Align(4), relaxed);
}

// CUDA's assert (__assertfail: the driver prints file, line, block and
// thread, and the launch fails), then a trap.
llvm::Value* NvptxHooks::report_out_of_bounds(const OutOfBounds& failure) {
  llvm::Type* ptr = builder_.getPtrTy();
  ir::Location loc = failure.op->loc().primary();
  auto* assert_fail = llvm::FunctionType::get(builder_.getVoidTy(),
                                              {ptr, ptr, builder_.getInt32Ty(), ptr, builder_.getInt64Ty()}, false);
  llvm::FunctionCallee callee = e_.module_->getOrInsertFunction("__assertfail", assert_fail);
  std::string message = failure.misaligned_to
                            ? "vector access not aligned to " + std::to_string(failure.misaligned_to) + " bytes (" +
                                  std::string(failure.op->name()) + " at " + failure.where + ")"
                            : std::string(failure.slice_sizes.empty() ? "index" : "slice") + " out of bounds (" +
                                  std::string(failure.op->name()) + " at " + failure.where + ")";
  builder_.CreateCall(callee, {builder_.CreateGlobalString(message, "", 0), builder_.CreateGlobalString(std::string(loc.known() ? loc.file() : ""), "", 0),
                               builder_.getInt32(loc.known() ? loc.line() : 0),
                               builder_.CreateGlobalString(std::string(e_.current_function_->getName()), "", 0),
                               builder_.getInt64(1)});
  e_.intrinsic(llvm::Intrinsic::trap);
  builder_.CreateUnreachable();
  builder_.SetInsertPoint(failure.next);
  return failure.address;
}

// cp.async moves 4, 8 or 16 aligned bytes.
bool NvptxHooks::copy_async(llvm::Value* to, llvm::Value* from, unsigned bytes) {
  if (bytes != 4 && bytes != 8 && bytes != 16) return false;
  llvm::Intrinsic::ID id = bytes == 4   ? llvm::Intrinsic::nvvm_cp_async_ca_shared_global_4
                           : bytes == 8 ? llvm::Intrinsic::nvvm_cp_async_ca_shared_global_8
                                        : llvm::Intrinsic::nvvm_cp_async_ca_shared_global_16;
  e_.intrinsic(id, {to, from});
  return true;
}

// --- lanes working together ------------------------------------------------------------

// shfl.sync over the whole warp; 64-bit values as two 32-bit halves. In a
// group whose last warp is partial (w < 32 lanes), that warp's shuffles name
// its w lanes in the member mask (a full mask there is undefined), and a
// source lane past them gives the lane's own value, as on the CPU.
llvm::Value* NvptxHooks::shuffle(llvm::Value* v, llvm::Value* offset, ir::ShuffleMode mode) {
  llvm::Type* t = v->getType();
  unsigned bits = t->getPrimitiveSizeInBits();
  if (bits == 64) {
    llvm::Value* i = builder_.CreateBitCast(v, builder_.getInt64Ty());
    llvm::Value* lo = shuffle(builder_.CreateTrunc(i, builder_.getInt32Ty()), offset, mode);
    llvm::Value* hi = shuffle(builder_.CreateTrunc(builder_.CreateLShr(i, 32), builder_.getInt32Ty()), offset, mode);
    llvm::Value* joined = builder_.CreateOr(builder_.CreateZExt(lo, builder_.getInt64Ty()),
                                            builder_.CreateShl(builder_.CreateZExt(hi, builder_.getInt64Ty()), 32));
    return builder_.CreateBitCast(joined, t);
  }
  bool f32 = t->isFloatTy();
  llvm::Value* x = v;
  if (!f32) {
    x = builder_.CreateBitCast(v, builder_.getIntNTy(bits));
    if (bits < 32) x = builder_.CreateZExt(x, builder_.getInt32Ty());
  }
  llvm::Intrinsic::ID id = llvm::Intrinsic::not_intrinsic;
  int clamp = 0x1f;
  switch (mode) {
    case ir::ShuffleMode::Down:
      id = f32 ? llvm::Intrinsic::nvvm_shfl_sync_down_f32 : llvm::Intrinsic::nvvm_shfl_sync_down_i32;
      break;
    case ir::ShuffleMode::Up:
      id = f32 ? llvm::Intrinsic::nvvm_shfl_sync_up_f32 : llvm::Intrinsic::nvvm_shfl_sync_up_i32, clamp = 0;
      break;
    case ir::ShuffleMode::Xor:
      id = f32 ? llvm::Intrinsic::nvvm_shfl_sync_bfly_f32 : llvm::Intrinsic::nvvm_shfl_sync_bfly_i32;
      break;
    case ir::ShuffleMode::Idx:
      id = f32 ? llvm::Intrinsic::nvvm_shfl_sync_idx_f32 : llvm::Intrinsic::nvvm_shfl_sync_idx_i32;
      break;
  }
  llvm::Value* lane = builder_.CreateIntCast(offset, builder_.getInt32Ty(), false);
  llvm::Value* members = builder_.getInt32(0xffffffffu);
  llvm::Value* in_partial = nullptr;
  if (int64_t partial = e_.partial_warp_lanes()) {
    in_partial = builder_.CreateICmpUGE(e_.local_linear(),
                                        builder_.getInt64(static_cast<uint64_t>(e_.group_size_static() - partial)));
    members = builder_.CreateSelect(in_partial, builder_.getInt32(static_cast<uint32_t>((uint64_t{1} << partial) - 1)),
                                    members);
  }
  llvm::Value* r = e_.intrinsic(id, {members, x, lane, builder_.getInt32(clamp)});
  if (in_partial) {
    llvm::Value* source = e_.shuffle_source(lane_in_warp(), offset, mode);
    llvm::Value* exists = builder_.CreateICmpULT(source, builder_.getInt64(static_cast<uint64_t>(e_.partial_warp_lanes())));
    r = builder_.CreateSelect(builder_.CreateOr(builder_.CreateNot(in_partial), exists), r, x);
  }
  if (f32) return r;
  if (bits < 32) r = builder_.CreateTrunc(r, builder_.getIntNTy(bits));
  return builder_.CreateBitCast(r, t);
}

// --- floats ------------------------------------------------------------------------------

// The f32 value of a narrow-float code (emit_narrow_decode), through a
// hardware conversion to f16 where the target has one: f16 holds every
// value of these formats exactly, then cvt.f32.f16. fp8_e4m3 on sm_90 and
// newer (cvt.rn.f16x2.e4m3x2), fp6 and fp4 on the arch-specific sm_100a
// and sm_120a-class targets (cvt.rn.f16x2.{e2m3x2,e3m2x2,e2m1x2}). The code
// goes in both halves of the pair, so the pair's order does not matter;
// e4m3's NaN codes (0x7F, 0xFF) take the specification's NaN by a select
// (fp6 and fp4 have none). e5m2 goes through f16 on every GPU target
// (emit_e5m2_decode_through_f16).
llvm::Value* NvptxHooks::decode_narrow(const numerics::Format& format, llvm::Value* code) {
  if (&format == &numerics::fp8_e5m2) return emit_e5m2_decode_through_f16(builder_, code);
  if (code->getType()->isVectorTy()) return emit_narrow_decode(builder_, format, code);
  llvm::Intrinsic::ID id = llvm::Intrinsic::not_intrinsic;
  int shift = 8;  // the second element of the pair: the next byte, or for fp4 the next nibble
  if (&format == &numerics::fp8_e4m3 && arch_.sm >= 90) id = llvm::Intrinsic::nvvm_e4m3x2_to_f16x2_rn;
  if (arch_.arch_specific && arch_.sm >= 100) {
    if (&format == &numerics::fp6_e2m3) id = llvm::Intrinsic::nvvm_e2m3x2_to_f16x2_rn;
    if (&format == &numerics::fp6_e3m2) id = llvm::Intrinsic::nvvm_e3m2x2_to_f16x2_rn;
    if (&format == &numerics::fp4_e2m1) id = llvm::Intrinsic::nvvm_e2m1x2_to_f16x2_rn, shift = 4;
  }
  if (id == llvm::Intrinsic::not_intrinsic) return emit_narrow_decode(builder_, format, code);
  llvm::Value* bits = builder_.CreateAnd(builder_.CreateZExt(code, builder_.getInt16Ty()),
                                         static_cast<uint64_t>((1u << format.bits()) - 1));
  llvm::Value* pair = builder_.CreateOr(bits, builder_.CreateShl(bits, static_cast<uint64_t>(shift)));
  llvm::Value* halves =
      builder_.CreateIntrinsic(llvm::FixedVectorType::get(builder_.getHalfTy(), 2), id, {pair});
  llvm::Value* value = builder_.CreateFPExt(builder_.CreateExtractElement(halves, uint64_t{0}), builder_.getFloatTy());
  if (!format.has_nan()) return value;
  return builder_.CreateSelect(emit_narrow_is_nan(builder_, format, code), emit_narrow_nan(builder_, format, code),
                               value);
}

// sm_90 and newer convert f32 to e4m3/e5m2 in hardware with exactly the
// rules of arith.truncf {rounding = nearest_even, saturate}: round to
// nearest even, out of range and infinities to the largest finite value of
// the sign, NaN to the canonical 0x7F, subnormals kept
// (cvt.rn.satfinite.{e4m3x2,e5m2x2}.f32; the PTX ISA; sm_89 has it from PTX
// 8.1 only, newer than the 7.8 we emit for it). Both halves get the value,
// so the byte taken does not depend on the packing order.
llvm::Value* NvptxHooks::encode_fp8_saturating(const numerics::Format& format, llvm::Value* f32, llvm::Type* to) {
  if (arch_.sm < 90) return nullptr;
  llvm::Intrinsic::ID id = &format == &numerics::fp8_e4m3 ? llvm::Intrinsic::nvvm_ff_to_e4m3x2_rn
                                                           : llvm::Intrinsic::nvvm_ff_to_e5m2x2_rn;
  llvm::Value* pair = builder_.CreateIntrinsic(builder_.getInt16Ty(), id, {f32, f32});
  return builder_.CreateTrunc(pair, to);
}

// libdevice's __nv_* functions (linked in by nvptx.cpp); f32 and f64 only.
llvm::Value* NvptxHooks::math(Operation* op, MathFunction function, llvm::ArrayRef<llvm::Value*> args) {
  const char *f32_name = nullptr, *f64_name = nullptr;
  switch (function) {
    case MathFunction::Exp: f32_name = "__nv_expf", f64_name = "__nv_exp"; break;
    case MathFunction::Log: f32_name = "__nv_logf", f64_name = "__nv_log"; break;
    case MathFunction::Rsqrt: f32_name = "__nv_rsqrtf", f64_name = "__nv_rsqrt"; break;
    case MathFunction::Tanh: f32_name = "__nv_tanhf", f64_name = "__nv_tanh"; break;
    case MathFunction::Sin: f32_name = "__nv_sinf", f64_name = "__nv_sin"; break;
    case MathFunction::Cos: f32_name = "__nv_cosf", f64_name = "__nv_cos"; break;
    case MathFunction::Pow: f32_name = "__nv_powf", f64_name = "__nv_pow"; break;
  }
  llvm::Type* t = args[0]->getType();
  std::string name = t->isDoubleTy() ? f64_name : f32_name;
  if (!t->isFloatTy() && !t->isDoubleTy()) e_.unsupported(op, "'" + std::string(op->name()) + "' on 16-bit floats");
  std::vector<llvm::Type*> params(args.size(), t);
  llvm::FunctionCallee callee = e_.module_->getOrInsertFunction(name, llvm::FunctionType::get(t, params, false));
  return builder_.CreateCall(callee, args);
}

// --- tensor cores ------------------------------------------------------------------------

std::vector<llvm::Value*> NvptxHooks::ldmatrix(llvm::Value* row_address, int count, bool transpose) {
  std::vector<llvm::Value*> words;
  llvm::Intrinsic::ID id =
      count == 4 ? (transpose ? llvm::Intrinsic::nvvm_ldmatrix_sync_aligned_m8n8_x4_trans_b16
                              : llvm::Intrinsic::nvvm_ldmatrix_sync_aligned_m8n8_x4_b16)
                 : (transpose ? llvm::Intrinsic::nvvm_ldmatrix_sync_aligned_m8n8_x2_trans_b16
                              : llvm::Intrinsic::nvvm_ldmatrix_sync_aligned_m8n8_x2_b16);
  llvm::Value* loaded = e_.intrinsic(id, {row_address}, {row_address->getType()});
  for (unsigned j = 0; j < static_cast<unsigned>(count); ++j) words.push_back(builder_.CreateExtractValue(loaded, j));
  return words;
}

std::array<llvm::Value*, 4> NvptxHooks::mma_m16n8k16(const std::array<llvm::Value*, 4>& a,
                                                     const std::array<llvm::Value*, 2>& b,
                                                     std::array<llvm::Value*, 4> c, bool bf16) {
  std::vector<llvm::Value*> args(a.begin(), a.end());
  args.insert(args.end(), b.begin(), b.end());
  args.insert(args.end(), c.begin(), c.end());
  llvm::Value* d = e_.intrinsic(bf16 ? llvm::Intrinsic::nvvm_mma_m16n8k16_row_col_bf16
                                     : llvm::Intrinsic::nvvm_mma_m16n8k16_row_col_f32_f32,
                                args);
  for (unsigned i = 0; i < 4; ++i) c[i] = builder_.CreateExtractValue(d, i);
  return c;
}

// Make the group's shared-memory writes visible to the async proxy
// (Emitter::emit_wgmma, "Ordering").
void NvptxHooks::begin_wgmma() {
  e_.intrinsic(llvm::Intrinsic::nvvm_fence_proxy_async_shared_cta);
  e_.intrinsic(llvm::Intrinsic::nvvm_barrier_cta_sync_aligned_all, {builder_.getInt32(0)});
  e_.intrinsic(llvm::Intrinsic::nvvm_wgmma_fence_sync_aligned);
}

void NvptxHooks::end_wgmma() {
  e_.intrinsic(llvm::Intrinsic::nvvm_wgmma_commit_group_sync_aligned);
  e_.intrinsic(llvm::Intrinsic::nvvm_wgmma_wait_group_sync_aligned, {builder_.getInt64(0)});
}

// The instruction as inline PTX: N/2 accumulators in and out, two descriptors, scale-d = 1 (always
// accumulate; a first mma starts from zeros), no negation, A K-major (0), B
// MN-major (1).
llvm::Value* NvptxHooks::wgmma_m64nNk16(llvm::Value* acc, llvm::Value* a_descriptor, llvm::Value* b_descriptor,
                                        int64_t first, int64_t n, bool bf16) {
  auto constant = [&](int64_t v) { return builder_.getInt64(v); };
  int64_t registers = n / 2;
  std::string type = bf16 ? "bf16" : "f16";
  std::string text = "{\n.reg .pred p;\nsetp.ne.b32 p, $" + std::to_string(2 * registers + 2) +
                     ", 0;\nwgmma.mma_async.sync.aligned.m64n" + std::to_string(n) + "k16.f32." + type + "." + type + " {";
  std::string constraints;
  for (int64_t r = 0; r < registers; ++r) {
    text += (r ? ", $" : "$") + std::to_string(r);
    constraints += (r ? ",=f" : "=f");
  }
  text += "}, $" + std::to_string(2 * registers) + ", $" + std::to_string(2 * registers + 1) + ", p, 1, 1, 0, 1;\n}";
  for (int64_t r = 0; r < registers; ++r) constraints += "," + std::to_string(r);
  constraints += ",l,l,r";
  std::vector<llvm::Type*> outputs(static_cast<size_t>(registers), builder_.getFloatTy());
  std::vector<llvm::Type*> inputs(static_cast<size_t>(registers), builder_.getFloatTy());
  inputs.push_back(builder_.getInt64Ty());
  inputs.push_back(builder_.getInt64Ty());
  inputs.push_back(builder_.getInt32Ty());
  auto* asm_type = llvm::FunctionType::get(llvm::StructType::get(context_, outputs), inputs, false);
  llvm::InlineAsm* wgmma = llvm::InlineAsm::get(asm_type, text, constraints, /*hasSideEffects=*/true);

  std::vector<llvm::Value*> args;
  for (int64_t r = 0; r < registers; ++r) args.push_back(builder_.CreateExtractElement(acc, constant(first + r)));
  args.push_back(a_descriptor);
  args.push_back(b_descriptor);
  args.push_back(builder_.getInt32(1));
  llvm::Value* d = builder_.CreateCall(asm_type, wgmma, args);
  for (int64_t r = 0; r < registers; ++r)
    acc = builder_.CreateInsertElement(acc, builder_.CreateExtractValue(d, static_cast<unsigned>(r)),
                                       constant(first + r));
  return acc;
}

std::unique_ptr<TargetHooks> make_nvptx_hooks(Emitter& emitter, const GpuArch& arch) {
  return std::make_unique<NvptxHooks>(emitter, arch);
}

}  // namespace tessera::codegen::emitter
