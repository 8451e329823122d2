// The Tile IR -> LLVM IR emitter's internals (the public entry points are
// codegen/llvm_emitter.h; the files are listed in codegen/README.md).
//
// One class, Emitter, whose member functions are defined by op family, one
// file each: core.cpp (types, values, functions, regions, the op dispatch),
// arith.cpp, float.cpp, ids.cpp, memory.cpp, control_flow.cpp, warp.cpp,
// mma.cpp. `emit` (core.cpp) is the one switch over every OpKind, without a
// default: each case calls the family function that emits it, and a new op
// kind does not compile until it has one.
//
// What NVPTX and the CPU do differently is behind TargetHooks
// (target_hooks.h): nvptx_hooks.cpp and cpu_hooks.cpp (with
// cpu_entries.cpp) each implement every hook; the family files never ask
// which target they emit for.
//
// A memref is not one LLVM value: it is its root pointer, the position of the
// view's origin in the root (one i64 per dimension), its sizes and its
// strides. Keeping the origin separate from the pointer lets a view of a
// swizzled shared buffer compute the swizzle on absolute coordinates. Values
// crossing control flow (phis) are flattened into these parts.
#pragma once

#include <llvm/IR/DIBuilder.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "codegen/emitter/target_hooks.h"
#include "codegen/llvm_emitter.h"
#include "codegen/narrow_float.h"
#include "ir/core/ir.h"
#include "ir/core/tile_attr_kinds.h"
#include "ir/core/register_tile_layout.h"

namespace tessera::codegen::emitter {

using ir::OpKind;
using ir::Operation;
using ir::Type;
using ir::TypeKind;

struct MemRef {
  llvm::Value* base = nullptr;
  std::vector<llvm::Value*> origin, sizes, strides;  // i64 each
  Type root;  // the allocation's type (padding and swizzle of shared buffers)
};

struct Lowered {
  llvm::Value* scalar = nullptr;
  std::shared_ptr<MemRef> memref;
};

// Thrown by Emitter::unsupported after its diagnostic; caught by run().
struct Unsupported {};

class CpuHooks;

class Emitter {
 public:
  Emitter(ir::Operation* module, llvm::LLVMContext& context, DiagnosticEngine& diags, DebugInfo debug,
          bool bounds_check)
      : ir_module_(module), context_(context), diags_(diags), debug_(debug), bounds_check_(bounds_check),
        builder_(context) {}

  // The module for `target`, or null after a codegen.unsupported diagnostic.
  std::unique_ptr<llvm::Module> run(TargetHooks& target);
  // Whether kernel `f` gets a contiguous variant (its tensor parameters).
  static bool has_contiguous_variant(Operation* f);

 private:
  // The hooks build on the emitter's state and helpers.
  friend class NvptxHooks;
  friend class CpuHooks;
  friend class LanePlan;
  friend class LaneLoops;

  // --- core.cpp: diagnostics, types, values, functions, regions, the dispatch ---
  [[noreturn]] void unsupported(Operation* op, const std::string& what);

  // fp8, fp6 and fp4 values are their codes in an i8 (narrow_float.h).
  llvm::Type* scalar_type(ScalarType s, Operation* op);
  // Memory holds bool as i8 (LLVM's i1 has no defined memory layout for PTX).
  llvm::Type* element_type(Type t, Operation* op);
  llvm::Type* value_type(Type t, Operation* op);
  // A register tile is spread over the G lanes of the group, each lane's
  // share as one LLVM vector; where each element lives is the tile's layout
  // (tile_position). G is 1 outside a kernel with a group shape.
  int64_t group_size_static();
  int64_t tile_share(Type t, Operation* op);
  bool is_signed(Type t);
  bool is_float(Type t);

  llvm::Value* get(ir::Value* v);
  MemRef& memref(ir::Value* v);
  void set(ir::Value* v, llvm::Value* x) { values_[v] = Lowered{x, nullptr}; }
  // Flattened parts, for phis: scalars are one part, memrefs 1 + 3 * rank.
  std::vector<llvm::Value*> flatten(ir::Value* v);
  std::vector<llvm::Type*> part_types(Type t, Operation* op);
  // Binds `v` from parts; `root` comes from a value of the same kind (phis of
  // memrefs always merge views of buffers with one layout).
  void bind(ir::Value* v, const std::vector<llvm::Value*>& parts, Type root);
  Type root_of(ir::Value* v);

  void declare(Operation* f);
  void define(Operation* f, llvm::Function* function, bool contiguous);

