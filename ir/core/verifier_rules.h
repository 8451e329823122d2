// The IR verifier's internals (verifier.h is its interface).
//
// One class, Verifier. verifier.cpp holds the walk, the structural rules
// (operands defined and visible, one block per region, terminators), the
// helpers the operations' rules are written with, and verify_rules: the one
// switch over every OpKind, without default, that calls the rule of each
// operation. The rules are defined one file per op set:
//
//   verifier_func.cpp      module, func.func, func.return, func.call
//   verifier_arith.cpp     arith.*, math.*
//   verifier_scf.cpp       scf.for, scf.if, scf.while, scf.yield, scf.condition
//   verifier_graph.cpp     graph.*
//   verifier_schedule.cpp  schedule.*
//   verifier_tile.cpp      tile.*
//   verifier_host.cpp      host.*
//
// A rule records its errors with `error` and stops at the first one that
// makes the rest meaningless. The rules are documented with their op sets in
// docs/ir/.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ir/core/ir.h"
#include "ir/core/verifier.h"

namespace tessera::ir::verification {

bool one_of(std::string_view value, std::initializer_list<std::string_view> options);
// Integer (or index, bool) and float elements of scalars and elementwise values.
bool is_int_element(Type t);
bool is_float_element(Type t);
// Scalars and elementwise values (vector, tile, tensor) of one shape.
bool is_value_type(Type t);
unsigned element_bits(Type t);
bool same_shape(Type a, Type b);
bool dims_compatible(std::span<const int64_t> a, std::span<const int64_t> b);
std::string types_text(const std::vector<Type>& types);
std::vector<Type> value_types(const std::vector<Value*>& values);

class Verifier {
 public:
  std::vector<VerifyError> run(Operation* root);

 private:
  // --- verifier.cpp: the walk and the structural rules ---
  // Records an error; returns false so rules can `return error(...)`.
  bool error(Operation* op, std::string message);
  void verify_op(Operation* op);
  void verify_structure(Operation* op);
  void check_visible(Operation* user, unsigned index, Value* v);
  static bool holds_regions(OpKind kind);
  // The dispatch to each operation's rule.
  void verify_rules(Operation* op);

  // --- verifier.cpp: helpers the rules are written with (each records its error) ---
  bool operands(Operation* op, unsigned n);
  bool min_operands(Operation* op, unsigned n);
  bool results(Operation* op, unsigned n);
  bool regions(Operation* op, unsigned n);
  bool shape(Operation* op, unsigned n_operands, unsigned n_results, unsigned n_regions = 0);
  Attribute attr(Operation* op, std::string_view name, AttributeKind kind, bool required = true);
  // An array attribute whose elements are all integers.
  Attribute int_array_attr(Operation* op, std::string_view name);
  bool string_choice(Operation* op, std::string_view name, std::initializer_list<std::string_view> options,
                     bool required = true);
  bool string_choice(Operation* op, std::string_view name, std::span<const std::string_view> options,
                     bool required = true);
  bool axis_attr(Operation* op, int64_t limit);
  // Every operand and the result have one type; `element_ok` checks it.
  bool same_type_elementwise(Operation* op, unsigned n, bool (*element_ok)(Type), std::string_view what);
  bool memref_indices(Operation* op, unsigned memref_index, unsigned first_index, unsigned count_after);
  // Constant memory is filled by the host before the launch and read-only
  // for kernels: nothing may store into it or update it atomically.
  bool writable_memref(Operation* op, unsigned memref_index);
  bool check_yield(Operation* parent, Region& region, OpKind terminator, const std::vector<Type>& expected,
                   std::string_view what);
  bool block_args(Operation* op, Region& region, const std::vector<Type>& expected, std::string_view what);
  bool verify_cast(Operation* op, bool (*from_ok)(Type), bool (*to_ok)(Type), int width_rule, std::string_view what,
                   unsigned n_operands = 1);
  static bool any_int(Type t) { return is_int_element(t) && !t.is_index(); }
  static bool any_float(Type t) { return is_float_element(t); }

