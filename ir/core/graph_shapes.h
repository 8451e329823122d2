// The result types of Graph IR operations from their operands and
// attributes: one definition for the verifier (a result must have it), the
// lowering from the AST (which builds them) and the passes (which rebuild
// operations). Dimensions are static sizes or kDynamic; a static size and
// `?` are compatible.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <vector>

#include "ir/core/ir.h"

namespace tessera::ir {

// NumPy broadcasting of two shapes (trailing dimensions aligned, a size-1
// dimension stretches); nullopt when two static sizes differ and neither is 1.
std::optional<std::vector<int64_t>> broadcast_shapes(std::span<const int64_t> a, std::span<const int64_t> b);

// The shape of an operand of graph ops: a tensor's dims, or none for a scalar.
std::span<const int64_t> value_shape(Type t);

// What a graph operation's result is: a tensor of `element` and `dims`, or
// an index (graph.dim).
struct GraphResult {
  bool index = false;
  ScalarType element = ScalarType::F32;
  std::vector<int64_t> dims;
  Type type(Context& context) const;
};

// The result `index` of `op` as its operands and attributes make it, or
// nullopt with `why` saying what is wrong with them.
std::optional<GraphResult> infer_graph_result(Operation* op, unsigned index, std::string& why);

// Whether `actual` is `expected`: the element type, and each dimension equal
// or `?` on either side.
bool graph_type_matches(const GraphResult& expected, Type actual);
std::string graph_result_text(const GraphResult& result);

}  // namespace tessera::ir
