// Tile IR -> LLVM IR for NVPTX (see llvm_emitter.h and docs/codegen.md).
//
// A memref is not one LLVM value: it is its root pointer, the position of the
// view's origin in the root (one i64 per dimension), its sizes and its
// strides. Keeping the origin separate from the pointer lets a view of a
// swizzled shared buffer compute the swizzle on absolute coordinates. Values
// crossing control flow (phis) are flattened into these parts.
#include "codegen/llvm_emitter.h"

#include <llvm/BinaryFormat/Dwarf.h>
#include <llvm/IR/DIBuilder.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/InlineAsm.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/IntrinsicsNVPTX.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/TargetParser/Triple.h>

#include <algorithm>
#include <array>
#include <bit>
#include <limits>
#include <unordered_map>

#include "codegen/narrow_float.h"
#include "support/diagnostics/internal_error.h"
#include "ir/core/ir_text.h"
#include "ir/core/register_tile_layout.h"

namespace tessera::codegen {
namespace {

using ir::OpKind;
using ir::Operation;
using ir::Type;
using ir::TypeKind;

constexpr unsigned kGlobalSpace = 1, kSharedSpace = 3, kLocalSpace = 5;

// Byte offsets of the fields of tessCpuLaunchContext the host code reads
// (docs/abi.md; checked against the C header in host.cpp).
namespace cpu_context {
constexpr uint64_t kGrid = 0, kGroup = 12, kGroupId = 24, kShared = 40, kReportError = 88, kRunLanes = 104,
                   kBarrier = 112, kShuffle = 120, kContextBytes = 128;
}

struct MemRef {
  llvm::Value* base = nullptr;
  std::vector<llvm::Value*> origin, sizes, strides;  // i64 each
  Type root;  // the allocation's type (padding and swizzle of shared buffers)
};

struct Lowered {
  llvm::Value* scalar = nullptr;
  std::shared_ptr<MemRef> memref;
};

struct Unsupported {};

class Emitter {
 public:
  Emitter(ir::Operation* module, llvm::LLVMContext& context, const GpuArch& arch, DiagnosticEngine& diags,
          DebugInfo debug, const HostTarget* host, bool bounds_check)
      : ir_module_(module), context_(context), arch_(arch), diags_(diags), debug_(debug), host_(host),
        bounds_check_(bounds_check), builder_(context) {}

  std::unique_ptr<llvm::Module> run() {
    module_ = std::make_unique<llvm::Module>("tessera", context_);
    if (host_) {
      module_->setTargetTriple(llvm::Triple(host_->triple));
      module_->setDataLayout(host_->data_layout);
    } else {
      module_->setTargetTriple(llvm::Triple("nvptx64-nvidia-cuda"));
      module_->setDataLayout("e-p3:32:32-p4:32:32-p5:32:32-p6:32:32-p7:32:32-i64:64-i128:128-v16:16-v32:32-n16:32:64");
    }
    if (debug_ != DebugInfo::None) {
      dib_ = std::make_unique<llvm::DIBuilder>(*module_);
      module_->addModuleFlag(llvm::Module::Warning, "Debug Info Version", llvm::DEBUG_METADATA_VERSION);
      module_->addModuleFlag(llvm::Module::Warning, "Dwarf Version", 2);
    }
    try {
      for (Operation* f : ir::module_functions(ir_module_)) declare(f);
      for (Operation* f : ir::module_functions(ir_module_)) define(f);
      if (host_) emit_host_entries();
    } catch (Unsupported&) {
      return nullptr;
    }
    if (dib_) dib_->finalize();
    std::string error;
    llvm::raw_string_ostream os(error);
    if (llvm::verifyModule(*module_, &os)) internal_error("codegen", "invalid LLVM IR: " + error);
    return std::move(module_);
  }

 private:
  [[noreturn]] void unsupported(Operation* op, const std::string& what) {
    SourceRange range = ir::location_range(diags_.sources(), op->loc());
    if (range.begin || range.end)
      diags_.emit<diag::CodegenUnsupported>(range, what, host_ ? "CPU" : "NVPTX");
    else
      diags_.emit_global<diag::CodegenUnsupported>(what, host_ ? "CPU" : "NVPTX");
    throw Unsupported{};
  }

