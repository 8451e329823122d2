// Lanes as fibers (docs/abi.md, "Kernels that synchronise").
//
// run_lanes gives every lane of the group its own stack and runs the lanes
// one after another on the worker thread. A lane runs until it reaches a
// synchronisation point (a barrier or a warp exchange) or returns; then the
// scheduler runs the next lane that is ready. When no lane is ready, the
// scheduler releases the lanes that may go on: the lanes of a warp whose
// live lanes all wait at a warp exchange, else, when every live lane of the
// group waits at a barrier, all of them. Anything else is a deadlock on the
// GPU too (a barrier or shuffle under divergent control flow), reported as a
// kernel error instead of hanging.
//
// Warp exchanges are double-buffered: between two releases a lane passes at
// most one synchronisation point, so a lane that already wrote its value for
// exchange k + 1 never overwrites the value a slower lane still reads for
// exchange k.
#include "cpu_lanes.h"

#include <fmt/format.h>
#include <sys/mman.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#if defined(__SANITIZE_ADDRESS__)
#define TESSERA_RT_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TESSERA_RT_ASAN 1
#endif
#endif
#ifdef TESSERA_RT_ASAN
#include <sanitizer/common_interface_defs.h>
#endif

#if !defined(__x86_64__)
#include <ucontext.h>
#endif

namespace tessera::rt {
namespace {

// Kernel frames are small; the runtime's own frames under sanitizers are not.
constexpr size_t kStackBytes = 256 * 1024;
constexpr size_t kGuardBytes = 4096;  // PROT_NONE below each stack: overflow faults, never corrupts
constexpr uint32_t kWarpSize = 32;

enum class LaneState : uint8_t { Ready, AtBarrier, AtWarpExchange, Done };

// --- context switching -------------------------------------------------------------
#if defined(__x86_64__)
// A saved context is the stack pointer of a stack holding the callee-saved
// registers (System V) and the floating-point control words.
struct Context {
  void* sp = nullptr;
};
extern "C" void tessera_rt_switch_context(void** save_sp, void* load_sp);
extern "C" void tessera_rt_fiber_start();
asm(R"(
    .text
    .p2align 4
    .globl tessera_rt_switch_context
    .hidden tessera_rt_switch_context
    .type tessera_rt_switch_context,@function
tessera_rt_switch_context:
    pushq %rbp
    pushq %rbx
    pushq %r12
    pushq %r13
    pushq %r14
    pushq %r15
    subq $8, %rsp
    stmxcsr (%rsp)
    fnstcw 4(%rsp)
    movq %rsp, (%rdi)
    movq %rsi, %rsp
    ldmxcsr (%rsp)
    fldcw 4(%rsp)
    addq $8, %rsp
    popq %r15
    popq %r14
    popq %r13
    popq %r12
    popq %rbx
    popq %rbp
    ret
    .size tessera_rt_switch_context, .-tessera_rt_switch_context

    .p2align 4
    .globl tessera_rt_fiber_start
    .hidden tessera_rt_fiber_start
    .type tessera_rt_fiber_start,@function
tessera_rt_fiber_start:
    callq *%r13
    ud2
    .size tessera_rt_fiber_start, .-tessera_rt_fiber_start
)");

void switch_context(Context& from, Context& to) { tessera_rt_switch_context(&from.sp, to.sp); }

// A fresh context that calls entry() on the stack [base, base + bytes).
void make_context(Context& context, char* base, size_t bytes, void (*entry)()) {
  auto* top = reinterpret_cast<uint64_t*>(base + bytes);  // 16-byte aligned
  top[-1] = 0;
  top[-2] = 0;
  top[-3] = reinterpret_cast<uint64_t>(&tessera_rt_fiber_start);  // where the switch returns to
  top[-4] = 0;                                                     // rbp
  top[-5] = 0;                                                     // rbx
  top[-6] = 0;                                                     // r12
  top[-7] = reinterpret_cast<uint64_t>(entry);                     // r13: called by fiber_start
  top[-8] = 0;                                                     // r14
  top[-9] = 0;                                                     // r15
  top[-10] = 0x1F80u | (uint64_t{0x037F} << 32);                   // default MXCSR and x87 control word
  context.sp = &top[-10];
}
#else
struct Context {
  ucontext_t uc;
};
void switch_context(Context& from, Context& to) { swapcontext(&from.uc, &to.uc); }
void make_context(Context& context, char* base, size_t bytes, void (*entry)()) {
  getcontext(&context.uc);
  context.uc.uc_stack.ss_sp = base;
  context.uc.uc_stack.ss_size = bytes;
  context.uc.uc_link = nullptr;
  makecontext(&context.uc, entry, 0);
}
#endif

// --- stacks --------------------------------------------------------------------------
// Each worker thread keeps the stacks of its largest group so far.
class StackPool {
 public:
  StackPool() = default;
  StackPool(const StackPool&) = delete;
  StackPool& operator=(const StackPool&) = delete;
  ~StackPool() {
    for (void* m : mappings_) munmap(m, kStackBytes + kGuardBytes);
  }
  // The usable bottom of stack i, or null when memory ran out.
  char* stack(size_t i) {
    while (mappings_.size() <= i) {
      void* m = mmap(nullptr, kStackBytes + kGuardBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                     -1, 0);
      if (m == MAP_FAILED) return nullptr;
      mprotect(m, kGuardBytes, PROT_NONE);
      mappings_.push_back(m);
    }
    return static_cast<char*>(mappings_[i]) + kGuardBytes;
  }

