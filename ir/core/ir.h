// The Tessera IR: what a program means once the front end is done with it.
//
// STRUCTURE. A module is an operation holding one region with one block of
// `func.func` operations. Every operation has a kind (op_kinds.def), operands
// (SSA values), typed results, named attributes (compile-time constants,
// sorted by name), zero or more nested regions, and a source location. A
// region is a list of blocks; a block is a list of operations and a list of
// typed block arguments. There are no phi nodes: values that flow around a
// loop or out of a branch are block arguments of the region's entry block and
// operands of the terminator (`scf.yield`). Today every region has exactly one
// block (structured control flow only); the core allows more for the day
// unstructured branches arrive.
//
// VALUES AND SCOPE. A value is defined once: by an operation result or a
// block argument. It may be used by any operation after its definition in the
// same block, and by operations nested in regions of those operations, except
// across an `IsolatedFromAbove` operation (a function sees only its
// arguments). Every value keeps the list of its uses, so "replace all uses"
// and "is it dead" are cheap.
//
// EVALUATION. Operations in a block run in order. Pure operations have no
// effect but their result; everything else may read or write memory and keeps
// its order relative to other effects. Integer arithmetic wraps (two's
// complement); `index` is a signed 64-bit integer; division or remainder by
// zero and signed overflow in division produce an unspecified value but never
// trap. Float arithmetic is IEEE 754 in the operand type, rounding to nearest
// even, with no reassociation or fast-math unless an attribute says so;
// storage floats narrower than f32 (bf16, f16, fp8, fp6, fp4) are converted
// explicitly (`arith.extf` / `arith.truncf`, whose attributes carry the
// rounding policy) and never computed in directly.
//
// THE EXECUTION MODEL OF KERNELS. A function with the `kernel` attribute is
// launched over a grid of groups; every lane of every group runs the body.
// Scalar, index, vector values are per lane. A `tile<...>` value is one tile
// spread over all lanes of the group (an mma accumulator); operations on tiles
// are convergent: every lane of the group executes them together. A
// `memref<..., shared>` is visible to the lanes of one group only;
// `memref<..., global>` to every lane of the grid; `local` to one lane.
// Ordering between lanes exists only at `tile.barrier` (all lanes of the group
// arrive, then all writes before it are visible to all reads after it),
// atomics, and `tile.cp_wait_group` (async copies committed before the last N
// groups have landed in shared memory for the lane that waits; a barrier then
// publishes them to the group). A convergent operation must be reached by all
// lanes of its group (barriers, async copies, mma) or warp (shuffles, warp
// reductions) or the behaviour is undefined; passes never move one into or out
// of control flow.
//
// MEMORY. A memref is a view: base pointer, shape, strides (row-major and
// contiguous for allocations; any strides for views from `tile.subview` and
// kernel arguments). An access outside the shape is undefined unless
// bounds checks are enabled, which turn it into a reported error.
//
// OWNERSHIP. Operations own their regions, regions own their blocks, blocks
// own their operations and arguments. Types, attributes and locations are
// interned in the `Context` and live as long as it.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "ir/core/attributes.h"
#include "ir/core/context.h"
#include "ir/core/op_kind.h"
#include "ir/core/types.h"

namespace tessera::ir {

class Block;
class Operation;
class OpOperand;
class Region;

// An SSA value: an operation result or a block argument.
class Value {
 public:
  Value(const Value&) = delete;
  Value& operator=(const Value&) = delete;

  Type type() const { return type_; }
  void set_type(Type type) { type_ = type; }

  bool is_block_argument() const { return owner_block_ != nullptr; }
  // The operation that defines this value; null for block arguments.
  Operation* defining_op() const { return owner_op_; }
  // The block argument's block, or the block of the defining operation.
  Block* parent_block() const;
  Block* owner_block() const { return owner_block_; }
  unsigned index() const { return index_; }  // result number or argument number

  bool has_uses() const { return first_use_ != nullptr; }
  bool has_one_use() const;
  size_t num_uses() const;
  // The uses, in no particular order; collect before modifying them.
  std::vector<OpOperand*> uses() const;
  OpOperand* first_use() const { return first_use_; }
  void replace_all_uses_with(Value* other);
  // Replaces only the uses for which `predicate` is true.
  void replace_uses_if(Value* other, const std::function<bool(OpOperand&)>& predicate);

 private:
  friend class Operation;
  friend class Block;
  friend class OpOperand;
  Value() = default;

  Type type_;
  OpOperand* first_use_ = nullptr;
  Operation* owner_op_ = nullptr;
  Block* owner_block_ = nullptr;
  unsigned index_ = 0;
};

// One operand slot of an operation, linked into its value's use-list.
class OpOperand {
 public:
  OpOperand() = default;
  OpOperand(const OpOperand&) = delete;
  OpOperand& operator=(const OpOperand&) = delete;
  ~OpOperand() { unlink(); }

