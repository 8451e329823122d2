// The emitter's CPU target (target_hooks.h; docs/cpu-target.md,
// docs/abi.md): the GPU's semantics on the host. Every function takes the
// launch context and its lane; special registers, shared memory, barriers
// and shuffles come from the context (the runtime's fibers); the tensor
// cores are emulated on request (HostTarget::emulate_mma; the emulations are
// in mma.cpp). The hooks are in cpu_hooks.cpp; the kernels' entries, their
// table and the module's bf16 rounding in cpu_entries.cpp.
#pragma once

#include <array>
#include <cstddef>
#include <unordered_map>
#include <vector>

#include "codegen/emitter/emitter.h"
#include "tessera/tessera_runtime.h"

namespace tessera::codegen::emitter {

// Byte offsets of the fields of tessCpuLaunchContext the code reads (the
// ABI pins them with static_asserts in codegen/cpu_target.cpp).
namespace cpu_context {
constexpr uint64_t kGrid = offsetof(tessCpuLaunchContext, grid), kGroup = offsetof(tessCpuLaunchContext, group),
                   kGroupId = offsetof(tessCpuLaunchContext, group_id),
                   kShared = offsetof(tessCpuLaunchContext, shared),
                   kScratch = offsetof(tessCpuLaunchContext, scratch),
                   kReportError = offsetof(tessCpuLaunchContext, report_error),
                   kRunLanes = offsetof(tessCpuLaunchContext, run_lanes),
                   kBarrier = offsetof(tessCpuLaunchContext, barrier),
                   kShuffle = offsetof(tessCpuLaunchContext, shuffle), kContextBytes = sizeof(tessCpuLaunchContext);
}  // namespace cpu_context

class LanePlan;

class CpuHooks final : public TargetHooks {
 public:
  CpuHooks(Emitter& emitter, const HostTarget& target)
      : e_(emitter), builder_(emitter.builder_), context_(emitter.context_), target_(target) {}

  const char* name() const override { return "CPU"; }
  bool host_code() const override { return true; }
  void set_up_module(llvm::Module& module) override;
  void finish_module() override;  // cpu_entries.cpp
  std::vector<llvm::Type*> context_parameters() override;
  std::vector<llvm::Value*> context_arguments() override { return {launch_context_, lane_}; }
  llvm::Function* create_function(Operation* f, llvm::FunctionType* type) override;
  unsigned begin_function(Operation* f, llvm::Function* function) override;
  void begin_body(Operation*) override {}  // the kernel's entry checks grid_rank (cpu_entries.cpp)
  void end_function(Operation* f) override { static_shared_bytes_[f] = shared_bytes_; }
  bool contiguous_variants() override { return false; }

  llvm::Value* read_group_quantity(GroupQuantity quantity, int64_t axis) override;
  llvm::Value* lane_in_group() override { return lane_; }
  llvm::Value* lane_in_warp() override;
  // A constant: lane loops' addresses stay affine in the lane.
  llvm::Value* linear_id_lanes(llvm::Value* declared) override { return declared; }

  unsigned address_space(ir::MemorySpace) override { return 0; }
  llvm::Align vector_alignment(llvm::Type* vector) override;
  uint64_t local_alignment(uint64_t requested) override { return std::max<uint64_t>(requested, 64); }
  llvm::Value* allocate_shared(Operation* op, Type m, llvm::ArrayType* array) override;
  void update_byte_atomically(llvm::Value* address, llvm::Value* clear, llvm::Value* set) override;
  llvm::Value* report_out_of_bounds(const OutOfBounds& failure) override;
  bool copy_async(llvm::Value*, llvm::Value*, unsigned) override { return false; }  // copied at once
  void commit_async_copies() override {}
  void wait_async_copies(int64_t) override {}

  void barrier() override;
  llvm::Value* shuffle(llvm::Value* v, llvm::Value* offset, ir::ShuffleMode mode) override;