 private:
  std::vector<void*> mappings_;
};

struct Lane {
  Context context;
  LaneState state = LaneState::Ready;
  uint32_t exchanges = 0;  // warp exchanges passed; its parity picks the buffer
};

// The group that run_lanes runs on this thread.
struct Group {
  const tessCpuLaunchContext* launch = nullptr;
  tessCpuLaneFunction function = nullptr;
  void** args = nullptr;
  uint32_t lane_count = 0;
  uint32_t current = 0;
  std::vector<Lane> lanes;
  struct Slot {
    uint64_t value;
    uint32_t exchange;  // which exchange of its lane wrote it (from 1)
  };
  std::vector<Slot> exchange[2];
  Context scheduler;
#ifdef TESSERA_RT_ASAN
  const void* scheduler_stack = nullptr;
  size_t scheduler_stack_bytes = 0;
  std::vector<char*> stacks;
#endif
};

thread_local Group* active_group = nullptr;
thread_local StackPool stack_pool;

// Sanitizer bookkeeping around a switch between stacks.
#ifdef TESSERA_RT_ASAN
void before_switch(void** fake_stack, const void* bottom, size_t bytes) {
  __sanitizer_start_switch_fiber(fake_stack, bottom, bytes);
}
void after_switch(void* fake_stack, const void** old_bottom, size_t* old_bytes) {
  __sanitizer_finish_switch_fiber(fake_stack, old_bottom, old_bytes);
}
#endif

// From a lane back to the scheduler; returns when the lane is resumed.
void yield_to_scheduler(Group& group, LaneState state) {
  Lane& lane = group.lanes[group.current];
  lane.state = state;
#ifdef TESSERA_RT_ASAN
  void* fake = nullptr;
  before_switch(state == LaneState::Done ? nullptr : &fake, group.scheduler_stack, group.scheduler_stack_bytes);
  switch_context(lane.context, group.scheduler);
  after_switch(fake, nullptr, nullptr);
#else
  switch_context(lane.context, group.scheduler);
#endif
}

void lane_entry() {
  Group& group = *active_group;
#ifdef TESSERA_RT_ASAN
  after_switch(nullptr, &group.scheduler_stack, &group.scheduler_stack_bytes);
#endif
  group.function(group.args, group.launch, group.current);
  yield_to_scheduler(group, LaneState::Done);
  std::abort();  // a finished lane is never resumed
}

void resume(Group& group, uint32_t lane) {
  group.current = lane;
#ifdef TESSERA_RT_ASAN
  void* fake = nullptr;
  before_switch(&fake, group.stacks[lane], kStackBytes);
  switch_context(group.scheduler, group.lanes[lane].context);
  after_switch(fake, nullptr, nullptr);
#else
  switch_context(group.scheduler, group.lanes[lane].context);
#endif
}

std::string lane_list(const Group& group, uint32_t first, uint32_t end, LaneState state) {
  std::string out;
  for (uint32_t l = first; l < end; ++l) {
    if (group.lanes[l].state != state) continue;
    if (!out.empty()) out += ", ";
    if (out.size() > 60) return out + "...";
    out += std::to_string(l);
  }
  return out;
}

// Releases the lanes that may go on; false when none may (a deadlock).
bool release(Group& group, std::string& deadlock) {
  bool released = false, live = false;
  for (uint32_t first = 0; first < group.lane_count; first += kWarpSize) {
    uint32_t end = std::min(group.lane_count, first + kWarpSize);
    bool exchanging = false, at_barrier = false;
    for (uint32_t l = first; l < end; ++l) {
      exchanging |= group.lanes[l].state == LaneState::AtWarpExchange;
      at_barrier |= group.lanes[l].state == LaneState::AtBarrier;
    }
    live |= exchanging || at_barrier;
    if (exchanging && at_barrier) {
      deadlock = fmt::format(
          "lanes of warp {} diverged: lane(s) {} wait at a barrier while lane(s) {} wait at a warp shuffle or reduction",
          first / kWarpSize, lane_list(group, first, end, LaneState::AtBarrier),
          lane_list(group, first, end, LaneState::AtWarpExchange));
      return false;
    }
    if (exchanging) {
      for (uint32_t l = first; l < end; ++l)
        if (group.lanes[l].state == LaneState::AtWarpExchange) group.lanes[l].state = LaneState::Ready;
      released = true;
    }
  }
  if (released || !live) return true;
  // Every live lane waits at a barrier (lanes that returned count as arrived).
  for (Lane& lane : group.lanes)
    if (lane.state == LaneState::AtBarrier) lane.state = LaneState::Ready;
  return true;
}

}  // namespace

void run_lanes(const tessCpuLaunchContext* context, tessCpuLaneFunction lane_function, void** args) {
  if (active_group) {
    context->report_error(context, "run_lanes called from inside a lane");
    return;
  }
  Group group;
  group.launch = context;
  group.function = lane_function;
  group.args = args;
  group.lane_count = context->group[0] * context->group[1] * context->group[2];
  group.lanes.resize(group.lane_count);
  group.exchange[0].assign(group.lane_count, Group::Slot{0, 0});
  group.exchange[1].assign(group.lane_count, Group::Slot{0, 0});
  for (uint32_t l = 0; l < group.lane_count; ++l) {
    char* stack = stack_pool.stack(l);
    if (!stack) {
      context->report_error(context, fmt::format("cannot map a {}-byte stack for lane {}", kStackBytes, l).c_str());
      return;
    }
#ifdef TESSERA_RT_ASAN
    group.stacks.push_back(stack);
#endif
    make_context(group.lanes[l].context, stack, kStackBytes, &lane_entry);
  }
  active_group = &group;
  std::string deadlock;
  while (true) {
    for (uint32_t l = 0; l < group.lane_count; ++l)
      if (group.lanes[l].state == LaneState::Ready) resume(group, l);
    if (!release(group, deadlock)) break;
    bool ready = false;
    for (const Lane& lane : group.lanes) ready |= lane.state == LaneState::Ready;
    if (!ready) break;  // every lane returned
  }
  active_group = nullptr;
  // Lanes left waiting are abandoned: kernel code holds no resources, and
  // their stacks are reused by the next group.
  if (!deadlock.empty()) context->report_error(context, deadlock.c_str());
}

void lane_barrier(const tessCpuLaunchContext* context) {
  if (!active_group) {
    context->report_error(context, "a barrier outside run_lanes");
    return;
  }
  yield_to_scheduler(*active_group, LaneState::AtBarrier);
}

uint64_t lane_shuffle(const tessCpuLaunchContext* context, uint64_t value, uint32_t source_lane) {
  Group* group = active_group;
  if (!group) {
    context->report_error(context, "a warp shuffle outside run_lanes");
    return value;
  }
  const uint32_t lane = group->current;
  const uint32_t exchange = ++group->lanes[lane].exchanges;
  std::vector<Group::Slot>& buffer = group->exchange[exchange & 1];
  buffer[lane] = {value, exchange};
  yield_to_scheduler(*group, LaneState::AtWarpExchange);
  const uint32_t source = lane / kWarpSize * kWarpSize + source_lane;
  // A lane that returned before this exchange left no value for it.
  if (source_lane >= kWarpSize || source >= group->lane_count || buffer[source].exchange != exchange) return value;
  return buffer[source].value;
}

}  // namespace tessera::rt