  Value* get() const { return value_; }
  void set(Value* value);
  Operation* owner() const { return owner_; }
  unsigned index() const { return index_; }
  OpOperand* next_use() const { return next_; }

 private:
  friend class Operation;
  friend class Value;
  void link();
  void unlink();

  Value* value_ = nullptr;
  Operation* owner_ = nullptr;
  unsigned index_ = 0;
  OpOperand* next_ = nullptr;
  OpOperand** prev_link_ = nullptr;
};

// Maps values and blocks of an original to those of a clone.
class IRMapping {
 public:
  void map(Value* from, Value* to) { values_[from] = to; }
  void map(Block* from, Block* to) { blocks_[from] = to; }
  // The mapped value, or the value itself when it is not mapped (a value from
  // outside the cloned operation).
  Value* lookup_or_self(Value* v) const {
    auto it = values_.find(v);
    return it == values_.end() ? v : it->second;
  }
  bool contains(Value* v) const { return values_.count(v) != 0; }

 private:
  std::unordered_map<Value*, Value*> values_;
  std::unordered_map<Block*, Block*> blocks_;
};

enum class WalkOrder : uint8_t { PreOrder, PostOrder };

class Operation {
 public:
  // Creates a detached operation. Results get `result_types`; `num_regions`
  // empty regions are created. Attributes are sorted by name.
  static Operation* create(OpKind kind, Location loc, std::span<Value* const> operands,
                           std::span<const Type> result_types, std::vector<NamedAttribute> attributes = {},
                           unsigned num_regions = 0);
  Operation(const Operation&) = delete;
  Operation& operator=(const Operation&) = delete;

  OpKind kind() const { return kind_; }
  std::string_view name() const { return op_kind_name(kind_); }
  bool is(OpKind k) const { return kind_ == k; }
  bool has_trait(uint32_t t) const { return ir::has_trait(kind_, t); }
  Location loc() const { return loc_; }
  void set_loc(Location loc) { loc_ = loc; }

  // Operands.
  unsigned num_operands() const { return static_cast<unsigned>(operands_.size()); }
  Value* operand(unsigned i) const { return operands_[i]->get(); }
  OpOperand& operand_slot(unsigned i) { return *operands_[i]; }
  std::vector<Value*> operands() const;
  void set_operand(unsigned i, Value* v) { operands_[i]->set(v); }
  void set_operands(std::span<Value* const> values);
  void append_operand(Value* v);
  void erase_operand(unsigned i);

  // Results.
  unsigned num_results() const { return static_cast<unsigned>(results_.size()); }
  Value* result(unsigned i = 0) const { return results_[i].get(); }
  std::vector<Value*> results() const;
  std::vector<Type> result_types() const;
  // Adds a result (for ops whose results follow their regions' yields).
  Value* append_result(Type type);
  // Drops a result that has no uses.
  void erase_result(unsigned i);

  // Attributes, sorted by name.
  const std::vector<NamedAttribute>& attributes() const { return attributes_; }
  Attribute attr(std::string_view name) const;
  bool has_attr(std::string_view name) const { return static_cast<bool>(attr(name)); }
  void set_attr(std::string_view name, Attribute value);
  void remove_attr(std::string_view name);
  // Convenience readers; the verifier guarantees kinds where it requires them.
  int64_t int_attr(std::string_view name, int64_t otherwise = 0) const;
  std::string_view string_attr(std::string_view name) const;  // "" when absent

  // Regions.
  unsigned num_regions() const { return static_cast<unsigned>(regions_.size()); }
  Region& region(unsigned i) const { return *regions_[i]; }
  // Adds an empty region at the end (the IR parser learns the count as it reads).
  Region* append_region();

  // Position.
  Block* block() const { return block_; }
  Operation* next() const { return next_; }
  Operation* prev() const { return prev_; }
  Region* parent_region() const;
  Operation* parent_op() const;
  // The closest enclosing operation of kind `k` (not this one), or null.
  Operation* enclosing(OpKind k) const;
  bool is_proper_ancestor_of(const Operation* other) const;
  // True when this operation is before `other` in the same block.
  bool is_before_in_block(const Operation* other) const;

  void move_before(Operation* other);
  void move_after(Operation* other);
  // Unlinks from its block without destroying it.
  void remove_from_block();
  // Unlinks and destroys. Its results must have no uses left.
  void erase();
  // Copies this operation (regions included); operands are remapped through
  // `mapping`, and the clone's results and block arguments are added to it.
  Operation* clone(IRMapping& mapping) const;
  Operation* clone() const {
    IRMapping mapping;
    return clone(mapping);
  }
  // Destroys a detached operation (one with no block).
  static void destroy(Operation* op);

