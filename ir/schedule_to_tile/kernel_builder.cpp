#include "ir/schedule_to_tile/kernel_builder.h"

#include "support/diagnostics/internal_error.h"

namespace tessera::ir {

namespace {

bool is_unsigned_scalar(Type t) {
  return t.is_scalar() && scalar_info(t.scalar()).category == ScalarCategory::UnsignedInt;
}

}  // namespace

KernelBuilder::KernelBuilder(Context& context, Operation* module, const std::string& name,
                             std::vector<int64_t> group_shape, Location loc)
    : context_(context), builder_(context) {
  std::vector<NamedAttribute> attributes{{"sym_name", context.string_attr(name)},
                                         {"function_type", context.type_attr(context.function_type({}, {}))},
                                         {"kernel", context.unit_attr()},
                                         {"generated", context.unit_attr()},
                                         {"group_shape", context.int_array_attr(group_shape)}};
  func_ = Operation::create(OpKind::Func, loc, {}, {}, std::move(attributes), 1);
  entry_ = func_->region(0).add_block();
  module->region(0).front().push_back(func_);
  builder_.set_insertion_point_to_end(entry_);
  builder_.set_location(loc);
}

Value* KernelBuilder::tensor_parameter(const std::string& name, ScalarType element, std::vector<int64_t> shape,
                                      bool mut) {
  Value* v = entry_->add_argument(context_.memref_type(shape, element, MemorySpace::Global));
  if (mut) mut_.push_back(static_cast<int64_t>(names_.size()));
  names_.push_back(context_.string_attr(name));
  std::vector<Attribute> dims;
  for (int64_t d : shape) dims.push_back(d == kDynamic ? context_.string_attr("?") : context_.int_attr(d));
  dims_.push_back(context_.array_attr(dims));
  return v;
}

Value* KernelBuilder::scalar_parameter(const std::string& name, Type type) {
  Value* v = entry_->add_argument(type);
  names_.push_back(context_.string_attr(name));
  dims_.push_back(context_.array_attr({}));
  return v;
}

Operation* KernelBuilder::finish() {
  builder_.create(OpKind::Return, {}, {});
  std::vector<Type> inputs;
  for (Value* a : entry_->arguments()) inputs.push_back(a->type());
  func_->set_attr("function_type", context_.type_attr(context_.function_type(inputs, {})));
  func_->set_attr("arg_names", context_.array_attr(names_));
  func_->set_attr("arg_dims", context_.array_attr(dims_));
  if (!mut_.empty()) func_->set_attr("mut_args", context_.int_array_attr(mut_));
  return func_;
}

Value* KernelBuilder::constant(double v, Type t) {
  if (t.is_bool()) return builder_.constant_bool(v != 0.0);
  if (t.is_float()) return builder_.constant_float(v, t);
  return builder_.constant_int(static_cast<int64_t>(v), t);
}

Value* KernelBuilder::op(OpKind kind, std::vector<Value*> operands, Type result, std::vector<NamedAttribute> attributes) {
  return builder_.create(kind, std::span<Value* const>(operands), std::span<const Type>(&result, 1), std::move(attributes))
      ->result();
}

void KernelBuilder::op0(OpKind kind, std::vector<Value*> operands, std::vector<NamedAttribute> attributes) {
  builder_.create(kind, std::span<Value* const>(operands), std::span<const Type>{}, std::move(attributes));
}

Value* KernelBuilder::less(Value* a, Value* b) {
  return op(OpKind::CmpI, {a, b}, context_.bool_type(), {{"predicate", context_.string_attr("slt")}});
}

Value* KernelBuilder::convert(Value* v, Type to) {
  Type from = v->type();
  if (from == to) return v;
  if (from.is_index() || to.is_index()) {
    if (from.is_index() && to.is_int()) return op(OpKind::IndexCast, {v}, to);
    if (to.is_index() && from.is_int()) return op(OpKind::IndexCast, {v}, to);
    if (from.is_index()) return convert(op(OpKind::IndexCast, {v}, context_.i64_type()), to);
    return op(OpKind::IndexCast, {convert(v, context_.i64_type())}, to);
  }
  bool from_float = from.is_float(), to_float = to.is_float();
  if (to.is_bool()) {
    Value* zero = constant(0.0, from);
    return op(from_float ? OpKind::CmpF : OpKind::CmpI, {v, zero}, to,
              {{"predicate", context_.string_attr(from_float ? "une" : "ne")}});
  }
  unsigned from_bits = from.is_bool() ? 1 : scalar_info(from.scalar()).bits;
  unsigned to_bits = scalar_info(to.scalar()).bits;
  if (!from_float && !to_float) {
    if (from_bits < to_bits) return op(from.is_bool() || is_unsigned_scalar(from) ? OpKind::ExtUI : OpKind::ExtSI, {v}, to);
    if (from_bits > to_bits) return op(OpKind::TruncI, {v}, to);
    return op(OpKind::Bitcast, {v}, to);
  }
  if (!from_float) return op(from.is_bool() || is_unsigned_scalar(from) ? OpKind::UIToFP : OpKind::SIToFP, {v}, to);
  if (!to_float) return op(is_unsigned_scalar(to) ? OpKind::FPToUI : OpKind::FPToSI, {v}, to);
  if (from_bits < to_bits) return op(OpKind::ExtF, {v}, to);
  if (from_bits > to_bits) return op(OpKind::TruncF, {v}, to);
  return op(OpKind::TruncF, {op(OpKind::ExtF, {v}, context_.f32_type())}, to);  // f16 <-> bf16
}

Value* KernelBuilder::id(OpKind kind, int64_t axis) {
  return op(kind, {}, context_.index_type(), {{"axis", context_.int_attr(axis)}});
}

Value* KernelBuilder::dim(Value* memref, int64_t axis) {
  return op(OpKind::Dim, {memref}, context_.index_type(), {{"axis", context_.int_attr(axis)}});
}

Value* KernelBuilder::load(Value* memref, std::vector<Value*> indices) {
  indices.insert(indices.begin(), memref);
  return op(OpKind::Load, indices, context_.scalar_type(memref->type().scalar()));
}

void KernelBuilder::store(Value* value, Value* memref, std::vector<Value*> indices) {
  indices.insert(indices.begin(), memref);
  indices.insert(indices.begin(), value);
  op0(OpKind::Store, indices);
}

Value* KernelBuilder::alloc_shared(std::vector<int64_t> shape, ScalarType element) {
  return op(OpKind::AllocShared, {}, context_.memref_type(shape, element, MemorySpace::Shared),
            {{"alignment", context_.int_attr(16)}});
}

Value* KernelBuilder::warp_reduce(Value* v, WarpReduceKind kind) {
  return op(OpKind::WarpReduce, {v}, v->type(),
            {{"kind", context_.string_attr(warp_reduce_kind_name(kind))}});
}

std::vector<Value*> KernelBuilder::for_loop(
    Value* lo, Value* hi, Value* step, std::vector<Value*> init,
    const std::function<std::vector<Value*>(Value* i, std::vector<Value*> carried)>& body) {
  std::vector<Value*> operands{lo, hi, step};
  operands.insert(operands.end(), init.begin(), init.end());
  std::vector<Type> types;
  for (Value* v : init) types.push_back(v->type());
  Operation* loop = builder_.create(OpKind::For, std::span<Value* const>(operands), std::span<const Type>(types), {}, 1);
  Block* block = loop->region(0).add_block();
  Value* i = block->add_argument(lo->type());
  std::vector<Value*> carried;
  for (Type t : types) carried.push_back(block->add_argument(t));
  Block* saved_block = builder_.insertion_block();
  Operation* saved_point = builder_.insertion_point();
  builder_.set_insertion_point_to_end(block);
  std::vector<Value*> next = body(i, carried);
  builder_.create(OpKind::Yield, std::span<Value* const>(next), std::span<const Type>{});
  if (saved_point) builder_.set_insertion_point(saved_point);
  else builder_.set_insertion_point_to_end(saved_block);
  return loop->results();
}

void KernelBuilder::for_loop(Value* lo, Value* hi, Value* step, const std::function<void(Value* i)>& body) {
  for_loop(lo, hi, step, {}, [&](Value* i, std::vector<Value*>) {
    body(i);
    return std::vector<Value*>{};
  });
}

void KernelBuilder::if_then(Value* c, const std::function<void()>& then) {
  if_else(c, {}, [&] {
    then();
    return std::vector<Value*>{};
  }, [] { return std::vector<Value*>{}; });
}

std::vector<Value*> KernelBuilder::if_else(Value* c, std::vector<Type> types,
                                           const std::function<std::vector<Value*>()>& then,
                                           const std::function<std::vector<Value*>()>& otherwise) {
  Value* condition[] = {c};
  Operation* branch = builder_.create(OpKind::If, std::span<Value* const>(condition), std::span<const Type>(types), {}, 2);
  Block* saved_block = builder_.insertion_block();
  Operation* saved_point = builder_.insertion_point();
  for (unsigned r = 0; r < 2; ++r) {
    builder_.set_insertion_point_to_end(branch->region(r).add_block());
    std::vector<Value*> values = r == 0 ? then() : otherwise();
    builder_.create(OpKind::Yield, std::span<Value* const>(values), std::span<const Type>{});
  }
  if (saved_point) builder_.set_insertion_point(saved_point);
  else builder_.set_insertion_point_to_end(saved_block);
  return branch->results();
}

}  // namespace tessera::ir