  llvm::Value* truncate_float(llvm::Value* value, llvm::Type* to) override;
  llvm::Value* decode_narrow(const numerics::Format& format, llvm::Value* code) override;
  llvm::Value* encode_fp8_saturating(const numerics::Format&, llvm::Value*, llvm::Type*) override { return nullptr; }
  llvm::Value* math(Operation* op, MathFunction function, llvm::ArrayRef<llvm::Value*> args) override;

  bool tensor_cores() override { return target_.emulate_mma != HostTarget::EmulatedMma::None; }
  bool wgmma() override { return target_.emulate_mma == HostTarget::EmulatedMma::Wgmma; }
  std::vector<llvm::Value*> ldmatrix(llvm::Value* row_address, int count, bool transpose) override {
    return e_.emulate_ldmatrix(*this, row_address, count, transpose);
  }
  std::array<llvm::Value*, 4> mma_m16n8k16(const std::array<llvm::Value*, 4>& a, const std::array<llvm::Value*, 2>& b,
                                           std::array<llvm::Value*, 4> c, bool bf16) override {
    return e_.emulate_mma_m16n8k16(*this, a, b, c, bf16);
  }
  void begin_wgmma() override {}
  void end_wgmma() override {}
  llvm::Value* wgmma_address(llvm::Value* pointer_bits) override;
  llvm::Value* wgmma_m64nNk16(llvm::Value* acc, llvm::Value* a_descriptor, llvm::Value* b_descriptor, int64_t first,
                              int64_t n, bool bf16) override {
    return e_.emulate_wgmma(*this, a_descriptor, b_descriptor, acc, first, n / 2, bf16);
  }

  // For the emulations (mma.cpp): the group's block of shared memory.
  llvm::Value* shared_block() { return context_field(cpu_context::kShared, builder_.getPtrTy()); }

 private:
  friend class LaneLoops;
  // A field of the launch context (docs/abi.md), and one u32 of an array of them as i64.
  llvm::Value* context_field(uint64_t offset, llvm::Type* type);
  llvm::Value* context_u32(uint64_t offset, int64_t index);

  // --- cpu_entries.cpp ---
  bool synchronises(Operation* f);
  std::vector<llvm::Value*> unpack_arguments(llvm::Function* lane_function, llvm::Value* args);
  void emit_entry(Operation* f, llvm::Function* entry);
  void run_lanes_in_loop(Operation* f, llvm::Function* entry, llvm::Function* lanes);
  // Lanes as loops between synchronisations (cpu_lane_loops.h): the group
  // function, called with unit innermost strides when every tensor has them.
  void run_group_function(Operation* f, llvm::Function* entry, llvm::Function* group);
  // Whether the tensors follow the contiguous variants' rule (docs/abi.md),
  // and `values` with the innermost strides replaced by the constant 1.
  llvm::Value* contiguous_arguments(Operation* f, const std::vector<llvm::Value*>& values,
                                    std::vector<llvm::Value*>& unit, std::vector<unsigned>* pointers = nullptr);
  static std::string grid_rank_message(Operation* f);
  void define_bf16_truncation();

  Emitter& e_;
  llvm::IRBuilder<>& builder_;
  llvm::LLVMContext& context_;
  const HostTarget& target_;
  // The current function's launch context and lane; in a group function's
  // lane loops also the lane's local ids (null: computed from the lane).
  llvm::Value* launch_context_ = nullptr;
  llvm::Value* lane_ = nullptr;
  std::array<llvm::Value*, 3> local_ids_{};
  // The kernels, their shared-memory sizes, which of them synchronise.
  std::vector<Operation*> kernels_;
  std::unordered_map<Operation*, uint64_t> static_shared_bytes_, scratch_bytes_per_lane_;
  std::unordered_map<Operation*, bool> synchronises_;
  uint64_t shared_bytes_ = 0;  // of the current function's allocations so far
  llvm::GlobalVariable* out_of_bounds_sink_ = nullptr;
};

}  // namespace tessera::codegen::emitter
