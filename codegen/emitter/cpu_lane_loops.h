// The CPU target's group function: the lanes of a group run as loops over
// the lanes between synchronisation points, not as fibers (docs/cpu-target.md,
// "Lanes as loops").
//
// A kernel's body is cut at the operations that synchronise lanes (barriers,
// shuffles, warp reductions, and the scf operations containing them): each
// maximal run of operations between two of them becomes one loop over the
// group's lanes (a *span*), which LLVM may vectorise; the synchronising
// operations run between the loops, at group level. A barrier is then
// nothing: the loop before it ran every lane to it. Control flow containing
// synchronisation runs at group level too, its condition or trip count taken
// once for the group (the uniformity pass guarantees that it is the same on
// every lane; a warp-uniform `if` around warp operations runs both branches
// with a mask of the lanes that take each). Innermost scf.for loops with
// memory accesses are also run at group level ("lifted") so that the lane
// loop is inside them: `for k: for lane:` vectorises across lanes where
// `for lane: for k:` would not (a grid-stride loop, a tile's dot product).
//
// Every value of the kernel gets a *home* (LanePlan): a group value computed
// once outside the lane loops, a value recomputed from the lane's ids in
// each loop that needs it, a slot per lane in the scratch block for values
// that live from one loop to a later one, or nothing (used only inside its
// loop). Kernels whose shape this does not handle keep the fiber path
// (LanePlan::unsupported_reason).
#pragma once

#include <array>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "codegen/emitter/cpu_hooks.h"
#include "ir/passes/uniformity.h"

namespace tessera::codegen::emitter {

enum class Home : uint8_t {
  Local,    // used only inside the lane loop (or nested code) that computes it
  Scalar,   // one value for the whole group, computed outside the lane loops
  Remat,    // recomputed from the lane's ids and group values in every lane loop that uses it
  Storage,  // a slot per lane in the scratch block
  LoopIv,   // the induction variable of a lifted loop whose start varies: start(lane) + t * step
  None,     // tokens: nothing to keep
};

// Which operations run at group level and where each value lives.
class LanePlan {
 public:
  LanePlan(Emitter& emitter, Operation* kernel);

  // Empty when the kernel runs as lane loops; otherwise why it keeps the fibers.
  const std::string& unsupported_reason() const { return unsupported_; }
  bool group_level(Operation* op) const { return group_level_.count(op) != 0; }
  // A synchronisation-free scf.for run at group level; `varying` when its
  // start differs between lanes.
  bool lifted(Operation* op) const { return lifted_.count(op) != 0; }
  bool lifted_varying(Operation* op) const { return lifted_varying_.count(op) != 0; }
  Home home(ir::Value* v) const;
  const ir::UniformityAnalysis& uniformity() const { return uniformity_; }
  bool uses_masks() const { return masked_; }

 private:
  bool contains_sync(Operation* op);
  void classify_block(ir::Block& block);
  void classify_group_op(Operation* op);
  void classify_lane_op(Operation* op);
  bool should_lift(Operation* op);
  bool escapes(ir::Value* v, ir::Block& block);
  void unsupported(const std::string& why);
  void set(ir::Value* v, Home h) { homes_[v] = h; }

  Emitter& e_;
  Operation* kernel_;
  ir::UniformityAnalysis uniformity_;
  std::string unsupported_;
  std::unordered_map<Operation*, bool> sync_;
  std::unordered_set<Operation*> group_level_, lifted_, lifted_varying_, escaping_locals_;
  std::unordered_map<ir::Value*, Home> homes_;
  bool masked_ = false;
};

// Emits the group function of a kernel from its plan.
class LaneLoops {
 public:
  LaneLoops(Emitter& emitter, CpuHooks& cpu, Operation* kernel, const LanePlan& plan)
      : e_(emitter), cpu_(cpu), b_(emitter.builder_), context_(emitter.context_), kernel_(kernel), plan_(plan) {}

  // Defines `function` (context, scratch, the kernel's flattened parameters)
  // and returns the scratch bytes per lane it needs.
  uint64_t emit(llvm::Function* function);

