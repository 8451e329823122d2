// graph-fusion: Graph IR -> Schedule IR. Every computing graph operation of
// a host-level function goes into one `schedule.kernel`, a generated kernel,
// together with the operations it fuses with (docs/ir/schedule.md,
// "Fusion"):
//
//   elementwise  elementwise operations, casts, splats and random numbers
//                over one iteration space (the shape of their results): a
//                chain of them is one pass over memory;
//   rows         the same over a space [..., C] plus reductions over its last
//                axis (keepdims): softmax, norms, and anything spelled out like
//                them, one kernel per row block, the reductions' results
//                shared by the row's lanes;
//   reduce       a reduction over other axes, with the elementwise operations
//                that produce its input;
//   matmul, attention   one operation each (stdlib kernels; attention_grad
//                       is an attention kernel too).
//
// Greedy, in program order: an operation joins the group of an operand's
// producer when its shape fits that group's space (run-time sizes compared
// by where they come from: DimensionKeys) and joining makes no
// cycle (a path from the group through an operation outside it back into
// it); a pointwise one whose producers' groups do not take it joins the
// latest other group that does; otherwise it starts a group. A value computed in a group and used
// outside it is an output of the group.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>

#include "ir/core/builder.h"
#include "ir/core/graph_ops.h"
#include "ir/core/graph_shapes.h"
#include "ir/core/schedule_hints.h"
#include "ir/core/tile_attr_kinds.h"
#include "ir/passes/passes.h"
#include "support/diagnostics/internal_error.h"

namespace tessera::ir {

namespace {

bool is_pointwise(const Operation* op) {
  return op->is(OpKind::GraphElementwise) || op->is(OpKind::GraphCast) || op->is(OpKind::GraphConstant) ||
         op->is(OpKind::GraphRandom) || op->is(OpKind::GraphIota);
}

bool is_computing(const Operation* op) {
  return is_pointwise(op) || op->is(OpKind::GraphReduce) || op->is(OpKind::GraphMatmul) ||
         op->is(OpKind::GraphAttention) || op->is(OpKind::GraphAttentionGrad) || op->is(OpKind::GraphSort);
}

std::vector<int64_t> shape_of(Value* v) {
  Type t = v->type();
  if (!t.is(TypeKind::Tensor)) return {};
  return {t.shape().begin(), t.shape().end()};
}

// Which sizes known only at run time are provably equal: a key per (value,
// axis) that two dimensions share only when they are the same size. A
// parameter's dimension is its symbol (`arg_dims`: "B", "S"; the entry
// checks that equal symbols have equal sizes) or the parameter's own; an
// explicit size operand (graph.constant %n, ...) is the dimension it reads
// with graph.dim (through arith.maxsi of two equal keys); an elementwise
// result's dimension is its operands' when they agree (static 1s broadcast),
// and a reduction's the operand's on the axes it keeps; anything else is a
// key of its own. So `?` matches `?` only when the two
// come from the same size, and two chains over different run-time shapes
// are never fused into one space.
class DimensionKeys {
 public:
  std::string key(Value* v, size_t axis) {
    auto memo = keys_.find({v, axis});
    if (memo != keys_.end()) return memo->second;
    std::string k = compute(v, axis);
    keys_[{v, axis}] = k;
    return k;
  }

  // Two values over the same space: equal shapes, and each run-time size
  // the same one. `except_last`: the last dimension is not compared.
  bool same(Value* a, Value* b, bool except_last = false) {
    std::vector<int64_t> sa = shape_of(a), sb = shape_of(b);
    if (sa.size() != sb.size()) return false;
    for (size_t d = 0; d < sa.size(); ++d) {
      if (except_last && d + 1 == sa.size()) continue;
      if (sa[d] != sb[d]) return false;
      if (sa[d] == kDynamic && key(a, d) != key(b, d)) return false;
    }
    return true;
  }

 private:
  static std::string unique(const void* p, size_t axis) { return fmt::format("{}:{}", p, axis); }

  // The key of an index value used as a size.
  std::string size_key(Value* n) {
    Operation* def = n->defining_op();
    if (def && def->is(OpKind::GraphDim) && def->operand(0)->type().is(TypeKind::Tensor))
      return key(def->operand(0), static_cast<size_t>(def->int_attr("axis")));
    if (def && def->is(OpKind::Constant) && def->has_attr("value"))
      return fmt::format("={}", def->int_attr("value"));
    if (def && (def->is(OpKind::MaxSI) || def->is(OpKind::MinSI))) {
      std::string a = size_key(def->operand(0)), b = size_key(def->operand(1));
      if (a == b) return a;
    }
    return unique(n, 0);
  }

