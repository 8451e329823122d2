// buffer-plan: the intermediates of host code share one arena
// (docs/ir/host.md, "buffer-plan"). After bufferize every intermediate is a
// host.alloc freed (host.free) after its last use in its block. Here each
// such buffer whose size is known at compile time gets a byte offset in one
// allocation per function, the arena; buffers whose live ranges do not
// overlap share bytes. The assignment is XLA's "global decreasing size, best
// fit" heap (also TFLite's greedy-by-size planner): the largest buffer first,
// each in the smallest gap between the buffers already placed that live at
// the same time, offsets aligned to kArenaAlignment.
//
// Live ranges are positions in a block: from the host.alloc to its host.free,
// which bufferize put after the last use of the buffer or of any view of it.
// A use inside a nested region (a loop body, a branch) counts as a use by the
// operation that holds the region, so a buffer used in a loop lives across
// the whole loop, back edge included. A buffer made inside a region is
// planned in that region's block; the region's blocks together become one
// buffer of the enclosing block that lives only at the operation holding
// them, so a loop body's buffers take the same bytes on every iteration.
//
// Not planned (they stay host.alloc): buffers with a run-time size (the
// runtime's allocator caches those, docs/runtime.md), a buffer without a
// host.free in its block (a result, a buffer yielded by a loop or a branch,
// one passed to a call: its memory leaves the block), a buffer with a view
// used by a yield, return, call or condition, one passed to a loop as an
// initial value, and empty buffers.
#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "ir/core/builder.h"
#include "ir/passes/passes.h"
#include "ir/schedule_to_tile/buffer_uses.h"

namespace tessera::ir {

namespace {

// The alignment of every offset and of the arena's size: what cuMemAlloc
// guarantees and the CPU device's allocations have (runtime/src/cpu_device.cpp),
// so a buffer in the arena is aligned like one of its own.
constexpr int64_t kArenaAlignment = 256;

int64_t align_up(int64_t n, int64_t alignment) { return (n + alignment - 1) / alignment * alignment; }

// One buffer of a block: a planned host.alloc, or the arena of the regions of
// one operation (`alloc` null, `nested` the operation).
struct Interval {
  Operation* alloc = nullptr;
  Operation* free = nullptr;
  Operation* nested = nullptr;
  int64_t bytes = 0;       // what it needs in the arena
  int64_t peak_bytes = 0;  // what it had live at most before (its own size for a buffer)
  size_t start = 0, end = 0;  // positions in the block, both included
  int64_t offset = 0;         // in the block's arena
};

// What one block's plan needs.
struct BlockPlan {
  int64_t arena_bytes = 0;
  int64_t peak_bytes = 0;  // live at once at the worst position: the least any plan needs
};

struct Totals {
  int64_t buffers = 0, bytes = 0, unplanned = 0;
};

class BufferPlanner {
 public:
  explicit BufferPlanner(Context& context) : context_(context) {}

  void run(Operation* func) {
    Region& body = func->region(0);
    if (body.num_blocks() != 1) return;
    Block& block = body.block(0);
    totals_ = Totals{};
    placements_.clear();
    BlockPlan plan = plan_block(block);
    func->set_attr("buffer_plan",
                   context_.string_attr(fmt::format("{} buffers, {} bytes, {} bytes live at most, arena {} bytes; "
                                                    "{} buffers not planned",
                                                    totals_.buffers, totals_.bytes, plan.peak_bytes, plan.arena_bytes,
                                                    totals_.unplanned)));
    if (placements_.empty()) return;
    Builder b(context_);
    b.set_location(func->loc());
    b.set_insertion_point_to_start(&block);
    std::vector<int64_t> shape{plan.arena_bytes};
    Type arena_type = context_.memref_type(shape, ScalarType::I8, MemorySpace::Global);
    Operation* arena = b.create(OpKind::HostAlloc, std::span<Value* const>{}, std::span<const Type>(&arena_type, 1),
                                {{"arena", context_.unit_attr()}});
    Operation* terminator = block.terminator();
    if (terminator) b.set_insertion_point(terminator);
    else b.set_insertion_point_to_end(&block);
    Value* freed = arena->result();
    b.create(OpKind::HostFree, std::span<Value* const>(&freed, 1), std::span<const Type>{});
    for (auto& [alloc, placement] : placements_) {
      b.set_location(alloc->loc());
      b.set_insertion_point(alloc);
      Value* base = arena->result();
      Type t = alloc->result()->type();
      Operation* buffer = b.create(OpKind::HostArenaBuffer, std::span<Value* const>(&base, 1),
                                   std::span<const Type>(&t, 1), {{"offset", context_.int_attr(placement.offset)}});
      alloc->result()->replace_all_uses_with(buffer->result());
      placement.free->erase();
      alloc->erase();
    }
  }

 private:
  struct Placement {
    Operation* free;
    int64_t offset;  // in the function's arena
  };

