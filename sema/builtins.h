// The table of builtin functions (builtins.def): lookup by dotted path,
// including the seed aliases.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace tessera::sema {

enum class BuiltinId : uint16_t {
#define TESSERA_BUILTIN(Name, Path, Context, Effect, Signature) Name,
#define TESSERA_BUILTIN_ALIAS(Path, Name)
#include "sema/builtins.def"
};

enum class CallContext : uint8_t { Kernel, Host, Any };

// The effect lattice, in order: a function's effect is the join (maximum) of
// the effects of what it does.
enum class Effect : uint8_t { Pure, Random, Movement, State, Collective, Memory, Io };
std::string_view effect_name(Effect effect);

// How a builtin's arguments are checked and its result typed (checker.cpp).
enum class Signature : uint8_t {
  LaneIndex,
  LaneIndexAxis,
  GroupIndexAxis,
  WarpIndex,
  RangeArgs,
  TileRangeArgs,
  UnaryFloat,
  UnaryNumeric,
  MinMax,
  BinaryNumeric,
  CastArgs,
  AllocShared,
  AllocRegister,
  AllocLocal,
  Barrier,
  LoadArgs,
  StoreArgs,
  LoadVectorArgs,
  StoreVectorArgs,
  CpAsyncArgs,
  NoArgs,
  WaitGroupArgs,
  AtomicArgs,
  AtomicCasArgs,
  ShuffleArgs,
  ShuffleIdxArgs,
  WarpReduceArgs,
  MmaArgs,
  // Graph level (check_graph_builtins.cpp).
  Activation,
  Reduction,
  MatmulArgs,
  SoftmaxArgs,
  NormArgs,
  AttentionArgs,
  MseArgs,
  WhereArgs,
  ReshapeArgs,
  TransposeArgs,
  ConcatArgs,
  StackArgs,
  FlattenArgs,
  ClipArgs,
  TensorMapArgs,  // copy, sign: a tensor of numbers to one of its type
  SortArgs,       // sort, argsort: a tensor of numbers along one axis
  ArgReduceArgs,
  VarianceArgs,
  SplitArgs,
  SplitQkvArgs,
  MergeHeadsArgs,
  RandomArgs,
  DropoutArgs,
  FillArgs,
  ArangeArgs,
  LinspaceArgs,
  ArrayArgs,  // array(object, dtype=None): numbers written out
  CumulativeArgs,  // cumsum, cumprod
  NpyLoadArgs,
  NpySaveArgs,
  PrintArgs,
  TransformArgs,  // grad, value_and_grad (check_autodiff.cpp)
  ScheduleArgs,   // schedule.tile, ... (check_schedule.cpp)
  // Checked loosely until their stage (autodiff, distribution) compiles them.
  Deferred,
};

struct BuiltinInfo {
  BuiltinId id;
  std::string_view path;  // canonical, without `ts.`
  CallContext context;
  Effect effect;
  Signature signature;
};

const BuiltinInfo& builtin_info(BuiltinId id);
// Looks up a dotted path (canonical or alias, without the `ts.` prefix).
std::optional<BuiltinId> lookup_builtin(std::string_view path);
// Every path (canonical and alias) that starts with `prefix` + "." exists as
// a namespace when this returns true ("tile", "dist", "dist.collective").
bool is_builtin_namespace(std::string_view prefix);
// All known paths, for "did you mean" suggestions.
const std::vector<std::string_view>& all_builtin_paths();

}  // namespace tessera::sema