  std::string compute(Value* v, size_t axis) {
    Operation* def = v->defining_op();
    if (!def) {  // a block argument: of the function (its symbol) or a region's
      Block* block = v->owner_block();
      Operation* function = block ? block->parent_op() : nullptr;
      if (function && function->is(OpKind::Func) && &function->region(0).front() == block) {
        Attribute dims = function->attr("arg_dims");
        if (dims && v->index() < dims.size() && axis < dims[v->index()].size()) {
          Attribute d = dims[v->index()][axis];
          if (d.is(AttributeKind::String) && d.string_value() != "?") return "symbol " + std::string(d.string_value());
        }
      }
      return unique(v, axis);
    }
    if (def->is(OpKind::GraphElementwise) || def->is(OpKind::GraphCast)) {
      // NumPy broadcasting, trailing-aligned: the operands that have this
      // axis with a size other than a static 1.
      size_t rank = v->type().rank();
      std::string agreed;
      for (Value* operand : def->operands()) {
        if (!operand->type().is(TypeKind::Tensor)) continue;
        size_t r = operand->type().rank();
        if (r + axis < rank) continue;
        size_t at = axis + r - rank;
        int64_t s = operand->type().shape()[at];
        if (s == 1) continue;
        if (s != kDynamic) return unique(v, axis);  // a static operand size under a `?`: not ours to reason about
        std::string k = key(operand, at);
        if (!agreed.empty() && k != agreed) return unique(v, axis);
        agreed = k;
      }
      return agreed.empty() ? unique(v, axis) : agreed;
    }
    if (def->is(OpKind::GraphReduce)) {
      // An axis the reduction keeps is its operand's (a softmax's row
      // maximum has the rows of its input).
      Value* input = def->operand(0);
      auto in_rank = static_cast<int64_t>(input->type().rank());
      std::vector<int64_t> axes = def->attr("axes").int_array();
      for (int64_t& a : axes)
        if (a < 0) a += in_rank;
      bool keepdims = def->has_attr("keepdims");
      size_t result_axis = 0;
      for (int64_t d = 0; d < in_rank; ++d) {
        bool reduced = std::find(axes.begin(), axes.end(), d) != axes.end();
        if (reduced && !keepdims) continue;
        if (result_axis == axis) return reduced ? unique(v, axis) : key(input, static_cast<size_t>(d));
        ++result_axis;
      }
      return unique(v, axis);
    }
    if (def->is(OpKind::GraphConstant) || def->is(OpKind::GraphRandom) || def->is(OpKind::GraphIota) ||
        def->is(OpKind::GraphEmpty) || def->is(OpKind::GraphReshape)) {
      // Their index operands are the run-time sizes, in order of the `?`s
      // (a random's seed, a reshape's input: tensor operands, come first).
      std::vector<Value*> sizes;
      for (Value* operand : def->operands())
        if (operand->type().is_index()) sizes.push_back(operand);
      size_t nth = 0;
      std::vector<int64_t> shape = shape_of(v);
      for (size_t d = 0; d < axis; ++d)
        if (shape[d] == kDynamic) ++nth;
      if (nth < sizes.size()) return size_key(sizes[nth]);
    }
    return unique(v, axis);
  }

  std::map<std::pair<Value*, size_t>, std::string> keys_;
};

// A reduction over the last axis only, keeping it.
bool is_row_reduction(const Operation* op) {
  if (!op->is(OpKind::GraphReduce) || !op->has_attr("keepdims")) return false;
  std::vector<int64_t> axes = op->attr("axes").int_array();
  size_t rank = op->operand(0)->type().rank();
  return rank >= 1 && axes.size() == 1 && axes[0] == static_cast<int64_t>(rank) - 1;
}

struct Group {
  KernelStrategy strategy = KernelStrategy::Elementwise;
  Value* space = nullptr;  // elementwise: a value of the results' shape; rows: of [..., C]; others: unused
  std::vector<Operation*> ops;  // in program order
  bool closed = false;          // matmul, attention, reduce: nothing joins
};

class Fusion {
 public:
  Fusion(Context& context, Block& block) : context_(context), block_(block) {}

  void run() {
    for (Operation* op : block_) {
      if (!is_computing(op)) continue;
      place(op);
    }
    for (auto& group : groups_)
      if (!group.ops.empty()) materialize(group);
  }