  // Plans `block`. Offsets are relative to the block's own arena until the
  // enclosing block places that arena (`shift_nested`).
  BlockPlan plan_block(Block& block) {
    std::map<const Operation*, size_t> position;
    size_t n = 0;
    for (Operation* op : block) position[op] = n++;
    std::vector<Interval> intervals;
    for (Operation* op : block) {
      if (op->is(OpKind::HostAlloc)) {
        Interval interval;
        if (plannable(op, block, position, interval)) intervals.push_back(interval);
        else if (!op->has_attr("arena")) ++totals_.unplanned;
        continue;
      }
      if (op->num_regions() == 0) continue;
      // The regions' blocks run one at a time (a branch's arms, a loop's
      // iterations, a while's condition then body), each freeing what it
      // made before it ends: they share one nested arena.
      Interval nested;
      nested.nested = op;
      nested.start = nested.end = position[op];
      for (unsigned r = 0; r < op->num_regions(); ++r)
        for (size_t bi = 0; bi < op->region(r).num_blocks(); ++bi) {
          BlockPlan inner = plan_block(op->region(r).block(bi));
          nested.bytes = std::max(nested.bytes, inner.arena_bytes);
          nested.peak_bytes = std::max(nested.peak_bytes, inner.peak_bytes);
        }
      if (nested.bytes > 0) intervals.push_back(nested);
    }
    BlockPlan plan;
    // Peak: the largest sum of what lives at one position.
    std::vector<int64_t> live(n + 1, 0);
    for (const Interval& i : intervals) {
      live[i.start] += i.peak_bytes;
      live[i.end + 1] -= i.peak_bytes;
    }
    int64_t running = 0;
    for (int64_t delta : live) plan.peak_bytes = std::max(plan.peak_bytes, running += delta);
    // Largest first; ties by position, so the plan is deterministic.
    std::vector<Interval*> order;
    for (Interval& i : intervals) order.push_back(&i);
    std::stable_sort(order.begin(), order.end(),
                     [](const Interval* a, const Interval* c) { return a->bytes > c->bytes; });
    std::vector<Interval*> placed;
    for (Interval* i : order) {
      i->offset = best_fit(*i, placed);
      placed.push_back(i);
      plan.arena_bytes = std::max(plan.arena_bytes, align_up(i->offset + i->bytes, kArenaAlignment));
    }
    for (const Interval& i : intervals) {
      if (i.alloc) {
        placements_[i.alloc] = Placement{i.free, i.offset};
        ++totals_.buffers;
        totals_.bytes += i.bytes;
      } else {
        shift_nested(i.nested, i.offset);
      }
    }
    return plan;
  }

  // Adds `by` to the offsets of the buffers planned inside `op`'s regions.
  void shift_nested(Operation* op, int64_t by) {
    op->walk([&](Operation* inner) {
      if (inner == op) return;
      if (auto it = placements_.find(inner); it != placements_.end()) it->second.offset += by;
    });
  }

  // The smallest aligned gap between the placed intervals that overlap `i`
  // in time that holds it; else just above the highest of them.
  static int64_t best_fit(const Interval& i, const std::vector<Interval*>& placed) {
    std::vector<std::pair<int64_t, int64_t>> taken;  // [begin, end) in bytes
    for (const Interval* p : placed)
      if (p->start <= i.end && i.start <= p->end) taken.emplace_back(p->offset, p->offset + p->bytes);
    std::sort(taken.begin(), taken.end());
    int64_t best = -1, best_gap = 0, cursor = 0;
    for (auto [begin, end] : taken) {
      int64_t at = align_up(cursor, kArenaAlignment);
      int64_t gap = begin - at;
      if (gap >= i.bytes && (best < 0 || gap < best_gap)) {
        best = at;
        best_gap = gap;
      }
      cursor = std::max(cursor, end);
    }
    return best >= 0 ? best : align_up(cursor, kArenaAlignment);
  }

  // Whether `alloc` can live in the arena: a size known at compile time, not
  // empty, and its memory (it or any view of it) does not leave `block`;
  // its live range then ends at its host.free in `block`.
  static bool plannable(Operation* alloc, Block& block, const std::map<const Operation*, size_t>& position,
                        Interval& interval) {
    if (alloc->num_operands() != 0 || alloc->has_attr("arena")) return false;
    Type t = alloc->result()->type();
    int64_t count = 1;
    for (int64_t d : t.shape()) count *= d;
    int64_t bytes = (count * scalar_info(t.scalar()).storage_bits + 7) / 8;
    if (bytes <= 0) return false;
    Operation* free = nullptr;
    size_t last = position.at(alloc);
    bool inside = visit_buffer_uses_in_block(alloc->result(), block, [&](Value* v, Operation* user, Operation* in_block) {
      if (user->is(OpKind::HostFree)) {
        if (v != alloc->result() || user != in_block || free) return false;
        free = user;
      }
      last = std::max(last, position.at(in_block));
      return true;
    });
    if (!inside) return false;
    // The free must be the last use: nothing touches the memory after it.
    if (!free || position.at(free) != last) return false;
    interval.alloc = alloc;
    interval.free = free;
    interval.bytes = interval.peak_bytes = bytes;
    interval.start = position.at(alloc);
    interval.end = last;
    return true;
  }

  Context& context_;
  Totals totals_;
  std::map<Operation*, Placement> placements_;
};

}  // namespace

void run_buffer_plan_pass(Operation* module, PassContext& context) {
  BufferPlanner planner(context.context);
  for (Operation* func : module_functions(module))
    if (is_host_level_function(func) && !func->region(0).empty()) planner.run(func);
}

}  // namespace tessera::ir
