// Host functions (emitter.h; docs/abi.md, "Host functions"): a @jit function
// or the program after bufferize, as
//
//   i32 __tessera_host_<name>(ptr context, ptr args, ptr results)
//
// `args` holds pointers to the flattened parameters (the kernel ABI's
// layout: a tensor is its data address, sizes and strides); `results[i]`
// points at a tessTensor (or a scalar) to fill. The body's host operations
// call the runtime through the context's service table; a failing call
// returns its status at once (tessHostCall frees what the call allocated).
// The module exports `tessera_host_functions`, a table of {name, function}
// ended by a null name, and `tessera_host_abi_version`.
#include "codegen/emitter/emitter.h"
#include "support/diagnostics/internal_error.h"

namespace tessera::codegen::emitter {

namespace {

constexpr unsigned kHostAbiVersion = 7;  // TESS_HOST_ABI_VERSION
constexpr unsigned kMaxRank = 8;         // TESS_MAX_RANK
// tessTensor: u64 data, i32 dtype, i32 rank, i64 shape[8], i64 strides[8].
constexpr uint64_t kTensorDtype = 8, kTensorRank = 12, kTensorShape = 16, kTensorStrides = 80, kTensorBytes = 144;

}  // namespace

void Emitter::declare_host(Operation* f) {
  llvm::Type* ptr = builder_.getPtrTy();
  auto* type = llvm::FunctionType::get(builder_.getInt32Ty(), {ptr, ptr, ptr}, false);
  std::string name(f->symbol_name());
  auto* function = llvm::Function::Create(type, llvm::GlobalValue::InternalLinkage, "__tessera_host_" + name,
                                          module_.get());
  functions_[name] = function;
  host_functions_.push_back({name, function});
}

void Emitter::define_host(Operation* f) {
  llvm::Function* function = functions_.at(std::string(f->symbol_name()));
  current_function_ = function;
  current_ir_function_ = f;
  values_.clear();
  subprogram_ = nullptr;
  builder_.SetInsertPoint(llvm::BasicBlock::Create(context_, "entry", function));
  host_context_ = function->getArg(0);
  // Host code computes addresses only to pass them on (views, launch
  // arguments); it never dereferences device memory, so nothing to check.
  bool bounds_check = std::exchange(bounds_check_, false);
  llvm::Value* args = function->getArg(1);
  host_results_ = function->getArg(2);
  llvm::Type* ptr = builder_.getPtrTy();
  uint64_t slot = 0;
  auto next_slot = [&]() {
    return builder_.CreateLoad(ptr, builder_.CreateConstInBoundsGEP1_64(ptr, args, slot++));
  };
  for (ir::Value* arg : f->region(0).front().arguments()) {
    Type t = arg->type();
    if (t.is(TypeKind::MemRef)) {
      if (t.rank() > kMaxRank) unsupported(f, "a tensor of rank above 8 at the host ABI");
      auto m = std::make_shared<MemRef>();
      m->base = builder_.CreateIntToPtr(builder_.CreateLoad(builder_.getInt64Ty(), next_slot()), ptr);
      for (size_t i = 0; i < t.rank(); ++i) m->origin.push_back(builder_.getInt64(0));
      for (size_t i = 0; i < t.rank(); ++i) {
        llvm::Value* size = builder_.CreateLoad(builder_.getInt64Ty(), next_slot());
        m->sizes.push_back(t.shape()[i] == ir::kDynamic ? size : builder_.getInt64(t.shape()[i]));
      }
      for (size_t i = 0; i < t.rank(); ++i) m->strides.push_back(builder_.CreateLoad(builder_.getInt64Ty(), next_slot()));
      m->root = t;
      values_[arg] = Lowered{nullptr, m};
    } else {
      llvm::Type* vt = value_type(t, f);
      llvm::Value* v = vt->isIntegerTy(1) ? builder_.CreateTrunc(builder_.CreateLoad(builder_.getInt8Ty(), next_slot()), vt)
                                          : builder_.CreateLoad(vt, next_slot());
      set(arg, v);
    }
  }
  emit_block(f->region(0).front());
  for (llvm::BasicBlock& block : *function) {
    if (block.getTerminator()) continue;
    builder_.SetInsertPoint(&block);
    builder_.CreateUnreachable();
  }
  host_context_ = nullptr;
  bounds_check_ = bounds_check;
}

void Emitter::emit_host_return(Operation* op) {
  llvm::Type* ptr = builder_.getPtrTy();
  if (current_ir_function_->region(0).front().back() != op && op->parent_op() != current_ir_function_)
    unsupported(op, "a return from inside a loop or branch of a @jit function");
  for (unsigned i = 0; i < op->num_operands(); ++i) {
    ir::Value* v = op->operand(i);
    llvm::Value* out = builder_.CreateLoad(ptr, builder_.CreateConstInBoundsGEP1_64(ptr, host_results_, i));
    if (v->type().is(TypeKind::MemRef)) {
      llvm::Value* descriptor = tensor_descriptor(memref(v), v->type(), op);
      call_service(kServiceKeep, {host_context_, builder_.CreateLoad(builder_.getInt64Ty(), descriptor)});
      builder_.CreateMemCpy(out, llvm::MaybeAlign(8), descriptor, llvm::MaybeAlign(8), kTensorBytes);
    } else {
      llvm::Value* x = get(v);
      if (x->getType()->isIntegerTy(1)) x = builder_.CreateZExt(x, builder_.getInt8Ty());
      builder_.CreateStore(x, out);
    }
  }
  builder_.CreateRet(builder_.getInt32(0));
  builder_.SetInsertPoint(llvm::BasicBlock::Create(context_, "dead", current_function_));
}

void Emitter::emit_host_table() {
  llvm::Type* ptr = builder_.getPtrTy();
  auto* entry = llvm::StructType::get(context_, {ptr, ptr});
  std::vector<llvm::Constant*> table;
  for (auto& [name, function] : host_functions_) {
    auto* name_constant = builder_.CreateGlobalString(name, "__tessera_host_name_" + name, 0, module_.get());
    table.push_back(llvm::ConstantStruct::get(entry, {name_constant, function}));
  }
  table.push_back(llvm::Constant::getNullValue(entry));
  auto* array = llvm::ArrayType::get(entry, table.size());
  new llvm::GlobalVariable(*module_, array, true, llvm::GlobalValue::ExternalLinkage,
                           llvm::ConstantArray::get(array, table), "tessera_host_functions");
  new llvm::GlobalVariable(*module_, builder_.getInt32Ty(), true, llvm::GlobalValue::ExternalLinkage,
                           builder_.getInt32(kHostAbiVersion), "tessera_host_abi_version");
}

void Emitter::call_service(unsigned index, llvm::ArrayRef<llvm::Value*> args) {
  llvm::Type* ptr = builder_.getPtrTy();
  llvm::Value* services = builder_.CreateLoad(ptr, host_context_);
  // Member `index` of tessHostServices: after the u32 version (padded to 8).
  llvm::Value* callee = builder_.CreateLoad(ptr, builder_.CreateConstInBoundsGEP1_64(builder_.getInt8Ty(), services,
                                                                                     8 + 8 * static_cast<uint64_t>(index - 1)));
  std::vector<llvm::Type*> types;
  for (llvm::Value* a : args) types.push_back(a->getType());
  auto* type = llvm::FunctionType::get(builder_.getInt32Ty(), types, false);
  llvm::Value* status = builder_.CreateCall(type, callee, args);
  auto* failed = llvm::BasicBlock::Create(context_, "service.failed", current_function_);
  auto* next = llvm::BasicBlock::Create(context_, "service.ok", current_function_);
  builder_.CreateCondBr(builder_.CreateICmpNE(status, builder_.getInt32(0)), failed, next);
  builder_.SetInsertPoint(failed);
  builder_.CreateRet(status);
  builder_.SetInsertPoint(next);
}

llvm::Value* Emitter::data_address(MemRef& m, Type t, Operation* op) {
  std::vector<llvm::Value*> zero(m.sizes.size(), builder_.getInt64(0));
  llvm::Value* address;
  if (packed_element_bits(t.scalar())) {
    for (llvm::Value* o : m.origin)
      if (!llvm::isa<llvm::ConstantInt>(o) || !llvm::cast<llvm::ConstantInt>(o)->isZero())
        unsupported(op, "a view of a packed " + std::string(scalar_info(t.scalar()).name) + " tensor");
    address = m.base;
  } else {
    address = element_address(m, zero, t, op);
  }
  return builder_.CreatePtrToInt(address, builder_.getInt64Ty());
}

llvm::Value* Emitter::tensor_descriptor(MemRef& m, Type t, Operation* op) {
  if (t.rank() > kMaxRank) unsupported(op, "a tensor of rank above 8 at the host ABI");
  llvm::AllocaInst* d = entry_alloca(llvm::ArrayType::get(builder_.getInt8Ty(), kTensorBytes), "tensor");
  d->setAlignment(llvm::Align(8));
  auto field = [&](uint64_t offset) { return builder_.CreateConstInBoundsGEP1_64(builder_.getInt8Ty(), d, offset); };
  builder_.CreateStore(data_address(m, t, op), field(0));
  builder_.CreateStore(builder_.getInt32(static_cast<uint32_t>(t.scalar())), field(kTensorDtype));
  builder_.CreateStore(builder_.getInt32(static_cast<uint32_t>(t.rank())), field(kTensorRank));
  for (size_t a = 0; a < t.rank(); ++a) {
    builder_.CreateStore(m.sizes[a], field(kTensorShape + 8 * a));
    builder_.CreateStore(m.strides[a], field(kTensorStrides + 8 * a));
  }
  return d;
}

llvm::Value* Emitter::string_constant(std::string_view text) {
  return builder_.CreateGlobalString(text, "__tessera_text", 0, module_.get());
}

}  // namespace tessera::codegen::emitter
