// Building Tile IR kernels from C++: what the generated kernels of the graph
// level (generate_kernels.cpp) are written with. A thin layer over Builder
// that knows the Tile IR's forms (ids, loads and stores, structured loops and
// branches, shared memory, warp reductions) so that a generator reads like
// the kernel it makes.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "ir/core/builder.h"
#include "ir/core/tile_attr_kinds.h"

namespace tessera::ir {

class KernelBuilder {
 public:
  // A new kernel `name` with groups of `group_shape` lanes, added to `module`.
  KernelBuilder(Context& context, Operation* module, const std::string& name, std::vector<int64_t> group_shape,
                Location loc);

  // Parameters, in order: a tensor (a memref in global memory with these
  // dims, static or kDynamic) or a scalar. The kernel's signature is
  // finished by finish().
  Value* tensor_parameter(const std::string& name, ScalarType element, std::vector<int64_t> dims, bool mut);
  Value* scalar_parameter(const std::string& name, Type type);
  // Ends the body with func.return and records the signature; returns the
  // func.func.
  Operation* finish();
  Operation* function() const { return func_; }

  Builder& builder() { return builder_; }
  Context& context() { return context_; }

  // --- values ---
  Value* index(int64_t v) { return builder_.constant_index(v); }
  Value* constant(double v, Type t);
  Value* op(OpKind kind, std::vector<Value*> operands, Type result, std::vector<NamedAttribute> attributes = {});
  Value* add(Value* a, Value* b) { return op(OpKind::AddI, {a, b}, a->type()); }
  Value* sub(Value* a, Value* b) { return op(OpKind::SubI, {a, b}, a->type()); }
  Value* mul(Value* a, Value* b) { return op(OpKind::MulI, {a, b}, a->type()); }
  Value* div(Value* a, Value* b) { return op(OpKind::DivSI, {a, b}, a->type()); }  // non-negative operands
  Value* rem(Value* a, Value* b) { return op(OpKind::RemSI, {a, b}, a->type()); }
  Value* less(Value* a, Value* b);  // signed
  Value* all(Value* a, Value* b) { return op(OpKind::AndI, {a, b}, context_.bool_type()); }
  Value* select(Value* c, Value* a, Value* b) { return op(OpKind::Select, {c, a, b}, a->type()); }
  Value* min(Value* a, Value* b) { return op(OpKind::MinSI, {a, b}, a->type()); }
  // Converts a scalar between element types as Tessera does (round to
  // nearest even for narrower floats; truncation toward zero to integers).
  Value* convert(Value* v, Type to);

  // --- ids and sizes ---
  Value* id(OpKind kind, int64_t axis);  // tile.local_id, group_id, group_size, num_groups
  Value* lane() { return op(OpKind::LaneId, {}, context_.index_type()); }
  Value* warp() { return op(OpKind::WarpId, {}, context_.index_type()); }
  Value* dim(Value* memref, int64_t axis);

  // --- memory ---
  Value* load(Value* memref, std::vector<Value*> indices);
  void store(Value* value, Value* memref, std::vector<Value*> indices);
  Value* alloc_shared(std::vector<int64_t> shape, ScalarType element);
  void barrier() { op0(OpKind::Barrier, {}); }
  Value* warp_reduce(Value* v, WarpReduceKind kind);

  // --- control flow ---
  // for i in range(lo, hi, step) carrying `init`; `body` returns the next
  // values of the carried ones. Returns the loop's results.
  std::vector<Value*> for_loop(Value* lo, Value* hi, Value* step, std::vector<Value*> init,
                               const std::function<std::vector<Value*>(Value* i, std::vector<Value*> carried)>& body);
  void for_loop(Value* lo, Value* hi, Value* step, const std::function<void(Value* i)>& body);
  // if c: then() (results: none).
  void if_then(Value* c, const std::function<void()>& then);
  // c ? then() : otherwise(), each yielding values of `types`.
  std::vector<Value*> if_else(Value* c, std::vector<Type> types, const std::function<std::vector<Value*>()>& then,
                              const std::function<std::vector<Value*>()>& otherwise);

 private:
  void op0(OpKind kind, std::vector<Value*> operands, std::vector<NamedAttribute> attributes = {});

  Context& context_;
  Builder builder_;
  Operation* func_;
  Block* entry_;
  std::vector<Attribute> names_, dims_;
  std::vector<int64_t> mut_;
};

}  // namespace tessera::ir