  // --- types ----------------------------------------------------------------
  // fp8, fp6 and fp4 values are their codes in an i8 (narrow_float.h).
  llvm::Type* scalar_type(ScalarType s, [[maybe_unused]] Operation* op) {
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
  // Memory holds bool as i8 (LLVM's i1 has no defined memory layout for PTX).
  llvm::Type* element_type(Type t, Operation* op) {
    return t.scalar() == ScalarType::Bool ? builder_.getInt8Ty() : scalar_type(t.scalar(), op);
  }
  llvm::Type* value_type(Type t, Operation* op) {
    if (t.is_index()) return builder_.getInt64Ty();
    if (t.is_scalar()) return scalar_type(t.scalar(), op);
    if (t.is(TypeKind::Vector))
      return llvm::FixedVectorType::get(element_type(t, op), static_cast<unsigned>(t.shape()[0]));
    if (t.is(TypeKind::Tile))
      return llvm::FixedVectorType::get(scalar_type(t.scalar(), op), static_cast<unsigned>(tile_share(t, op)));
    unsupported(op, "a value of type " + std::string(t.str()));
  }
  // A register tile is spread over the G lanes of the group, each lane's
  // share as one LLVM vector; where each element lives is the tile's layout
  // (tile_position). G is 1 outside a kernel with a group shape.
  int64_t group_size_static() {
    return current_ir_function_ ? std::max<int64_t>(1, ir::group_lanes(current_ir_function_)) : 1;
  }
  int64_t tile_share(Type t, Operation* op) {
    int64_t elements = t.num_elements(), lanes = group_size_static();
    if (elements == ir::kDynamic || elements % lanes != 0)
      unsupported(op, "a register tile of " + std::string(t.str()) + " over " + std::to_string(lanes) + " lanes");
    return elements / lanes;
  }
  // Row and column of element j of this lane's share of an M x N tile, in
  // the tile's layout (ir/core/register_tile_layout.h).
  std::pair<llvm::Value*, llvm::Value*> tile_position(Type t, int64_t j, llvm::Value* lane) {
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
  ir::MmaTiling mma_tiling(Type t) {
    auto tiling = ir::mma_accumulator_tiling(t.shape()[0], t.shape()[1], group_size_static());
    internal_check(tiling.has_value(), "codegen", "an mma_acc tile whose shape has no warp tiling");
    return *tiling;
  }
  // What both tensor-core lowerings of a tile.mma start from.
  struct TensorCoreMma {
    Type a_type, b_type, c_type;
    ir::MmaTiling tiling;
    llvm::FixedVectorType* share_type;  // the lane's share of the accumulator
    llvm::Value* accumulator;           // the operand, or zeros
    bool bf16;                          // else f16
    MemRef *a = nullptr, *b = nullptr;
  };
  TensorCoreMma tensor_core_mma(Operation* op) {
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
  std::pair<llvm::PHINode*, llvm::PHINode*> begin_k_loop(int64_t end, llvm::Value* init) {
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
  llvm::Value* end_k_loop(llvm::PHINode* k, llvm::PHINode* acc, int64_t step, llvm::Value* next) {
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
  bool tensor_core_path(Operation* op) {
    if (host_ && host_->emulate_mma == HostTarget::EmulatedMma::None) return false;
    if (!op->operand(0)->type().is(TypeKind::MemRef) || !op->operand(1)->type().is(TypeKind::MemRef)) return false;
    Type c_type = op->result()->type();
    return c_type.layout() == ir::TileLayout::MmaAccumulator &&
           ir::mma_sync_types(op->operand(0)->type(), op->operand(1)->type(), c_type);
  }
  std::array<llvm::Value*, 4> mma_m16n8k16(const std::array<llvm::Value*, 4>& a, const std::array<llvm::Value*, 2>& b,
                                           std::array<llvm::Value*, 4> c, bool bf16);
  bool ldmatrix_operand(MemRef& m);
  std::vector<llvm::Value*> ldmatrix(llvm::Value* row_address, int count, bool transpose);
  void emit_mma(Operation* op);
  void emit_mma_sync(Operation* op);
  bool wgmma_operand(Operation* op, unsigned operand);
  void emit_wgmma(Operation* op);
  llvm::Value* emulate_wgmma(llvm::Value* a_descriptor, llvm::Value* b_descriptor, llvm::Value* acc, int64_t first,
                             int64_t registers, bool bf16);
  void emit_store_tile(Operation* op);

  bool is_signed(Type t) {
    return t.is_index() || scalar_info(t.scalar()).category == ScalarCategory::SignedInt;
  }
  bool is_float(Type t) { return (t.is_scalar() || t.is_shaped()) && tessera::is_float(t.scalar()); }

  // --- values -----------------------------------------------------------------
  llvm::Value* get(ir::Value* v) {
    auto it = values_.find(v);
    internal_check(it != values_.end() && it->second.scalar, "codegen", "use of a value without an LLVM value");
    return it->second.scalar;
  }
  MemRef& memref(ir::Value* v) {
    auto it = values_.find(v);
    internal_check(it != values_.end() && it->second.memref, "codegen", "use of a memref without a descriptor");
    return *it->second.memref;
  }
  void set(ir::Value* v, llvm::Value* x) { values_[v] = Lowered{x, nullptr}; }

  // Flattened parts, for phis: scalars are one part, memrefs 1 + 3 * rank.
  std::vector<llvm::Value*> flatten(ir::Value* v) {
    Lowered& l = values_.at(v);
    if (l.scalar) return {l.scalar};
    if (!l.memref) return {};
    std::vector<llvm::Value*> parts{l.memref->base};
    for (auto* list : {&l.memref->origin, &l.memref->sizes, &l.memref->strides})
      parts.insert(parts.end(), list->begin(), list->end());
    return parts;
  }
  // A vector access is aligned to the vector's size on the GPU (ld.v2/v4;
  // the program's contract). On the host it claims only its element's
  // alignment: an unaligned wide access (a 64-byte vector in a shared buffer
  // aligned to 16) would fault as vmovaps, and unaligned vector moves cost
  // nothing when the address happens to be aligned.
  llvm::Align vector_alignment(llvm::Type* vector) {
    const llvm::DataLayout& layout = module_->getDataLayout();
    llvm::Type* unit = host_ ? vector->getScalarType() : vector;
    return llvm::Align(layout.getTypeStoreSize(unit));
  }
  std::vector<llvm::Type*> part_types(Type t, Operation* op) {
    if (t.is(TypeKind::Token)) return {};
    if (!t.is(TypeKind::MemRef)) return {value_type(t, op)};
    unsigned space = host_                                        ? 0
                     : t.space() == ir::MemorySpace::Shared ? kSharedSpace
                     : t.space() == ir::MemorySpace::Local  ? kLocalSpace
                                                            : kGlobalSpace;
    std::vector<llvm::Type*> types{builder_.getPtrTy(space)};
    for (size_t i = 0; i < 3 * t.rank(); ++i) types.push_back(builder_.getInt64Ty());
    return types;
  }
  // Binds `v` from parts; `root` comes from a value of the same kind (phis of
  // memrefs always merge views of buffers with one layout).
  void bind(ir::Value* v, const std::vector<llvm::Value*>& parts, Type root) {
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
  Type root_of(ir::Value* v) {
    auto it = values_.find(v);
    return it != values_.end() && it->second.memref ? it->second.memref->root : Type{};
  }

  // --- functions ---------------------------------------------------------------
  void declare(Operation* f) {
    Type fn = f->attr("function_type").type();
    std::vector<llvm::Type*> params;
    // On the CPU every function receives the launch context and its lane.
    if (host_) params = {builder_.getPtrTy(), builder_.getInt64Ty()};
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
    bool kernel = f->has_attr("kernel");
    if (host_) {
      // The kernel's lanes are internal; the entry (emit_host_entries) is what the runtime calls.
      auto* function = llvm::Function::Create(llvm::FunctionType::get(result, params, false),
                                              llvm::GlobalValue::InternalLinkage,
                                              std::string(f->symbol_name()) + (kernel ? ".lane" : ""), module_.get());
      if (kernel) {
        function->addFnAttr(llvm::Attribute::AlwaysInline);
        host_kernels_.push_back(f);
      }
      functions_[std::string(f->symbol_name())] = function;
      return;
    }
    auto* function = llvm::Function::Create(llvm::FunctionType::get(result, params, false),
                                            kernel ? llvm::GlobalValue::ExternalLinkage : llvm::GlobalValue::InternalLinkage,
                                            std::string(f->symbol_name()), module_.get());
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
    functions_[std::string(f->symbol_name())] = function;
  }

  void define(Operation* f) {
    llvm::Function* function = functions_.at(std::string(f->symbol_name()));
    current_function_ = function;
    current_ir_function_ = f;
    values_.clear();
    auto* entry = llvm::BasicBlock::Create(context_, "entry", function);
    builder_.SetInsertPoint(entry);
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
    unsigned next = 0;
    shared_bytes_ = 0;
    if (host_) {
      launch_context_ = function->getArg(next++);
      lane_ = function->getArg(next++);
    }
    llvm::Value* zero = builder_.getInt64(0);
    for (ir::Value* arg : body.arguments()) {
      Type t = arg->type();
      if (t.is(TypeKind::MemRef)) {
        auto m = std::make_shared<MemRef>();
        m->base = function->getArg(next++);
        for (size_t i = 0; i < t.rank(); ++i) m->origin.push_back(zero);
        for (size_t i = 0; i < t.rank(); ++i) {
          llvm::Value* size = function->getArg(next++);
          // A static dimension is a constant in the code, whatever is passed.
          m->sizes.push_back(t.shape()[i] == ir::kDynamic ? size : builder_.getInt64(t.shape()[i]));
        }
        for (size_t i = 0; i < t.rank(); ++i) m->strides.push_back(function->getArg(next++));
        m->root = t;
        values_[arg] = Lowered{nullptr, m};
      } else {
        set(arg, function->getArg(next++));
      }
    }
    if (!host_ && f->has_attr("kernel")) check_grid_rank(f);
    emit_block(body);
    // Blocks opened after a return are unreachable.
    for (llvm::BasicBlock& block : *function) {
      if (block.getTerminator()) continue;
      builder_.SetInsertPoint(&block);
      builder_.CreateUnreachable();
    }
    static_shared_bytes_[f] = shared_bytes_;
  }

  // fptrunc, except f32 -> bf16 on the host: LLVM lowers that to a call of
  // __truncsfbf2, which older libgcc lack (objects must link anywhere), so it
  // is emitted here as the exact round-to-nearest-even sequence, bit for bit
  // what the GPU's cvt.rn.bf16.f32 gives (a NaN becomes the canonical 0x7fff).
  llvm::Value* truncate_float(llvm::Value* value, llvm::Type* to) {
    if (!host_ || !to->getScalarType()->isBFloatTy()) return builder_.CreateFPTrunc(value, to);
    llvm::Type* from = value->getType();
    auto vector_of = [&](llvm::Type* element) -> llvm::Type* {
      if (auto* v = llvm::dyn_cast<llvm::VectorType>(from)) return llvm::VectorType::get(element, v->getElementCount());
      return element;
    };
    if (!from->getScalarType()->isFloatTy()) value = builder_.CreateFPCast(value, vector_of(builder_.getFloatTy()));
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

  // A buffer of static shape `m` allocated by the kernel (shared or local):
  // origin 0, its sizes, row-major strides whose innermost row is `pitch`
  // elements long (the shape's last extent, or more with padding).
  void describe_static_buffer(MemRef& desc, Type m, int64_t pitch) {
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

  // --- the CPU target's entries (docs/abi.md) ---------------------------------------
  llvm::Value* context_field(uint64_t offset, llvm::Type* type) {
    return builder_.CreateLoad(type, builder_.CreateConstInBoundsGEP1_64(builder_.getInt8Ty(), launch_context_, offset));
  }
  llvm::Value* context_u32(uint64_t offset, int64_t index) {
    return builder_.CreateZExt(context_field(offset + 4 * static_cast<uint64_t>(index), builder_.getInt32Ty()),
                               builder_.getInt64Ty());
  }
  // Whether `f` (or a function it calls) synchronises lanes: then its lanes
  // run as fibers (run_lanes), else in a plain loop.
  bool synchronises(Operation* f) {
    auto it = synchronises_.find(f);
    if (it != synchronises_.end()) return it->second;
    synchronises_[f] = false;  // recursion: decided by the other calls
    bool found = false;
    f->walk([&](Operation* op) {
      if (op->is(OpKind::Barrier) || op->is(OpKind::Shuffle) || op->is(OpKind::WarpReduce)) found = true;
      if (op->is(OpKind::Mma) && tensor_core_path(op)) found = true;  // emulated: warp exchanges
      if (op->is(OpKind::Call))
        if (Operation* callee = ir::lookup_function(ir_module_, op->attr("callee").string_value()))
          found = found || synchronises(callee);
    });
    return synchronises_[f] = found;
  }
  // Loads the kernel's flattened parameters from the argument array.
  std::vector<llvm::Value*> unpack_arguments(llvm::Function* lane_function, llvm::Value* args) {
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
  void emit_host_entries() {
    llvm::Type* ptr = builder_.getPtrTy();
    auto* entry_type = llvm::FunctionType::get(builder_.getVoidTy(), {ptr, ptr}, false);
    auto* lane_type = llvm::FunctionType::get(builder_.getVoidTy(), {ptr, ptr, builder_.getInt64Ty()}, false);
    auto* table_entry = llvm::StructType::get(context_, {ptr, ptr, builder_.getInt64Ty(), builder_.getInt64Ty()});
    std::vector<llvm::Constant*> table;
    for (Operation* f : host_kernels_) {
      std::string name(f->symbol_name());
      llvm::Function* lanes = functions_.at(name);
      auto* entry = llvm::Function::Create(entry_type, llvm::GlobalValue::InternalLinkage, "__tessera_cpu_" + name,
                                           module_.get());
      builder_.SetInsertPoint(llvm::BasicBlock::Create(context_, "entry", entry));
      builder_.SetCurrentDebugLocation(llvm::DebugLoc());
      launch_context_ = entry->getArg(1);
      if (grid_rank(f) < 3) {  // grid_rank=N: a grid with more axes fails the launch, no group runs
        auto* fail = llvm::BasicBlock::Create(context_, "grid_rank_exceeded", entry);
        auto* next = llvm::BasicBlock::Create(context_, "grid_rank_ok", entry);
        builder_.CreateCondBr(builder_.CreateICmpEQ(grid_sizes_past_rank(f), builder_.getInt64(1)), next, fail);
        builder_.SetInsertPoint(fail);
        builder_.CreateCall(llvm::FunctionType::get(builder_.getVoidTy(), {ptr, ptr}, false),
                            context_field(cpu_context::kReportError, ptr),
                            {launch_context_, builder_.CreateGlobalString(grid_rank_message(f), "", 0)});
        builder_.CreateRetVoid();
        builder_.SetInsertPoint(next);
      }
      if (synchronises(f)) {
        // A fiber per lane: its body is a trampoline that unpacks the arguments.
        auto* fiber = llvm::Function::Create(lane_type, llvm::GlobalValue::InternalLinkage, name + ".fiber", module_.get());
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
      } else {
        // No lane waits for another: one loop over the lanes, which LLVM may
        // vectorise. The lanes read a private copy of the context: nothing
        // the kernel stores can alias it, so its fields are loaded once.
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
        std::vector<llvm::Value*> unit = values;
        llvm::Value* contiguous = builder_.getTrue();
        Type fn = f->attr("function_type").type();
        size_t next_argument = 2;
        for (size_t i = 0; i < fn.num_inputs(); ++i) {
          Type t = fn.input(i);
          if (!t.is(TypeKind::MemRef)) {
            ++next_argument;
            continue;
          }
          size_t innermost = next_argument + 2 * t.rank();
          if (t.rank() > 0) {
            contiguous = builder_.CreateAnd(contiguous, builder_.CreateICmpEQ(values[innermost], builder_.getInt64(1)));
            unit[innermost] = builder_.getInt64(1);
          }
          next_argument += 1 + 2 * t.rank();
        }
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
      auto* name_constant = builder_.CreateGlobalString(name, "__tessera_cpu_name_" + name, 0, module_.get());
      table.push_back(llvm::ConstantStruct::get(
          table_entry, {name_constant, entry, builder_.getInt64(static_shared_bytes_[f]), builder_.getInt64(0)}));
    }
    table.push_back(llvm::Constant::getNullValue(table_entry));
    auto* array = llvm::ArrayType::get(table_entry, table.size());
    new llvm::GlobalVariable(*module_, array, true, llvm::GlobalValue::ExternalLinkage,
                             llvm::ConstantArray::get(array, table), "tessera_cpu_kernels");
    new llvm::GlobalVariable(*module_, builder_.getInt32Ty(), true, llvm::GlobalValue::ExternalLinkage,
                             builder_.getInt32(host_->abi_version), "tessera_cpu_abi_version");
    define_bf16_truncation();
  }

  // x86's back end moves bf16 values through f32 (vector lanes, calls) and
  // rounds them back with __truncsfbf2, which libgcc before GCC 13 lacks. The
  // module brings its own (weak, hidden: objects never clash, and a libgcc
  // that has it is not needed), with the exact rounding of truncate_float.
  void define_bf16_truncation() {
    bool uses_bf16 = false;
    for (const llvm::Function& f : *module_) {
      for (const llvm::Argument& a : f.args()) uses_bf16 |= a.getType()->getScalarType()->isBFloatTy();
      for (const llvm::BasicBlock& b : f)
        for (const llvm::Instruction& i : b) {
          uses_bf16 |= i.getType()->getScalarType()->isBFloatTy();
          for (const llvm::Value* v : i.operands()) uses_bf16 |= v->getType()->getScalarType()->isBFloatTy();
        }
    }
    if (!uses_bf16 || module_->getFunction("__truncsfbf2")) return;
    auto* type = llvm::FunctionType::get(builder_.getBFloatTy(), {builder_.getFloatTy()}, false);
    auto* f = llvm::Function::Create(type, llvm::GlobalValue::WeakODRLinkage, "__truncsfbf2", module_.get());
    f->setVisibility(llvm::GlobalValue::HiddenVisibility);
    f->addFnAttr(llvm::Attribute::NoUnwind);
    f->addFnAttr(llvm::Attribute::getWithMemoryEffects(context_, llvm::MemoryEffects::none()));
    llvm::IRBuilderBase::InsertPointGuard guard(builder_);
    builder_.SetInsertPoint(llvm::BasicBlock::Create(context_, "entry", f));
    builder_.SetCurrentDebugLocation(llvm::DebugLoc());
    builder_.CreateRet(truncate_float(f->getArg(0), builder_.getBFloatTy()));
  }

  void emit_block(ir::Block& block) {
    for (Operation* op : block) {
      set_debug_location(op);
      emit(op);
    }
  }
  void set_debug_location(Operation* op) {
    if (!subprogram_) return;
    ir::Location loc = op->loc().primary();
    if (loc.known())
      builder_.SetCurrentDebugLocation(llvm::DILocation::get(context_, loc.line(), loc.column(), subprogram_));
  }
  llvm::DIFile* debug_file(std::string_view path) {
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

  // Emits a region's single block; returns the values its terminator yields
  // (flattened) and leaves the builder at the block where it ended.
  std::vector<std::vector<llvm::Value*>> emit_region(ir::Region& region) {
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
  llvm::Value* intrinsic(llvm::Intrinsic::ID id, llvm::ArrayRef<llvm::Value*> args = {},
                         llvm::ArrayRef<llvm::Type*> overloads = {}) {
    return builder_.CreateCall(llvm::Intrinsic::getOrInsertDeclaration(module_.get(), id, overloads), args);
  }
  llvm::Value* sreg(llvm::Intrinsic::ID id) { return builder_.CreateZExt(intrinsic(id), builder_.getInt64Ty()); }
  // tid / ntid / ctaid / nctaid of one axis; on the CPU from the launch
  // context and the lane (lane = x + group[0] * (y + group[1] * z)).
  llvm::Value* axis_sreg(const llvm::Intrinsic::ID (&ids)[3], int64_t axis) {
    // A kernel declared with grid_rank=N runs only on grids of N axes (its
    // entry checks it): group ids past them are 0 and their counts 1, so
    // tile.linear_id() and friends flatten N axes (fewer registers).
    if ((&ids == &kCtaid || &ids == &kNctaid) && current_ir_function_ && axis >= grid_rank(current_ir_function_))
      return builder_.getInt64(&ids == &kCtaid ? 0 : 1);
    // A kernel runs only with its declared group shape (every launcher checks
    // it), so the group's sizes are constants and ids past its rank are 0:
    // fewer special-register reads and registers than %ntid / %tid.y.
    if (ir::Attribute g = current_ir_function_ ? current_ir_function_->attr("group_shape") : ir::Attribute{}) {
      std::vector<int64_t> shape = g.int_array();
      bool inside = axis < static_cast<int64_t>(shape.size());
      if (&ids == &kNtid) return builder_.getInt64(static_cast<uint64_t>(inside ? shape[static_cast<size_t>(axis)] : 1));
      if (&ids == &kTid && !inside) return builder_.getInt64(0);
    }
    if (!host_) return sreg(ids[axis]);
    if (&ids == &kNtid) return context_u32(cpu_context::kGroup, axis);
    if (&ids == &kCtaid) return context_u32(cpu_context::kGroupId, axis);
    if (&ids == &kNctaid) return context_u32(cpu_context::kGrid, axis);
    llvm::Value* nx = context_u32(cpu_context::kGroup, 0);
    if (axis == 0) return builder_.CreateURem(lane_, nx);
    llvm::Value* ny = context_u32(cpu_context::kGroup, 1);
    if (axis == 1) return builder_.CreateURem(builder_.CreateUDiv(lane_, nx), ny);
    return builder_.CreateUDiv(lane_, builder_.CreateMul(nx, ny));
  }

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

  static int64_t grid_rank(Operation* f) {
    ir::Attribute r = f->attr("grid_rank");
    return r ? r.int_value() : 3;
  }
  // The product of the grid's sizes past the kernel's grid_rank (i64): 1 for
  // a launch the kernel accepts.
  llvm::Value* grid_sizes_past_rank(Operation* f) {
    llvm::Value* product = builder_.getInt64(1);
    for (int64_t axis = grid_rank(f); axis < 3; ++axis)
      product = builder_.CreateMul(product, host_ ? context_u32(cpu_context::kGrid, axis) : sreg(kNctaid[axis]));
    return product;
  }
  // grid_rank=N on the GPU: a launch on a grid with more axes traps (the
  // launch fails) instead of computing ids from N axes. A trap, not CUDA's
  // assert with a message: a call costs registers in every such kernel
  // (block_reduce: 24 instead of 10). The CPU target checks in
  // emit_host_entries, with a message.
  void check_grid_rank(Operation* f) {
    if (grid_rank(f) >= 3) return;
    auto* fail = llvm::BasicBlock::Create(context_, "grid_rank_exceeded", current_function_);
    auto* next = llvm::BasicBlock::Create(context_, "grid_rank_ok", current_function_);
    builder_.CreateCondBr(builder_.CreateICmpEQ(grid_sizes_past_rank(f), builder_.getInt64(1)), next, fail);
    builder_.SetInsertPoint(fail);
    intrinsic(llvm::Intrinsic::trap);
    builder_.CreateUnreachable();
    builder_.SetInsertPoint(next);
  }
  static std::string grid_rank_message(Operation* f) {
    int64_t rank = grid_rank(f);
    return "kernel '" + std::string(f->symbol_name()) + "' declares grid_rank=" + std::to_string(rank) +
           " but was launched on a grid with more axes (a size other than 1 past axis " + std::to_string(rank - 1) + ")";
  }

  // Flattened id of the lane in its group, and the group's lane count.
  llvm::Value* local_linear() {
    if (host_) return lane_;
    llvm::Value* x = sreg(kTid[0]);
    if (group_rank() == 1) return x;
    llvm::Value* nx = axis_sreg(kNtid, 0);
    llvm::Value* id = builder_.CreateAdd(x, builder_.CreateMul(sreg(kTid[1]), nx));
    if (group_rank() == 2) return id;
    return builder_.CreateAdd(id, builder_.CreateMul(sreg(kTid[2]), builder_.CreateMul(nx, axis_sreg(kNtid, 1))));
  }
  // The lane's index in its warp of 32.
  llvm::Value* warp_lane() { return builder_.CreateURem(local_linear(), builder_.getInt64(ir::kWarpLanes)); }
  llvm::Value* group_lanes() {
    llvm::Value* n = axis_sreg(kNtid, 0);
    for (size_t a = 1; a < group_rank(); ++a) n = builder_.CreateMul(n, axis_sreg(kNtid, static_cast<int64_t>(a)));
    return n;
  }
  size_t group_rank() {
    ir::Attribute g = current_ir_function_->attr("group_shape");
    return g ? g.size() : 3;
  }

  // The address of an element. For the packed types (fp6, fp4: element i in
  // bits [w*i, w*i + w) of the buffer, docs/abi.md) it is the byte holding the
  // element's first bit, and *bit receives the bit offset in it (i32, < 8);
  // operations that cannot handle packed elements pass no `bit`.
  llvm::Value* element_address(MemRef& m, llvm::ArrayRef<llvm::Value*> indices, Type elem, Operation* op,
                               llvm::Value** bit = nullptr) {
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
    if (bounds_check_) address = check_bounds(m, indices, address, op);
    return address;
  }

  // --bounds-check: every index must lie in its view (0 <= i < size; one
  // unsigned compare). Out of bounds, the GPU fails the launch through CUDA's
  // assert (the driver prints file, line, block and thread); the CPU reports
  // the indices and the shape with the .tsr location and goes on with a
  // harmless address, and the launch fails with that message.
  llvm::Value* check_bounds(MemRef& m, llvm::ArrayRef<llvm::Value*> indices, llvm::Value* address, Operation* op) {
    llvm::Value* inside = builder_.getTrue();
    for (size_t d = 0; d < indices.size(); ++d)
      inside = builder_.CreateAnd(inside, builder_.CreateICmpULT(indices[d], m.sizes[d]));
    ir::Location loc = op->loc().primary();
    std::string where = loc.known() ? std::string(loc.file()) + ":" + std::to_string(loc.line()) + ":" +
                                          std::to_string(loc.column())
                                    : std::string("<unknown location>");
    auto* fail = llvm::BasicBlock::Create(context_, "out_of_bounds", current_function_);
    auto* next = llvm::BasicBlock::Create(context_, "in_bounds", current_function_);
    llvm::BasicBlock* before = builder_.GetInsertBlock();
    builder_.CreateCondBr(inside, next, fail);
    builder_.SetInsertPoint(fail);
    llvm::Type* ptr = builder_.getPtrTy();
    if (!host_) {
      auto* assert_fail = llvm::FunctionType::get(builder_.getVoidTy(),
                                                  {ptr, ptr, builder_.getInt32Ty(), ptr, builder_.getInt64Ty()}, false);
      llvm::FunctionCallee callee = module_->getOrInsertFunction("__assertfail", assert_fail);
      std::string message = "index out of bounds (" + std::string(op->name()) + " at " + where + ")";
      builder_.CreateCall(callee, {builder_.CreateGlobalString(message, "", 0), builder_.CreateGlobalString(std::string(loc.known() ? loc.file() : ""), "", 0),
                                   builder_.getInt32(loc.known() ? loc.line() : 0),
                                   builder_.CreateGlobalString(std::string(current_function_->getName()), "", 0),
                                   builder_.getInt64(1)});
      intrinsic(llvm::Intrinsic::trap);
      builder_.CreateUnreachable();
      builder_.SetInsertPoint(next);
      return address;
    }
    std::string format = where + ": out-of-bounds " + std::string(op->name()) + ": index (";
    std::vector<llvm::Value*> args;
    for (size_t d = 0; d < indices.size(); ++d) {
      format += d ? ", %lld" : "%lld";
      args.push_back(indices[d]);
    }
    format += ") in a view of shape (";
    for (size_t d = 0; d < indices.size(); ++d) {
      format += d ? ", %lld" : "%lld";
      args.push_back(m.sizes[d]);
    }
    format += ")";
    // In the entry block: a check inside a loop must not grow the stack.
    llvm::IRBuilder<> entry(&current_function_->getEntryBlock(), current_function_->getEntryBlock().begin());
    llvm::Value* buffer = entry.CreateAlloca(builder_.getInt8Ty(), builder_.getInt64(256));
    std::vector<llvm::Value*> call_args{buffer, builder_.getInt64(256), builder_.CreateGlobalString(format, "", 0)};
    call_args.insert(call_args.end(), args.begin(), args.end());
    llvm::FunctionCallee snprintf = module_->getOrInsertFunction(
        "snprintf", llvm::FunctionType::get(builder_.getInt32Ty(), {ptr, builder_.getInt64Ty(), ptr}, true));
    builder_.CreateCall(snprintf, call_args);
    auto* report_type = llvm::FunctionType::get(builder_.getVoidTy(), {ptr, ptr}, false);
    builder_.CreateCall(report_type, context_field(cpu_context::kReportError, ptr), {launch_context_, buffer});
    builder_.CreateBr(next);
    builder_.SetInsertPoint(next);
    if (!out_of_bounds_sink_) {
      auto* array = llvm::ArrayType::get(builder_.getInt8Ty(), 256);
      out_of_bounds_sink_ = new llvm::GlobalVariable(*module_, array, false, llvm::GlobalValue::InternalLinkage,
                                                     llvm::ConstantAggregateZero::get(array), "__tessera_out_of_bounds_sink");
      out_of_bounds_sink_->setAlignment(llvm::Align(64));
    }
    llvm::PHINode* phi = builder_.CreatePHI(ptr, 2);
    phi->addIncoming(address, before);
    phi->addIncoming(out_of_bounds_sink_, fail);
    return phi;
  }
  llvm::Value* address_of(Operation* op, unsigned memref_operand, unsigned first_index, llvm::Value** bit = nullptr) {
    MemRef& m = memref(op->operand(memref_operand));
    std::vector<llvm::Value*> indices;
    for (unsigned i = 0; i < m.sizes.size(); ++i) indices.push_back(get(op->operand(first_index + i)));
    return element_address(m, indices, op->operand(memref_operand)->type(), op, bit);
  }

  // `bit`: the bit offset of a packed element in the byte at `address`
  // (element_address), null for every other type.
  llvm::Value* load_element(llvm::Value* address, Type elem, Operation* op, llvm::Value* bit = nullptr) {
    if (unsigned w = packed_element_bits(elem.scalar())) return load_packed(address, bit, w);
    llvm::Value* v = builder_.CreateLoad(element_type(elem, op), address);
    return elem.scalar() == ScalarType::Bool ? builder_.CreateTrunc(v, builder_.getInt1Ty()) : v;
  }
  void store_element(llvm::Value* v, llvm::Value* address, Type elem, llvm::Value* bit = nullptr) {
    if (unsigned w = packed_element_bits(elem.scalar())) return store_packed(v, address, bit, w);
    if (elem.scalar() == ScalarType::Bool) v = builder_.CreateZExt(v, builder_.getInt8Ty());
    builder_.CreateStore(v, address);
  }

  // A packed element of w bits (4 or 6) starting at bit `bit` (< 8) of the
  // byte at `address`, as numerics::packed_get: it may continue in the next
  // byte (fp6, bit > 2), which is read only then. Without a branch: the
  // second load reads the next byte or, when the element does not straddle,
  // the first byte again, so no byte past the element's last is touched.
  llvm::Value* load_packed(llvm::Value* address, llvm::Value* bit, unsigned w) {
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
  void store_packed(llvm::Value* code, llvm::Value* address, llvm::Value* bit, unsigned w) {
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
  void update_byte(llvm::Value* address, llvm::Value* clear, llvm::Value* set) {
    using B = llvm::AtomicRMWInst::BinOp;
    auto relaxed = llvm::AtomicOrdering::Monotonic;
    llvm::Type* i32 = builder_.getInt32Ty();
    clear = builder_.CreateAnd(clear, builder_.getInt32(0xFF));
    set = builder_.CreateAnd(set, builder_.getInt32(0xFF));
    if (host_) {
      llvm::Type* i8 = builder_.getInt8Ty();
      builder_.CreateAtomicRMW(B::And, address, builder_.CreateTrunc(builder_.CreateNot(clear), i8), llvm::Align(1), relaxed);
      builder_.CreateAtomicRMW(B::Or, address, builder_.CreateTrunc(set, i8), llvm::Align(1), relaxed);
      return;
    }
    // The aligned word holding the byte; little-endian: the byte is bits
    // 8 * (address & 3) of it.
    llvm::Value* within = builder_.CreateAnd(builder_.CreatePtrToInt(address, builder_.getInt64Ty()), builder_.getInt64(3));
    llvm::Value* word = builder_.CreateGEP(builder_.getInt8Ty(), address, builder_.CreateNeg(within));
    llvm::Value* shift = builder_.CreateShl(builder_.CreateTrunc(within, i32), 3);
    builder_.CreateAtomicRMW(B::And, word, builder_.CreateNot(builder_.CreateShl(clear, shift)), llvm::Align(4), relaxed);
    builder_.CreateAtomicRMW(B::Or, word, builder_.CreateShl(set, shift), llvm::Align(4), relaxed);
  }

  // Conversions between float types (arith.extf / arith.truncf, and the
  // element conversions of tile.mma): through f32 whenever a narrow format
  // (fp8, fp6, fp4) is on either side, decoding and encoding as
  // numerics.hpp says (narrow_float.h). An f64 source is first rounded to
  // f32 (to nearest even), so f64 -> fp8 rounds twice.
  llvm::Value* convert_float(llvm::Value* value, ScalarType from, ScalarType to, llvm::Type* to_type) {
    const numerics::Format* from_format = narrow_float_format(from);
    const numerics::Format* to_format = narrow_float_format(to);
    if (!from_format && !to_format) {
      unsigned from_bits = scalar_info(from).bits, to_bits = scalar_info(to).bits;
      if (from_bits < to_bits) return builder_.CreateFPExt(value, to_type);
      if (from_bits > to_bits) return truncate_float(value, to_type);
      return truncate_float(builder_.CreateFPExt(value, f32_like(value)), to_type);  // f16 <-> bf16
    }
    llvm::Value* f32 = value;
    if (from_format)
      f32 = decode_narrow(*from_format, value);
    else if (from == ScalarType::F64)
      f32 = builder_.CreateFPTrunc(value, f32_like(value));
    else if (from != ScalarType::F32)
      f32 = builder_.CreateFPExt(value, f32_like(value));
    if (to_format) return emit_narrow_encode(builder_, *to_format, f32);
    if (to == ScalarType::F32) return f32;
    if (to == ScalarType::F64) return builder_.CreateFPExt(f32, to_type);
    return truncate_float(f32, to_type);  // f16, bf16: exact (every narrow value is one)
  }
  // arith.truncf with a numeric policy ({rounding = ..., saturate}, and the
  // random bits of stochastic rounding as operand 1): the integer sequence
  // of numerics::encode_bits for that rounding and overflow mode, on both
  // targets, bf16 and f16 included (no cvt: the GPU's cvt.rz/rm/rp forms
  // would do for some modes, but one sequence keeps the targets identical).
  // The source is first made f32 exactly (decoded, extended) or, from f64,
  // rounded to nearest even (the lowering rejects f64 sources for the other
  // modes). To f32 (from f64) only `saturate` applies: infinities become the
  // largest finite f32 of their sign.
  llvm::Value* truncate_with_policy(Operation* op) {
    ScalarType from = op->operand(0)->type().scalar(), to = op->result()->type().scalar();
    std::string_view name = op->string_attr("rounding");
    numerics::Rounding rounding = numerics::Rounding::NearestEven;
    if (name == "toward_zero") rounding = numerics::Rounding::TowardZero;
    else if (name == "down") rounding = numerics::Rounding::TowardNegative;
    else if (name == "up") rounding = numerics::Rounding::TowardPositive;
    else if (name == "nearest_away") rounding = numerics::Rounding::NearestAway;
    else if (name == "stochastic") rounding = numerics::Rounding::Stochastic;
    numerics::Overflow overflow = op->has_attr("saturate") ? numerics::Overflow::Saturate : numerics::Overflow::Propagate;
    llvm::Value* value = get(op->operand(0));
    llvm::Value* f32 = value;
    if (const numerics::Format* format = narrow_float_format(from))
      f32 = decode_narrow(*format, value);
    else if (from == ScalarType::F64)
      f32 = builder_.CreateFPTrunc(value, f32_like(value));
    else if (from != ScalarType::F32)
      f32 = builder_.CreateFPExt(value, f32_like(value));
    if (to == ScalarType::F32) {
      if (from != ScalarType::F64 || rounding != numerics::Rounding::NearestEven)
        unsupported(op, "'arith.truncf' to f32 with a rounding other than nearest_even");
      if (overflow == numerics::Overflow::Propagate) return f32;
      llvm::Value* magnitude = builder_.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, f32);
      llvm::Value* is_inf = builder_.CreateFCmpOEQ(magnitude, llvm::ConstantFP::getInfinity(f32->getType()));
      llvm::Value* max = llvm::ConstantFP::get(f32->getType(), static_cast<double>(std::numeric_limits<float>::max()));
      return builder_.CreateSelect(is_inf, builder_.CreateBinaryIntrinsic(llvm::Intrinsic::copysign, max, f32), f32);
    }
    const numerics::Format* format = narrow_float_format(to);
    if (to == ScalarType::BF16) format = &numerics::bf16;
    if (to == ScalarType::F16) format = &numerics::f16;
    if (!format) unsupported(op, "'arith.truncf' with a numeric policy to " + std::string(scalar_info(to).name));
    llvm::Value* random = op->num_operands() > 1 ? get(op->operand(1)) : nullptr;
    llvm::Type* to_type = value_type(op->result()->type(), op);
    // sm_90 and newer convert f32 to e4m3/e5m2 in hardware with exactly
    // these rules: round to nearest even, out of range and infinities to the
    // largest finite value of the sign, NaN to the canonical 0x7F, subnormals
    // kept (cvt.rn.satfinite.{e4m3x2,e5m2x2}.f32; the PTX ISA; sm_89 has it
    // from PTX 8.1 only, newer than the 7.8 we emit for it). Both halves
    // get the value, so the byte taken does not depend on the packing order.
    if (!host_ && arch_.sm >= 90 && rounding == numerics::Rounding::NearestEven &&
        overflow == numerics::Overflow::Saturate && !f32->getType()->isVectorTy() &&
        (format == &numerics::fp8_e4m3 || format == &numerics::fp8_e5m2)) {
      llvm::Intrinsic::ID id = format == &numerics::fp8_e4m3 ? llvm::Intrinsic::nvvm_ff_to_e4m3x2_rn
                                                              : llvm::Intrinsic::nvvm_ff_to_e5m2x2_rn;
      llvm::Value* pair = builder_.CreateIntrinsic(builder_.getInt16Ty(), id, {f32, f32});
      return builder_.CreateTrunc(pair, to_type);
    }
    llvm::Value* code = emit_float_encode_bits(builder_, *format, f32, rounding, overflow, random);
    if (narrow_float_format(to)) return builder_.CreateTrunc(code, to_type);
    auto* vector = llvm::dyn_cast<llvm::VectorType>(to_type);
    llvm::Type* i16 = vector ? static_cast<llvm::Type*>(llvm::VectorType::get(builder_.getInt16Ty(), vector->getElementCount()))
                             : builder_.getInt16Ty();
    return builder_.CreateBitCast(builder_.CreateTrunc(code, i16), to_type);
  }
  // The f32 value of a narrow-float code (emit_narrow_decode), through a
  // hardware conversion to f16 where the target has one: f16 holds every
  // value of these formats exactly, then cvt.f32.f16. fp8_e4m3 on sm_90 and
  // newer (cvt.rn.f16x2.e4m3x2), fp6 and fp4 on the arch-specific sm_100a
  // and sm_120a-class targets (cvt.rn.f16x2.{e2m3x2,e3m2x2,e2m1x2}). The code
  // goes in both halves of the pair, so the pair's order does not matter;
  // e4m3's NaN codes (0x7F, 0xFF) take the specification's NaN by a select
  // (fp6 and fp4 have none). e5m2 goes through f16 on every GPU target
  // (emit_e5m2_decode_through_f16); the CPU keeps the integer sequences.
  llvm::Value* decode_narrow(const numerics::Format& format, llvm::Value* code) {
    if (host_) return emit_narrow_decode(builder_, format, code);
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
  // An element of type `from` as the accumulator type (tile.mma).
  llvm::Value* widen_to(llvm::Value* v, ScalarType from, llvm::Type* accum) {
    if (const numerics::Format* format = narrow_float_format(from)) v = decode_narrow(*format, v);
    return builder_.CreateFPExt(v, accum);
  }
  llvm::Type* f32_like(llvm::Value* v) {
    if (auto* vector = llvm::dyn_cast<llvm::VectorType>(v->getType()))
      return llvm::VectorType::get(builder_.getFloatTy(), vector->getElementCount());
    return builder_.getFloatTy();
  }

  llvm::Value* libdevice_call(Operation* op, const char* f32_name, const char* f64_name, llvm::ArrayRef<llvm::Value*> args) {
    llvm::Type* t = args[0]->getType();
    if (host_) return host_math(op, args);
    std::string name = t->isDoubleTy() ? f64_name : f32_name;
    if (!t->isFloatTy() && !t->isDoubleTy()) unsupported(op, "'" + std::string(op->name()) + "' on 16-bit floats");
    std::vector<llvm::Type*> params(args.size(), t);
    libdevice_used_ = true;
    llvm::FunctionCallee callee = module_->getOrInsertFunction(name, llvm::FunctionType::get(t, params, false));
    return builder_.CreateCall(callee, args);
  }

  // The host's libm through LLVM's math intrinsics (the same functions C++'s
  // <cmath> calls).
  llvm::Value* host_math(Operation* op, llvm::ArrayRef<llvm::Value*> args) {
    llvm::Type* t = args[0]->getType();
    auto call = [&](llvm::Intrinsic::ID id) { return intrinsic(id, args, {t}); };
    switch (op->kind()) {
      case OpKind::Exp: return call(llvm::Intrinsic::exp);
      case OpKind::Log: return call(llvm::Intrinsic::log);
      case OpKind::Tanh: return call(llvm::Intrinsic::tanh);
      case OpKind::Sin: return call(llvm::Intrinsic::sin);
      case OpKind::Cos: return call(llvm::Intrinsic::cos);
      case OpKind::PowF: return call(llvm::Intrinsic::pow);
      case OpKind::Rsqrt:
        return builder_.CreateFDiv(llvm::ConstantFP::get(t, 1.0), intrinsic(llvm::Intrinsic::sqrt, args, {t}));
      default: unsupported(op, "'" + std::string(op->name()) + "'");
    }
  }

  // A warp exchange through the runtime (tessCpuLaunchContext::shuffle): the
  // source lane in the warp by PTX's rules for shfl.sync with the clamps this
  // backend uses; a source outside the warp returns the lane's own value.
  llvm::Value* host_shuffle(llvm::Value* v, llvm::Value* offset, const std::string& mode) {
    llvm::Type* t = v->getType();
    unsigned bits = static_cast<unsigned>(module_->getDataLayout().getTypeSizeInBits(t));
    llvm::Value* in_warp = builder_.CreateAnd(lane_, builder_.getInt64(31));
    llvm::Value* b = builder_.CreateZExt(builder_.CreateIntCast(offset, builder_.getInt32Ty(), false), builder_.getInt64Ty());
    llvm::Value* source;
    if (mode == "up") {
      source = builder_.CreateSelect(builder_.CreateICmpUGE(in_warp, b), builder_.CreateSub(in_warp, b), in_warp);
    } else if (mode == "down") {
      llvm::Value* j = builder_.CreateAdd(in_warp, b);
      source = builder_.CreateSelect(builder_.CreateICmpULE(j, builder_.getInt64(31)), j, in_warp);
    } else if (mode == "xor") {
      llvm::Value* j = builder_.CreateXor(in_warp, b);
      source = builder_.CreateSelect(builder_.CreateICmpULE(j, builder_.getInt64(31)), j, in_warp);
    } else {
      source = builder_.CreateAnd(b, builder_.getInt64(31));
    }
    llvm::Value* bits_value = builder_.CreateBitCast(v, builder_.getIntNTy(bits));
    llvm::Value* wide = builder_.CreateZExt(bits_value, builder_.getInt64Ty());
    llvm::Type* ptr = builder_.getPtrTy();
    auto* type = llvm::FunctionType::get(builder_.getInt64Ty(), {ptr, builder_.getInt64Ty(), builder_.getInt32Ty()}, false);
    llvm::Value* r = builder_.CreateCall(type, context_field(cpu_context::kShuffle, ptr),
                                         {launch_context_, wide, builder_.CreateTrunc(source, builder_.getInt32Ty())});
    return builder_.CreateBitCast(builder_.CreateTrunc(r, builder_.getIntNTy(bits)), t);
  }

  llvm::Value* shuffle(llvm::Value* v, llvm::Value* offset, const std::string& mode, Operation* op) {
    if (host_) return host_shuffle(v, offset, mode);
    llvm::Type* t = v->getType();
    unsigned bits = t->getPrimitiveSizeInBits();
    if (bits == 64) {
      llvm::Value* i = builder_.CreateBitCast(v, builder_.getInt64Ty());
      llvm::Value* lo = shuffle(builder_.CreateTrunc(i, builder_.getInt32Ty()), offset, mode, op);
      llvm::Value* hi = shuffle(builder_.CreateTrunc(builder_.CreateLShr(i, 32), builder_.getInt32Ty()), offset, mode, op);
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
    llvm::Intrinsic::ID id;
    int clamp = 0x1f;
    if (mode == "down") id = f32 ? llvm::Intrinsic::nvvm_shfl_sync_down_f32 : llvm::Intrinsic::nvvm_shfl_sync_down_i32;
    else if (mode == "up") id = f32 ? llvm::Intrinsic::nvvm_shfl_sync_up_f32 : llvm::Intrinsic::nvvm_shfl_sync_up_i32, clamp = 0;
    else if (mode == "xor") id = f32 ? llvm::Intrinsic::nvvm_shfl_sync_bfly_f32 : llvm::Intrinsic::nvvm_shfl_sync_bfly_i32;
    else id = f32 ? llvm::Intrinsic::nvvm_shfl_sync_idx_f32 : llvm::Intrinsic::nvvm_shfl_sync_idx_i32;
    llvm::Value* lane = builder_.CreateIntCast(offset, builder_.getInt32Ty(), false);
    llvm::Value* r = intrinsic(id, {builder_.getInt32(0xffffffffu), x, lane, builder_.getInt32(clamp)});
    if (f32) return r;
    if (bits < 32) r = builder_.CreateTrunc(r, builder_.getIntNTy(bits));
    return builder_.CreateBitCast(r, t);
  }

  llvm::Value* combine(const std::string& kind, llvm::Value* a, llvm::Value* b, Type t) {
    bool f = is_float(t);
    if (kind == "sum") return f ? builder_.CreateFAdd(a, b) : builder_.CreateAdd(a, b);
    bool max = kind == "max";
    if (f) return intrinsic(max ? llvm::Intrinsic::maxnum : llvm::Intrinsic::minnum, {a, b}, {a->getType()});
    bool s = is_signed(t);
    llvm::Intrinsic::ID id = max ? (s ? llvm::Intrinsic::smax : llvm::Intrinsic::umax)
                                 : (s ? llvm::Intrinsic::smin : llvm::Intrinsic::umin);
    return intrinsic(id, {a, b}, {a->getType()});
  }

  // Float arithmetic, math and atomics: never applied to narrow codes.
  static bool computes_on_operand(OpKind kind) {
    switch (kind) {
      case OpKind::AddF: case OpKind::SubF: case OpKind::MulF: case OpKind::DivF: case OpKind::RemF:
      case OpKind::MinF: case OpKind::MaxF: case OpKind::NegF: case OpKind::Sqrt: case OpKind::Floor:
      case OpKind::Ceil: case OpKind::Round: case OpKind::AbsF: case OpKind::Fma: case OpKind::Exp:
      case OpKind::Log: case OpKind::Rsqrt: case OpKind::Tanh: case OpKind::Sin: case OpKind::Cos:
      case OpKind::PowF: case OpKind::WarpReduce: case OpKind::Atomic: case OpKind::AtomicCas: return true;
      default: return false;
    }
  }
  void emit(Operation* op);
  void emit_if(Operation* op);
  void emit_for(Operation* op);
  void emit_while(Operation* op);
  void emit_cp_async(Operation* op);

  ir::Operation* ir_module_;
  llvm::LLVMContext& context_;
  GpuArch arch_;
  DiagnosticEngine& diags_;
  DebugInfo debug_;
  const HostTarget* host_;  // null for NVPTX
  bool bounds_check_;
  llvm::GlobalVariable* out_of_bounds_sink_ = nullptr;
  llvm::IRBuilder<> builder_;
  // CPU target: the current function's launch context and lane, the kernels,
  // their shared-memory sizes, which of them synchronise.
  llvm::Value* launch_context_ = nullptr;
  llvm::Value* lane_ = nullptr;
  std::vector<Operation*> host_kernels_;
  std::unordered_map<Operation*, uint64_t> static_shared_bytes_;
  std::unordered_map<Operation*, bool> synchronises_;
  uint64_t shared_bytes_ = 0;
  std::unique_ptr<llvm::Module> module_;
  std::unique_ptr<llvm::DIBuilder> dib_;
  llvm::DIFile* compile_unit_file_ = nullptr;
  std::unordered_map<std::string, llvm::DIFile*> debug_files_;
  llvm::DISubprogram* subprogram_ = nullptr;
  std::unordered_map<std::string, llvm::Function*> functions_;
  std::unordered_map<ir::Value*, Lowered> values_;
  llvm::Function* current_function_ = nullptr;
  Operation* current_ir_function_ = nullptr;
  unsigned shared_count_ = 0;

 public:
  bool libdevice_used_ = false;
};

void Emitter::emit_if(Operation* op) {
  llvm::Value* c = get(op->operand(0));
  auto* then_block = llvm::BasicBlock::Create(context_, "if.then", current_function_);
  auto* else_block = llvm::BasicBlock::Create(context_, "if.else", current_function_);
  auto* merge = llvm::BasicBlock::Create(context_, "if.end", current_function_);
  builder_.CreateCondBr(c, then_block, else_block);
  std::vector<std::vector<std::vector<llvm::Value*>>> yielded(2);
  std::vector<llvm::BasicBlock*> ends(2);
  for (unsigned r = 0; r < 2; ++r) {
    builder_.SetInsertPoint(r == 0 ? then_block : else_block);
    yielded[r] = emit_region(op->region(r));
    ends[r] = builder_.GetInsertBlock();
    builder_.CreateBr(merge);
  }
  builder_.SetInsertPoint(merge);
  for (unsigned i = 0; i < op->num_results(); ++i) {
    std::vector<llvm::Value*> parts;
    for (size_t p = 0; p < yielded[0][i].size(); ++p) {
      llvm::PHINode* phi = builder_.CreatePHI(yielded[0][i][p]->getType(), 2);
      phi->addIncoming(yielded[0][i][p], ends[0]);
      phi->addIncoming(yielded[1][i][p], ends[1]);
      parts.push_back(phi);
    }
    Type root = op->region(0).front().terminator() ? root_of(op->region(0).front().terminator()->operand(i)) : Type{};
    bind(op->result(i), parts, root);
  }
}

void Emitter::emit_for(Operation* op) {
  llvm::Value* lower = get(op->operand(0));
  llvm::Value* upper = get(op->operand(1));
  llvm::Value* step = get(op->operand(2));
  ir::Block& body = op->region(0).front();
  llvm::BasicBlock* preheader = builder_.GetInsertBlock();
  auto* header = llvm::BasicBlock::Create(context_, "for.header", current_function_);
  auto* body_block = llvm::BasicBlock::Create(context_, "for.body", current_function_);
  auto* exit = llvm::BasicBlock::Create(context_, "for.end", current_function_);
  builder_.CreateBr(header);
  builder_.SetInsertPoint(header);
  llvm::PHINode* iv = builder_.CreatePHI(lower->getType(), 2);
  iv->addIncoming(lower, preheader);
  set(body.argument(0), iv);
  std::vector<std::vector<llvm::PHINode*>> phis;
  for (unsigned i = 3; i < op->num_operands(); ++i) {
    std::vector<llvm::Value*> init = flatten(op->operand(i));
    std::vector<llvm::PHINode*> list;
    std::vector<llvm::Value*> parts;
    for (llvm::Value* part : init) {
      llvm::PHINode* phi = builder_.CreatePHI(part->getType(), 2);
      phi->addIncoming(part, preheader);
      list.push_back(phi);
      parts.push_back(phi);
    }
    phis.push_back(list);
    bind(body.argument(i - 2), parts, root_of(op->operand(i)));
  }
  builder_.CreateCondBr(builder_.CreateICmpSLT(iv, upper), body_block, exit);
  builder_.SetInsertPoint(body_block);
  auto yielded = emit_region(op->region(0));
  llvm::Value* next = builder_.CreateAdd(iv, step);
  llvm::BasicBlock* latch = builder_.GetInsertBlock();
  builder_.CreateBr(header);
  iv->addIncoming(next, latch);
  for (size_t i = 0; i < phis.size(); ++i)
    for (size_t p = 0; p < phis[i].size(); ++p) phis[i][p]->addIncoming(yielded[i][p], latch);
  builder_.SetInsertPoint(exit);
  for (unsigned i = 0; i < op->num_results(); ++i) {
    std::vector<llvm::Value*> parts(phis[i].begin(), phis[i].end());
    bind(op->result(i), parts, root_of(op->operand(i + 3)));
  }
}

void Emitter::emit_while(Operation* op) {
  ir::Block& before = op->region(0).front();
  ir::Block& after = op->region(1).front();
  llvm::BasicBlock* preheader = builder_.GetInsertBlock();
  auto* header = llvm::BasicBlock::Create(context_, "while.cond", current_function_);
  auto* body_block = llvm::BasicBlock::Create(context_, "while.body", current_function_);
  auto* exit = llvm::BasicBlock::Create(context_, "while.end", current_function_);
  builder_.CreateBr(header);
  builder_.SetInsertPoint(header);
  std::vector<std::vector<llvm::PHINode*>> phis;
  for (unsigned i = 0; i < op->num_operands(); ++i) {
    std::vector<llvm::PHINode*> list;
    std::vector<llvm::Value*> parts;
    for (llvm::Value* part : flatten(op->operand(i))) {
      llvm::PHINode* phi = builder_.CreatePHI(part->getType(), 2);
      phi->addIncoming(part, preheader);
      list.push_back(phi);
      parts.push_back(phi);
    }
    phis.push_back(list);
    bind(before.argument(i), parts, root_of(op->operand(i)));
  }
  auto forwarded = emit_region(op->region(0));  // [condition, values...]
  llvm::Value* c = forwarded.at(0).at(0);
  builder_.CreateCondBr(c, body_block, exit);
  for (unsigned i = 0; i < after.num_arguments(); ++i) {
    Type root = root_of(before.terminator()->operand(i + 1));
    bind(after.argument(i), forwarded.at(i + 1), root);
    bind(op->result(i), forwarded.at(i + 1), root);
  }
  builder_.SetInsertPoint(body_block);
  auto yielded = emit_region(op->region(1));
  llvm::BasicBlock* latch = builder_.GetInsertBlock();
  builder_.CreateBr(header);
  for (size_t i = 0; i < phis.size(); ++i)
    for (size_t p = 0; p < phis[i].size(); ++p) phis[i][p]->addIncoming(yielded[i][p], latch);
  builder_.SetInsertPoint(exit);
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
  } else if (!host_ && (bytes == 4 || bytes == 8 || bytes == 16)) {
    llvm::Intrinsic::ID id = bytes == 4   ? llvm::Intrinsic::nvvm_cp_async_ca_shared_global_4
                             : bytes == 8 ? llvm::Intrinsic::nvvm_cp_async_ca_shared_global_8
                                          : llvm::Intrinsic::nvvm_cp_async_ca_shared_global_16;
    intrinsic(id, {to, from});
  } else {
    builder_.CreateStore(builder_.CreateLoad(element_type(elem, op), from), to);
  }
  llvm::Value* next = builder_.CreateAdd(e, stride);
  e->addIncoming(next, builder_.GetInsertBlock());
  builder_.CreateBr(header);
  builder_.SetInsertPoint(exit);
  values_[op->result()] = Lowered{};
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
    bool wgmma = host_ ? host_->emulate_mma == HostTarget::EmulatedMma::Wgmma
                       : arch_.wgmma && arch_.sm == 90 && arch_.arch_specific;
    if (wgmma && warpgroups && wgmma_operand(op, 0) && wgmma_operand(op, 1)) return emit_wgmma(op);
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
    llvm::Value* sum = intrinsic(llvm::Intrinsic::fma, {x, y, c}, {accum});
    next = builder_.CreateInsertElement(next, sum, builder_.getInt64(j));
  }
  set(op->result(), end_k_loop(k, acc, 1, next));
}

// C (+)= A x B on the tensor cores: mma.sync.aligned.m16n8k16.row.col with
// f16 or bf16 operands and f32 accumulators (sm_80+). The result is in the
// mma_acc layout (ir/core/register_tile_layout.h), so each lane's share is its
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
      std::vector<llvm::Value*> words = ldmatrix(element_address(a, {row, col}, a_type, op), 4, false);
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
      std::vector<llvm::Value*> words = ldmatrix(element_address(b, {row, col}, b_type, op), count, true);
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
      c = mma_m16n8k16(a_fragments[static_cast<size_t>(tm)], b_fragments[static_cast<size_t>(tn)], c, bf16);
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
  return host_ || m.base->getType()->getPointerAddressSpace() == kSharedSpace;
}

// ldmatrix.sync.aligned.m8n8.x{count}[.trans].shared.b16: lane q gives
// `row_address`, the address of row q % 8 of matrix q / 8 (lanes 0-15 for
// x2); register j of lane q = 4g + t receives elements 2t, 2t + 1 of row g
// of matrix j, or with .trans elements g of rows 2t and 2t + 1 (PTX ISA,
// "ldmatrix"). On the CPU the lanes exchange the row addresses and load the
// same elements (HostTarget::emulate_mma).
std::vector<llvm::Value*> Emitter::ldmatrix(llvm::Value* row_address, int count, bool transpose) {
  std::vector<llvm::Value*> words;
  if (!host_) {
    llvm::Intrinsic::ID id =
        count == 4 ? (transpose ? llvm::Intrinsic::nvvm_ldmatrix_sync_aligned_m8n8_x4_trans_b16
                                : llvm::Intrinsic::nvvm_ldmatrix_sync_aligned_m8n8_x4_b16)
                   : (transpose ? llvm::Intrinsic::nvvm_ldmatrix_sync_aligned_m8n8_x2_trans_b16
                                : llvm::Intrinsic::nvvm_ldmatrix_sync_aligned_m8n8_x2_b16);
    llvm::Value* loaded = intrinsic(id, {row_address}, {row_address->getType()});
    for (unsigned j = 0; j < static_cast<unsigned>(count); ++j) words.push_back(builder_.CreateExtractValue(loaded, j));
    return words;
  }
  llvm::Type* i32 = builder_.getInt32Ty();
  llvm::Type* i16 = builder_.getInt16Ty();
  llvm::Value* address = builder_.CreatePtrToInt(row_address, builder_.getInt64Ty());
  llvm::Value* q = warp_lane();
  llvm::Value* g = builder_.CreateUDiv(q, builder_.getInt64(4));
  llvm::Value* two_t = builder_.CreateMul(builder_.CreateURem(q, builder_.getInt64(4)), builder_.getInt64(2));
  auto row_of = [&](int64_t j, llvm::Value* row) {  // lane 8j + row's address
    return host_shuffle(address, builder_.CreateAdd(row, builder_.getInt64(8 * j)), "idx");
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
std::array<llvm::Value*, 4> Emitter::mma_m16n8k16(const std::array<llvm::Value*, 4>& a,
                                                  const std::array<llvm::Value*, 2>& b, std::array<llvm::Value*, 4> c,
                                                  bool bf16) {
  if (!host_) {
    std::vector<llvm::Value*> args(a.begin(), a.end());
    args.insert(args.end(), b.begin(), b.end());
    args.insert(args.end(), c.begin(), c.end());
    llvm::Value* d = intrinsic(bf16 ? llvm::Intrinsic::nvvm_mma_m16n8k16_row_col_bf16
                                    : llvm::Intrinsic::nvvm_mma_m16n8k16_row_col_f32_f32,
                               args);
    for (unsigned i = 0; i < 4; ++i) c[i] = builder_.CreateExtractValue(d, i);
    return c;
  }
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
    auto row_g = widen(host_shuffle(word(a[static_cast<size_t>(2 * half)]), from(g4), "idx"));
    auto row_g8 = widen(host_shuffle(word(a[static_cast<size_t>(2 * half + 1)]), from(g4), "idx"));
    auto column_0 = widen(host_shuffle(word(b[static_cast<size_t>(half)]), from(t8), "idx"));
    auto column_1 = widen(host_shuffle(word(b[static_cast<size_t>(half)]), from(builder_.CreateAdd(t8, builder_.getInt64(4))), "idx"));
    const std::array<llvm::Value*, 2>* rows[2] = {&row_g, &row_g8};
    const std::array<llvm::Value*, 2>* columns[2] = {&column_0, &column_1};
    for (size_t i = 0; i < 4; ++i)
      for (size_t e = 0; e < 2; ++e)
        c[i] = intrinsic(llvm::Intrinsic::fma, {(*rows[i / 2])[e], (*columns[i % 2])[e], c[i]}, {f32});
  }
  return c;
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
// exactly wgmma's accumulator (ir/core/register_tile_layout.h): warpgroup g's
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
// the operation ends.
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
    llvm::Value* address = builder_.CreatePtrToInt(m.base, builder_.getInt64Ty());
    if (!host_) return address;
    return builder_.CreateSub(address, builder_.CreatePtrToInt(context_field(cpu_context::kShared, builder_.getPtrTy()),
                                                               builder_.getInt64Ty()));
  };

  if (!host_) {
    // Make the group's shared-memory writes visible to the async proxy.
    intrinsic(llvm::Intrinsic::nvvm_fence_proxy_async_shared_cta);
    intrinsic(llvm::Intrinsic::nvvm_barrier_cta_sync_aligned_all, {builder_.getInt32(0)});
    intrinsic(llvm::Intrinsic::nvvm_wgmma_fence_sync_aligned);
  }

  // The instruction: N/2 accumulators in and out, two descriptors, scale-d = 1
  // (always accumulate; a first mma starts from zeros), no negation, A
  // K-major (0), B MN-major (1).
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
      if (host_) {
        acc = emulate_wgmma(a_descriptor, b_descriptor, acc, first, registers, bf16);
        continue;
      }
      std::vector<llvm::Value*> args;
      for (int64_t r = 0; r < registers; ++r) args.push_back(builder_.CreateExtractElement(acc, constant(first + r)));
      args.push_back(a_descriptor);
      args.push_back(b_descriptor);
      args.push_back(builder_.getInt32(1));
      llvm::Value* d = builder_.CreateCall(asm_type, wgmma, args);
      for (int64_t r = 0; r < registers; ++r)
        acc = builder_.CreateInsertElement(acc, builder_.CreateExtractValue(d, static_cast<unsigned>(r)),
                                           constant(first + r));
    }
  }
  if (!host_) {
    intrinsic(llvm::Intrinsic::nvvm_wgmma_commit_group_sync_aligned);
    intrinsic(llvm::Intrinsic::nvvm_wgmma_wait_group_sync_aligned, {builder_.getInt64(0)});
  }
  set(op->result(), acc);
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
llvm::Value* Emitter::emulate_wgmma(llvm::Value* a_descriptor, llvm::Value* b_descriptor, llvm::Value* acc,
                                    int64_t first, int64_t registers, bool bf16) {
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
  llvm::Value* block = context_field(cpu_context::kShared, builder_.getPtrTy());
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
  llvm::Value* warp = builder_.CreateURem(builder_.CreateUDiv(lane_, constant(ir::kWarpLanes)), constant(4));
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

void Emitter::emit(Operation* op) {
  auto operand = [&](unsigned i) { return get(op->operand(i)); };
  auto result_type = [&]() { return value_type(op->result()->type(), op); };
  auto binary = [&](llvm::Instruction::BinaryOps code) {
    set(op->result(), builder_.CreateBinOp(code, operand(0), operand(1)));
  };
  auto unary_intrinsic = [&](llvm::Intrinsic::ID id) {
    set(op->result(), intrinsic(id, {operand(0)}, {operand(0)->getType()}));
  };
  auto binary_intrinsic = [&](llvm::Intrinsic::ID id) {
    set(op->result(), intrinsic(id, {operand(0), operand(1)}, {operand(0)->getType()}));
  };
  Type t0 = op->num_operands() > 0 ? op->operand(0)->type() : Type{};
  // fp8/fp6/fp4 values are codes in i8s: the lowering converts them to f32
  // before any arithmetic (ir.h); only moves, conversions and comparisons
  // see them.
  if (t0 && (t0.is_scalar() || t0.is_shaped()) && narrow_float_format(t0.scalar()) && computes_on_operand(op->kind()))
    unsupported(op, "'" + std::string(op->name()) + "' on " + std::string(scalar_info(t0.scalar()).name) +
                        " values (convert them to f32 first)");
  switch (op->kind()) {
    case OpKind::Return: {
      if (op->num_operands() == 0) {
        builder_.CreateRetVoid();
      } else if (op->num_operands() == 1) {
        builder_.CreateRet(operand(0));
      } else {
        llvm::Value* agg = llvm::PoisonValue::get(current_function_->getReturnType());
        for (unsigned i = 0; i < op->num_operands(); ++i) agg = builder_.CreateInsertValue(agg, operand(i), {i});
        builder_.CreateRet(agg);
      }
      // Anything after a return in this block is unreachable.
      builder_.SetInsertPoint(llvm::BasicBlock::Create(context_, "dead", current_function_));
      return;
    }
    case OpKind::Call: {
      llvm::Function* callee = functions_.at(std::string(op->attr("callee").string_value()));
      std::vector<llvm::Value*> args;
      if (host_) args = {launch_context_, lane_};
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
      return;
    }
    case OpKind::Constant: {
      ir::Attribute a = op->attr("value");
      llvm::Type* t = result_type();
      if (a.is(ir::AttributeKind::Bool)) return set(op->result(), builder_.getInt1(a.bool_value()));
      if (a.is(ir::AttributeKind::Float)) {
        // A narrow-format constant is its code (the value rounded to f32, then encoded).
        if (const numerics::Format* format = narrow_float_format(op->result()->type().scalar()))
          return set(op->result(), llvm::ConstantInt::get(t, numerics::encode_bits(
                                                                 *format, numerics::float_to_bits(static_cast<float>(a.float_value())),
                                                                 numerics::Rounding::NearestEven, numerics::Overflow::Propagate)));
        return set(op->result(), llvm::ConstantFP::get(t, a.float_value()));
      }
      return set(op->result(), llvm::ConstantInt::get(t, static_cast<uint64_t>(a.int_value()), true));
    }
    case OpKind::AddI: return binary(llvm::Instruction::Add);
    case OpKind::SubI: return binary(llvm::Instruction::Sub);
    case OpKind::MulI: return binary(llvm::Instruction::Mul);
    case OpKind::DivSI: return binary(llvm::Instruction::SDiv);
    case OpKind::DivUI: return binary(llvm::Instruction::UDiv);
    case OpKind::RemSI: return binary(llvm::Instruction::SRem);
    case OpKind::RemUI: return binary(llvm::Instruction::URem);
    case OpKind::FloorDivSI: {
      // Round toward negative infinity: q - (r != 0 && (r < 0) != (b < 0)).
      llvm::Value *a = operand(0), *b = operand(1);
      llvm::Value* q = builder_.CreateSDiv(a, b);
      llvm::Value* r = builder_.CreateSRem(a, b);
      llvm::Value* zero = llvm::ConstantInt::get(a->getType(), 0);
      llvm::Value* adjust = builder_.CreateAnd(builder_.CreateICmpNE(r, zero),
                                               builder_.CreateXor(builder_.CreateICmpSLT(r, zero), builder_.CreateICmpSLT(b, zero)));
      return set(op->result(), builder_.CreateSub(q, builder_.CreateZExt(adjust, a->getType())));
    }
    case OpKind::MinSI: return binary_intrinsic(llvm::Intrinsic::smin);
    case OpKind::MaxSI: return binary_intrinsic(llvm::Intrinsic::smax);
    case OpKind::MinUI: return binary_intrinsic(llvm::Intrinsic::umin);
    case OpKind::MaxUI: return binary_intrinsic(llvm::Intrinsic::umax);
    case OpKind::AndI: return binary(llvm::Instruction::And);
    case OpKind::OrI: return binary(llvm::Instruction::Or);
    case OpKind::XOrI: return binary(llvm::Instruction::Xor);
    case OpKind::ShLI: return binary(llvm::Instruction::Shl);
    case OpKind::ShRSI: return binary(llvm::Instruction::AShr);
    case OpKind::ShRUI: return binary(llvm::Instruction::LShr);
    case OpKind::AddF: return binary(llvm::Instruction::FAdd);
    case OpKind::SubF: return binary(llvm::Instruction::FSub);
    case OpKind::MulF: return binary(llvm::Instruction::FMul);
    case OpKind::DivF: return binary(llvm::Instruction::FDiv);
    case OpKind::RemF: return binary(llvm::Instruction::FRem);
    case OpKind::MinF: return binary_intrinsic(llvm::Intrinsic::minnum);
    case OpKind::MaxF: return binary_intrinsic(llvm::Intrinsic::maxnum);
    case OpKind::NegF: return set(op->result(), builder_.CreateFNeg(operand(0)));
    case OpKind::CmpI:
    case OpKind::CmpF: {
      std::string_view p = op->attr("predicate").string_value();
      using P = llvm::CmpInst::Predicate;
      static const std::pair<std::string_view, P> kPredicates[] = {
          {"eq", P::ICMP_EQ},   {"ne", P::ICMP_NE},   {"slt", P::ICMP_SLT}, {"sle", P::ICMP_SLE},
          {"sgt", P::ICMP_SGT}, {"sge", P::ICMP_SGE}, {"oeq", P::FCMP_OEQ}, {"one", P::FCMP_ONE},
          {"olt", P::FCMP_OLT}, {"ole", P::FCMP_OLE}, {"ogt", P::FCMP_OGT}, {"oge", P::FCMP_OGE},
          {"ueq", P::FCMP_UEQ}, {"une", P::FCMP_UNE}, {"ord", P::FCMP_ORD}, {"uno", P::FCMP_UNO}};
      static const std::pair<std::string_view, P> kUnsigned[] = {{"ult", P::ICMP_ULT}, {"ule", P::ICMP_ULE},
                                                                  {"ugt", P::ICMP_UGT}, {"uge", P::ICMP_UGE}};
      static const std::pair<std::string_view, P> kUnordered[] = {{"ult", P::FCMP_ULT}, {"ule", P::FCMP_ULE},
                                                                    {"ugt", P::FCMP_UGT}, {"uge", P::FCMP_UGE}};
      P predicate = P::BAD_ICMP_PREDICATE;
      for (auto& [name, value] : kPredicates)
        if (name == p) predicate = value;
      for (auto& [name, value] : op->is(OpKind::CmpI) ? kUnsigned : kUnordered)
        if (name == p) predicate = value;
      if (op->is(OpKind::CmpI)) return set(op->result(), builder_.CreateICmp(predicate, operand(0), operand(1)));
      llvm::Value *a = operand(0), *b = operand(1);
      if (const numerics::Format* format = narrow_float_format(t0.scalar())) {
        a = decode_narrow(*format, a);  // compared as the values they stand for
        b = decode_narrow(*format, b);
      }
      return set(op->result(), builder_.CreateFCmp(predicate, a, b));
    }
    case OpKind::Select: {
      if (op->result()->type().is(TypeKind::MemRef)) {
        std::vector<llvm::Value*> a = flatten(op->operand(1)), b = flatten(op->operand(2)), parts;
        // Parts the two share (origins, sizes, strides of same-shaped buffers)
        // stay as they are: known constants keep the views' static facts
        // (ldmatrix_operand, wgmma_operand).
        for (size_t i = 0; i < a.size(); ++i)
          parts.push_back(a[i] == b[i] ? a[i] : builder_.CreateSelect(operand(0), a[i], b[i]));
        return bind(op->result(), parts, root_of(op->operand(1)));
      }
      return set(op->result(), builder_.CreateSelect(operand(0), operand(1), operand(2)));
    }
    case OpKind::ExtSI: return set(op->result(), builder_.CreateSExt(operand(0), result_type()));
    case OpKind::ExtUI: return set(op->result(), builder_.CreateZExt(operand(0), result_type()));
    case OpKind::TruncI: return set(op->result(), builder_.CreateTrunc(operand(0), result_type()));
    case OpKind::SIToFP:
    case OpKind::UIToFP: {
      // To a narrow format through f32: exact below 2^24, and larger
      // integers overflow every narrow format either way.
      const numerics::Format* format = narrow_float_format(op->result()->type().scalar());
      llvm::Type* to = format ? f32_like(operand(0)) : result_type();
      llvm::Value* v = op->is(OpKind::SIToFP) ? builder_.CreateSIToFP(operand(0), to) : builder_.CreateUIToFP(operand(0), to);
      return set(op->result(), format ? emit_narrow_encode(builder_, *format, v) : v);
    }
    case OpKind::FPToSI:
    case OpKind::FPToUI: {
      llvm::Value* v = operand(0);
      if (const numerics::Format* format = narrow_float_format(t0.scalar())) v = decode_narrow(*format, v);
      return set(op->result(), op->is(OpKind::FPToSI) ? builder_.CreateFPToSI(v, result_type())
                                                      : builder_.CreateFPToUI(v, result_type()));
    }
    case OpKind::ExtF: return set(op->result(), convert_float(operand(0), t0.scalar(), op->result()->type().scalar(), result_type()));
    case OpKind::TruncF: {
      std::string_view rounding = op->string_attr("rounding");
      if ((rounding.empty() || rounding == "nearest_even") && !op->has_attr("saturate"))
        return set(op->result(), convert_float(operand(0), t0.scalar(), op->result()->type().scalar(), result_type()));
      return set(op->result(), truncate_with_policy(op));
    }
    case OpKind::RandomBits: return set(op->result(), emit_random_bits(builder_, operand(0), operand(1)));
    case OpKind::IndexCast: {
      bool widen = t0.is_index() ? false : is_signed(t0);
      return set(op->result(), builder_.CreateIntCast(operand(0), result_type(), t0.is_index() ? true : widen));
    }
    case OpKind::Bitcast: return set(op->result(), builder_.CreateBitCast(operand(0), result_type()));
    case OpKind::Sqrt: return unary_intrinsic(llvm::Intrinsic::sqrt);
    case OpKind::Floor: return unary_intrinsic(llvm::Intrinsic::floor);
    case OpKind::Ceil: return unary_intrinsic(llvm::Intrinsic::ceil);
    case OpKind::Round: return unary_intrinsic(llvm::Intrinsic::roundeven);
    case OpKind::AbsF: return unary_intrinsic(llvm::Intrinsic::fabs);
    case OpKind::AbsI:
      return set(op->result(), intrinsic(llvm::Intrinsic::abs, {operand(0), builder_.getFalse()}, {operand(0)->getType()}));
    case OpKind::Fma:
      return set(op->result(), intrinsic(llvm::Intrinsic::fma, {operand(0), operand(1), operand(2)}, {operand(0)->getType()}));
    case OpKind::Exp: return set(op->result(), libdevice_call(op, "__nv_expf", "__nv_exp", {operand(0)}));
    case OpKind::Log: return set(op->result(), libdevice_call(op, "__nv_logf", "__nv_log", {operand(0)}));
    case OpKind::Rsqrt: return set(op->result(), libdevice_call(op, "__nv_rsqrtf", "__nv_rsqrt", {operand(0)}));
    case OpKind::Tanh: return set(op->result(), libdevice_call(op, "__nv_tanhf", "__nv_tanh", {operand(0)}));
    case OpKind::Sin: return set(op->result(), libdevice_call(op, "__nv_sinf", "__nv_sin", {operand(0)}));
    case OpKind::Cos: return set(op->result(), libdevice_call(op, "__nv_cosf", "__nv_cos", {operand(0)}));
    case OpKind::PowF: return set(op->result(), libdevice_call(op, "__nv_powf", "__nv_pow", {operand(0), operand(1)}));
    case OpKind::If: return emit_if(op);
    case OpKind::For: return emit_for(op);
    case OpKind::While: return emit_while(op);

    // --- tile ---
    case OpKind::LinearId: {
      // (flattened group id) * lanes per group + flattened local id.
      llvm::Value* group = axis_sreg(kCtaid, 0);
      llvm::Value* groups_x = axis_sreg(kNctaid, 0);
      group = builder_.CreateAdd(group, builder_.CreateMul(axis_sreg(kCtaid, 1), groups_x));
      group = builder_.CreateAdd(group, builder_.CreateMul(axis_sreg(kCtaid, 2), builder_.CreateMul(groups_x, axis_sreg(kNctaid, 1))));
      return set(op->result(), builder_.CreateAdd(builder_.CreateMul(group, group_lanes()), local_linear()));
    }
    case OpKind::LocalId: return set(op->result(), axis_sreg(kTid, op->int_attr("axis")));
    case OpKind::GroupId: return set(op->result(), axis_sreg(kCtaid, op->int_attr("axis")));
    case OpKind::GroupSize: return set(op->result(), axis_sreg(kNtid, op->int_attr("axis")));
    case OpKind::NumGroups: return set(op->result(), axis_sreg(kNctaid, op->int_attr("axis")));
    case OpKind::LaneId:
      if (host_) return set(op->result(), builder_.CreateAnd(lane_, builder_.getInt64(31)));
      return set(op->result(), sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_laneid));
    case OpKind::WarpId: return set(op->result(), builder_.CreateUDiv(local_linear(), builder_.getInt64(32)));
    case OpKind::Dim: return set(op->result(), memref(op->operand(0)).sizes.at(static_cast<size_t>(op->int_attr("axis"))));
    case OpKind::AllocShared: {
      Type m = op->result()->type();
      int64_t rows = 1;
      for (size_t d = 0; d + 1 < m.rank(); ++d) rows *= m.shape()[d];
      int64_t pitch = m.shape()[m.rank() - 1] + m.padding();
      auto elements = static_cast<uint64_t>(rows * pitch);
      unsigned packed = packed_element_bits(m.scalar());
      auto* array = packed ? llvm::ArrayType::get(builder_.getInt8Ty(), numerics::packed_bytes(elements, packed))
                           : llvm::ArrayType::get(element_type(m, op), elements);
      auto desc = std::make_shared<MemRef>();
      if (host_) {
        // The group's block of shared memory (context->shared, 64-byte aligned)
        // holds the allocations one after another.
        if (!current_ir_function_->has_attr("kernel"))
          unsupported(op, "allocating shared memory outside a kernel on the CPU target");
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
        desc->base = builder_.CreateConstInBoundsGEP1_64(builder_.getInt8Ty(), block, shared_bytes_);
        shared_bytes_ += module_->getDataLayout().getTypeAllocSize(array);
      }
      auto* global = host_ ? nullptr : new llvm::GlobalVariable(*module_, array, false, llvm::GlobalValue::InternalLinkage,
                                              llvm::UndefValue::get(array),
                                              std::string(current_ir_function_->symbol_name()) + "_shared_" +
                                                  std::to_string(shared_count_++),
                                              nullptr, llvm::GlobalValue::NotThreadLocal, kSharedSpace);
      if (global) {
        // At least 16 bytes whatever the alignment asked for: ldmatrix and
        // 16-byte cp.async rely on it (ldmatrix_operand).
        int64_t alignment = std::max<int64_t>(op->int_attr("alignment", 16), 16);
        if (m.swizzle() == ir::Swizzle::Xor) alignment = std::max(alignment, ir::swizzle_alignment(m));
        global->setAlignment(llvm::Align(static_cast<uint64_t>(alignment)));
        desc->base = global;
      }
      describe_static_buffer(*desc, m, pitch);
      values_[op->result()] = Lowered{nullptr, desc};
      return;
    }
    case OpKind::Subview: {
      MemRef& source = memref(op->operand(0));
      auto view = std::make_shared<MemRef>(source);
      std::vector<int64_t> sizes = op->attr("sizes").int_array();
      for (size_t d = 0; d < sizes.size(); ++d) {
        view->origin[d] = builder_.CreateAdd(source.origin[d], get(op->operand(static_cast<unsigned>(d + 1))));
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
      values_[op->result()] = Lowered{nullptr, view};
      return;
    }
    case OpKind::Barrier:
      if (host_) {
        llvm::Type* ptr = builder_.getPtrTy();
        builder_.CreateCall(llvm::FunctionType::get(builder_.getVoidTy(), {ptr}, false),
                            context_field(cpu_context::kBarrier, ptr), {launch_context_});
        return;
      }
      intrinsic(llvm::Intrinsic::nvvm_barrier_cta_sync_aligned_all, {builder_.getInt32(0)});
      return;
    case OpKind::Load: {
      llvm::Value* bit = nullptr;
      llvm::Value* address = address_of(op, 0, 1, &bit);
      return set(op->result(), load_element(address, op->operand(0)->type(), op, bit));
    }
    case OpKind::Store: {
      llvm::Value* bit = nullptr;
      llvm::Value* address = address_of(op, 1, 2, &bit);
      store_element(operand(0), address, op->operand(1)->type(), bit);
      return;
    }
    case OpKind::LoadVector: {
      llvm::Type* vt = result_type();
      auto* load = builder_.CreateLoad(vt, address_of(op, 0, 1));
      load->setAlignment(vector_alignment(vt));
      return set(op->result(), load);
    }
    case OpKind::StoreVector: {
      auto* store = builder_.CreateStore(operand(0), address_of(op, 1, 2));
      store->setAlignment(vector_alignment(operand(0)->getType()));
      return;
    }
    case OpKind::CpAsync: return emit_cp_async(op);
    case OpKind::CpCommitGroup:
      if (!host_) intrinsic(llvm::Intrinsic::nvvm_cp_async_commit_group);
      values_[op->result()] = Lowered{};
      return;
    case OpKind::CpWaitGroup:
      if (host_) return;  // the CPU copied at once
      intrinsic(llvm::Intrinsic::nvvm_cp_async_wait_group, {builder_.getInt32(static_cast<uint32_t>(op->int_attr("pending")))});
      return;
    case OpKind::Atomic: {
      std::string_view kind = op->attr("kind").string_value();
      Type elem = op->operand(0)->type();
      bool f = is_float(elem), s = is_signed(elem);
      using B = llvm::AtomicRMWInst::BinOp;
      B code = kind == "add"   ? (f ? B::FAdd : B::Add)
               : kind == "max" ? (f ? B::FMax : s ? B::Max : B::UMax)
               : kind == "min" ? (f ? B::FMin : s ? B::Min : B::UMin)
               : kind == "exch" ? B::Xchg
               : kind == "and" ? B::And
               : kind == "or"  ? B::Or
                               : B::Xor;
      llvm::Value* address = address_of(op, 0, 1);
      llvm::Value* value = operand(op->num_operands() - 1);
      return set(op->result(), builder_.CreateAtomicRMW(code, address, value, llvm::MaybeAlign(),
                                                        llvm::AtomicOrdering::Monotonic));
    }
    case OpKind::AtomicCas: {
      llvm::Value* address = address_of(op, 0, 1);
      llvm::Value* compare = operand(op->num_operands() - 2);
      llvm::Value* desired = operand(op->num_operands() - 1);
      llvm::Type* t = compare->getType();
      if (t->isFloatingPointTy()) {
        llvm::Type* bits = builder_.getIntNTy(t->getPrimitiveSizeInBits());
        compare = builder_.CreateBitCast(compare, bits);
        desired = builder_.CreateBitCast(desired, bits);
      }
      auto* cas = builder_.CreateAtomicCmpXchg(address, compare, desired, llvm::MaybeAlign(),
                                               llvm::AtomicOrdering::Monotonic, llvm::AtomicOrdering::Monotonic);
      llvm::Value* old = builder_.CreateExtractValue(cas, {0});
      return set(op->result(), t->isFloatingPointTy() ? builder_.CreateBitCast(old, t) : old);
    }
    case OpKind::Shuffle:
      return set(op->result(), shuffle(operand(0), operand(1), std::string(op->attr("mode").string_value()), op));
    case OpKind::WarpReduce: {
      // A butterfly: after log2(32) exchanges every lane holds the result.
      std::string kind(op->attr("kind").string_value());
      llvm::Value* v = operand(0);
      for (int offset = 16; offset > 0; offset /= 2)
        v = combine(kind, v, shuffle(v, builder_.getInt32(offset), "xor", op), t0);
      return set(op->result(), v);
    }
    case OpKind::Yield:
    case OpKind::Condition: return;  // handled by the enclosing operation
    case OpKind::Mma: return emit_mma(op);
    case OpKind::StoreTile: return emit_store_tile(op);
    case OpKind::Splat:
      return set(op->result(),
                 builder_.CreateVectorSplat(llvm::cast<llvm::FixedVectorType>(result_type())->getNumElements(), operand(0)));
    case OpKind::AllocLocal: {
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
      // tile.load_vector / store_vector claim the vector's size as their
      // alignment (up to 64 bytes for 16 x f32); on the host an unaligned
      // wide access faults (vmovaps), so the lane's stack array is aligned
      // for the widest vector. (NVPTX splits vectors into 16-byte pieces.)
      uint64_t alignment = static_cast<uint64_t>(op->int_attr("alignment", 16));
      if (host_) alignment = std::max<uint64_t>(alignment, 64);
      slot->setAlignment(llvm::Align(alignment));
      llvm::Value* base = slot;
      if (!host_ && alloca_space != kLocalSpace)
        base = entry.CreateAddrSpaceCast(slot, builder_.getPtrTy(kLocalSpace));
      auto desc = std::make_shared<MemRef>();
      desc->base = base;
      describe_static_buffer(*desc, m, m.rank() ? m.shape().back() : 1);
      values_[op->result()] = Lowered{nullptr, desc};
      return;
    }
    default: unsupported(op, "'" + std::string(op->name()) + "'");
  }
}

}  // namespace

std::unique_ptr<llvm::Module> emit_nvptx_module(ir::Operation* module, llvm::LLVMContext& context,
                                                const GpuArch& arch, DiagnosticEngine& diags, DebugInfo debug,
                                                bool bounds_check) {
  Emitter emitter(module, context, arch, diags, debug, nullptr, bounds_check);
  return emitter.run();
}

std::unique_ptr<llvm::Module> emit_host_module(ir::Operation* module, llvm::LLVMContext& context,
                                               const HostTarget& target, DiagnosticEngine& diags, bool bounds_check) {
  Emitter emitter(module, context, GpuArch{}, diags, DebugInfo::None, &target, bounds_check);
  return emitter.run();
}

}  // namespace tessera::codegen
