// One element of a graph operation as scalar Tile IR: what a generated
// kernel computes at each position of its iteration space.
#pragma once

#include <functional>
#include <vector>

#include "ir/core/graph_ops.h"
#include "ir/schedule_to_tile/kernel_builder.h"

namespace tessera::ir {

// Where an element is: its index in the operation's result (index values,
// one per dimension) and, on demand, its row-major number (the counter of
// its random numbers).
struct ElementPosition {
  std::vector<Value*> indices;
  std::function<Value*()> linear_index;
};

// The element of graph operation `op` (elementwise, cast, constant, iota,
// random) from its operands' elements, which have the operands' element
// types. Floats narrower than f32 compute in f32 and round to the result's
// type after each operation, as NumPy does for f16.
Value* emit_element(KernelBuilder& kb, Operation* op, const std::vector<Value*>& operands,
                    const ElementPosition& position);

// The identity of a reduction (sum: 0, prod: 1, max: -inf or the smallest
// integer, min: +inf or the largest), and one step of it; a mean is a sum here
// (generate_kernels.cpp divides by the count).
Value* reduction_identity(KernelBuilder& kb, ReduceKind kind, Type t);
Value* reduction_combine(KernelBuilder& kb, ReduceKind kind, Value* a, Value* b);

}  // namespace tessera::ir
