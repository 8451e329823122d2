// Uniformity (divergence) analysis: which values are the same on every lane
// of a group, the same on every lane of a warp, or may differ lane to lane,
// and which operations run under control flow that not every lane takes.
//
// Sources: lane ids (`tile.linear_id`, `local_id`, `lane_id`), shuffles,
// atomics and calls vary; `tile.warp_id` and warp reductions are the same
// within a warp; constants, group ids and sizes, shared allocations and a
// kernel's arguments are uniform (a helper's arguments vary: its callers are
// unknown). Every other value is as varying as the most varying of its
// operands and of the control flow it is defined under: a value computed
// under a lane-dependent branch or loop is varying, as are the results of an
// scf.if with a varying condition and the results of a loop whose trip count
// varies. Loads of uniform addresses are uniform: a program without data
// races reads the same value on every lane between two barriers. A local
// (per-lane) allocation is varying: each lane has its own.
//
// The analysis is a fixpoint over one function (values only move up the
// lattice Uniform < WarpUniform < Varying), linear in practice.
#pragma once

#include <cstdint>
#include <string_view>
#include <unordered_map>

#include "ir/core/ir.h"

namespace tessera::ir {

enum class Uniformity : uint8_t {
  Uniform,      // the same on every lane of the group
  WarpUniform,  // the same on every lane of a warp, may differ between warps
  Varying,      // may differ between lanes of one warp
};
std::string_view uniformity_name(Uniformity u);

class UniformityAnalysis {
 public:
  // Analyses one `func.func`.
  explicit UniformityAnalysis(Operation* func);

  Uniformity of(Value* v) const;
  bool is_uniform(Value* v) const { return of(v) == Uniformity::Uniform; }
  // How uniform the decision to run `op` is: the worst condition or trip
  // count among the scf operations around it in its function.
  Uniformity control(Operation* op) const;
  // How uniform the decision an scf.if / scf.for / scf.while makes is (its
  // condition, its bounds, its loop condition); Uniform for other operations.
  Uniformity decision(Operation* op) const;
  // The innermost operation around `op` whose decision is worse than
  // `allowed`, or null.
  Operation* divergent_parent(Operation* op, Uniformity allowed) const;

 private:
  bool raise(Value* v, Uniformity u);
  void visit_block(Block& block, Uniformity control, bool& changed);
  void visit(Operation* op, Uniformity control, bool& changed);

  Operation* func_;
  std::unordered_map<const Value*, Uniformity> values_;
  std::unordered_map<const Operation*, Uniformity> control_;
  std::unordered_map<const Operation*, Uniformity> decisions_;
};

}  // namespace tessera::ir