  void emit_block(ir::Block& block);
  void set_debug_location(Operation* op);
  llvm::DIFile* debug_file(std::string_view path);
  // Emits a region's single block; returns the values its terminator yields
  // (flattened) and leaves the builder at the block where it ended.
  std::vector<std::vector<llvm::Value*>> emit_region(ir::Region& region);

  llvm::Value* intrinsic(llvm::Intrinsic::ID id, llvm::ArrayRef<llvm::Value*> args = {},
                         llvm::ArrayRef<llvm::Type*> overloads = {});

  void emit(Operation* op);
  void emit_unsupported(Operation* op);

  // --- host_functions.cpp: the host functions of @jit functions and programs ---
  // (docs/abi.md, "Host functions"): `i32 f(ctx, args, results)`, calling the
  // runtime through the context's service table. Only the CPU target emits
  // them; NVPTX modules leave them out.
  void declare_host(Operation* f);
  void define_host(Operation* f);
  void emit_host_return(Operation* op);
  void emit_host_table();
  // The members of tessHostServices after abi_version, in order.
  enum HostService : unsigned {
    kServiceAlloc = 1, kServiceFree, kServiceKeep, kServiceLaunch, kServicePrintText, kServicePrintTensor,
    kServicePrintScalar, kServiceSave, kServiceLoad, kServiceFail, kServiceMesh, kServiceCollective, kServiceRead,
    kServiceLaunchTuned, kServicePrintFormatted, kServiceCollectiveStart, kServiceCollectiveWait, kServiceTextBegin,
    kServiceSaveText
  };
  // The service `index` of tessHostServices (after abi_version), called;
  // returns from the host function with its status when it fails.
  void call_service(unsigned index, llvm::ArrayRef<llvm::Value*> args);
  // A stack slot at the start of the function's entry block, from a fresh
  // insertion point each time: code emitted since the last one may have
  // ended that block with a branch (a service call's status check).
  llvm::AllocaInst* entry_alloca(llvm::Type* type, const llvm::Twine& name = "");
  // The address of a memref's first element as a device address (i64).
  llvm::Value* data_address(MemRef& m, Type t, Operation* op);
  // A tessTensor on the stack describing `m`.
  llvm::Value* tensor_descriptor(MemRef& m, Type t, Operation* op);
  llvm::Value* string_constant(std::string_view text);
  llvm::Value* host_context_ = nullptr;
  llvm::Value* host_results_ = nullptr;
  std::vector<std::pair<std::string, llvm::Function*>> host_functions_;

  // --- host_ops.cpp: host operations (buffers, launches, I/O through the runtime) ---
  void emit_host_alloc(Operation* op);
  void emit_host_free(Operation* op);
  void emit_host_view(Operation* op);
  void emit_host_arena_buffer(Operation* op);
  void emit_host_stride(Operation* op);
  void emit_host_launch(Operation* op);
  void emit_host_launch_tuned(Operation* op, llvm::Value* args);
  void emit_host_print(Operation* op);
  // The print service calls of `name`'s pieces around operands first, ...
  void emit_text(Operation* op, std::string_view name, unsigned first);
  void emit_host_save(Operation* op);
  llvm::Value* host_call_position(Operation* op);
  void emit_host_mesh(Operation* op);
  void emit_host_collective(Operation* op);
  void emit_host_collective_start(Operation* op);
  void emit_host_collective_wait(Operation* op);
  void emit_host_load(Operation* op);
  void emit_host_check(Operation* op);
  void emit_host_read(Operation* op);
  void emit_return(Operation* op);
  void emit_call(Operation* op);

  // --- arith.cpp: constants, integer and float arithmetic, comparisons, casts ---
  void emit_constant(Operation* op);
  void emit_binary(Operation* op, llvm::Instruction::BinaryOps code);
  void emit_float_binary(Operation* op, llvm::Instruction::BinaryOps code);
  // An intrinsic overloaded on the first operand's type, of every operand.
  void emit_intrinsic(Operation* op, llvm::Intrinsic::ID id);
  void emit_float_intrinsic(Operation* op, llvm::Intrinsic::ID id);
  // arith.divsi, remsi, floordivsi: with x / -1 defined (below).
  void emit_signed_division(Operation* op);
  // The quotient (toward zero) and remainder of a / b, with a divisor of -1
  // giving -a wrapped and 0, where LLVM's sdiv and srem are undefined for
  // INT_MIN / -1 (x86's idiv traps).
  std::pair<llvm::Value*, llvm::Value*> signed_div_rem(llvm::Value* a, llvm::Value* b);
  void emit_negate(Operation* op);
  void emit_abs_int(Operation* op);
  void emit_compare(Operation* op);
  void emit_select(Operation* op);
  void emit_sign_extend(Operation* op);
  void emit_zero_extend(Operation* op);
  void emit_int_truncate(Operation* op);
  void emit_index_cast(Operation* op);
  void emit_bitcast(Operation* op);
  void emit_splat(Operation* op);

