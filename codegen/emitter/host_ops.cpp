// The host operations of @jit functions and programs (docs/ir/host.md): calls
// of the runtime through the host context's service table
// (host_functions.cpp), and views computed in place.
#include "codegen/emitter/emitter.h"
#include "codegen/kernel_signature.h"
#include "codegen/mesh_description.h"
#include "codegen/narrow_float.h"

#include <algorithm>

namespace tessera::codegen::emitter {

namespace {

constexpr uint64_t kTensorShape = 16, kTensorStrides = 80;

}  // namespace

// A new contiguous buffer: element count times element size bytes.
void Emitter::emit_host_alloc(Operation* op) {
  Type t = op->result()->type();
  auto m = std::make_shared<MemRef>();
  unsigned next = 0;
  for (size_t a = 0; a < t.rank(); ++a) {
    m->origin.push_back(builder_.getInt64(0));
    m->sizes.push_back(t.shape()[a] == ir::kDynamic ? get(op->operand(next++)) : builder_.getInt64(t.shape()[a]));
  }
  m->strides.resize(t.rank());
  llvm::Value* count = builder_.getInt64(1);
  for (size_t a = t.rank(); a-- > 0;) {
    m->strides[a] = count;
    count = builder_.CreateMul(count, m->sizes[a]);
  }
  llvm::Value* bytes;
  if (unsigned w = packed_element_bits(t.scalar()))
    bytes = builder_.CreateUDiv(builder_.CreateAdd(builder_.CreateMul(count, builder_.getInt64(w)), builder_.getInt64(7)),
                                builder_.getInt64(8));
  else
    bytes = builder_.CreateMul(count, builder_.getInt64(module_->getDataLayout().getTypeAllocSize(element_type(t, op))));
  llvm::AllocaInst* slot = entry_alloca(builder_.getInt64Ty(), "allocation");
  call_service(kServiceAlloc, {host_context_, bytes, slot});
  m->base = builder_.CreateIntToPtr(builder_.CreateLoad(builder_.getInt64Ty(), slot), builder_.getPtrTy());
  m->root = t;
  values_[op->result()] = Lowered{nullptr, m};
}

void Emitter::emit_host_free(Operation* op) {
  MemRef& m = memref(op->operand(0));
  call_service(kServiceFree, {host_context_, builder_.CreatePtrToInt(m.base, builder_.getInt64Ty())});
}

// A view: its first element `offset` elements past the source's, its own
// sizes and strides.
void Emitter::emit_host_view(Operation* op) {
  Type source_type = op->operand(0)->type(), t = op->result()->type();
  MemRef& source = memref(op->operand(0));
  if (packed_element_bits(t.scalar())) unsupported(op, "a view of a packed " + std::string(scalar_info(t.scalar()).name) + " tensor");
  std::vector<llvm::Value*> zero(source.sizes.size(), builder_.getInt64(0));
  llvm::Value* first = element_address(source, zero, source_type, op);
  auto m = std::make_shared<MemRef>();
  m->base = builder_.CreateInBoundsGEP(element_type(t, op), first, get(op->operand(1)));
  size_t rank = t.rank();
  for (size_t a = 0; a < rank; ++a) {
    m->origin.push_back(builder_.getInt64(0));
    m->sizes.push_back(t.shape()[a] == ir::kDynamic ? get(op->operand(static_cast<unsigned>(2 + a)))
                                                    : builder_.getInt64(t.shape()[a]));
    m->strides.push_back(get(op->operand(static_cast<unsigned>(2 + rank + a))));
  }
  m->root = t;
  values_[op->result()] = Lowered{nullptr, m};
}

// A buffer of buffer-plan's arena: `offset` bytes past the arena's first
// byte, contiguous row-major, its static sizes.
void Emitter::emit_host_arena_buffer(Operation* op) {
  Type t = op->result()->type();
  MemRef& arena = memref(op->operand(0));
  auto m = std::make_shared<MemRef>();
  m->base = builder_.CreateInBoundsGEP(builder_.getInt8Ty(), arena.base, builder_.getInt64(op->int_attr("offset")));
  int64_t stride = 1;
  m->strides.resize(t.rank());
  for (size_t a = t.rank(); a-- > 0;) {
    m->strides[a] = builder_.getInt64(stride);
    stride *= t.shape()[a];
  }
  for (size_t a = 0; a < t.rank(); ++a) {
    m->origin.push_back(builder_.getInt64(0));
    m->sizes.push_back(builder_.getInt64(t.shape()[a]));
  }
  m->root = t;
  values_[op->result()] = Lowered{nullptr, m};
}

void Emitter::emit_host_stride(Operation* op) {
  set(op->result(), memref(op->operand(0)).strides.at(static_cast<size_t>(op->int_attr("axis"))));
}

// The kernel's flattened arguments in stack slots, an array of pointers to
// them, the grid and the group; then the launch service.
void Emitter::emit_host_launch(Operation* op) {
  std::string kernel(op->attr("kernel").string_value());
  Operation* callee = ir::lookup_function(ir_module_, kernel);
  std::vector<llvm::Value*> slots;
  auto slot_of = [&](llvm::Value* v) {
    llvm::AllocaInst* slot = entry_alloca(v->getType());
    builder_.CreateStore(v, slot);
    slots.push_back(slot);
  };
  for (unsigned i = ir::launch_grid_operand_count(op); i < op->num_operands(); ++i) {
    ir::Value* v = op->operand(i);
    if (v->type().is(TypeKind::MemRef)) {
      MemRef& m = memref(v);
      slot_of(data_address(m, v->type(), op));
      for (llvm::Value* s : m.sizes) slot_of(s);
      for (llvm::Value* s : m.strides) slot_of(s);
    } else {
      llvm::Value* x = get(v);
      if (x->getType()->isIntegerTy(1)) x = builder_.CreateZExt(x, builder_.getInt8Ty());
      slot_of(x);
    }
  }
  llvm::Type* ptr = builder_.getPtrTy();
  llvm::AllocaInst* args = entry_alloca(llvm::ArrayType::get(ptr, std::max<size_t>(1, slots.size())));
  for (size_t j = 0; j < slots.size(); ++j) builder_.CreateStore(slots[j], builder_.CreateConstInBoundsGEP1_64(ptr, args, j));
  llvm::Type* u32 = builder_.getInt32Ty();
  if (op->has_attr("variants")) return emit_host_launch_tuned(op, args);
  llvm::AllocaInst* grid = entry_alloca(llvm::ArrayType::get(u32, 3));
  llvm::AllocaInst* group = entry_alloca(llvm::ArrayType::get(u32, 3));
  std::vector<int64_t> shape = callee && callee->attr("group_shape") ? callee->attr("group_shape").int_array()
                                                                     : std::vector<int64_t>{};
  for (unsigned a = 0; a < 3; ++a) {
    builder_.CreateStore(builder_.CreateTrunc(get(op->operand(a)), u32), builder_.CreateConstInBoundsGEP1_64(u32, grid, a));
    builder_.CreateStore(builder_.getInt32(a < shape.size() ? static_cast<uint32_t>(shape[a]) : 1u),
                         builder_.CreateConstInBoundsGEP1_64(u32, group, a));
  }
  call_service(kServiceLaunch, {host_context_, string_constant(kernel), grid, group, args});
}

// A tuned launch (docs/autotuning.md, "Launches from @jit code"): every
// variant's grid and group, a tessTensor per tensor argument (the tuner's
// key, the copies of `mut` tensors while timing), and a text saying the rest:
//   KERNEL \n DEFAULT \n (v NAME \t POINT \n)* (t PARAM \t MUT \n)* (k DIM \t TENSOR \t AXIS \n)*
// read by tessHostLaunchTuned.
void Emitter::emit_host_launch_tuned(Operation* op, llvm::Value* args) {
  ir::Attribute variants = op->attr("variants"), points = op->attr("points");
  std::string text = std::string(op->string_attr("tune_of")) + "\n" + std::to_string(op->int_attr("tune_default")) + "\n";
  llvm::Type* u32 = builder_.getInt32Ty();
  size_t count = variants.size();
  llvm::AllocaInst* grids = entry_alloca(llvm::ArrayType::get(u32, 3 * count));
  llvm::AllocaInst* groups = entry_alloca(llvm::ArrayType::get(u32, 3 * count));
  for (size_t v = 0; v < count; ++v) {
    text += "v " + std::string(variants[v].string_value()) + "\t" + std::string(points[v].string_value()) + "\n";
    Operation* variant = ir::lookup_function(ir_module_, variants[v].string_value());
    std::vector<int64_t> shape = variant && variant->attr("group_shape") ? variant->attr("group_shape").int_array()
                                                                         : std::vector<int64_t>{};
    for (unsigned a = 0; a < 3; ++a) {
      builder_.CreateStore(builder_.CreateTrunc(get(op->operand(static_cast<unsigned>(3 * v + a))), u32),
                           builder_.CreateConstInBoundsGEP1_64(u32, grids, 3 * v + a));
      builder_.CreateStore(builder_.getInt32(a < shape.size() ? static_cast<uint32_t>(shape[a]) : 1u),
                           builder_.CreateConstInBoundsGEP1_64(u32, groups, 3 * v + a));
    }
  }
  // The tensors, named as the kernel's signature names them.
  AotKernel signature = kernel_signature(ir::lookup_function(ir_module_, op->attr("kernel").string_value()));
  std::vector<llvm::Value*> tensors;
  std::vector<size_t> tensor_of_parameter(signature.parameters.size(), SIZE_MAX);
  unsigned first = ir::launch_grid_operand_count(op);
  for (size_t p = 0, operand = first; p < signature.parameters.size() && operand < op->num_operands(); ++p, ++operand) {
    const AotParameter& parameter = signature.parameters[p];
    ir::Value* v = op->operand(static_cast<unsigned>(operand));
    if (!parameter.tensor || !v->type().is(TypeKind::MemRef)) continue;
    tensor_of_parameter[p] = tensors.size();
    text += "t " + parameter.name + "\t" + (parameter.mut ? "1" : "0") + "\n";
    tensors.push_back(tensor_descriptor(memref(v), v->type(), op));
  }
  // key=("n", ...): where each dimension is read (the first tensor that has it).
  for (const std::string& dim : signature.autotune_key) {
    auto symbol = std::find(signature.symbols.begin(), signature.symbols.end(), dim);
    if (symbol == signature.symbols.end()) continue;
    int64_t code = -1 - (symbol - signature.symbols.begin());
    bool found = false;
    for (size_t p = 0; p < signature.parameters.size() && !found; ++p) {
      if (tensor_of_parameter[p] == SIZE_MAX) continue;
      const std::vector<int64_t>& dims = signature.parameters[p].dims;
      for (size_t a = 0; a < dims.size() && !found; ++a)
        if (dims[a] == code) {
          text += "k " + dim + "\t" + std::to_string(tensor_of_parameter[p]) + "\t" + std::to_string(a) + "\n";
          found = true;
        }
    }
  }
  llvm::Type* ptr = builder_.getPtrTy();
  llvm::AllocaInst* table = entry_alloca(llvm::ArrayType::get(ptr, std::max<size_t>(1, tensors.size())));
  for (size_t t = 0; t < tensors.size(); ++t) builder_.CreateStore(tensors[t], builder_.CreateConstInBoundsGEP1_64(ptr, table, t));
  call_service(kServiceLaunchTuned, {host_context_, string_constant(text), grids, groups, args, table});
}

// print: the text pieces around the operands, then a newline.
llvm::AllocaInst* Emitter::entry_alloca(llvm::Type* type, const llvm::Twine& name) {
  llvm::BasicBlock& block = current_function_->getEntryBlock();
  llvm::IRBuilder<> entry(&block, block.getFirstInsertionPt());
  return entry.CreateAlloca(type, nullptr, name);
}

void Emitter::emit_text(Operation* op, std::string_view name, unsigned first) {
  ir::Attribute text = op->attr(name);
  auto piece = [&](size_t i) {
    std::string_view s = text[i].string_value();
    if (!s.empty()) call_service(kServicePrintText, {host_context_, string_constant(s)});
  };
  for (unsigned i = first; i < op->num_operands(); ++i) {
    piece(i - first);
    ir::Value* v = op->operand(i);
    if (v->type().is(TypeKind::MemRef)) {
      call_service(kServicePrintTensor, {host_context_, tensor_descriptor(memref(v), v->type(), op)});
      continue;
    }
    llvm::Value* x = get(v);
    ScalarType s = v->type().is_index() ? ScalarType::I64 : v->type().scalar();
    if (x->getType()->isIntegerTy(1)) x = builder_.CreateZExt(x, builder_.getInt8Ty());
    llvm::AllocaInst* slot = entry_alloca(x->getType());
    builder_.CreateStore(x, slot);
    // An f-string's `{v:.4f}`: formatted by the runtime (support/format_spec.h).
    std::string_view format = op->has_attr("formats") ? op->attr("formats")[i - first].string_value() : std::string_view{};
    if (!format.empty()) {
      call_service(kServicePrintFormatted,
                   {host_context_, builder_.getInt32(static_cast<uint32_t>(s)), slot, string_constant(format)});
      continue;
    }
    call_service(kServicePrintScalar, {host_context_, builder_.getInt32(static_cast<uint32_t>(s)), slot});
  }
  piece(op->num_operands() - first);
}

void Emitter::emit_host_print(Operation* op) {
  emit_text(op, "text", 0);
  call_service(kServicePrintText, {host_context_, string_constant("\n")});
}

// A path known when compiling is a constant; one formatted when the program
// runs is printed into the context's text, which the save then names. The
// runtime's message for a file it cannot write starts with the ts.save's
// position (host_call_position).
void Emitter::emit_host_save(Operation* op) {
  ir::Value* v = op->operand(0);
  if (!op->has_attr("path_text")) {
    call_service(kServiceSave, {host_context_, string_constant(op->attr("path").string_value()),
                                tensor_descriptor(memref(v), v->type(), op), host_call_position(op)});
    return;
  }
  call_service(kServiceTextBegin, {host_context_});
  emit_text(op, "path_text", 1);
  call_service(kServiceSaveText, {host_context_, tensor_descriptor(memref(v), v->type(), op), host_call_position(op)});
}

// "file.tsr:LINE:COL" of the source call, for the runtime's messages ("" when unknown).
llvm::Value* Emitter::host_call_position(Operation* op) {
  return string_constant(op->loc().primary().known() ? source_location(op) : std::string());
}

// A new contiguous buffer with the file's contents; the runtime checks the
// dtype, the rank and the static sizes against the file, and names the
// ts.load's position when it fails.
void Emitter::emit_host_load(Operation* op) {
  Type t = op->result()->type();
  size_t rank = t.rank();
  llvm::AllocaInst* dims = entry_alloca(llvm::ArrayType::get(builder_.getInt64Ty(), std::max<size_t>(1, rank)));
  for (size_t a = 0; a < rank; ++a)
    builder_.CreateStore(builder_.getInt64(t.shape()[a] == ir::kDynamic ? -1 : t.shape()[a]),
                         builder_.CreateConstInBoundsGEP1_64(builder_.getInt64Ty(), dims, a));
  llvm::AllocaInst* tensor = entry_alloca(llvm::ArrayType::get(builder_.getInt8Ty(), 144));
  tensor->setAlignment(llvm::Align(8));
  call_service(kServiceLoad, {host_context_, string_constant(op->attr("path").string_value()),
                              builder_.getInt32(static_cast<uint32_t>(t.scalar())),
                              builder_.getInt32(static_cast<uint32_t>(rank)), dims, tensor, host_call_position(op)});
  auto m = std::make_shared<MemRef>();
  m->base = builder_.CreateIntToPtr(builder_.CreateLoad(builder_.getInt64Ty(), tensor), builder_.getPtrTy());
  auto field = [&](uint64_t offset) {
    return builder_.CreateLoad(builder_.getInt64Ty(), builder_.CreateConstInBoundsGEP1_64(builder_.getInt8Ty(), tensor, offset));
  };
  for (size_t a = 0; a < rank; ++a) {
    m->origin.push_back(builder_.getInt64(0));
    m->sizes.push_back(t.shape()[a] == ir::kDynamic ? static_cast<llvm::Value*>(field(kTensorShape + 8 * a))
                                                    : builder_.getInt64(t.shape()[a]));
    m->strides.push_back(field(kTensorStrides + 8 * a));
  }
  m->root = t;
  values_[op->result()] = Lowered{nullptr, m};
}

void Emitter::emit_host_check(Operation* op) {
  auto* failed = llvm::BasicBlock::Create(context_, "check.failed", current_function_);
  auto* next = llvm::BasicBlock::Create(context_, "check.ok", current_function_);
  builder_.CreateCondBr(get(op->operand(0)), next, failed);
  builder_.SetInsertPoint(failed);
  call_service(kServiceFail, {host_context_, string_constant(op->attr("message").string_value())});
  builder_.CreateBr(next);
  builder_.SetInsertPoint(next);
}

// The value of a 0-d buffer on the host: the runtime copies it into a stack
// slot once the launches before it finished.
void Emitter::emit_host_read(Operation* op) {
  ir::Value* v = op->operand(0);
  Type t = v->type();
  llvm::Type* stored = element_type(t, op);
  llvm::Type* wanted = value_type(op->result()->type(), op);
  llvm::AllocaInst* slot = entry_alloca(stored);
  uint64_t bytes = module_->getDataLayout().getTypeStoreSize(stored);
  call_service(kServiceRead, {host_context_, data_address(memref(v), t, op), builder_.getInt64(bytes), slot});
  llvm::Value* x = builder_.CreateLoad(stored, slot);
  if (wanted->isIntegerTy(1) && !stored->isIntegerTy(1)) x = builder_.CreateICmpNE(x, llvm::ConstantInt::get(stored, 0));
  else if (wanted != stored) return unsupported(op, "reading a " + std::string(scalar_info(t.scalar()).name) + " value back to the host");
  set(op->result(), x);
}

// Meshes and collectives (docs/distributed.md, "The language"): the runtime
// takes the mesh and the operation as description strings, built here from
// the attributes (runtime/src/host_collectives.cpp reads them):
//   mesh:       "2,2;dp,tp;cpu:0,cpu:1,cpu:2,cpu:3"  (shape; axes; devices)
//   operation:  "kind=all_gather;axis=tp;dim=1;op=sum;root=0;spec=dp,;partial=tp"
//               "kind=recv;axis=pp;src=0;dst=1", "kind=sendrecv;axis=pp;shift=1"
namespace {

std::string names(ir::Attribute list) {
  std::string out;
  for (size_t i = 0; i < list.size(); ++i) out += (i ? "," : "") + std::string(list[i].string_value());
  return out;
}

}  // namespace

void Emitter::emit_host_mesh(Operation* op) {
  call_service(kServiceMesh, {host_context_, string_constant(mesh_description(op->attr("mesh")))});
}

namespace {

std::string operation_text(Operation* op) {
  std::string text = "kind=" + std::string(op->attr("kind").string_value());
  if (ir::Attribute a = op->attr("axis")) text += ";axis=" + std::string(a.string_value());
  if (ir::Attribute a = op->attr("op")) text += ";op=" + std::string(a.string_value());
  if (ir::Attribute a = op->attr("dim")) text += ";dim=" + std::to_string(a.int_value());
  if (ir::Attribute a = op->attr("root")) text += ";root=" + std::to_string(a.int_value());
  if (ir::Attribute a = op->attr("src")) text += ";src=" + std::to_string(a.int_value());
  if (ir::Attribute a = op->attr("dst")) text += ";dst=" + std::to_string(a.int_value());
  if (ir::Attribute a = op->attr("shift")) text += ";shift=" + std::to_string(a.int_value());
  if (op->attr("transpose")) text += ";transpose=1";
  if (ir::Attribute a = op->attr("spec")) text += ";spec=" + names(a);
  if (ir::Attribute a = op->attr("partial")) text += ";partial=" + names(a);
  return text;
}

}  // namespace

void Emitter::emit_host_collective(Operation* op) {
  ir::Value* src = op->operand(0);
  ir::Value* dst = op->operand(1);
  llvm::Value* source = tensor_descriptor(memref(src), src->type(), op);
  llvm::Value* target = tensor_descriptor(memref(dst), dst->type(), op);
  call_service(kServiceCollective, {host_context_, string_constant(mesh_description(op->attr("mesh"))),
                                    string_constant(operation_text(op)), source, target});
}

// The split form (overlap-collectives): the start returns the runtime's
// request (an i64 the context maps to the collective in flight), the wait
// takes it back.
void Emitter::emit_host_collective_start(Operation* op) {
  ir::Value* src = op->operand(0);
  ir::Value* dst = op->operand(1);
  llvm::Value* source = tensor_descriptor(memref(src), src->type(), op);
  llvm::Value* target = tensor_descriptor(memref(dst), dst->type(), op);
  llvm::AllocaInst* slot = entry_alloca(builder_.getInt64Ty());
  call_service(kServiceCollectiveStart, {host_context_, string_constant(mesh_description(op->attr("mesh"))),
                                         string_constant(operation_text(op)), source, target, slot});
  set(op->result(), builder_.CreateLoad(builder_.getInt64Ty(), slot));
}

void Emitter::emit_host_collective_wait(Operation* op) {
  call_service(kServiceCollectiveWait, {host_context_, get(op->operand(0))});
}

}  // namespace tessera::codegen::emitter
