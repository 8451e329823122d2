// The emitter's core (emitter.h): the module and its functions, types,
// values, regions and debug locations, and `emit`, the one dispatch over
// every operation kind to the file of its family.
#include <llvm/BinaryFormat/Dwarf.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Support/raw_ostream.h>

#include <algorithm>

#include "codegen/emitter/emitter.h"
#include "support/diagnostics/internal_error.h"
#include "ir/core/ir_text.h"
#include "tessera/tessera_runtime.h"

namespace tessera::codegen {
namespace emitter {

std::unique_ptr<llvm::Module> Emitter::run(TargetHooks& target) {
  target_ = &target;
  module_ = std::make_unique<llvm::Module>("tessera", context_);
  target_->set_up_module(*module_);
  if (debug_ != DebugInfo::None) {
    dib_ = std::make_unique<llvm::DIBuilder>(*module_);
    module_->addModuleFlag(llvm::Module::Warning, "Debug Info Version", llvm::DEBUG_METADATA_VERSION);
    module_->addModuleFlag(llvm::Module::Warning, "Dwarf Version", 2);
  }
  try {
    std::vector<Operation*> functions, host;
    for (Operation* f : ir::module_functions(ir_module_)) (ir::is_host_level_function(f) ? host : functions).push_back(f);
    if (!target_->host_code()) host.clear();
    for (Operation* f : functions) declare(f);
    for (Operation* f : host) declare_host(f);
    for (Operation* f : functions) define(f, functions_.at(std::string(f->symbol_name())), false);
    for (Operation* f : host) define_host(f);
    if (target_->contiguous_variants())
      for (Operation* f : functions) {
        if (!has_contiguous_variant(f)) continue;
        llvm::Function* general = functions_.at(std::string(f->symbol_name()));
        llvm::Function* variant = target_->create_function(f, general->getFunctionType());
        variant->setName(contiguous_variant_name(f->symbol_name()));
        define(f, variant, true);
      }
    target_->finish_module();
    if (!host.empty()) emit_host_table();
  } catch (Unsupported&) {
    return nullptr;
  }
  if (dib_) dib_->finalize();
  std::string error;
  llvm::raw_string_ostream os(error);
  if (llvm::verifyModule(*module_, &os)) internal_error("codegen", "invalid LLVM IR: " + error);
  return std::move(module_);
}

void Emitter::unsupported(Operation* op, const std::string& what) {
  SourceRange range = ir::location_range(diags_.sources(), op->loc());
  if (range.begin || range.end)
    diags_.emit<diag::CodegenUnsupported>(range, what, target_->name());
  else
    diags_.emit_global<diag::CodegenUnsupported>(what, target_->name());
  throw Unsupported{};
}

// --- types ----------------------------------------------------------------

llvm::Type* Emitter::scalar_type(ScalarType s, [[maybe_unused]] Operation* op) {
  switch (s) {
    case ScalarType::Bool: return builder_.getInt1Ty();
    case ScalarType::I8:
    case ScalarType::U8: return builder_.getInt8Ty();
    case ScalarType::I16:
    case ScalarType::U16: return builder_.getInt16Ty();
    case ScalarType::I32:
    case ScalarType::U32: return builder_.getInt32Ty();
    case ScalarType::I64:
    case ScalarType::U64: return builder_.getInt64Ty();
    case ScalarType::F16: return builder_.getHalfTy();
    case ScalarType::BF16: return builder_.getBFloatTy();
    case ScalarType::F32: return builder_.getFloatTy();
    case ScalarType::F64: return builder_.getDoubleTy();
    case ScalarType::FP8E4M3:
    case ScalarType::FP8E5M2:
    case ScalarType::FP6E2M3:
    case ScalarType::FP6E3M2:
    case ScalarType::FP4E2M1: return builder_.getInt8Ty();
  }
  return builder_.getInt8Ty();
}

llvm::Type* Emitter::element_type(Type t, Operation* op) {
  return t.scalar() == ScalarType::Bool ? builder_.getInt8Ty() : scalar_type(t.scalar(), op);
}

llvm::Type* Emitter::value_type(Type t, Operation* op) {
  if (t.is_index()) return builder_.getInt64Ty();
  if (t.is_scalar()) return scalar_type(t.scalar(), op);
  if (t.is(TypeKind::Vector))
    return llvm::FixedVectorType::get(element_type(t, op), static_cast<unsigned>(t.shape()[0]));
  if (t.is(TypeKind::Tile))
    return llvm::FixedVectorType::get(scalar_type(t.scalar(), op), static_cast<unsigned>(tile_share(t, op)));
  unsupported(op, "a value of type " + std::string(t.str()));
}

int64_t Emitter::group_size_static() {
  return current_ir_function_ ? std::max<int64_t>(1, ir::group_lanes(current_ir_function_)) : 1;
}

int64_t Emitter::tile_share(Type t, Operation* op) {
  int64_t elements = t.num_elements(), lanes = group_size_static();
  if (elements == ir::kDynamic || elements % lanes != 0) {
    // Said in the source's terms: the user wrote a tile.mma of these sizes.
    std::string shape;
    for (int64_t d : t.shape()) shape += (shape.empty() ? "" : " x ") + (d == ir::kDynamic ? std::string("?") : std::to_string(d));
    unsupported(op, "a register tile (a tile.mma result) of " + shape + " " + std::string(scalar_info(t.scalar()).name) +
                        " elements, which do not divide evenly over the group's " + std::to_string(lanes) + " lanes,");
  }
  return elements / lanes;
}

bool Emitter::is_signed(Type t) {
  return t.is_index() || scalar_info(t.scalar()).category == ScalarCategory::SignedInt;
}

bool Emitter::is_float(Type t) { return (t.is_scalar() || t.is_shaped()) && tessera::is_float(t.scalar()); }

// --- values -----------------------------------------------------------------

llvm::Value* Emitter::get(ir::Value* v) {
  auto it = values_.find(v);
  internal_check(it != values_.end() && it->second.scalar, "codegen", "use of a value without an LLVM value");
  return it->second.scalar;
}

MemRef& Emitter::memref(ir::Value* v) {
  auto it = values_.find(v);
  internal_check(it != values_.end() && it->second.memref, "codegen", "use of a memref without a descriptor");
  return *it->second.memref;
}

std::vector<llvm::Value*> Emitter::flatten(ir::Value* v) {
  Lowered& l = values_.at(v);
  if (l.scalar) return {l.scalar};
  if (!l.memref) return {};
  std::vector<llvm::Value*> parts{l.memref->base};
  for (auto* list : {&l.memref->origin, &l.memref->sizes, &l.memref->strides})
    parts.insert(parts.end(), list->begin(), list->end());
  return parts;
}

std::vector<llvm::Type*> Emitter::part_types(Type t, Operation* op) {
  if (t.is(TypeKind::Token)) return {};
  if (!t.is(TypeKind::MemRef)) return {value_type(t, op)};
  std::vector<llvm::Type*> types{builder_.getPtrTy(target_->address_space(t.space()))};
  for (size_t i = 0; i < 3 * t.rank(); ++i) types.push_back(builder_.getInt64Ty());
  return types;
}

void Emitter::bind(ir::Value* v, const std::vector<llvm::Value*>& parts, Type root) {
  Type t = v->type();
  if (t.is(TypeKind::Token)) {
    values_[v] = Lowered{};
    return;
  }
  if (!t.is(TypeKind::MemRef)) return set(v, parts.at(0));
  auto m = std::make_shared<MemRef>();
  size_t rank = t.rank();
  m->base = parts.at(0);
  for (size_t i = 0; i < rank; ++i) m->origin.push_back(parts.at(1 + i));
  for (size_t i = 0; i < rank; ++i) m->sizes.push_back(parts.at(1 + rank + i));
  for (size_t i = 0; i < rank; ++i) m->strides.push_back(parts.at(1 + 2 * rank + i));
  m->root = root ? root : t;
  values_[v] = Lowered{nullptr, m};
}

Type Emitter::root_of(ir::Value* v) {
  auto it = values_.find(v);
  return it != values_.end() && it->second.memref ? it->second.memref->root : Type{};
}

// --- functions ---------------------------------------------------------------

void Emitter::declare(Operation* f) {
  Type fn = f->attr("function_type").type();
  std::vector<llvm::Type*> params = target_->context_parameters();
  for (size_t i = 0; i < fn.num_inputs(); ++i) {
    for (llvm::Type* t : part_types(fn.input(i), f)) params.push_back(t);
    if (fn.input(i).is(TypeKind::MemRef)) {
      // The ABI has no origin: a parameter's view starts at its pointer.
      size_t rank = fn.input(i).rank();
      params.erase(params.end() - static_cast<long>(3 * rank), params.end() - static_cast<long>(2 * rank));
    }
  }
  llvm::Type* result = builder_.getVoidTy();
  if (fn.num_results() == 1) {
    if (!fn.result(0).is_scalar() && !fn.result(0).is_index()) unsupported(f, "returning a non-scalar value");
    result = value_type(fn.result(0), f);
  } else if (fn.num_results() > 1) {
    std::vector<llvm::Type*> fields;
    for (size_t i = 0; i < fn.num_results(); ++i) fields.push_back(value_type(fn.result(i), f));
    result = llvm::StructType::get(context_, fields);
  }
  functions_[std::string(f->symbol_name())] =
      target_->create_function(f, llvm::FunctionType::get(result, params, false));
}

// A kernel with tensor parameters also gets a variant for contiguous
// tensors (docs/abi.md, "Contiguous variants"), picked at launch.
bool Emitter::has_contiguous_variant(Operation* f) {
  if (!f->has_attr("kernel")) return false;
  Type fn = f->attr("function_type").type();
  for (size_t i = 0; i < fn.num_inputs(); ++i)
    if (fn.input(i).is(TypeKind::MemRef)) return true;
  return false;
}

// `contiguous`: the kernel's contiguous variant: every tensor's innermost
// stride is 1 (the stride passed is not read), its pointer is 16-byte
// aligned and `noalias` (no tensor the kernel writes overlaps another, which
// the launcher checks), `readonly` when the kernel does not write it.
void Emitter::define(Operation* f, llvm::Function* function, bool contiguous) {
  current_function_ = function;
  current_ir_function_ = f;
  host_context_ = nullptr;
  values_.clear();
  auto* entry = llvm::BasicBlock::Create(context_, "entry", function);
  builder_.SetInsertPoint(entry);
  builder_.SetCurrentDebugLocation(llvm::DebugLoc());  // the previous function's would point at its subprogram
  subprogram_ = nullptr;
  if (dib_) {
    ir::Location loc = f->loc().primary();
    if (loc.known()) {
      llvm::DIFile* file = debug_file(loc.file());
      subprogram_ = dib_->createFunction(file, function->getName(), function->getName(), file, loc.line(),
                                         dib_->createSubroutineType(dib_->getOrCreateTypeArray({})), loc.line(),
                                         llvm::DINode::FlagPrototyped, llvm::DISubprogram::SPFlagDefinition);
      function->setSubprogram(subprogram_);
    }
  }
  ir::Block& body = f->region(0).front();
  unsigned next = target_->begin_function(f, function);
  llvm::Value* zero = builder_.getInt64(0);
  std::vector<int64_t> mut = f->attr("mut_args") ? f->attr("mut_args").int_array() : std::vector<int64_t>{};
  for (ir::Value* arg : body.arguments()) {
    Type t = arg->type();
    if (t.is(TypeKind::MemRef)) {
      auto m = std::make_shared<MemRef>();
      if (contiguous) {
        unsigned p = next;
        function->addParamAttr(p, llvm::Attribute::NoAlias);
        function->addParamAttr(p, llvm::Attribute::getWithAlignment(context_, llvm::Align(16)));
        if (std::find(mut.begin(), mut.end(), static_cast<int64_t>(arg->index())) == mut.end())
          function->addParamAttr(p, llvm::Attribute::ReadOnly);
      }
      m->base = function->getArg(next++);
      for (size_t i = 0; i < t.rank(); ++i) m->origin.push_back(zero);
      for (size_t i = 0; i < t.rank(); ++i) {
        llvm::Value* size = function->getArg(next++);
        // A static dimension is a constant in the code, whatever is passed.
        m->sizes.push_back(t.shape()[i] == ir::kDynamic ? size : builder_.getInt64(t.shape()[i]));
      }
      for (size_t i = 0; i < t.rank(); ++i) {
        llvm::Value* stride = function->getArg(next++);
        // The contiguous variant runs only with strides in [0, 2^31)
        // (tessContiguousVariantApplies): a stride is its low 32 bits,
        // zero-extended (`zext nneg`, so LLVM may also read it as
        // sign-extended). An index times a stride is then a widening 32-bit
        // multiply (mul.wide.s32) where the index fits 32 bits, as in CUDA
        // code indexing with ints; where LLVM cannot narrow the multiply, a
        // 64-bit one whose high word is known zero is cheap for ptxas. A
        // sign extension there cost ptxas registers it did not have:
        // optimized_memory_access (examples/memory_hierarchy.tsr) spilled
        // 72 bytes on sm_80 and sm_86.
        if (contiguous) {
          stride = builder_.CreateZExt(builder_.CreateTrunc(stride, builder_.getInt32Ty()), builder_.getInt64Ty());
          if (auto* extension = llvm::dyn_cast<llvm::Instruction>(stride)) extension->setNonNeg(true);
        }
        m->strides.push_back(stride);
      }
      if (contiguous && t.rank() > 0) m->strides.back() = builder_.getInt64(1);
      m->root = t;
      values_[arg] = Lowered{nullptr, m};
    } else {
      set(arg, function->getArg(next++));
    }
  }
  target_->begin_body(f);
  emit_block(body);
  // Blocks opened after a return are unreachable.
  for (llvm::BasicBlock& block : *function) {
    if (block.getTerminator()) continue;
    builder_.SetInsertPoint(&block);
    builder_.CreateUnreachable();
  }
  target_->end_function(f);
}

// --- regions and debug locations ------------------------------------------------

void Emitter::emit_block(ir::Block& block) {
  for (Operation* op : block) {
    set_debug_location(op);
    emit(op);
  }
}

void Emitter::set_debug_location(Operation* op) {
  if (!subprogram_) return;
  ir::Location loc = op->loc().primary();
  if (loc.known())
    builder_.SetCurrentDebugLocation(llvm::DILocation::get(context_, loc.line(), loc.column(), subprogram_));
}

llvm::DIFile* Emitter::debug_file(std::string_view path) {
  std::string p(path);
  auto it = debug_files_.find(p);
  if (it != debug_files_.end()) return it->second;
  if (!compile_unit_file_) {
    compile_unit_file_ = dib_->createFile(p, ".");
    dib_->createCompileUnit(llvm::dwarf::DW_LANG_C_plus_plus, compile_unit_file_, "tesserac", true, "", 0, "",
                            // -lineinfo: .loc/.file only, no DWARF sections (ptxas would
                            // take those for device debugging, which needs -O0).
                            debug_ == DebugInfo::Full ? llvm::DICompileUnit::FullDebug
                                                      : llvm::DICompileUnit::DebugDirectivesOnly);
  }
  return debug_files_[p] = dib_->createFile(p, ".");
}

std::vector<std::vector<llvm::Value*>> Emitter::emit_region(ir::Region& region) {
  std::vector<std::vector<llvm::Value*>> yielded;
  if (region.empty()) return yielded;
  ir::Block& block = region.front();
  for (Operation* op : block) {
    if (op->is(OpKind::Yield) || op->is(OpKind::Condition)) {
      for (ir::Value* v : op->operands()) yielded.push_back(flatten(v));
      return yielded;
    }
    set_debug_location(op);
    emit(op);
  }
  return yielded;
}

// --- operations ----------------------------------------------------------------

llvm::Value* Emitter::intrinsic(llvm::Intrinsic::ID id, llvm::ArrayRef<llvm::Value*> args,
                                llvm::ArrayRef<llvm::Type*> overloads) {
  return builder_.CreateCall(llvm::Intrinsic::getOrInsertDeclaration(module_.get(), id, overloads), args);
}

// The one dispatch over every operation kind: each case calls the function
// of its family's file. No default: a new OpKind is a compile error here
// until it is emitted or reported.
void Emitter::emit(Operation* op) {
  switch (op->kind()) {
    // --- structure ---
    case OpKind::Module:
    case OpKind::Func: return emit_unsupported(op);
    case OpKind::Return: return emit_return(op);
    case OpKind::Call: return emit_call(op);

    // --- arith.cpp ---
    case OpKind::Constant: return emit_constant(op);
    case OpKind::AddI: return emit_binary(op, llvm::Instruction::Add);
    case OpKind::SubI: return emit_binary(op, llvm::Instruction::Sub);
    case OpKind::MulI: return emit_binary(op, llvm::Instruction::Mul);
    case OpKind::DivSI: return emit_signed_division(op);
    case OpKind::DivUI: return emit_binary(op, llvm::Instruction::UDiv);
    case OpKind::RemSI: return emit_signed_division(op);
    case OpKind::RemUI: return emit_binary(op, llvm::Instruction::URem);
    case OpKind::FloorDivSI: return emit_signed_division(op);
    case OpKind::MinSI: return emit_intrinsic(op, llvm::Intrinsic::smin);
    case OpKind::MaxSI: return emit_intrinsic(op, llvm::Intrinsic::smax);
    case OpKind::MinUI: return emit_intrinsic(op, llvm::Intrinsic::umin);
    case OpKind::MaxUI: return emit_intrinsic(op, llvm::Intrinsic::umax);
    case OpKind::AndI: return emit_binary(op, llvm::Instruction::And);
    case OpKind::OrI: return emit_binary(op, llvm::Instruction::Or);
    case OpKind::XOrI: return emit_binary(op, llvm::Instruction::Xor);
    case OpKind::ShLI: return emit_binary(op, llvm::Instruction::Shl);
    case OpKind::ShRSI: return emit_binary(op, llvm::Instruction::AShr);
    case OpKind::ShRUI: return emit_binary(op, llvm::Instruction::LShr);
    case OpKind::AddF: return emit_float_binary(op, llvm::Instruction::FAdd);
    case OpKind::SubF: return emit_float_binary(op, llvm::Instruction::FSub);
    case OpKind::MulF: return emit_float_binary(op, llvm::Instruction::FMul);
    case OpKind::DivF: return emit_float_binary(op, llvm::Instruction::FDiv);
    case OpKind::RemF: return emit_float_binary(op, llvm::Instruction::FRem);
    case OpKind::MinF: return emit_float_intrinsic(op, llvm::Intrinsic::minimum);
    case OpKind::MaxF: return emit_float_intrinsic(op, llvm::Intrinsic::maximum);
    case OpKind::NegF: return emit_negate(op);
    case OpKind::CmpI:
    case OpKind::CmpF: return emit_compare(op);
    case OpKind::Select: return emit_select(op);
    case OpKind::ExtSI: return emit_sign_extend(op);
    case OpKind::ExtUI: return emit_zero_extend(op);
    case OpKind::TruncI: return emit_int_truncate(op);
    case OpKind::IndexCast: return emit_index_cast(op);
    case OpKind::Bitcast: return emit_bitcast(op);
    case OpKind::AbsI: return emit_abs_int(op);
    case OpKind::Splat: return emit_splat(op);

    // --- float.cpp ---
    case OpKind::SIToFP:
    case OpKind::UIToFP: return emit_int_to_float(op);
    case OpKind::FPToSI:
    case OpKind::FPToUI: return emit_float_to_int(op);
    case OpKind::ExtF: return emit_extend_float(op);
    case OpKind::TruncF: return emit_truncate_float(op);
    case OpKind::RandomBits: return emit_random_bits(op);
    case OpKind::Sqrt: return emit_float_intrinsic(op, llvm::Intrinsic::sqrt);
    case OpKind::Floor: return emit_float_intrinsic(op, llvm::Intrinsic::floor);
    case OpKind::Ceil: return emit_float_intrinsic(op, llvm::Intrinsic::ceil);
    case OpKind::Round: return emit_float_intrinsic(op, llvm::Intrinsic::roundeven);
    case OpKind::AbsF: return emit_float_intrinsic(op, llvm::Intrinsic::fabs);
    case OpKind::Fma: return emit_float_intrinsic(op, llvm::Intrinsic::fma);
    case OpKind::Exp: return emit_math(op, MathFunction::Exp);
    case OpKind::Log: return emit_math(op, MathFunction::Log);
    case OpKind::Rsqrt: return emit_math(op, MathFunction::Rsqrt);
    case OpKind::Tanh: return emit_math(op, MathFunction::Tanh);
    case OpKind::Sin: return emit_math(op, MathFunction::Sin);
    case OpKind::Cos: return emit_math(op, MathFunction::Cos);
    case OpKind::PowF: return emit_math(op, MathFunction::Pow);

    // --- control_flow.cpp ---
    case OpKind::If: return emit_if(op);
    case OpKind::For: return emit_for(op);
    case OpKind::While: return emit_while(op);
    case OpKind::Yield:
    case OpKind::Condition: return;  // handled by the enclosing operation

    // --- Graph and Schedule IR: lowered to Tile IR before code generation ---
    case OpKind::GraphConstant:
    case OpKind::GraphElementwise:
    case OpKind::GraphMatmul:
    case OpKind::GraphReduce:
    case OpKind::GraphSoftmax:
    case OpKind::GraphNorm:
    case OpKind::GraphAttention:
    case OpKind::GraphAttentionGrad:
    case OpKind::GraphSort:
    case OpKind::GraphCast:
    case OpKind::GraphRandom:
    case OpKind::GraphGrad:
    case OpKind::GraphJvp:
    case OpKind::GraphMesh:
    case OpKind::GraphShard:
    case OpKind::GraphUnshard:
    case OpKind::GraphAllReduce:
    case OpKind::GraphAllGather:
    case OpKind::GraphReduceScatter:
    case OpKind::GraphBroadcast:
    case OpKind::GraphSend:
    case OpKind::GraphRecv:
    case OpKind::GraphSendRecv:
    case OpKind::GraphPrint:
    case OpKind::GraphDim:
    case OpKind::GraphReshape:
    case OpKind::GraphTranspose:
    case OpKind::GraphSlice:
    case OpKind::GraphConcat:
    case OpKind::GraphLaunch:
    case OpKind::GraphLoad:
    case OpKind::GraphSave:
    case OpKind::GraphEmpty:
    case OpKind::GraphIota:
    case OpKind::GraphItem:
    case OpKind::ScheduleKernel:
    case OpKind::ScheduleCollectiveStart:
    case OpKind::ScheduleCollectiveWait:
    case OpKind::ScheduleTile:
    case OpKind::ScheduleFuse:
    case OpKind::SchedulePipeline:
    case OpKind::SchedulePrefetch:
    case OpKind::ScheduleKnob:
    case OpKind::ScheduleYield: return emit_unsupported(op);

    // --- host_ops.cpp: host functions of @jit code and programs ---
    case OpKind::HostAlloc: return emit_host_alloc(op);
    case OpKind::HostFree: return emit_host_free(op);
    case OpKind::HostView: return emit_host_view(op);
    case OpKind::HostArenaBuffer: return emit_host_arena_buffer(op);
    case OpKind::HostStride: return emit_host_stride(op);
    case OpKind::HostLaunch: return emit_host_launch(op);
    case OpKind::HostPrint: return emit_host_print(op);
    case OpKind::HostSave: return emit_host_save(op);
    case OpKind::HostMesh: return emit_host_mesh(op);
    case OpKind::HostCollective: return emit_host_collective(op);
    case OpKind::HostCollectiveStart: return emit_host_collective_start(op);
    case OpKind::HostCollectiveWait: return emit_host_collective_wait(op);
    case OpKind::HostLoad: return emit_host_load(op);
    case OpKind::HostCheck: return emit_host_check(op);
    case OpKind::HostRead: return emit_host_read(op);

    // --- ids.cpp ---
    case OpKind::LinearId: return emit_linear_id(op);
    case OpKind::LocalId: return emit_group_quantity(op, GroupQuantity::LocalId);
    case OpKind::GroupId: return emit_group_quantity(op, GroupQuantity::GroupId);
    case OpKind::GroupSize: return emit_group_quantity(op, GroupQuantity::GroupSize);
    case OpKind::NumGroups: return emit_group_quantity(op, GroupQuantity::NumGroups);
    case OpKind::LaneId: return emit_lane_id(op);
    case OpKind::WarpId: return emit_warp_id(op);

    // --- memory.cpp ---
    case OpKind::Dim: return emit_dim(op);
    case OpKind::AllocShared: return emit_alloc_shared(op);
    case OpKind::AllocLocal: return emit_alloc_local(op);
    case OpKind::Subview: return emit_subview(op);
    case OpKind::Load: return emit_load(op);
    case OpKind::Store: return emit_store(op);
    case OpKind::LoadVector: return emit_load_vector(op);
    case OpKind::StoreVector: return emit_store_vector(op);
    case OpKind::CpAsync: return emit_cp_async(op);
    case OpKind::CpCommitGroup: return emit_cp_commit_group(op);
    case OpKind::CpWaitGroup: return emit_cp_wait_group(op);

    // --- warp.cpp ---
    case OpKind::Barrier: return emit_barrier(op);
    case OpKind::Shuffle: return emit_shuffle(op);
    case OpKind::WarpReduce: return emit_warp_reduce(op);
    case OpKind::Atomic: return emit_atomic(op);
    case OpKind::AtomicCas: return emit_atomic_cas(op);

    // --- mma.cpp ---
    case OpKind::Mma: return emit_mma(op);
    case OpKind::StoreTile: return emit_store_tile(op);
  }
}

// An operation this backend does not emit (codegen.unsupported).
void Emitter::emit_unsupported(Operation* op) { unsupported(op, "'" + std::string(op->name()) + "'"); }

void Emitter::emit_return(Operation* op) {
  if (host_context_) return emit_host_return(op);
  if (op->num_operands() == 0) {
    builder_.CreateRetVoid();
  } else if (op->num_operands() == 1) {
    builder_.CreateRet(get(op->operand(0)));
  } else {
    llvm::Value* agg = llvm::PoisonValue::get(current_function_->getReturnType());
    for (unsigned i = 0; i < op->num_operands(); ++i) agg = builder_.CreateInsertValue(agg, get(op->operand(i)), {i});
    builder_.CreateRet(agg);
  }
  // Anything after a return in this block is unreachable.
  builder_.SetInsertPoint(llvm::BasicBlock::Create(context_, "dead", current_function_));
}

void Emitter::emit_call(Operation* op) {
  if (host_context_) unsupported(op, "a call from one @jit function to another that was not inlined");
  llvm::Function* callee = functions_.at(std::string(op->attr("callee").string_value()));
  std::vector<llvm::Value*> args = target_->context_arguments();
  for (ir::Value* v : op->operands()) {
    if (v->type().is(TypeKind::MemRef)) {
      MemRef& m = memref(v);
      // A view passes its origin folded into the pointer.
      std::vector<llvm::Value*> zero(m.sizes.size(), builder_.getInt64(0));
      if (packed_element_bits(v->type().scalar())) {
        // A packed view is passed only from its buffer's first element:
        // a pointer cannot say which bit of a byte a view starts at.
        for (llvm::Value* o : m.origin)
          if (!llvm::isa<llvm::ConstantInt>(o) || !llvm::cast<llvm::ConstantInt>(o)->isZero())
            unsupported(op, "passing a view of a packed " + std::string(scalar_info(v->type().scalar()).name) +
                                " buffer to a helper");
        args.push_back(m.base);
      } else {
        args.push_back(element_address(m, zero, v->type(), op));
      }
      args.insert(args.end(), m.sizes.begin(), m.sizes.end());
      args.insert(args.end(), m.strides.begin(), m.strides.end());
      if (m.root.swizzle() == ir::Swizzle::Xor) unsupported(op, "passing a swizzled shared buffer to a helper");
    } else {
      args.push_back(get(v));
    }
  }
  llvm::Value* r = builder_.CreateCall(callee, args);
  if (op->num_results() == 1) set(op->result(), r);
  for (unsigned i = 0; op->num_results() > 1 && i < op->num_results(); ++i)
    set(op->result(i), builder_.CreateExtractValue(r, {i}));
}

}  // namespace emitter

std::string contiguous_variant_name(std::string_view kernel) {
  return std::string(kernel) + TESS_CONTIGUOUS_VARIANT_SUFFIX;
}

std::unique_ptr<llvm::Module> emit_nvptx_module(ir::Operation* module, llvm::LLVMContext& context,
                                                const GpuArch& arch, DiagnosticEngine& diags, DebugInfo debug,
                                                bool bounds_check) {
  emitter::Emitter emitter(module, context, diags, debug, bounds_check);
  return emitter.run(*emitter::make_nvptx_hooks(emitter, arch));
}

bool has_contiguous_variants(ir::Operation* module) {
  for (ir::Operation* f : ir::module_functions(module))
    if (!ir::is_host_level_function(f) && emitter::Emitter::has_contiguous_variant(f)) return true;
  return false;
}

std::unique_ptr<llvm::Module> emit_host_module(ir::Operation* module, llvm::LLVMContext& context,
                                               const HostTarget& target, DiagnosticEngine& diags, bool bounds_check) {
  emitter::Emitter emitter(module, context, diags, DebugInfo::None, bounds_check);
  return emitter.run(*emitter::make_cpu_hooks(emitter, target));
}

}  // namespace tessera::codegen