 private:
  // The group of the operation that defines `v` in this block, if any.
  int group_of_value(Value* v) {
    Operation* def = v->defining_op();
    if (!def) return -1;
    auto it = group_of_.find(def);
    return it == group_of_.end() ? -1 : it->second;
  }

  // Whether `v` depends on group `g` through something outside `g`: then an
  // operation using `v` cannot join `g` (the group would need its own output
  // before it ran).
  bool depends_on(Value* v, int g, std::set<Operation*>& seen) {
    Operation* def = v->defining_op();
    if (!def || def->block() != &block_ || !seen.insert(def).second) return false;
    auto it = group_of_.find(def);
    if (it != group_of_.end() && it->second == g) return true;
    for (Value* operand : def->operands())
      if (depends_on(operand, g, seen)) return true;
    return false;
  }

  bool can_join(Operation* op, int g) {
    Group& group = groups_[static_cast<size_t>(g)];
    if (group.closed) return false;
    std::vector<int64_t> shape = shape_of(op->result());
    if (op->is(OpKind::GraphReduce)) {
      // A row reduction of a value of the row space.
      if (!is_row_reduction(op)) return false;
      if (group.strategy != KernelStrategy::Rows && group.strategy != KernelStrategy::Elementwise) return false;
      if (!dims_.same(op->operand(0), group.space)) return false;
    } else if (group.strategy == KernelStrategy::Rows) {
      // The row space itself, or a per-row value [..., 1].
      bool per_row = !shape.empty() && shape.back() == 1 && dims_.same(op->result(), group.space, true);
      if (!per_row && !dims_.same(op->result(), group.space)) return false;
    } else if (!dims_.same(op->result(), group.space)) {
      return false;
    }
    for (Value* operand : op->operands()) {
      if (group_of_value(operand) == g) continue;
      std::set<Operation*> seen;
      if (depends_on(operand, g, seen)) return false;
    }
    // The group's values must not have been used outside it before `op`:
    // the kernel takes the place of its last operation, so every outside
    // use must follow that.
    for (Operation* member : group.ops)
      for (Value* result : member->results())
        for (OpOperand* use : result->uses()) {
          Operation* user = in_block(use->owner());
          if (user && user != op && group_of_.count(user) == 0 && user->is_before_in_block(op)) return false;
          if (user && user != op && group_of_.count(user) && group_of_.at(user) != g && user->is_before_in_block(op))
            return false;
        }
    return true;
  }

  // The operation of this block that is or contains `op`.
  Operation* in_block(Operation* op) {
    while (op && op->block() != &block_) op = op->parent_op();
    return op;
  }

  void place(Operation* op) {
    if (op->is(OpKind::GraphMatmul) || op->is(OpKind::GraphAttention) || op->is(OpKind::GraphAttentionGrad)) {
      start(op, op->is(OpKind::GraphMatmul) ? KernelStrategy::Matmul : KernelStrategy::Attention, nullptr, true);
      return;
    }
    if (op->is(OpKind::GraphSort)) {
      start(op, KernelStrategy::Sort, nullptr, true);
      return;
    }
    // Join the latest group among the operands' producers that fits.
    std::vector<int> candidates;
    for (Value* operand : op->operands()) {
      int g = group_of_value(operand);
      if (g >= 0 && std::find(candidates.begin(), candidates.end(), g) == candidates.end()) candidates.push_back(g);
    }
    std::sort(candidates.rbegin(), candidates.rend());
    for (int g : candidates) {
      if (!can_join(op, g)) continue;
      Group& group = groups_[static_cast<size_t>(g)];
      if (op->is(OpKind::GraphReduce) && group.strategy == KernelStrategy::Elementwise)
        group.strategy = KernelStrategy::Rows;
      group.ops.push_back(op);
      group_of_[op] = g;
      return;
    }
    // A pointwise operation of values from outside every group (parameters,
    // a sibling chain's inputs) joins the latest open group of its space:
    // `relu(x * a + y) * sigmoid(y)` is one pass, not two.
    if (is_pointwise(op))
      for (int g = static_cast<int>(groups_.size()) - 1; g >= 0; --g) {
        if (std::find(candidates.begin(), candidates.end(), g) != candidates.end() || !can_join(op, g)) continue;
        groups_[static_cast<size_t>(g)].ops.push_back(op);
        group_of_[op] = g;
        return;
      }
    if (op->is(OpKind::GraphReduce)) {
      if (is_row_reduction(op)) start(op, KernelStrategy::Rows, op->operand(0), false);
      else start(op, KernelStrategy::Reduce, nullptr, true);
      return;
    }
    start(op, KernelStrategy::Elementwise, op->result(), false);
  }

