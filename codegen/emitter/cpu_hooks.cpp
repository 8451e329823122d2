// The emitter's CPU hooks (cpu_hooks.h, target_hooks.h).
#include "codegen/emitter/cpu_hooks.h"

#include <llvm/TargetParser/Triple.h>

#include <algorithm>

namespace tessera::codegen::emitter {

// --- the module and its functions ----------------------------------------------------

void CpuHooks::set_up_module(llvm::Module& module) {
  module.setTargetTriple(llvm::Triple(target_.triple));
  module.setDataLayout(target_.data_layout);
}

// Every function receives the launch context and its lane.
std::vector<llvm::Type*> CpuHooks::context_parameters() { return {builder_.getPtrTy(), builder_.getInt64Ty()}; }

llvm::Function* CpuHooks::create_function(Operation* f, llvm::FunctionType* type) {
  bool kernel = f->has_attr("kernel");
  // The kernel's lanes are internal; the entry (cpu_entries.cpp) is what the runtime calls.
  auto* function = llvm::Function::Create(type, llvm::GlobalValue::InternalLinkage,
                                          std::string(f->symbol_name()) + (kernel ? ".lane" : ""), e_.module_.get());
  if (kernel) {
    function->addFnAttr(llvm::Attribute::AlwaysInline);
    kernels_.push_back(f);
  }
  return function;
}

unsigned CpuHooks::begin_function(Operation*, llvm::Function* function) {
  shared_bytes_ = 0;
  launch_context_ = function->getArg(0);
  lane_ = function->getArg(1);
  return 2;
}

llvm::Align CpuHooks::vector_alignment(llvm::Type* vector) {
  return llvm::Align(e_.module_->getDataLayout().getTypeStoreSize(vector->getScalarType()));
}

llvm::Value* CpuHooks::context_field(uint64_t offset, llvm::Type* type) {
  return builder_.CreateLoad(type, builder_.CreateConstInBoundsGEP1_64(builder_.getInt8Ty(), launch_context_, offset));
}

llvm::Value* CpuHooks::context_u32(uint64_t offset, int64_t index) {
  return builder_.CreateZExt(context_field(offset + 4 * static_cast<uint64_t>(index), builder_.getInt32Ty()),
                             builder_.getInt64Ty());
}

// --- lanes and groups --------------------------------------------------------------------

// From the launch context and the lane (lane = x + group[0] * (y + group[1] * z)).
llvm::Value* CpuHooks::read_group_quantity(GroupQuantity quantity, int64_t axis) {
  switch (quantity) {
    case GroupQuantity::GroupSize: return context_u32(cpu_context::kGroup, axis);
    case GroupQuantity::GroupId: return context_u32(cpu_context::kGroupId, axis);
    case GroupQuantity::NumGroups: return context_u32(cpu_context::kGrid, axis);
    case GroupQuantity::LocalId: break;
  }
  if (local_ids_[static_cast<size_t>(axis)]) return local_ids_[static_cast<size_t>(axis)];
  llvm::Value* nx = context_u32(cpu_context::kGroup, 0);
  if (axis == 0) return builder_.CreateURem(lane_, nx);
  llvm::Value* ny = context_u32(cpu_context::kGroup, 1);
  if (axis == 1) return builder_.CreateURem(builder_.CreateUDiv(lane_, nx), ny);
  return builder_.CreateUDiv(lane_, builder_.CreateMul(nx, ny));
}

llvm::Value* CpuHooks::lane_in_warp() { return builder_.CreateAnd(lane_, builder_.getInt64(31)); }

// --- memory ------------------------------------------------------------------------------

// The group's block of shared memory (context->shared, 64-byte aligned)
// holds the allocations one after another.
llvm::Value* CpuHooks::allocate_shared(Operation* op, Type m, llvm::ArrayType* array) {
  if (!e_.current_ir_function_->has_attr("kernel"))
    e_.unsupported(op, "allocating shared memory outside a kernel on the CPU target");
  // The block is 64-byte aligned; larger alignments (bank-conflict
  // padding for the GPU) only matter for speed there.
  uint64_t alignment = std::min<uint64_t>(static_cast<uint64_t>(op->int_attr("alignment", 16)), 64);
  // A swizzled buffer starts at an offset aligned as on the GPU, so that
  // the emulated wgmma's swizzle of offsets (EmulatedMma::Wgmma) sees
  // the address bits the tensor cores see.
  if (m.swizzle() == ir::Swizzle::Xor)
    alignment = std::max(alignment, static_cast<uint64_t>(ir::swizzle_alignment(m)));
  shared_bytes_ = (shared_bytes_ + alignment - 1) / alignment * alignment;
  llvm::Value* block = context_field(cpu_context::kShared, builder_.getPtrTy());
  llvm::Value* base = builder_.CreateConstInBoundsGEP1_64(builder_.getInt8Ty(), block, shared_bytes_);
  shared_bytes_ += e_.module_->getDataLayout().getTypeAllocSize(array);
  return base;
}

// Relaxed `atomicrmw and/or` on the byte.
void CpuHooks::update_byte_atomically(llvm::Value* address, llvm::Value* clear, llvm::Value* set) {
  using B = llvm::AtomicRMWInst::BinOp;
  auto relaxed = llvm::AtomicOrdering::Monotonic;
  llvm::Type* i8 = builder_.getInt8Ty();
  builder_.CreateAtomicRMW(B::And, address, builder_.CreateTrunc(builder_.CreateNot(clear), i8), llvm::Align(1), relaxed);
  builder_.CreateAtomicRMW(B::Or, address, builder_.CreateTrunc(set, i8), llvm::Align(1), relaxed);
}

// The indices (or the slice) and the shape with the .tsr location through
// the launch context's report_error (the launch fails with that message);
// the access goes on with a harmless address, a sink of 256 bytes (the
// widest vector is 64 bytes), and a slice's view with the sink as its base.
llvm::Value* CpuHooks::report_out_of_bounds(const OutOfBounds& failure) {
  llvm::Type* ptr = builder_.getPtrTy();
  llvm::Function* function = e_.current_function_;
  const bool slice = !failure.slice_sizes.empty();
  std::string format = failure.where + ": out-of-bounds " + std::string(failure.op->name()) + ": ";
  std::vector<llvm::Value*> args;
  if (failure.misaligned_to) {
    // Not out of bounds: a vector in a shared or local buffer at an address
    // a GPU cannot read as one (Emitter::check_vector_alignment).
    std::string bytes = std::to_string(failure.misaligned_to);
    format = failure.where + ": misaligned " + std::string(failure.op->name()) + ": a " +
             std::to_string(failure.span) + "-element vector %lld bytes past a " + bytes +
             "-byte boundary in shared or local memory (a GPU reads it only at multiples of " + bytes + " bytes)";
    args.push_back(builder_.CreateAnd(builder_.CreatePtrToInt(failure.address, builder_.getInt64Ty()),
                                      builder_.getInt64(static_cast<int64_t>(failure.misaligned_to - 1))));
  } else if (slice) {
    format += "slice [";
    for (size_t d = 0; d < failure.indices.size(); ++d) {
      format += d ? ", %lld:%lld" : "%lld:%lld";
      args.push_back(failure.indices[d]);
      args.push_back(builder_.CreateAdd(failure.indices[d], builder_.getInt64(failure.slice_sizes[d])));
    }
    format += "]";
  } else {
    format += "index (";
    for (size_t d = 0; d < failure.indices.size(); ++d) {
      format += d ? ", %lld" : "%lld";
      args.push_back(failure.indices[d]);
    }
    format += ")";
    if (failure.span > 1) format += " of a " + std::to_string(failure.span) + "-element vector";
  }
  if (!failure.misaligned_to) {
    format += " in a view of shape (";
    for (size_t d = 0; d < failure.indices.size(); ++d) {
      format += d ? ", %lld" : "%lld";
      args.push_back(failure.view.sizes[d]);
    }
    format += ")";
  }
  // In the entry block: a check inside a loop must not grow the stack.
  llvm::IRBuilder<> entry(&function->getEntryBlock(), function->getEntryBlock().begin());
  llvm::Value* buffer = entry.CreateAlloca(builder_.getInt8Ty(), builder_.getInt64(512));
  std::vector<llvm::Value*> call_args{buffer, builder_.getInt64(512), builder_.CreateGlobalString(format, "", 0)};
  call_args.insert(call_args.end(), args.begin(), args.end());
  llvm::FunctionCallee snprintf = e_.module_->getOrInsertFunction(
      "snprintf", llvm::FunctionType::get(builder_.getInt32Ty(), {ptr, builder_.getInt64Ty(), ptr}, true));
  builder_.CreateCall(snprintf, call_args);
  auto* report_type = llvm::FunctionType::get(builder_.getVoidTy(), {ptr, ptr}, false);
  builder_.CreateCall(report_type, context_field(cpu_context::kReportError, ptr), {launch_context_, buffer});
  builder_.CreateBr(failure.next);
  builder_.SetInsertPoint(failure.next);
  if (!out_of_bounds_sink_) {
    auto* array = llvm::ArrayType::get(builder_.getInt8Ty(), 256);
    out_of_bounds_sink_ = new llvm::GlobalVariable(*e_.module_, array, false, llvm::GlobalValue::InternalLinkage,
                                                   llvm::ConstantAggregateZero::get(array), "__tessera_out_of_bounds_sink");
    out_of_bounds_sink_->setAlignment(llvm::Align(64));
  }
  if (slice) return out_of_bounds_sink_;
  llvm::PHINode* phi = builder_.CreatePHI(ptr, 2);
  phi->addIncoming(failure.address, failure.before);
  phi->addIncoming(out_of_bounds_sink_, failure.fail);
  return phi;
}

// --- lanes working together ------------------------------------------------------------

// The runtime's barrier across the group's fibers (tessCpuLaunchContext::barrier).
void CpuHooks::barrier() {
  llvm::Type* ptr = builder_.getPtrTy();
  builder_.CreateCall(llvm::FunctionType::get(builder_.getVoidTy(), {ptr}, false),
                      context_field(cpu_context::kBarrier, ptr), {launch_context_});
}

// A warp exchange through the runtime (tessCpuLaunchContext::shuffle): the
// source lane in the warp by PTX's rules for shfl.sync with the clamps this
// backend uses; a source outside the warp returns the lane's own value.
llvm::Value* CpuHooks::shuffle(llvm::Value* v, llvm::Value* offset, ir::ShuffleMode mode) {
  llvm::Type* t = v->getType();
  unsigned bits = static_cast<unsigned>(e_.module_->getDataLayout().getTypeSizeInBits(t));
  llvm::Value* source = e_.shuffle_source(builder_.CreateAnd(lane_, builder_.getInt64(31)), offset, mode);
  llvm::Value* bits_value = builder_.CreateBitCast(v, builder_.getIntNTy(bits));
  llvm::Value* wide = builder_.CreateZExt(bits_value, builder_.getInt64Ty());
  llvm::Type* ptr = builder_.getPtrTy();
  auto* type = llvm::FunctionType::get(builder_.getInt64Ty(), {ptr, builder_.getInt64Ty(), builder_.getInt32Ty()}, false);
  llvm::Value* r = builder_.CreateCall(type, context_field(cpu_context::kShuffle, ptr),
                                       {launch_context_, wide, builder_.CreateTrunc(source, builder_.getInt32Ty())});
  return builder_.CreateBitCast(builder_.CreateTrunc(r, builder_.getIntNTy(bits)), t);
}

// --- floats ------------------------------------------------------------------------------

// fptrunc, except f32 -> bf16: LLVM lowers that to a call of __truncsfbf2,
// which older libgcc lack (objects must link anywhere), so it is emitted
// here as the exact round-to-nearest-even sequence, bit for bit what the
// GPU's cvt.rn.bf16.f32 gives (a NaN becomes the canonical 0x7fff). To
// bf16 the source is f32: the emitter rounds an f64 to odd first
// (Emitter::convert_float), which rounding it to nearest here would undo.
llvm::Value* CpuHooks::truncate_float(llvm::Value* value, llvm::Type* to) {
  if (!to->getScalarType()->isBFloatTy()) return builder_.CreateFPTrunc(value, to);
  llvm::Type* from = value->getType();
  if (!from->getScalarType()->isFloatTy()) internal_error("codegen", "a conversion to bf16 from a type other than f32");
  auto vector_of = [&](llvm::Type* element) -> llvm::Type* {
    if (auto* v = llvm::dyn_cast<llvm::VectorType>(from)) return llvm::VectorType::get(element, v->getElementCount());
    return element;
  };
  llvm::Type* i32 = vector_of(builder_.getInt32Ty());
  llvm::Type* i16 = vector_of(builder_.getInt16Ty());
  auto constant = [&](uint64_t v) { return llvm::ConstantInt::get(i32, v); };
  llvm::Value* bits = builder_.CreateBitCast(value, i32);
  llvm::Value* lsb = builder_.CreateAnd(builder_.CreateLShr(bits, constant(16)), constant(1));
  llvm::Value* rounded = builder_.CreateAdd(builder_.CreateAdd(bits, constant(0x7fff)), lsb);
  llvm::Value* nearest = builder_.CreateTrunc(builder_.CreateLShr(rounded, constant(16)), i16);
  llvm::Value* quiet_nan = llvm::ConstantInt::get(i16, 0x7fff);  // the canonical NaN, as cvt gives
  llvm::Value* is_nan = builder_.CreateFCmpUNO(value, value);
  return builder_.CreateBitCast(builder_.CreateSelect(is_nan, quiet_nan, nearest), to);
}

// The integer sequences everywhere (the GPU's hardware conversions have no
// CPU counterpart giving the same bits).
llvm::Value* CpuHooks::decode_narrow(const numerics::Format& format, llvm::Value* code) {
  return emit_narrow_decode(builder_, format, code);
}

// The host's libm through LLVM's math intrinsics (the same functions C++'s
// <cmath> calls).
llvm::Value* CpuHooks::math(Operation*, MathFunction function, llvm::ArrayRef<llvm::Value*> args) {
  llvm::Type* t = args[0]->getType();
  auto call = [&](llvm::Intrinsic::ID id) { return e_.intrinsic(id, args, {t}); };
  switch (function) {
    case MathFunction::Exp: return call(llvm::Intrinsic::exp);
    case MathFunction::Log: return call(llvm::Intrinsic::log);
    case MathFunction::Tanh: return call(llvm::Intrinsic::tanh);
    case MathFunction::Sin: return call(llvm::Intrinsic::sin);
    case MathFunction::Cos: return call(llvm::Intrinsic::cos);
    case MathFunction::Pow: return call(llvm::Intrinsic::pow);
    case MathFunction::Rsqrt:
      return builder_.CreateFDiv(llvm::ConstantFP::get(t, 1.0), e_.intrinsic(llvm::Intrinsic::sqrt, args, {t}));
  }
  return nullptr;
}

// --- tensor cores ------------------------------------------------------------------------

// The offset in the group's block of shared memory: the emulated wgmma
// reads its operands from there (Emitter::emulate_wgmma).
llvm::Value* CpuHooks::wgmma_address(llvm::Value* pointer_bits) {
  return builder_.CreateSub(pointer_bits, builder_.CreatePtrToInt(shared_block(), builder_.getInt64Ty()));
}

std::unique_ptr<TargetHooks> make_cpu_hooks(Emitter& emitter, const HostTarget& target) {
  return std::make_unique<CpuHooks>(emitter, target);
}

}  // namespace tessera::codegen::emitter
