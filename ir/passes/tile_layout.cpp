// tile-layout: chooses where the elements of register tiles live
// (ir/core/register_tile_layout.h, docs/ir/passes.md).
//
// A `tile.mma` that the tensor cores can run (A and B f16 or bf16 in shared
// memory, an f32 accumulator, K a multiple of 16, and an M x N tile that
// splits into whole 16 x 8 blocks over the group's warps) gets its result in
// the `mma_acc` layout, the registers mma.sync produces, so no data moves
// between the instruction and its users. Every tile value connected to it
// must then have that layout too: the accumulator it adds to, the
// loop-carried values and branch results it flows through, and the operands
// and results of elementwise arithmetic on it. These values form one class
// (union-find); the class takes `mma_acc` when every operation touching it
// works in any layout (elementwise `arith`/`math`, `tile.splat`,
// `tile.store_tile`, eligible `tile.mma`, structured control flow) and stays
// `generic` otherwise, e.g. a tile passed to a helper function. The choice
// depends on the IR alone, not the target: the CPU target runs the same
// layout (on its SIMT path), so the execution tests check the layout's
// bookkeeping on machines without a GPU.
#include <algorithm>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "ir/core/context.h"
#include "ir/core/register_tile_layout.h"
#include "ir/passes/passes.h"

namespace tessera::ir {
namespace {

bool is_tile(Value* v) { return v->type().is(TypeKind::Tile); }

bool elementwise(Operation* op) {
  std::string_view name = op->name();
  return !op->is(OpKind::Constant) && (name.starts_with("arith.") || name.starts_with("math."));
}

class TileClasses {
 public:
  Value* find(Value* v) {
    auto it = parent_.find(v);
    if (it == parent_.end()) {
      parent_[v] = v;
      order_.push_back(v);
      return v;
    }
    if (it->second == v) return v;
    Value* root = find(it->second);
    parent_[v] = root;
    return root;
  }
  void join(Value* a, Value* b) {
    Value *ra = find(a), *rb = find(b);
    if (ra == rb) return;
    parent_[rb] = ra;
    if (pinned_.count(rb)) pinned_.insert(ra);
  }
  void pin(Value* v) { pinned_.insert(find(v)); }
  bool pinned(Value* v) { return pinned_.count(find(v)) != 0; }
  const std::vector<Value*>& values() const { return order_; }  // first-seen order: deterministic

 private:
  std::unordered_map<Value*, Value*> parent_;
  std::unordered_set<Value*> pinned_;  // roots of classes that must stay generic
  std::vector<Value*> order_;
};

bool tensor_core_mma(Operation* mma, int64_t lanes) {
  Type a = mma->operand(0)->type(), b = mma->operand(1)->type(), c = mma->result()->type();
  for (Type t : {a, b})
    if (!t.is(TypeKind::MemRef) || t.space() != MemorySpace::Shared) return false;
  return mma_sync_types(a, b, c) && mma_accumulator_tiling(c.shape()[0], c.shape()[1], lanes).has_value();
}

// Joins the tile values among `values`; pins them all if their types differ
// (a class has one shape).
void join_all(TileClasses& classes, const std::vector<Value*>& values) {
  std::vector<Value*> tiles;
  for (Value* v : values)
    if (is_tile(v)) tiles.push_back(v);
  if (tiles.empty()) return;
  bool same = std::all_of(tiles.begin(), tiles.end(), [&](Value* v) { return v->type() == tiles[0]->type(); });
  for (Value* v : tiles) {
    classes.join(tiles[0], v);
    if (!same) classes.pin(v);
  }
}

void classify(Operation* op, int64_t lanes, TileClasses& classes, std::vector<Value*>& seeds) {
  for (Value* r : op->results())
    if (is_tile(r)) classes.find(r);
  if (op->is(OpKind::Yield) || op->is(OpKind::Condition) || op->is(OpKind::StoreTile) || op->is(OpKind::Splat))
    return;  // yields are joined by their parents; splats and stores work in any layout
  if (op->is(OpKind::Mma)) {
    if (tensor_core_mma(op, lanes)) {
      seeds.push_back(op->result());
      if (op->num_operands() == 3) classes.join(op->result(), op->operand(2));
      return;
    }
  } else if (elementwise(op)) {
    std::vector<Value*> values = op->operands();
    for (Value* r : op->results()) values.push_back(r);
    return join_all(classes, values);
  } else if (op->is(OpKind::For)) {
    // results i <-> initial values (operands 3 + i) <-> body arguments 1 + i <-> yield operands i
    Block& body = op->region(0).front();
    Operation* yield = body.terminator();
    for (unsigned i = 0; i < op->num_results(); ++i)
      join_all(classes, {op->result(i), op->operand(3 + i), body.argument(1 + i), yield->operand(i)});
    return;
  } else if (op->is(OpKind::If)) {
    for (unsigned i = 0; i < op->num_results(); ++i) {
      std::vector<Value*> values{op->result(i)};
      for (unsigned r = 0; r < op->num_regions(); ++r)
        if (!op->region(r).empty()) values.push_back(op->region(r).front().terminator()->operand(i));
      join_all(classes, values);
    }
    return;
  } else if (op->is(OpKind::While)) {
    // Conservatively one class for every tile the loop carries.
    std::vector<Value*> values = op->operands();
    for (Value* r : op->results()) values.push_back(r);
    for (unsigned r = 0; r < op->num_regions(); ++r)
      for (size_t b = 0; b < op->region(r).num_blocks(); ++b) {
        Block& block = op->region(r).block(b);
        for (Value* a : block.arguments()) values.push_back(a);
        if (Operation* t = block.terminator())
          for (Value* v : t->operands()) values.push_back(v);
      }
    return join_all(classes, values);
  }
  // Anything else needs the generic layout for every tile it touches.
  for (Value* v : op->operands())
    if (is_tile(v)) classes.pin(v);
  for (Value* r : op->results())
    if (is_tile(r)) classes.pin(r);
}

}  // namespace

void run_tile_layout_pass(Operation* module, PassContext& context) {
  Context& ctx = context.context;
  for (Operation* kernel : module_functions(module)) {
    if (!kernel->has_attr("kernel") || kernel->region(0).empty()) continue;
    int64_t lanes = group_lanes(kernel);
    if (lanes == 0) continue;
    TileClasses classes;
    std::vector<Value*> seeds;
    kernel->walk([&](Operation* op) { classify(op, lanes, classes, seeds); }, WalkOrder::PreOrder);
    std::unordered_set<Value*> chosen;  // roots of the classes that take mma_acc
    for (Value* seed : seeds)
      if (!classes.pinned(seed)) chosen.insert(classes.find(seed));
    for (Value* v : classes.values()) {  // in first-seen order: deterministic
      if (!chosen.count(classes.find(v))) continue;
      Type t = v->type();
      v->set_type(ctx.tile_type(t.shape(), t.scalar(), TileLayout::MmaAccumulator));
    }
  }
}

}  // namespace tessera::ir
