#include <algorithm>
#include <set>

#include "support/diagnostics/internal_error.h"
#include "ir/core/ir.h"

namespace tessera::ir {

// --- Value ------------------------------------------------------------------------

Block* Value::parent_block() const { return owner_block_ ? owner_block_ : owner_op_->block(); }

bool Value::has_one_use() const { return first_use_ && !first_use_->next_; }

size_t Value::num_uses() const {
  size_t n = 0;
  for (OpOperand* u = first_use_; u; u = u->next_) ++n;
  return n;
}

std::vector<OpOperand*> Value::uses() const {
  std::vector<OpOperand*> list;
  for (OpOperand* u = first_use_; u; u = u->next_) list.push_back(u);
  return list;
}

void Value::replace_all_uses_with(Value* other) {
  if (other == this) return;
  while (first_use_) first_use_->set(other);
}

void Value::replace_uses_if(Value* other, const std::function<bool(OpOperand&)>& predicate) {
  if (other == this) return;
  for (OpOperand* u : uses())
    if (predicate(*u)) u->set(other);
}

// --- OpOperand --------------------------------------------------------------------

void OpOperand::link() {
  if (!value_) return;
  next_ = value_->first_use_;
  if (next_) next_->prev_link_ = &next_;
  prev_link_ = &value_->first_use_;
  value_->first_use_ = this;
}

void OpOperand::unlink() {
  if (!value_) return;
  *prev_link_ = next_;
  if (next_) next_->prev_link_ = prev_link_;
  next_ = nullptr;
  prev_link_ = nullptr;
}

void OpOperand::set(Value* value) {
  unlink();
  value_ = value;
  link();
}

// --- Operation --------------------------------------------------------------------

Operation* Operation::create(OpKind kind, Location loc, std::span<Value* const> operands,
                             std::span<const Type> result_types, std::vector<NamedAttribute> attributes,
                             unsigned num_regions) {
  auto* op = new Operation(kind, loc);
  op->set_operands(operands);
  for (Type t : result_types) op->append_result(t);
  for (auto& a : attributes) op->set_attr(a.name, a.value);
  for (unsigned i = 0; i < num_regions; ++i) op->regions_.push_back(std::make_unique<Region>(op));
  return op;
}

Operation::~Operation() {
  // Nested operations may use values defined by other nested operations in any
  // order; drop every operand first so destruction order does not matter.
  walk([](Operation* nested) {
    for (auto& operand : nested->operands_) operand->set(nullptr);
  });
  regions_.clear();
  operands_.clear();
}

namespace {
void check_results_unused(const Operation* op) {
  for (unsigned i = 0; i < op->num_results(); ++i)
    internal_check(!op->result(i)->has_uses(), "ir",
                   ("erasing '" + std::string(op->name()) + "' while its results are in use").c_str());
}
}  // namespace

void Operation::destroy(Operation* op) {
  if (!op) return;
  internal_check(op->block_ == nullptr, "ir", "destroying an operation that is still in a block");
  check_results_unused(op);
  delete op;
}

std::vector<Value*> Operation::operands() const {
  std::vector<Value*> list;
  list.reserve(operands_.size());
  for (auto& o : operands_) list.push_back(o->get());
  return list;
}

void Operation::set_operands(std::span<Value* const> values) {
  operands_.clear();
  for (Value* v : values) append_operand(v);
}

void Operation::append_operand(Value* v) {
  auto operand = std::make_unique<OpOperand>();
  operand->owner_ = this;
  operand->index_ = static_cast<unsigned>(operands_.size());
  operand->set(v);
  operands_.push_back(std::move(operand));
}

void Operation::erase_operand(unsigned i) {
  operands_.erase(operands_.begin() + i);
  renumber_operands();
}

void Operation::renumber_operands() {
  for (unsigned i = 0; i < operands_.size(); ++i) operands_[i]->index_ = i;
}

std::vector<Value*> Operation::results() const {
  std::vector<Value*> list;
  for (auto& r : results_) list.push_back(r.get());
  return list;
}

std::vector<Type> Operation::result_types() const {
  std::vector<Type> list;
  for (auto& r : results_) list.push_back(r->type());
  return list;
}

Value* Operation::append_result(Type type) {
  auto v = std::unique_ptr<Value>(new Value());
  v->type_ = type;
  v->owner_op_ = this;
  v->index_ = static_cast<unsigned>(results_.size());
  results_.push_back(std::move(v));
  return results_.back().get();
}

void Operation::erase_result(unsigned i) {
  internal_check(!results_[i]->has_uses(), "ir", "erasing a result that is still in use");
  results_.erase(results_.begin() + i);
  for (unsigned j = 0; j < results_.size(); ++j) results_[j]->index_ = j;
}

Attribute Operation::attr(std::string_view name) const {
  auto it = std::lower_bound(attributes_.begin(), attributes_.end(), name,
                             [](const NamedAttribute& a, std::string_view n) { return a.name < n; });
  if (it != attributes_.end() && it->name == name) return it->value;
  return Attribute();
}

void Operation::set_attr(std::string_view name, Attribute value) {
  auto it = std::lower_bound(attributes_.begin(), attributes_.end(), name,
                             [](const NamedAttribute& a, std::string_view n) { return a.name < n; });
  if (it != attributes_.end() && it->name == name)
    it->value = value;
  else
    attributes_.insert(it, NamedAttribute{std::string(name), value});
}

void Operation::remove_attr(std::string_view name) {
  std::erase_if(attributes_, [&](const NamedAttribute& a) { return a.name == name; });
}

int64_t Operation::int_attr(std::string_view name, int64_t otherwise) const {
  Attribute a = attr(name);
  if (a && a.is(AttributeKind::Integer)) return a.int_value();
  return otherwise;
}

std::string_view Operation::string_attr(std::string_view name) const {
  Attribute a = attr(name);
  if (a && (a.is(AttributeKind::String) || a.is(AttributeKind::Symbol))) return a.string_value();
  return {};
}

Region* Operation::append_region() {
  regions_.push_back(std::make_unique<Region>(this));
  return regions_.back().get();
}

Region* Operation::parent_region() const { return block_ ? block_->parent() : nullptr; }

Operation* Operation::parent_op() const { return block_ ? block_->parent_op() : nullptr; }

Operation* Operation::enclosing(OpKind k) const {
  for (Operation* p = parent_op(); p; p = p->parent_op())
    if (p->kind() == k) return p;
  return nullptr;
}

bool Operation::is_proper_ancestor_of(const Operation* other) const {
  for (Operation* p = other->parent_op(); p; p = p->parent_op())
    if (p == this) return true;
  return false;
}

bool Operation::is_before_in_block(const Operation* other) const {
  if (block_ == nullptr || block_ != other->block_) return false;
  for (Operation* o = next_; o; o = o->next_)
    if (o == other) return true;
  return false;
}

void Operation::remove_from_block() {
  if (block_) block_->unlink(this);
}

void Operation::move_before(Operation* other) {
  remove_from_block();
  other->block()->insert_before(other, this);
}

void Operation::move_after(Operation* other) {
  remove_from_block();
  other->block()->insert_before(other->next(), this);
}

void Operation::erase() {
  check_results_unused(this);
  remove_from_block();
  delete this;
}

Operation* Operation::clone(IRMapping& mapping) const {
  std::vector<Value*> new_operands;
  for (auto& o : operands_) new_operands.push_back(mapping.lookup_or_self(o->get()));
  auto* copy = create(kind_, loc_, new_operands, result_types(), attributes_, num_regions());
  for (unsigned i = 0; i < num_results(); ++i) mapping.map(result(i), copy->result(i));
  for (unsigned i = 0; i < num_regions(); ++i) region(i).clone_into(copy->region(i), mapping);
  return copy;
}

void Operation::walk(const std::function<void(Operation*)>& visit, WalkOrder order) {
  if (order == WalkOrder::PreOrder) visit(this);
  for (auto& r : regions_)
    for (size_t b = 0; b < r->num_blocks(); ++b)
      for (Operation* nested : r->block(b)) nested->walk(visit, order);
  if (order == WalkOrder::PostOrder) visit(this);
}

// --- Block ------------------------------------------------------------------------

Block::~Block() {
  // Drop operands first: a later operation may use an earlier one's results.
  for (Operation* op = first_; op; op = op->next_)
    op->walk([](Operation* nested) {
      for (auto& operand : nested->operands_) operand->set(nullptr);
    });
  while (first_) {
    Operation* op = first_;
    unlink(op);
    delete op;
  }
}

Operation* Block::parent_op() const { return parent_ ? parent_->parent_op() : nullptr; }

std::vector<Value*> Block::arguments() const {
  std::vector<Value*> list;
  for (auto& a : arguments_) list.push_back(a.get());
  return list;
}

Value* Block::add_argument(Type type) {
  auto v = std::unique_ptr<Value>(new Value());
  v->type_ = type;
  v->owner_block_ = this;
  v->index_ = static_cast<unsigned>(arguments_.size());
  arguments_.push_back(std::move(v));
  return arguments_.back().get();
}

void Block::erase_argument(unsigned i) {
  internal_check(!arguments_[i]->has_uses(), "ir", "erasing a block argument that is still in use");
  arguments_.erase(arguments_.begin() + i);
  for (unsigned j = 0; j < arguments_.size(); ++j) arguments_[j]->index_ = j;
}

size_t Block::size() const {
  size_t n = 0;
  for (Operation* op = first_; op; op = op->next_) ++n;
  return n;
}

void Block::push_back(Operation* op) { insert_before(nullptr, op); }

void Block::push_front(Operation* op) { insert_before(first_, op); }

void Block::insert_before(Operation* position, Operation* op) {
  internal_check(op->block_ == nullptr, "ir", "inserting an operation that is already in a block");
  op->block_ = this;
  op->next_ = position;
  op->prev_ = position ? position->prev_ : last_;
  if (op->prev_)
    op->prev_->next_ = op;
  else
    first_ = op;
  if (position)
    position->prev_ = op;
  else
    last_ = op;
}

void Block::unlink(Operation* op) {
  if (op->prev_)
    op->prev_->next_ = op->next_;
  else
    first_ = op->next_;
  if (op->next_)
    op->next_->prev_ = op->prev_;
  else
    last_ = op->prev_;
  op->prev_ = op->next_ = nullptr;
  op->block_ = nullptr;
}

Operation* Block::terminator() const {
  return last_ && last_->has_trait(trait::Terminator) ? last_ : nullptr;
}

// --- Region -----------------------------------------------------------------------

Region::~Region() {
  for (auto& b : blocks_)
    for (Operation* op : *b)
      op->walk([](Operation* nested) {
        for (auto& operand : nested->operands_) operand->set(nullptr);
      });
  // Block arguments of later blocks may be used in earlier ones: uses are gone now.
  blocks_.clear();
}

Block* Region::add_block() {
  blocks_.push_back(std::make_unique<Block>());
  blocks_.back()->parent_ = this;
  return blocks_.back().get();
}

void Region::take_blocks(Region& other) {
  for (auto& b : other.blocks_) {
    b->parent_ = this;
    blocks_.push_back(std::move(b));
  }
  other.blocks_.clear();
}

bool Region::is_ancestor_of(const Operation* op) const {
  for (Region* r = op->parent_region(); r; r = r->parent_op() ? r->parent_op()->parent_region() : nullptr)
    if (r == this) return true;
  return false;
}

void Region::clone_into(Region& destination, IRMapping& mapping) const {
  // Blocks and arguments first, so operations may refer to any block's values.
  std::vector<Block*> copies;
  for (auto& b : blocks_) {
    Block* copy = destination.add_block();
    mapping.map(b.get(), copy);
    for (unsigned i = 0; i < b->num_arguments(); ++i)
      mapping.map(b->argument(i), copy->add_argument(b->argument(i)->type()));
    copies.push_back(copy);
  }
  for (size_t i = 0; i < blocks_.size(); ++i)
    for (Operation* op : *blocks_[i]) copies[i]->push_back(op->clone(mapping));
}

// --- modules ----------------------------------------------------------------------

OwningModule create_module(Location loc) {
  OwningModule module(Operation::create(OpKind::Module, loc, {}, {}, {}, 1));
  module->region(0).add_block();
  return module;
}

std::vector<Operation*> module_functions(Operation* module) {
  std::vector<Operation*> list;
  for (Operation* op : module->region(0).front())
    if (op->is(OpKind::Func)) list.push_back(op);
  return list;
}

unsigned launch_grid_operand_count(const Operation* launch) {
  for (std::string_view name : {"variants", "autotune_points"})
    if (Attribute a = launch->attr(name)) return 3 * static_cast<unsigned>(a.size());
  return 3;
}

Operation* lookup_function(Operation* module, std::string_view name) {
  for (Operation* op : module->region(0).front())
    if (op->is(OpKind::Func) && op->symbol_name() == name) return op;
  return nullptr;
}

namespace {

// Symbols named by attributes inside `op`.
void collect_symbols(Attribute a, std::set<std::string>& names) {
  if (a.is(AttributeKind::Symbol)) names.insert(std::string(a.string_value()));
  if (a.is(AttributeKind::Array))
    for (size_t i = 0; i < a.size(); ++i) collect_symbols(a[i], names);
}

}  // namespace

void erase_unreachable_functions(Operation* module, const std::function<bool(Operation*)>& is_root) {
  std::set<std::string> reached;
  std::vector<Operation*> work;
  for (Operation* func : module_functions(module))
    if (is_root(func)) {
      reached.insert(std::string(func->symbol_name()));
      work.push_back(func);
    }
  while (!work.empty()) {
    Operation* func = work.back();
    work.pop_back();
    std::set<std::string> names;
    func->walk([&](Operation* nested) {
      for (const NamedAttribute& a : nested->attributes()) collect_symbols(a.value, names);
    });
    for (const std::string& name : names)
      if (Operation* target = lookup_function(module, name); target && reached.insert(name).second)
        work.push_back(target);
  }
  for (Operation* func : module_functions(module))
    if (!reached.count(std::string(func->symbol_name()))) func->erase();
}

}  // namespace tessera::ir

namespace tessera::ir {

bool is_host_level_function(const Operation* func) {
  return func->has_attr("jit") || func->has_attr("program") || func->has_attr("host");
}

}  // namespace tessera::ir