 private:
  // A slot per lane: one array of L elements per part of the value.
  struct Slot {
    std::vector<llvm::Value*> bases;  // i8* into the scratch block
    std::vector<llvm::Type*> types;
    ir::Type root;  // memrefs: the allocation's type
  };
  using SlotRef = std::shared_ptr<Slot>;
  // The lanes a lane loop runs: all, or those whose i8 flag is set.
  struct Mask {
    SlotRef flags;  // null: every lane
  };
  // A copy into slots at the end of a block (yields into loop-carried and
  // result slots).
  struct TailCopy {
    std::vector<std::pair<ir::Value*, SlotRef>> copies;
  };
  // The lane loop's own guard (a lifted loop's running flags).
  using Guard = std::function<llvm::Value*()>;

  // --- slots ---
  SlotRef new_slot(ir::Type type, Operation* op);
  SlotRef new_flag_slot();
  SlotRef slot_of(ir::Value* v);
  llvm::Value* slot_address(const Slot& slot, size_t part, llvm::Value* lane);
  void store_to_slot(const Slot& slot, ir::Value* v, llvm::Value* lane);
  void load_from_slot(const Slot& slot, ir::Value* v, llvm::Value* lane);

  // --- lane loops ---
  // Runs `body` for every lane of the group (the lanes of `mask`, and of
  // `guard`'s i1 when given); returns the OR over lanes of `any` (the
  // guard's value) when asked.
  llvm::Value* lane_loop(const Mask& mask, const std::function<void()>& body, const Guard& guard = nullptr,
                         bool want_any = false);
  llvm::Value* lane_active(const Mask& mask);
  void materialize(ir::Value* v);
  void collect_inputs(Operation* op, const std::unordered_set<Operation*>& span, std::vector<ir::Value*>& out,
                      std::unordered_set<ir::Value*>& seen);
  // The value of a group-uniform `v` at group level (the first active lane's).
  llvm::Value* group_value(ir::Value* v, const Mask& mask, llvm::Value** any_active = nullptr);
  llvm::Value* value_at_lane(ir::Value* v, llvm::Value* lane);

  // --- blocks and operations ---
  void emit_block(ir::Block& block, const Mask& mask, const TailCopy& tail);
  void emit_span(const std::vector<Operation*>& ops, const Mask& mask, const TailCopy* tail);
  // Inside a lane loop: the span's inputs, its operations, its slots, the tail.
  void span_body(const std::vector<Operation*>& lane_ops, const std::unordered_set<Operation*>& span,
                 const TailCopy* tail);
  void emit_group_op(Operation* op, const Mask& mask);
  void emit_if(Operation* op, const Mask& mask);
  void emit_for(Operation* op, const Mask& mask);
  void emit_lifted_varying_for(Operation* op, const Mask& mask);
  void emit_while(Operation* op, const Mask& mask);
  void emit_shuffle(Operation* op, const Mask& mask);
  void emit_warp_reduce(Operation* op, const Mask& mask);
  void emit_lane_local(Operation* op);
  void tail_copy(const TailCopy& tail);

  Emitter& e_;
  CpuHooks& cpu_;
  llvm::IRBuilder<>& b_;
  llvm::LLVMContext& context_;
  Operation* kernel_;
  const LanePlan& plan_;
  llvm::Function* function_ = nullptr;
  llvm::Value* scratch_ = nullptr;
  llvm::Instruction* slot_insert_point_ = nullptr;  // where slot addresses are computed (the entry)
  std::vector<int64_t> shape_;                      // the group's lanes per axis
  int64_t lanes_ = 1;
  uint64_t scratch_bytes_ = 0;  // for the whole group
  std::unordered_map<ir::Value*, SlotRef> slots_;
  // tile.alloc_local arrays that outlive their lane loop: where the lanes' arrays start.
  std::unordered_map<Operation*, llvm::Value*> lane_arrays_;
  // Lifted loops whose start varies: the iteration counter and step of each induction variable.
  std::unordered_map<ir::Value*, std::pair<llvm::Value*, llvm::Value*>> loop_ivs_;
  bool in_lane_loop_ = false;
};

}  // namespace tessera::codegen::emitter