  // Visits this operation and every nested one. The callback may erase the
  // operation it is given in post-order walks.
  void walk(const std::function<void(Operation*)>& visit, WalkOrder order = WalkOrder::PostOrder);

  // func.func helpers.
  std::string_view symbol_name() const { return string_attr("sym_name"); }

 private:
  friend class Block;
  friend class Region;
  Operation(OpKind kind, Location loc) : kind_(kind), loc_(loc) {}
  ~Operation();
  void renumber_operands();

  OpKind kind_;
  Location loc_;
  std::vector<std::unique_ptr<OpOperand>> operands_;
  std::vector<std::unique_ptr<Value>> results_;
  std::vector<NamedAttribute> attributes_;
  std::vector<std::unique_ptr<Region>> regions_;
  Block* block_ = nullptr;
  Operation* prev_ = nullptr;
  Operation* next_ = nullptr;
};

// Iterates a block's operations; the current one may be erased or moved.
class OpIterator {
 public:
  explicit OpIterator(Operation* op) : op_(op), next_(op ? op->next() : nullptr) {}
  Operation* operator*() const { return op_; }
  OpIterator& operator++() {
    op_ = next_;
    next_ = op_ ? op_->next() : nullptr;
    return *this;
  }
  friend bool operator==(const OpIterator& a, const OpIterator& b) { return a.op_ == b.op_; }

 private:
  Operation* op_;
  Operation* next_;
};

class Block {
 public:
  Block() = default;
  Block(const Block&) = delete;
  Block& operator=(const Block&) = delete;
  ~Block();

  Region* parent() const { return parent_; }
  Operation* parent_op() const;

  // Arguments.
  unsigned num_arguments() const { return static_cast<unsigned>(arguments_.size()); }
  Value* argument(unsigned i) const { return arguments_[i].get(); }
  std::vector<Value*> arguments() const;
  Value* add_argument(Type type);
  // Drops an argument that has no uses.
  void erase_argument(unsigned i);

  // Operations.
  bool empty() const { return first_ == nullptr; }
  Operation* front() const { return first_; }
  Operation* back() const { return last_; }
  OpIterator begin() const { return OpIterator(first_); }
  OpIterator end() const { return OpIterator(nullptr); }
  size_t size() const;
  void push_back(Operation* op);
  void push_front(Operation* op);
  void insert_before(Operation* position, Operation* op);  // position null: at the end
  // The last operation when it is a terminator, else null.
  Operation* terminator() const;

 private:
  friend class Operation;
  friend class Region;
  void unlink(Operation* op);

  Region* parent_ = nullptr;
  std::vector<std::unique_ptr<Value>> arguments_;
  Operation* first_ = nullptr;
  Operation* last_ = nullptr;
};

class Region {
 public:
  explicit Region(Operation* parent) : parent_(parent) {}
  Region(const Region&) = delete;
  Region& operator=(const Region&) = delete;
  ~Region();

  Operation* parent_op() const { return parent_; }
  bool empty() const { return blocks_.empty(); }
  size_t num_blocks() const { return blocks_.size(); }
  Block& block(size_t i) const { return *blocks_[i]; }
  Block& front() const { return *blocks_.front(); }
  Block* add_block();
  // Moves every block of `other` to the end of this region.
  void take_blocks(Region& other);
  // True when `op` is inside this region at any depth.
  bool is_ancestor_of(const Operation* op) const;
  void clone_into(Region& destination, IRMapping& mapping) const;

 private:
  Operation* parent_;
  std::vector<std::unique_ptr<Block>> blocks_;
};

// An owned top-level `module` operation.
struct ModuleDeleter {
  void operator()(Operation* op) const { Operation::destroy(op); }
};
using OwningModule = std::unique_ptr<Operation, ModuleDeleter>;

// Creates an empty module (one region, one block).
OwningModule create_module(Location loc = {});
// The functions of a module in order.
std::vector<Operation*> module_functions(Operation* module);
Operation* lookup_function(Operation* module, std::string_view name);
// Erases the functions of `module` that no root reaches through the symbols
// the bodies name (calls, launches and their variants, graph.grad, autodiff
// rules): the inline pass's cleanup, and `tesserac run --func`, which
// compiles only what the function it runs needs.
void erase_unreachable_functions(Operation* module, const std::function<bool(Operation*)>& is_root);
// A function of the graph level or host code (`jit`, `program` or `host`):
// it runs once on the host, not per lane, so the lane analyses skip it.
bool is_host_level_function(const Operation* func);
// The grid operands of a graph.launch or host.launch: 3 (the grid), or 3
// per variant of a tuned launch (attribute `variants`, or `autotune_points`
// before the driver picked the variants; docs/ir/host.md); the kernel's
// arguments follow them.
unsigned launch_grid_operand_count(const Operation* launch);

}  // namespace tessera::ir