  // --- float.cpp: float conversions, numeric policies, narrow floats, math ---
  // Operations that compute on their first operand reject narrow-float codes.
  void reject_narrow_codes(Operation* op);
  llvm::Value* convert_float(llvm::Value* value, ScalarType from, ScalarType to, llvm::Type* to_type);
  // An f32 rounded to nearest even into a type narrower than f32 (bf16,
  // f16, a narrow format).
  llvm::Value* round_f32_to(llvm::Value* f32, ScalarType to, llvm::Type* to_type);
  llvm::Value* truncate_with_policy(Operation* op);
  llvm::Value* decode_narrow(const numerics::Format& format, llvm::Value* code);
  // An element of type `from` as the accumulator type (tile.mma).
  llvm::Value* widen_to(llvm::Value* v, ScalarType from, llvm::Type* accum);
  llvm::Type* f32_like(llvm::Value* v);
  void emit_int_to_float(Operation* op);
  void emit_float_to_int(Operation* op);
  void emit_extend_float(Operation* op);
  void emit_truncate_float(Operation* op);
  void emit_random_bits(Operation* op);
  void emit_math(Operation* op, MathFunction function);

  // --- ids.cpp: lanes, warps, groups and the grid ---
  // One axis of a quantity, constant where the kernel's declared group
  // shape and grid rank make it so.
  llvm::Value* group_quantity(GroupQuantity quantity, int64_t axis);
  static int64_t grid_rank(Operation* f);
  llvm::Value* grid_sizes_past_rank(Operation* f);
  // Flattened id of the lane in its group, and the group's lane count.
  llvm::Value* local_linear() { return target_->lane_in_group(); }
  // The lane's index in its warp of 32.
  llvm::Value* warp_lane() { return builder_.CreateURem(local_linear(), builder_.getInt64(ir::kWarpLanes)); }
  llvm::Value* group_lanes();
  size_t group_rank();
  void emit_group_quantity(Operation* op, GroupQuantity quantity);
  void emit_linear_id(Operation* op);
  void emit_lane_id(Operation* op);
  void emit_warp_id(Operation* op);

  // --- memory.cpp: addresses, bounds checks, loads and stores, buffers, async copies ---
  // `span`: the elements a vector access covers along the last dimension.
  llvm::Value* element_address(MemRef& m, llvm::ArrayRef<llvm::Value*> indices, Type elem, Operation* op,
                               llvm::Value** bit = nullptr, int64_t span = 1);
  llvm::Value* check_bounds(MemRef& m, llvm::ArrayRef<llvm::Value*> indices, llvm::Value* address, Operation* op,
                            int64_t span);
  void check_slice(Operation* op, MemRef& source, llvm::ArrayRef<llvm::Value*> offsets, llvm::ArrayRef<int64_t> sizes,
                   MemRef& view);
  llvm::Value* report_if_outside(llvm::Value* inside, OutOfBounds failure);
  static std::string source_location(Operation* op);
  llvm::Value* address_of(Operation* op, unsigned memref_operand, unsigned first_index, llvm::Value** bit = nullptr,
                          int64_t span = 1);
  llvm::Value* load_element(llvm::Value* address, Type elem, Operation* op, llvm::Value* bit = nullptr);
  void store_element(llvm::Value* v, llvm::Value* address, Type elem, llvm::Value* bit = nullptr);
  llvm::Value* load_packed(llvm::Value* address, llvm::Value* bit, unsigned w);
  void store_packed(llvm::Value* code, llvm::Value* address, llvm::Value* bit, unsigned w);
  void update_byte(llvm::Value* address, llvm::Value* clear, llvm::Value* set);
  void describe_static_buffer(MemRef& desc, Type m, int64_t pitch);
  void emit_dim(Operation* op);
  void emit_alloc_shared(Operation* op);
  void emit_alloc_local(Operation* op);
  void emit_subview(Operation* op);
  void emit_load(Operation* op);
  void emit_store(Operation* op);
  void emit_load_vector(Operation* op);
  llvm::Value* strided_last_axis(Operation* op, unsigned memref_operand);
  llvm::Value* whole_vector_condition(ir::MemorySpace space, llvm::Value* address, llvm::Value* stride,
                                      llvm::Type* vector);
  llvm::Value* check_vector_alignment(Operation* op, unsigned memref_operand, llvm::Value* address, llvm::Type* vector,
                                      int64_t span);
  std::pair<llvm::BasicBlock*, llvm::BasicBlock*> branch_on_whole_vector(llvm::Value* condition,
                                                                         const std::function<void()>& whole,
                                                                         const std::function<void()>& elements);
  void emit_store_vector(Operation* op);
  void emit_cp_async(Operation* op);
  void emit_cp_commit_group(Operation* op);
  void emit_cp_wait_group(Operation* op);

