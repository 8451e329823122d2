// The CPU target's entries (cpu_hooks.h, docs/abi.md): for each kernel
// `__tessera_cpu_<name>(args, context)`, which checks grid_rank and runs the
// kernel's lanes as fibers (when they synchronise) or in a loop; the table
// `tessera_cpu_kernels` and `tessera_cpu_abi_version`; the module's own
// __truncsfbf2.
#include "codegen/emitter/cpu_hooks.h"
#include "codegen/emitter/cpu_lane_loops.h"

#include <llvm/Transforms/Utils/Cloning.h>

#include <algorithm>
#include <cstdint>

namespace tessera::codegen::emitter {

void CpuHooks::finish_module() {
  llvm::Type* ptr = builder_.getPtrTy();
  auto* entry_type = llvm::FunctionType::get(builder_.getVoidTy(), {ptr, ptr}, false);
  auto* table_entry = llvm::StructType::get(context_, {ptr, ptr, builder_.getInt64Ty(), builder_.getInt64Ty()});
  std::vector<llvm::Constant*> table;
  for (Operation* f : kernels_) {
    std::string name(f->symbol_name());
    auto* entry = llvm::Function::Create(entry_type, llvm::GlobalValue::InternalLinkage, "__tessera_cpu_" + name,
                                         e_.module_.get());
    emit_entry(f, entry);
    auto* name_constant = builder_.CreateGlobalString(name, "__tessera_cpu_name_" + name, 0, e_.module_.get());
    table.push_back(llvm::ConstantStruct::get(
        table_entry, {name_constant, entry, builder_.getInt64(static_shared_bytes_[f]),
                      builder_.getInt64(scratch_bytes_per_lane_[f])}));
  }
  table.push_back(llvm::Constant::getNullValue(table_entry));
  auto* array = llvm::ArrayType::get(table_entry, table.size());
  new llvm::GlobalVariable(*e_.module_, array, true, llvm::GlobalValue::ExternalLinkage,
                           llvm::ConstantArray::get(array, table), "tessera_cpu_kernels");
  new llvm::GlobalVariable(*e_.module_, builder_.getInt32Ty(), true, llvm::GlobalValue::ExternalLinkage,
                           builder_.getInt32(target_.abi_version), "tessera_cpu_abi_version");
  define_bf16_truncation();
}

// Whether `f` (or a function it calls) synchronises lanes: then its lanes
// run as fibers (run_lanes), else in a plain loop.
bool CpuHooks::synchronises(Operation* f) {
  auto it = synchronises_.find(f);
  if (it != synchronises_.end()) return it->second;
  synchronises_[f] = false;  // recursion: decided by the other calls
  bool found = false;
  f->walk([&](Operation* op) {
    if (op->is(OpKind::Barrier) || op->is(OpKind::Shuffle) || op->is(OpKind::WarpReduce)) found = true;
    if (op->is(OpKind::Mma) && e_.tensor_core_path(op)) found = true;  // emulated: warp exchanges
    if (op->is(OpKind::Call))
      if (Operation* callee = ir::lookup_function(e_.ir_module_, op->attr("callee").string_value()))
        found = found || synchronises(callee);
  });
  return synchronises_[f] = found;
}

// Loads the kernel's flattened parameters from the argument array.
std::vector<llvm::Value*> CpuHooks::unpack_arguments(llvm::Function* lane_function, llvm::Value* args) {
  std::vector<llvm::Value*> values{launch_context_, nullptr};
  for (unsigned j = 2; j < lane_function->arg_size(); ++j) {
    llvm::Type* t = lane_function->getArg(j)->getType();
    llvm::Value* slot = builder_.CreateLoad(builder_.getPtrTy(),
                                            builder_.CreateConstInBoundsGEP1_64(builder_.getPtrTy(), args, j - 2));
    llvm::Value* v = t->isIntegerTy(1) ? builder_.CreateTrunc(builder_.CreateLoad(builder_.getInt8Ty(), slot), t)
                                       : builder_.CreateLoad(t, slot);
    values.push_back(v);
  }
  return values;
}

// The body of kernel f's entry(args, context): the grid_rank check, then
// the lanes.
void CpuHooks::emit_entry(Operation* f, llvm::Function* entry) {
  std::string name(f->symbol_name());
  llvm::Function* lanes = e_.functions_.at(name);
  llvm::Type* ptr = builder_.getPtrTy();
  LanePlan plan(e_, f);
  llvm::Function* group = nullptr;
  if (plan.unsupported_reason().empty() && !target_.lanes_as_fibers) {
    // The group function: (context, scratch, the lane function's parameters).
    std::vector<llvm::Type*> params{ptr, ptr};
    for (unsigned j = 2; j < lanes->arg_size(); ++j) params.push_back(lanes->getArg(j)->getType());
    group = llvm::Function::Create(llvm::FunctionType::get(builder_.getVoidTy(), params, false),
                                   llvm::GlobalValue::InternalLinkage, name + ".group", e_.module_.get());
    group->addFnAttr(llvm::Attribute::AlwaysInline);
    group->addParamAttr(0, llvm::Attribute::NoAlias);  // the context: nothing the kernel stores changes it
    group->addParamAttr(1, llvm::Attribute::NoAlias);  // the scratch block: the lanes' slots only
    LaneLoops loops(e_, *this, f, plan);
    scratch_bytes_per_lane_[f] = loops.emit(group);
    static_shared_bytes_[f] = std::max(static_shared_bytes_[f], shared_bytes_);
  }
  builder_.SetInsertPoint(llvm::BasicBlock::Create(context_, "entry", entry));
  builder_.SetCurrentDebugLocation(llvm::DebugLoc());
  launch_context_ = entry->getArg(1);
  if (Emitter::grid_rank(f) < 3) {  // grid_rank=N: a grid with more axes fails the launch, no group runs
    auto* fail = llvm::BasicBlock::Create(context_, "grid_rank_exceeded", entry);
    auto* next = llvm::BasicBlock::Create(context_, "grid_rank_ok", entry);
    builder_.CreateCondBr(builder_.CreateICmpEQ(e_.grid_sizes_past_rank(f), builder_.getInt64(1)), next, fail);
    builder_.SetInsertPoint(fail);
    builder_.CreateCall(llvm::FunctionType::get(builder_.getVoidTy(), {ptr, ptr}, false),
                        context_field(cpu_context::kReportError, ptr),
                        {launch_context_, builder_.CreateGlobalString(grid_rank_message(f), "", 0)});
    builder_.CreateRetVoid();
    builder_.SetInsertPoint(next);
  }
  if (group) return run_group_function(f, entry, group);
  if (!synchronises(f) && !target_.lanes_as_fibers) return run_lanes_in_loop(f, entry, lanes);
  // A fiber per lane: its body is a trampoline that unpacks the arguments.
  auto* lane_type = llvm::FunctionType::get(builder_.getVoidTy(), {ptr, ptr, builder_.getInt64Ty()}, false);
  auto* fiber = llvm::Function::Create(lane_type, llvm::GlobalValue::InternalLinkage, name + ".fiber", e_.module_.get());
  llvm::Value* run_lanes = context_field(cpu_context::kRunLanes, ptr);
  builder_.CreateCall(llvm::FunctionType::get(builder_.getVoidTy(), {ptr, ptr, ptr}, false), run_lanes,
                      {launch_context_, fiber, entry->getArg(0)});
  builder_.CreateRetVoid();
  builder_.SetInsertPoint(llvm::BasicBlock::Create(context_, "entry", fiber));
  launch_context_ = fiber->getArg(1);
  std::vector<llvm::Value*> values = unpack_arguments(lanes, fiber->getArg(0));
  values[1] = fiber->getArg(2);
  builder_.CreateCall(lanes, values);
  builder_.CreateRetVoid();
}

std::string CpuHooks::grid_rank_message(Operation* f) {
  int64_t rank = Emitter::grid_rank(f);
  return "kernel '" + std::string(f->symbol_name()) + "' declares grid_rank=" + std::to_string(rank) +
         " but was launched on a grid with more axes (a size other than 1 past axis " + std::to_string(rank - 1) + ")";
}

// No lane waits for another: one loop over the lanes, which LLVM may
// vectorise. The lanes read a private copy of the context: nothing the
// kernel stores can alias it, so its fields are loaded once.
void CpuHooks::run_lanes_in_loop(Operation* f, llvm::Function* entry, llvm::Function* lanes) {
  auto* copy = builder_.CreateAlloca(llvm::ArrayType::get(builder_.getInt8Ty(), cpu_context::kContextBytes));
  copy->setAlignment(llvm::Align(8));
  builder_.CreateMemCpy(copy, llvm::Align(8), launch_context_, llvm::Align(8), cpu_context::kContextBytes);
  launch_context_ = copy;
  std::vector<llvm::Value*> values = unpack_arguments(lanes, entry->getArg(0));
  llvm::Value* count = builder_.CreateMul(
      builder_.CreateMul(context_u32(cpu_context::kGroup, 0), context_u32(cpu_context::kGroup, 1)),
      context_u32(cpu_context::kGroup, 2));
  // Lanes are independent between barriers (a race between lanes is
  // undefined, as on the GPU): the loop's accesses are marked parallel
  // so that the vectoriser needs no dependence checks. (Forcing
  // vectorize.enable would make LLVM warn on stderr about the loops it
  // cannot vectorise; its cost model decides.)
  llvm::MDNode* group = llvm::MDNode::getDistinct(context_, {});
  for (llvm::BasicBlock& block : *lanes)
    for (llvm::Instruction& instruction : block)
      if ((llvm::isa<llvm::LoadInst>(instruction) || llvm::isa<llvm::StoreInst>(instruction)) &&
          !instruction.isAtomic())
        instruction.setMetadata(llvm::LLVMContext::MD_access_group, group);
  auto* exit = llvm::BasicBlock::Create(context_, "done", entry);
  auto lane_loop = [&](std::vector<llvm::Value*> arguments, const char* label) {
    llvm::BasicBlock* preheader = builder_.GetInsertBlock();
    auto* body = llvm::BasicBlock::Create(context_, label, entry);
    builder_.CreateBr(body);
    builder_.SetInsertPoint(body);
    llvm::PHINode* lane = builder_.CreatePHI(builder_.getInt64Ty(), 2);
    lane->addIncoming(builder_.getInt64(0), preheader);
    arguments[1] = lane;
    builder_.CreateCall(lanes, arguments);
    llvm::Value* next = builder_.CreateAdd(lane, builder_.getInt64(1));
    lane->addIncoming(next, body);
    llvm::Instruction* latch = builder_.CreateCondBr(builder_.CreateICmpULT(next, count), body, exit);
    llvm::Metadata* parts[] = {
        nullptr, llvm::MDNode::get(context_, {llvm::MDString::get(context_, "llvm.loop.parallel_accesses"), group})};
    llvm::MDNode* loop = llvm::MDNode::getDistinct(context_, parts);
    loop->replaceOperandWith(0, loop);
    latch->setMetadata(llvm::LLVMContext::MD_loop, loop);
  };
  // Two versions: one where every tensor's innermost stride is 1 (the
  // usual contiguous case: consecutive lanes touch consecutive
  // elements, so the vectoriser uses plain vector loads), one general.
  std::vector<llvm::Value*> unit;
  llvm::Value* contiguous = contiguous_arguments(f, values, unit);
  auto* unit_block = llvm::BasicBlock::Create(context_, "contiguous", entry);
  auto* general_block = llvm::BasicBlock::Create(context_, "strided", entry);
  builder_.CreateCondBr(contiguous, unit_block, general_block);
  builder_.SetInsertPoint(unit_block);
  lane_loop(unit, "lanes.contiguous");
  builder_.SetInsertPoint(general_block);
  lane_loop(values, "lanes");
  builder_.SetInsertPoint(exit);
  builder_.CreateRetVoid();
}

// The rule for a kernel's contiguous version (docs/abi.md, "Contiguous
// variants"; the runtime's tessContiguousVariantApplies for GPU code): every
// tensor's innermost stride is 1 (or its innermost extent at most 1), its
// strides are not negative and below 2^31, every non-empty tensor's data is
// 16-byte aligned, and no tensor the kernel writes shares a byte with
// another. `unit` gets `values` (the lane function's arguments) with the
// innermost strides replaced by the constant 1; `pointers` the positions of
// the tensors' pointers in them.
llvm::Value* CpuHooks::contiguous_arguments(Operation* f, const std::vector<llvm::Value*>& values,
                                            std::vector<llvm::Value*>& unit, std::vector<unsigned>* pointers) {
  unit = values;
  llvm::Type* i64 = builder_.getInt64Ty();
  llvm::Value* contiguous = builder_.getTrue();
  struct Span {
    llvm::Value *begin, *end;
    bool written;
  };
  std::vector<Span> spans;
  std::vector<int64_t> mut = f->attr("mut_args") ? f->attr("mut_args").int_array() : std::vector<int64_t>{};
  Type fn = f->attr("function_type").type();
  size_t next = 2;
  for (size_t i = 0; i < fn.num_inputs(); ++i) {
    Type t = fn.input(i);
    if (!t.is(TypeKind::MemRef)) {
      ++next;
      continue;
    }
    size_t rank = t.rank();
    if (pointers) pointers->push_back(static_cast<unsigned>(next));
    llvm::Value* begin = builder_.CreatePtrToInt(values[next], i64);
    llvm::Value* last = builder_.getInt64(0);  // the highest element offset
    llvm::Value* empty = builder_.getFalse();
    for (size_t d = 0; d < rank; ++d) {
      llvm::Value* size = values[next + 1 + d];
      llvm::Value* stride = values[next + 1 + rank + d];
      empty = builder_.CreateOr(empty, builder_.CreateICmpSLE(size, builder_.getInt64(0)));
      contiguous = builder_.CreateAnd(contiguous, builder_.CreateICmpULE(stride, builder_.getInt64(INT32_MAX)));
      last = builder_.CreateAdd(last, builder_.CreateMul(builder_.CreateSub(size, builder_.getInt64(1)), stride));
    }
    if (rank > 0) {
      llvm::Value* size = values[next + rank];
      llvm::Value* stride = values[next + 2 * rank];
      llvm::Value* unit_stride = builder_.CreateOr(builder_.CreateICmpEQ(stride, builder_.getInt64(1)),
                                                   builder_.CreateICmpSLE(size, builder_.getInt64(1)));
      contiguous = builder_.CreateAnd(contiguous, unit_stride);
      unit[next + 2 * rank] = builder_.getInt64(1);
    }
    auto bits = static_cast<uint64_t>(scalar_info(t.scalar()).bits);
    if (t.scalar() == ScalarType::Bool) bits = 8;
    llvm::Value* bytes = builder_.CreateUDiv(builder_.CreateAdd(builder_.CreateMul(builder_.CreateAdd(last, builder_.getInt64(1)),
                                                                                    builder_.getInt64(bits)),
                                                                builder_.getInt64(7)),
                                             builder_.getInt64(8));
    bytes = builder_.CreateSelect(empty, builder_.getInt64(0), bytes);
    llvm::Value* aligned = builder_.CreateICmpEQ(builder_.CreateAnd(begin, builder_.getInt64(15)), builder_.getInt64(0));
    contiguous = builder_.CreateAnd(contiguous, builder_.CreateOr(empty, aligned));
    bool written = std::find(mut.begin(), mut.end(), static_cast<int64_t>(i)) != mut.end();
    spans.push_back({begin, builder_.CreateAdd(begin, bytes), written});
    next += 1 + 2 * rank;
  }
  for (size_t i = 0; i < spans.size(); ++i) {
    if (!spans[i].written) continue;
    for (size_t j = 0; j < spans.size(); ++j) {
      if (j == i) continue;
      // Empty tensors (begin == end) overlap nothing.
      llvm::Value* overlap = builder_.CreateAnd(builder_.CreateICmpULT(spans[j].begin, spans[i].end),
                                                builder_.CreateICmpULT(spans[i].begin, spans[j].end));
      overlap = builder_.CreateAnd(overlap, builder_.CreateICmpNE(spans[i].begin, spans[i].end));
      overlap = builder_.CreateAnd(overlap, builder_.CreateICmpNE(spans[j].begin, spans[j].end));
      contiguous = builder_.CreateAnd(contiguous, builder_.CreateNot(overlap));
    }
  }
  return contiguous;
}

// Lanes as loops (cpu_lane_loops.h): the group function, inlined twice: a
// copy for contiguous tensors (unit innermost strides, tensor pointers
// noalias) and the general one.
void CpuHooks::run_group_function(Operation* f, llvm::Function* entry, llvm::Function* group) {
  llvm::Function* lanes = e_.functions_.at(std::string(f->symbol_name()));
  std::vector<llvm::Value*> values = unpack_arguments(lanes, entry->getArg(0));
  values[1] = context_field(cpu_context::kScratch, builder_.getPtrTy());
  std::vector<llvm::Value*> unit;
  std::vector<unsigned> pointers;
  llvm::Value* contiguous = contiguous_arguments(f, values, unit, &pointers);
  llvm::ValueToValueMapTy map;
  llvm::Function* unit_group = llvm::CloneFunction(group, map);
  unit_group->setName(group->getName() + ".contiguous");
  for (unsigned p : pointers) unit_group->addParamAttr(p, llvm::Attribute::NoAlias);
  auto* unit_block = llvm::BasicBlock::Create(context_, "contiguous", entry);
  auto* general_block = llvm::BasicBlock::Create(context_, "strided", entry);
  auto* exit = llvm::BasicBlock::Create(context_, "done", entry);
  builder_.CreateCondBr(contiguous, unit_block, general_block);
  builder_.SetInsertPoint(unit_block);
  builder_.CreateCall(unit_group, unit);
  builder_.CreateBr(exit);
  builder_.SetInsertPoint(general_block);
  builder_.CreateCall(group, values);
  builder_.CreateBr(exit);
  builder_.SetInsertPoint(exit);
  builder_.CreateRetVoid();
}

// x86's back end moves bf16 values through f32 (vector lanes, calls) and
// rounds them back with __truncsfbf2, which libgcc before GCC 13 lacks. The
// module brings its own (weak, hidden: objects never clash, and a libgcc
// that has it is not needed), with the exact rounding of truncate_float.
void CpuHooks::define_bf16_truncation() {
  llvm::Module& module = *e_.module_;
  bool uses_bf16 = false;
  for (const llvm::Function& f : module) {
    for (const llvm::Argument& a : f.args()) uses_bf16 |= a.getType()->getScalarType()->isBFloatTy();
    for (const llvm::BasicBlock& b : f)
      for (const llvm::Instruction& i : b) {
        uses_bf16 |= i.getType()->getScalarType()->isBFloatTy();
        for (const llvm::Value* v : i.operands()) uses_bf16 |= v->getType()->getScalarType()->isBFloatTy();
      }
  }
  if (!uses_bf16 || module.getFunction("__truncsfbf2")) return;
  auto* type = llvm::FunctionType::get(builder_.getBFloatTy(), {builder_.getFloatTy()}, false);
  auto* f = llvm::Function::Create(type, llvm::GlobalValue::WeakODRLinkage, "__truncsfbf2", &module);
  f->setVisibility(llvm::GlobalValue::HiddenVisibility);
  f->addFnAttr(llvm::Attribute::NoUnwind);
  f->addFnAttr(llvm::Attribute::getWithMemoryEffects(context_, llvm::MemoryEffects::none()));
  llvm::IRBuilderBase::InsertPointGuard guard(builder_);
  builder_.SetInsertPoint(llvm::BasicBlock::Create(context_, "entry", f));
  builder_.SetCurrentDebugLocation(llvm::DebugLoc());
  builder_.CreateRet(truncate_float(f->getArg(0), builder_.getBFloatTy()));
}

}  // namespace tessera::codegen::emitter