  void start(Operation* op, KernelStrategy strategy, Value* space, bool closed) {
    groups_.push_back(Group{strategy, space, {op}, closed});
    group_of_[op] = static_cast<int>(groups_.size() - 1);
  }

  // The group's operations move into a schedule.kernel placed where its
  // last operation was; values from outside become the region's arguments,
  // values used outside become its results.
  void materialize(Group& group) {
    std::set<Operation*> members(group.ops.begin(), group.ops.end());
    std::vector<Value*> inputs;
    std::vector<Value*> outputs;
    for (Operation* op : group.ops) {
      for (Value* operand : op->operands()) {
        Operation* def = operand->defining_op();
        if (def && members.count(def)) continue;
        if (std::find(inputs.begin(), inputs.end(), operand) == inputs.end()) inputs.push_back(operand);
      }
      for (Value* result : op->results()) {
        bool outside = false;
        for (OpOperand* use : result->uses())
          if (!members.count(use->owner())) outside = true;
        if (outside) outputs.push_back(result);
      }
    }
    if (outputs.empty()) {  // nothing uses the group: it computes nothing
      for (auto it = group.ops.rbegin(); it != group.ops.rend(); ++it) (*it)->erase();
      group.ops.clear();
      return;
    }
    Operation* last = group.ops.back();
    std::vector<Type> result_types;
    for (Value* v : outputs) result_types.push_back(v->type());
    Attribute strategy = context_.string_attr(kernel_strategy_name(group.strategy));
    Operation* kernel = Operation::create(OpKind::ScheduleKernel, last->loc(), std::span<Value* const>(inputs),
                                          std::span<const Type>(result_types), {{"strategy", strategy}}, 1);
    // The schedule hints the strategy builds by (ir/core/schedule_hints.h):
    // a product's tile and pipelining, an elementwise chain's vectorisation
    // (the first member's that has one), a rows or reduce kernel's lanes.
    for (ScheduleHint hint : kScheduleHints) {
      std::string_view name = schedule_hint_name(hint);
      bool wanted = hint == ScheduleHint::Vectorize ? group.strategy == KernelStrategy::Elementwise
                    : hint == ScheduleHint::Lanes
                        ? group.strategy == KernelStrategy::Rows || group.strategy == KernelStrategy::Reduce
                        : group.strategy == KernelStrategy::Matmul || group.strategy == KernelStrategy::Attention;
      for (Operation* op : group.ops)
        if (Attribute value = op->attr(name); wanted && value && !kernel->has_attr(name)) kernel->set_attr(name, value);
    }
    // Where the last member was: after every input (each precedes its
    // member), before every outside use (can_join kept them after it).
    block_.insert_before(last, kernel);
    Block* body = kernel->region(0).add_block();
    IRMapping mapping;
    for (Value* input : inputs) mapping.map(input, body->add_argument(input->type()));
    for (Operation* op : group.ops) {
      Operation* copy = op->clone(mapping);
      body->push_back(copy);
    }
    std::vector<Value*> yielded;
    for (Value* v : outputs) yielded.push_back(mapping.lookup_or_self(v));
    Builder builder(context_);
    builder.set_insertion_point_to_end(body);
    builder.set_location(last->loc());
    builder.create(OpKind::ScheduleYield, std::span<Value* const>(yielded), std::span<const Type>{});
    for (size_t i = 0; i < outputs.size(); ++i) outputs[i]->replace_all_uses_with(kernel->result(static_cast<unsigned>(i)));
    for (auto it = group.ops.rbegin(); it != group.ops.rend(); ++it) (*it)->erase();
  }

  Context& context_;
  Block& block_;
  DimensionKeys dims_;
  std::vector<Group> groups_;
  std::unordered_map<Operation*, int> group_of_;
};

void fuse_region(Context& context, Region& region) {
  for (size_t b = 0; b < region.num_blocks(); ++b) {
    Block& block = region.block(b);
    // Nested regions first (loop bodies): each block is fused on its own.
    for (Operation* op : block)
      for (unsigned r = 0; r < op->num_regions(); ++r)
        if (!op->is(OpKind::ScheduleKernel)) fuse_region(context, op->region(r));
    Fusion(context, block).run();
  }
}

}  // namespace

void run_graph_fusion_pass(Operation* module, PassContext& context) {
  for (Operation* func : module_functions(module)) {
    if (!is_host_level_function(func) || func->region(0).empty()) continue;
    fuse_region(context.context, func->region(0));
  }
}

}  // namespace tessera::ir
