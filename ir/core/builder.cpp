#include "ir/core/builder.h"

namespace tessera::ir {

Operation* Builder::create(OpKind kind, std::span<Value* const> operands, std::span<const Type> result_types,
                           std::vector<NamedAttribute> attributes, unsigned num_regions) {
  Operation* op = Operation::create(kind, loc_, operands, result_types, std::move(attributes), num_regions);
  return insert(op);
}

Operation* Builder::insert(Operation* op) {
  if (block_) block_->insert_before(before_, op);
  return op;
}

Value* Builder::constant(Attribute value) {
  Type type = value.is(AttributeKind::Bool) ? context_->bool_type() : value.type();
  return create(OpKind::Constant, {}, {type}, {{"value", value}})->result();
}

}  // namespace tessera::ir
