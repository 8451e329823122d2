// Sema: turns the AST into a typed, checked program.
//
// `check_module` resolves names (locals, parameters, symbolic dimensions,
// module-level functions and constants, imports, the builtin table),
// computes a type for every expression (side table `node_types`, indexed by
// NodeId), infers each function's effect, and enforces the kernel rules
// (kernel-only builtins, no return values, barriers reachable by every lane,
// shared-memory budgets). Errors are diagnostics; the result is always
// complete, with the error type where something was wrong.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "frontend/ast/ast.h"
#include "frontend/diagnostics/diagnostics.h"
#include "sema/builtins.h"
#include "sema/types.h"

namespace tessera::sema {

enum class FunctionKind : uint8_t { Kernel, Jit, Helper };
std::string_view function_kind_name(FunctionKind kind);

struct AutotuneParameter {
  IdentifierId name;
  std::vector<int64_t> candidates;
};

struct FunctionInfo {
  NodeId def;
  IdentifierId name;
  FunctionKind kind = FunctionKind::Helper;
  Effect effect = Effect::Pure;
  SourceRange effect_source;         // what raised the effect to its level
  std::vector<int64_t> group_shape;  // kernels: 1 to 3 axes; default {128}
  std::optional<uint64_t> shared_budget;
  uint64_t shared_bytes = 0;  // static shared memory allocated by the body
  std::vector<AutotuneParameter> autotune;
  bool deterministic = false;
  bool autodiff = false;
  std::vector<TypeId> parameter_types;
  TypeId return_type;
};

// A compile-time constant value.
struct Constant {
  bool is_float = false;
  int64_t integer = 0;
  double real = 0.0;
  double as_double() const { return is_float ? real : static_cast<double>(integer); }
};

struct TypedModule {
  explicit TypedModule(const IdentifierTable& identifiers) : types(identifiers) {}
  TypeStore types;
  std::vector<TypeId> node_types;  // indexed by NodeId; invalid for nodes without a type
  std::vector<FunctionInfo> functions;
  // The value of every expression sema evaluated at compile time (module
  // constants, literals, arithmetic on them), by NodeId index. Expressions
  // that read locals may hold a value the local had before a later
  // reassignment (a loop condition read before the body): trust it only for
  // literals and names of module constants.
  std::unordered_map<uint32_t, Constant> constants;
  // Builtin calls (by the Call's NodeId index): the argument nodes bound to
  // the signature's parameters in order (positional, then by keyword), an
  // invalid id for an omitted optional one. Absent when the call had errors.
  std::unordered_map<uint32_t, std::vector<NodeId>> call_arguments;
};

// Default shared-memory limit of one group (the portable static limit).
inline constexpr uint64_t kDefaultSharedLimitBytes = 48 * 1024;
// Shared memory a bare `tshared.alloc` may use when the kernel names no budget.
inline constexpr uint64_t kDefaultSharedBudgetBytes = 48 * 1024;

std::unique_ptr<TypedModule> check_module(const Ast& ast, ValueStores& values, DiagnosticEngine& diags);

// `--emit=typed-ast`: the AST dump with every expression's type and every
// function's kind and effect.
std::string dump_typed_ast(const TypedModule& module, const Ast& ast, const SourceManager& sources,
                           const ValueStores& values);

}  // namespace tessera::sema
