// What the emitter's two targets do differently: NVPTX (nvptx_hooks.cpp) and
// the host CPU (cpu_hooks.h, cpu_hooks.cpp, cpu_entries.cpp).
//
// The Emitter asks these hooks wherever the targets differ, and nowhere else
// asks which target it emits for: each difference is one hook, implemented
// once per target. The CPU runs kernels with the GPU's semantics
// (docs/cpu-target.md): its hooks stand in for what the GPU has in hardware
// (special registers, barriers, shuffles, shared memory, async copies, the
// tensor cores under --mma=sync|wgmma) through the launch context every
// function receives (docs/abi.md).
#pragma once

#include <llvm/ADT/ArrayRef.h>

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "codegen/gpu_arch.h"
#include "codegen/llvm_emitter.h"
#include "ir/core/ir.h"
#include "ir/core/tile_attr_kinds.h"

namespace llvm {
class ArrayType;
class BasicBlock;
class Function;
class FunctionType;
class Module;
class Type;
class Value;
}  // namespace llvm

namespace tessera::numerics {
struct Format;
}

namespace tessera::codegen::emitter {

class Emitter;
struct MemRef;

// The quantities of tile.local_id, tile.group_size, tile.group_id and
// tile.num_groups: PTX's %tid, %ntid, %ctaid and %nctaid.
enum class GroupQuantity : uint8_t { LocalId, GroupSize, GroupId, NumGroups };

// The math functions a target takes from a library (libdevice, libm).
enum class MathFunction : uint8_t { Exp, Log, Rsqrt, Tanh, Sin, Cos, Pow };

// An access out of its view under --bounds-check (Emitter::check_bounds,
// Emitter::check_slice): the builder is at the start of `fail`, which
// `before` branches to when an index is out of bounds, else to `next`.
// Either an element (or a vector: `span` elements along the last
// dimension) at `indices`, or a slice (tile.subview): the block of
// `slice_sizes` at `indices` must lie in `view`.
struct OutOfBounds {
  ir::Operation* op;
  const MemRef& view;
  llvm::ArrayRef<llvm::Value*> indices;
  llvm::Value* address;  // the element's address, valid in bounds; null for a slice
  std::string where;     // the operation's "file:line:column"
  llvm::BasicBlock *before, *fail, *next;
  int64_t span = 1;                      // elements a vector access reads or writes
  llvm::ArrayRef<int64_t> slice_sizes;  // a slice: its extents (else empty)
  // A vector access into a shared or local buffer whose address is not a
  // multiple of this many bytes (0: an index or slice out of bounds).
  uint64_t misaligned_to = 0;
};

// The alignment a GPU's vector access of `bytes` needs: its size up to 16
// bytes (ld.v4.f32, ld.v2.f64 on sm_80 and sm_90; a misaligned one faults).
inline uint64_t gpu_vector_alignment(uint64_t bytes) { return bytes < 16 ? bytes : 16; }

class TargetHooks {
 public:
  virtual ~TargetHooks() = default;

  // --- the module and its functions ----------------------------------------------
  // The target's name in codegen.unsupported ("... by the NVPTX backend").
  virtual const char* name() const = 0;
  // The module's triple and data layout.
  virtual void set_up_module(llvm::Module& module) = 0;
  // Whether the module gets the host functions of @jit functions and
  // programs (the CPU; a GPU module holds kernels only).
  virtual bool host_code() const = 0;
  // After every function is defined (the CPU: the kernels' entries, their table).
  virtual void finish_module() = 0;
  // Parameters every function takes before its own (the CPU: the launch
  // context and the lane), and the values a call passes for them.
  virtual std::vector<llvm::Type*> context_parameters() = 0;
  virtual std::vector<llvm::Value*> context_arguments() = 0;
  // The LLVM function of func.func `f`: name, linkage, calling convention,
  // attributes.
  virtual llvm::Function* create_function(ir::Operation* f, llvm::FunctionType* type) = 0;
  // At the entry of f's definition: takes the context parameters and
  // returns how many there are (f's own parameters follow).
  virtual unsigned begin_function(ir::Operation* f, llvm::Function* function) = 0;
  // Once the parameters are bound, before the body (the GPU: a kernel's
  // grid_rank check).
  virtual void begin_body(ir::Operation* f) = 0;
  // After the body of `f`.
  virtual void end_function(ir::Operation* f) = 0;
  // Whether each kernel with tensor parameters also gets its contiguous
  // variant as a function of its own (NVPTX: the launcher picks the entry;
  // the CPU's entries pick at run time themselves).
  virtual bool contiguous_variants() = 0;

  // --- lanes and groups ------------------------------------------------------------
  // One axis of a quantity as the hardware or the launch gives it (i64),
  // without what the kernel's declared shapes make constant
  // (Emitter::group_quantity applies that).
  virtual llvm::Value* read_group_quantity(GroupQuantity quantity, int64_t axis) = 0;
  // The lane's flattened index in its group: x + nx * (y + ny * z) (i64).
  virtual llvm::Value* lane_in_group() = 0;
  // tile.lane_id: the lane's index in its warp (i64).
  virtual llvm::Value* lane_in_warp() = 0;
  // The lanes per group tile.linear_id multiplies the group's index by,
  // given the group's lanes as the emitter knows them (`declared`: a
  // constant when the kernel declares its shape).
  virtual llvm::Value* linear_id_lanes(llvm::Value* declared) = 0;