  // --- control_flow.cpp: scf.if, scf.for, scf.while ---
  void emit_if(Operation* op);
  void emit_for(Operation* op);
  void emit_while(Operation* op);

  // --- warp.cpp: barriers, shuffles, warp reductions, atomics ---
  llvm::Value* combine(ir::WarpReduceKind kind, llvm::Value* a, llvm::Value* b, Type t);
  // The lanes of the group's last warp when it is partial (the kernel's
  // lane count is not a multiple of 32), else 0.
  int64_t partial_warp_lanes();
  // The source lane in the warp (i64, 0..31) of a shuffle by PTX's rules.
  llvm::Value* shuffle_source(llvm::Value* in_warp, llvm::Value* offset, ir::ShuffleMode mode);
  void emit_barrier(Operation* op);
  void emit_shuffle(Operation* op);
  void emit_warp_reduce(Operation* op);
  void emit_atomic(Operation* op);
  void emit_atomic_cas(Operation* op);

  // --- mma.cpp: register tiles, tile.mma (SIMT, mma.sync, wgmma, their CPU emulations), tile.store_tile ---
  std::pair<llvm::Value*, llvm::Value*> tile_position(Type t, int64_t j, llvm::Value* lane);
  ir::MmaTiling mma_tiling(Type t);
  // What both tensor-core lowerings of a tile.mma start from.
  struct TensorCoreMma {
    Type a_type, b_type, c_type;
    ir::MmaTiling tiling;
    llvm::FixedVectorType* share_type;  // the lane's share of the accumulator
    llvm::Value* accumulator;           // the operand, or zeros
    bool bf16;                          // else f16
    MemRef *a = nullptr, *b = nullptr;
  };
  TensorCoreMma tensor_core_mma(Operation* op);
  std::pair<llvm::PHINode*, llvm::PHINode*> begin_k_loop(int64_t end, llvm::Value* init);
  llvm::Value* end_k_loop(llvm::PHINode* k, llvm::PHINode* acc, int64_t step, llvm::Value* next);
  bool tensor_core_path(Operation* op);
  bool ldmatrix_operand(MemRef& m);
  void emit_mma(Operation* op);
  void emit_mma_sync(Operation* op);
  bool wgmma_operand(Operation* op, unsigned operand);
  void emit_wgmma(Operation* op);
  void emit_store_tile(Operation* op);
  // The CPU's emulations of the tensor-core instructions (CpuHooks' ldmatrix,
  // mma_m16n8k16 and wgmma_m64nNk16; HostTarget::emulate_mma).
  std::vector<llvm::Value*> emulate_ldmatrix(CpuHooks& cpu, llvm::Value* row_address, int count, bool transpose);
  std::array<llvm::Value*, 4> emulate_mma_m16n8k16(CpuHooks& cpu, const std::array<llvm::Value*, 4>& a,
                                                   const std::array<llvm::Value*, 2>& b, std::array<llvm::Value*, 4> c,
                                                   bool bf16);
  llvm::Value* emulate_wgmma(CpuHooks& cpu, llvm::Value* a_descriptor, llvm::Value* b_descriptor, llvm::Value* acc,
                             int64_t first, int64_t registers, bool bf16);

  ir::Operation* ir_module_;
  llvm::LLVMContext& context_;
  DiagnosticEngine& diags_;
  DebugInfo debug_;
  bool bounds_check_;
  TargetHooks* target_ = nullptr;
  llvm::IRBuilder<> builder_;
  std::unique_ptr<llvm::Module> module_;
  std::unique_ptr<llvm::DIBuilder> dib_;
  llvm::DIFile* compile_unit_file_ = nullptr;
  std::unordered_map<std::string, llvm::DIFile*> debug_files_;
  llvm::DISubprogram* subprogram_ = nullptr;
  std::unordered_map<std::string, llvm::Function*> functions_;
  std::unordered_map<ir::Value*, Lowered> values_;
  llvm::Function* current_function_ = nullptr;
  Operation* current_ir_function_ = nullptr;
};

}  // namespace tessera::codegen::emitter
