// One call of a builtin as sema checks it: the arguments split into
// positional and keyword ones, bound to the builtin's parameter names, and
// checked once each (check_call.cpp dispatches to the family's checker:
// check_kernel_builtins.cpp, check_memory_builtins.cpp,
// check_math_builtins.cpp, check_graph_builtins.cpp).
#pragma once

#include <initializer_list>
#include <optional>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

#include "sema/builtins.h"
#include "sema/checker.h"

namespace tessera::sema {

struct Arguments {
  std::vector<NodeId> positional;
  std::vector<std::pair<std::string_view, NodeId>> keywords;  // name (interned, stable), value node
};

// Positional arguments, and keyword arguments by name, in source order.
Arguments split_arguments(const Ast& ast, const ValueStores& values, std::span<const NodeId> arguments);

class BuiltinCall {
 public:
  // `self`: the object of a method call (`x.sum(axis=1)`), bound as the
  // first positional argument, its value already checked.
  BuiltinCall(Checker& checker, NodeId call, BuiltinId builtin, NodeId self = {}, Value self_value = {});

  // Checks an argument expression (each at most once) and returns its value.
  Value value_of(NodeId argument);
  // Checks every argument (after an error that ends the call's checking).
  void check_all_arguments();
  // Binds the arguments to `parameters` (in positional order; the first
  // `required` must be present) and records the binding for lowering
  // (TypedModule::call_arguments). Reports a wrong count or an unknown
  // keyword; empty after a wrong count.
  std::vector<NodeId> bind(std::initializer_list<const char*> parameters, size_t required);

  // Argument rules: each reports a mismatch at the argument.
  Value require_integer(NodeId argument, const char* parameter);
  // One value per lane (a warp operation's operand): not a vector or tensor.
  // Reports `what` as the expected kind; returns whether it is a scalar.
  bool require_scalar(const Value& v, NodeId argument, const char* parameter, const char* what);
  std::optional<int64_t> require_constant_integer(NodeId argument, const char* parameter);
  std::optional<ScalarType> require_dtype(NodeId argument, const char* parameter);
  std::optional<TypeId> require_tensor(NodeId argument, const char* parameter, bool shared);
  // A shape argument: a tuple or list of extents, or one extent.
  std::vector<NodeId> shape_extents(NodeId shape);
  // The `axis` of tile.local_id(axis) and friends: a constant 0, 1 or 2.
  void axis_argument(const std::vector<NodeId>& bound);

  Checker& checker;
  const BuiltinInfo& info;
  BuiltinId id;
  std::string_view name;  // the canonical path, for messages
  NodeId call;
  bool method = false;  // x.max(0): a method of tensor x
  std::span<const NodeId> children;  // the callee, then the arguments
  SourceRange where;
  Arguments args;
  TypeId i32;

 private:
  std::vector<std::pair<uint32_t, Value>> checked_;  // argument node -> value; few per call
};

}  // namespace tessera::sema