  // --- memory ------------------------------------------------------------------------
  // The LLVM address space of pointers into a memory space.
  virtual unsigned address_space(ir::MemorySpace space) = 0;
  // The alignment a vector load or store of `vector` claims. The GPU: the
  // vector's size up to 16 bytes (ld.v2/v4; tested for tensors, the
  // program's contract for shared and local buffers). The host: its
  // element's, since an unaligned wide access (a 64-byte vector in a shared
  // buffer aligned to 16) would fault as vmovaps, and unaligned vector moves
  // cost nothing when the address happens to be aligned.
  virtual llvm::Align vector_alignment(llvm::Type* vector) = 0;
  // The alignment of a lane's tile.alloc_local array that asked for
  // `requested` (the host aligns for the widest vector access, 64 bytes).
  virtual uint64_t local_alignment(uint64_t requested) = 0;
  // The base of tile.alloc_shared `op`: a buffer of type `m` laid out as `array`.
  virtual llvm::Value* allocate_shared(ir::Operation* op, ir::Type m, llvm::ArrayType* array) = 0;
  // byte = (byte & ~clear) | set (the low 8 bits of the i32s), atomically as
  // seen by the other bits of the byte (Emitter::store_packed).
  virtual void update_byte_atomically(llvm::Value* address, llvm::Value* clear, llvm::Value* set) = 0;
  // Fails the launch naming the operation; returns what the access goes on
  // with from `next` (the GPU never gets there): for an element, its
  // address (in bounds) or a harmless one; for a slice, null, or a harmless
  // base pointer for the view when it was out of bounds (the CPU: the view
  // then maps every element there, Emitter::check_slice).
  virtual llvm::Value* report_out_of_bounds(const OutOfBounds& failure) = 0;
  // One element of tile.cp_async as an asynchronous copy of `bytes`; false
  // where the target has none for that size (the emitter then copies).
  virtual bool copy_async(llvm::Value* to, llvm::Value* from, unsigned bytes) = 0;
  virtual void commit_async_copies() = 0;
  virtual void wait_async_copies(int64_t pending) = 0;

  // --- lanes working together ------------------------------------------------------
  // tile.barrier: every lane of the group meets.
  virtual void barrier() = 0;
  // The value of `v` in another lane of the warp (PTX's shfl.sync and its
  // clamps: a source outside the warp gives the lane's own value).
  virtual llvm::Value* shuffle(llvm::Value* v, llvm::Value* offset, ir::ShuffleMode mode) = 0;

  // --- floats ------------------------------------------------------------------------
  // fptrunc, rounding to nearest even.
  virtual llvm::Value* truncate_float(llvm::Value* value, llvm::Type* to) = 0;
  // The f32 value of a narrow-float code (narrow_float.h: the same bits on both targets).
  virtual llvm::Value* decode_narrow(const numerics::Format& format, llvm::Value* code) = 0;
  // The fp8 code of a scalar f32, rounded to nearest even and saturating,
  // by a hardware conversion; null where the target has none.
  virtual llvm::Value* encode_fp8_saturating(const numerics::Format& format, llvm::Value* f32, llvm::Type* to) = 0;
  virtual llvm::Value* math(ir::Operation* op, MathFunction function, llvm::ArrayRef<llvm::Value*> args) = 0;

  // --- tensor cores (mma.cpp) ------------------------------------------------------
  // Whether tile.mma may take the tensor-core path, and wgmma.
  virtual bool tensor_cores() = 0;
  virtual bool wgmma() = 0;
  // ldmatrix.sync.aligned.m8n8.x{count}[.trans].shared.b16: the lane's
  // `count` 32-bit registers.
  virtual std::vector<llvm::Value*> ldmatrix(llvm::Value* row_address, int count, bool transpose) = 0;
  // One mma.sync.aligned.m16n8k16.row.col.f32 on the lane's fragments.
  virtual std::array<llvm::Value*, 4> mma_m16n8k16(const std::array<llvm::Value*, 4>& a,
                                                   const std::array<llvm::Value*, 2>& b,
                                                   std::array<llvm::Value*, 4> c, bool bf16) = 0;
  // Before and after the wgmma instructions of one tile.mma.
  virtual void begin_wgmma() = 0;
  virtual void end_wgmma() = 0;
  // A shared-memory address as wgmma's matrix descriptors hold it, from the
  // pointer's integer value.
  virtual llvm::Value* wgmma_address(llvm::Value* pointer_bits) = 0;
  // One wgmma.mma_async.m64nNk16.f32 on elements first .. first + N/2 - 1 of
  // the lane's accumulators `acc`; returns the new accumulators.
  virtual llvm::Value* wgmma_m64nNk16(llvm::Value* acc, llvm::Value* a_descriptor, llvm::Value* b_descriptor,
                                      int64_t first, int64_t n, bool bf16) = 0;
};

std::unique_ptr<TargetHooks> make_nvptx_hooks(Emitter& emitter, const GpuArch& arch);
std::unique_ptr<TargetHooks> make_cpu_hooks(Emitter& emitter, const HostTarget& target);

}  // namespace tessera::codegen::emitter
