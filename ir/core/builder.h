// Builds operations at an insertion point.
#pragma once

#include <initializer_list>

#include "ir/core/ir.h"

namespace tessera::ir {

class Builder {
 public:
  explicit Builder(Context& context) : context_(&context) {}

  Context& context() const { return *context_; }

  // Insertion point: before `op`, or at the end of `block`.
  void set_insertion_point(Operation* before) {
    block_ = before->block();
    before_ = before;
  }
  void set_insertion_point_after(Operation* op) {
    block_ = op->block();
    before_ = op->next();
  }
  void set_insertion_point_to_end(Block* block) {
    block_ = block;
    before_ = nullptr;
  }
  void set_insertion_point_to_start(Block* block) {
    block_ = block;
    before_ = block->front();
  }
  Block* insertion_block() const { return block_; }
  Operation* insertion_point() const { return before_; }

  // Location given to created operations.
  void set_location(Location loc) { loc_ = loc; }
  Location location() const { return loc_; }

  // Creates an operation and inserts it at the insertion point (when there is one).
  Operation* create(OpKind kind, std::span<Value* const> operands, std::span<const Type> result_types,
                    std::vector<NamedAttribute> attributes = {}, unsigned num_regions = 0);
  Operation* create(OpKind kind, std::initializer_list<Value*> operands, std::initializer_list<Type> result_types,
                    std::vector<NamedAttribute> attributes = {}, unsigned num_regions = 0) {
    return create(kind, std::span<Value* const>(operands.begin(), operands.size()),
                  std::span<const Type>(result_types.begin(), result_types.size()), std::move(attributes),
                  num_regions);
  }
  // Inserts an operation made elsewhere.
  Operation* insert(Operation* op);

  // Common shapes.
  Value* constant(Attribute value);  // result type: the attribute's type
  Value* constant_index(int64_t value) { return constant(context_->index_attr(value)); }
  Value* constant_int(int64_t value, Type type) { return constant(context_->int_attr(value, type)); }
  Value* constant_float(double value, Type type) { return constant(context_->float_attr(value, type)); }
  Value* constant_bool(bool value) { return constant(context_->bool_attr(value)); }

 private:
  Context* context_;
  Block* block_ = nullptr;
  Operation* before_ = nullptr;
  Location loc_;
};

}  // namespace tessera::ir
