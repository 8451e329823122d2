// Full unrolling of `scf.for` loops whose trip count is a compile-time
// constant, for autodiff (autodiff.cpp differentiates straight-line code and
// `scf.if`; a loop it must differentiate is unrolled first).
#pragma once

#include <cstdint>
#include <string>

#include "ir/core/context.h"
#include "ir/core/ir.h"

namespace tessera::ir {

// The most iterations autodiff unrolls for one loop, and the most operations
// it clones in one derived function (nested loops multiply).
inline constexpr int64_t kMaxUnrolledIterations = 1024;
inline constexpr int64_t kMaxUnrolledOperations = 200000;

// Replaces `loop` (an scf.for) by its body cloned once per iteration, before
// it in its block, the induction variable a constant each time; the loop's
// results become the last iteration's yielded values and the loop is erased.
// Scalar operations of the clones whose operands are all constants are folded
// (so that inner loops' bounds and slice offsets that depend on the
// induction variable become constants). `budget` is the number of operations
// still allowed to be cloned; it is decreased. Returns an empty string, or
// why the loop cannot be unrolled (then nothing changed).
std::string unroll_loop(Operation* loop, Context& context, int64_t& budget);

// Folds `op` when it is a scalar operation whose operands are all constants:
// it is replaced by an arith.constant (returned) and erased. Null otherwise.
Operation* fold_constant_operation(Operation* op, Context& context);

}  // namespace tessera::ir