  // --- verifier_func.cpp ---
  void verify_module(Operation* op);
  void verify_func(Operation* op);
  void check_mma_layouts(Operation* func);
  void verify_return(Operation* op);
  void verify_call(Operation* op);

  // --- verifier_arith.cpp ---
  void verify_constant(Operation* op);
  void verify_int_elementwise(Operation* op);
  void verify_float_binary(Operation* op);
  void verify_float_unary(Operation* op);
  void verify_abs_int(Operation* op);
  void verify_fma(Operation* op);
  void verify_compare(Operation* op);
  void verify_select(Operation* op);
  void verify_int_extension(Operation* op);
  void verify_int_truncation(Operation* op);
  void verify_int_to_float(Operation* op);
  void verify_float_to_int(Operation* op);
  void verify_float_extension(Operation* op);
  void verify_float_truncation(Operation* op);
  void verify_index_cast(Operation* op);
  void verify_bitcast(Operation* op);

  // --- verifier_scf.cpp ---
  void verify_for(Operation* op);
  void verify_if(Operation* op);
  void verify_while(Operation* op);
  void verify_yield(Operation* op);
  void verify_condition(Operation* op);

  // --- verifier_graph.cpp ---
  void verify_graph_tensor_op(Operation* op);
  void verify_graph_grad(Operation* op);
  void verify_graph_jvp(Operation* op);
  void verify_graph_mesh(Operation* op);
  void verify_graph_shard(Operation* op);
  void check_result_type(Operation* op);
  void verify_host_mesh(Operation* op);
  void verify_host_collective(Operation* op);
  void verify_host_collective_start(Operation* op);
  void verify_host_collective_wait(Operation* op);
  void verify_graph_reduction_collective(Operation* op);
  void verify_graph_axis_collective(Operation* op);
  void verify_graph_send(Operation* op);
  void verify_graph_recv(Operation* op);
  void verify_graph_print(Operation* op);
  void verify_graph_item(Operation* op);

  // --- verifier_schedule.cpp ---
  void verify_schedule_region(Operation* op);
  void verify_schedule_prefetch(Operation* op);
  void verify_schedule_knob(Operation* op);
  void verify_schedule_yield(Operation* op);
  void verify_schedule_kernel(Operation* op);
  void verify_schedule_collective_start(Operation* op);
  void verify_schedule_collective_wait(Operation* op);

  // --- verifier_host.cpp ---
  void verify_host_alloc(Operation* op);
  void verify_host_free(Operation* op);
  void verify_host_view(Operation* op);
  void verify_host_stride(Operation* op);
  void verify_host_launch(Operation* op);
  bool verify_tuned_launch(Operation* op);
  void verify_host_print(Operation* op);
  bool verify_text(Operation* op, std::string_view name, unsigned first);
  bool verify_save_path(Operation* op);
  void verify_host_save(Operation* op);
  void verify_host_load(Operation* op);
  void verify_host_check(Operation* op);
  void verify_host_read(Operation* op);
  void verify_host_arena_buffer(Operation* op);

  // --- verifier_tile.cpp ---
  void verify_index_id(Operation* op);
  void verify_axis_id(Operation* op);
  void verify_dim(Operation* op);
  void verify_alloc(Operation* op);
  void verify_subview(Operation* op);
  void verify_barrier(Operation* op);
  void verify_load(Operation* op);
  void verify_store(Operation* op);
  void verify_load_vector(Operation* op);
  void verify_store_vector(Operation* op);
  void verify_cp_async(Operation* op);
  void verify_cp_commit_group(Operation* op);
  void verify_cp_wait_group(Operation* op);
  void verify_atomic(Operation* op);
  void verify_atomic_cas(Operation* op);
  void verify_shuffle(Operation* op);
  void verify_warp_reduce(Operation* op);
  void verify_random_bits(Operation* op);
  void verify_splat(Operation* op);
  void verify_mma(Operation* op);
  void verify_store_tile(Operation* op);

  std::vector<VerifyError> errors_;
};

}  // namespace tessera::ir::verification
