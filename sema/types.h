// Sema's types: scalars, tensors with symbolic shapes, numeric policies.
//
// Every type, dimension expression and policy is interned in a `TypeStore`:
// structurally equal types are the same `TypeId`, so type equality is id
// equality and types are cheap to pass around. Types never change after
// creation.
//
// Tensors carry their element scalar type, a numeric policy (accumulation
// type, rounding, saturation, loss scale, custom policy class), their
// dimensions (interned `DimId` expressions over constants and symbols such as
// `n` or `K/tp`), their address space (global for parameters, shared for
// `tile.alloc_shared`) and two flags: `mut` (writable) and `seed_style`
// (written as `ts.Tensor[...]`, whose write privilege is inferred).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "frontend/lex/value_stores.h"
#include "support/scalar_type.h"

namespace tessera::sema {

// The dtypes are the support library's (one table for every phase and the
// runtime); sema names them unqualified.
using ::tessera::DtypeLookup;
using ::tessera::is_float;
using ::tessera::is_integer;
using ::tessera::is_storage_float;
using ::tessera::lookup_dtype;
using ::tessera::ScalarCategory;
using ::tessera::ScalarInfo;
using ::tessera::ScalarType;
using ::tessera::scalar_info;

// --- distribution (docs/distributed.md, "The language") ------------------------------
// A device mesh as dist.mesh declared it: its devices, axis names and shape
// (row-major: the last axis varies fastest, as the runtime's tessMeshCreate).
struct MeshInfo {
  std::vector<std::string> devices;
  std::vector<std::string> axes;
  std::vector<int64_t> shape;
  friend bool operator==(const MeshInfo&, const MeshInfo&) = default;
};

// A pending reduction of a partial value (ShardSpec reduce=, a contraction
// or reduction over a sharded dimension).
enum class PartialOp : uint8_t { Sum, Max, Min, Avg, Prod };
std::string_view partial_op_name(PartialOp op);

// How a tensor lies on a mesh: per dimension the mesh axis it is split over
// (-1: whole on every rank), and the mesh axes over which every rank holds a
// partial value still to be reduced with `partial_op`. The same description
// serves a program's value (global dims) and a @jit body's (this rank's
// shard: each split dimension divided by its axis's size).
struct ShardingInfo {
  uint32_t mesh = 0;
  std::vector<int32_t> dim_axes;
  uint32_t partial_axes = 0;  // bit k: mesh axis k
  PartialOp partial_op = PartialOp::Sum;
  // An operation without a propagation rule made it from sharded operands:
  // the value is this rank's, its global layout unknown (ts.save refuses it).
  bool unknown = false;
  // Bit k: the value differs between the ranks of mesh axis k in a way no
  // layout describes (a recv or sendrecv made it: the pipeline stage's own
  // value). A broadcast, all_reduce or all_gather over the axis makes it
  // the same again; ts.save refuses it until then.
  uint32_t varying_axes = 0;
  friend bool operator==(const ShardingInfo&, const ShardingInfo&) = default;
};

// A ShardSpec(...) before it meets a tensor: partition entries ("row" is
// dimension 0, "col" the last, or a dimension number as text), the mesh
// axes they map to (empty: the mesh's axes in order), replicate=, reduce=.
struct LayoutInfo {
  std::vector<std::string> partition;
  std::vector<std::string> mesh_axes;
  bool replicate = false;
  std::string reduce;  // "" or sum/max/min/avg
  friend bool operator==(const LayoutInfo&, const LayoutInfo&) = default;
};

struct DimId {
  uint32_t index = UINT32_MAX;
  bool valid() const { return index != UINT32_MAX; }
  friend bool operator==(DimId, DimId) = default;
};

enum class DimKind : uint8_t { Constant, Symbol, Dynamic, Add, Sub, Mul, Div, FloorDiv, Mod };

struct Dim {
  DimKind kind = DimKind::Dynamic;
  int64_t value = 0;        // Constant
  IdentifierId symbol;      // Symbol
  DimId lhs, rhs;           // binary kinds
  uint32_t dynamic_id = 0;  // Dynamic: each `?` is distinct
};

enum class RoundingMode : uint8_t { NearestEven, TowardZero, Down, Up, NearestAway };
std::string_view rounding_mode_name(RoundingMode mode);
std::optional<RoundingMode> rounding_mode_by_name(std::string_view name);

struct PolicyId {
  uint32_t index = 0;  // 0 is the default policy
  friend bool operator==(PolicyId, PolicyId) = default;
};

struct Policy {
  std::optional<ScalarType> accum;
  bool stochastic_round = false;
  // The seed of @stochastic_round(seed): a constant, or the name of a kernel
  // scalar parameter (read at run time; the lowering checks it). Default 0.
  int64_t seed = 0;
  IdentifierId seed_name;
  bool saturate = false;
  RoundingMode rounding = RoundingMode::NearestEven;
  double loss_scale = 0.0;  // 0: none
  IdentifierId custom;      // a @precision_policy class
};

// Where a tensor lives: device memory (parameters), a group's shared memory
// (tile.alloc_shared), a lane's private local memory (tile.alloc_local), or
// registers: values, not memory (tile.mma results and arithmetic on them,
// which are 2-D register tiles, and tile.load_vector results, 1-D vectors).
enum class AddressSpace : uint8_t { Global, Shared, Local, Register };

enum class TypeKind : uint8_t {
  Error,         // after a reported error: silences follow-on errors
  None,          // the None value; the result of a call that returns nothing
  Scalar,        // scalar + policy
  UntypedInt,    // integer literal without context yet
  UntypedFloat,  // float literal without context yet
  String,
  Tensor,    // element scalar + policy + dims + space + flags
  Tuple,     // elements
  List,      // payload: element TypeId (homogeneous)
  Dtype,     // a dtype used as a value (ts.f32); payload: the scalar TypeId
  Module,    // a namespace such as `tile` or `dist`; payload: ModuleId
  Builtin,   // payload: BuiltinId
  Function,  // a user function; payload: NodeId of its FunctionDef
  Range,     // the iterator of range(...) / tile.range(...)
  Object,    // an opaque host-level object; payload: IdentifierId of its class name
  Mesh,      // a device mesh (dist.mesh); payload: index into the store's meshes
  Layout,    // a ShardSpec; payload: index into the store's layouts
  Dynamic,   // graph-level value whose type is known only when traced (unannotated @jit parameters)
  Transform,  // grad(f, ...) / value_and_grad(f, ...): a function made from a @jit function (TransformInfo)
};

// What `grad(f, argnums=...)` and `value_and_grad(...)` make
// (docs/language/autodiff.md): the function transformed, which parameters
// the gradient is taken with respect to, and whether `argnums` was a tuple
// (the gradients are then a tuple, else one value).
// Grad/ValueAndGrad: grad(f, ...) / value_and_grad(f, ...). Vjp: the
// `f_vjp` of `out, f_vjp = vjp(f, *primals)`, bound to one instance of f.
enum class TransformKind : uint8_t { Grad, ValueAndGrad, Vjp };
struct TransformInfo {
  TransformKind kind = TransformKind::Grad;
  uint32_t function = 0;  // index into TypedModule::functions
  uint32_t instance = UINT32_MAX;  // Vjp: index into TypedModule::instances
  bool tuple = false;
  bool has_aux = false;  // f returns (value, aux); aux is passed through
  std::vector<uint32_t> argnums;
  // grad(grad(f, argnums=a), ...): the argnum of each inner `grad`,
  // innermost first (each differentiates one parameter); empty for grad(f).
  std::vector<uint32_t> inner_argnums;
};

struct TypeId {
  uint32_t index = UINT32_MAX;
  bool valid() const { return index != UINT32_MAX; }
  friend bool operator==(TypeId, TypeId) = default;
};

struct TypeInfo {
  TypeKind kind = TypeKind::Error;
  ScalarType scalar = ScalarType::F32;
  AddressSpace space = AddressSpace::Global;
  bool mut = false;
  bool seed_style = false;
  PolicyId policy;
  uint32_t payload = 0;  // Tensor: its sharding (0: none, else index + 1)
  uint32_t extra_begin = 0;  // Tensor: dims; Tuple: element types (in the store's extra array)
  uint32_t extra_count = 0;
};

class TypeStore {
 public:
  explicit TypeStore(const IdentifierTable& identifiers);

  // Fixed types.
  TypeId error() const { return error_; }
  TypeId none() const { return none_; }
  TypeId string() const { return string_; }
  TypeId untyped_int() const { return untyped_int_; }
  TypeId untyped_float() const { return untyped_float_; }
  TypeId range() const { return range_; }
  TypeId dynamic() const { return dynamic_; }
  TypeId scalar(ScalarType type, PolicyId policy = {});

  TypeId tensor(ScalarType element, PolicyId policy, std::span<const DimId> dims, AddressSpace space, bool mut,
                bool seed_style);
  TypeId tuple(std::span<const TypeId> elements);
  TypeId list(TypeId element);
  TypeId dtype(TypeId scalar_type);
  TypeId module(uint32_t module_id);
  TypeId builtin(uint32_t builtin_id);
  TypeId function(uint32_t node_index);
  TypeId object(IdentifierId class_name);
  TypeId transform(const TransformInfo& transform);
  TransformInfo transform_info(TypeId transform) const;

  // Distribution: meshes, layouts, shardings (interned by content).
  TypeId mesh(const MeshInfo& mesh);
  TypeId layout(const LayoutInfo& layout);
  const MeshInfo& mesh_info(uint32_t mesh) const { return meshes_[mesh]; }
  const LayoutInfo& layout_info(uint32_t layout) const { return layouts_[layout]; }
  uint32_t intern_sharding(const ShardingInfo& sharding);  // index + 1
  const ShardingInfo* sharding(TypeId tensor) const;      // null when not sharded
  const ShardingInfo& sharding_info(uint32_t id) const { return shardings_[id - 1]; }
  TypeId with_sharding(TypeId tensor, uint32_t sharding);  // 0 removes it
  std::string mesh_to_string(uint32_t mesh) const;
  std::string sharding_to_string(uint32_t id) const;

  // Variants of an existing tensor type.
  TypeId with_mut(TypeId tensor, bool mut);
  TypeId element_type(TypeId tensor);  // scalar with the tensor's policy

  // By value: interning a new type may grow the store and move its entries,
  // so no reference into it may be held across a call that creates types.
  TypeInfo info(TypeId id) const { return types_[id.index]; }
  TypeKind kind(TypeId id) const { return types_[id.index].kind; }
  // These views are invalidated by creating types: copy them first where types
  // are created while they are in use.
  std::span<const DimId> dims(TypeId tensor) const;
  std::span<const TypeId> tuple_elements(TypeId tuple) const;
  bool is_error(TypeId id) const { return kind(id) == TypeKind::Error; }
  bool is_numeric_scalar(TypeId id) const;

  // Dimensions.
  DimId constant_dim(int64_t value);
  DimId symbol_dim(IdentifierId symbol);
  DimId dynamic_dim();
  DimId binary_dim(DimKind kind, DimId lhs, DimId rhs);  // folds constants
  Dim dim(DimId id) const { return dims_[id.index]; }
  std::optional<int64_t> constant_value(DimId id) const;

  // Policies.
  PolicyId intern_policy(const Policy& policy);
  Policy policy(PolicyId id) const { return policies_[id.index]; }

  std::string to_string(TypeId id) const;
  std::string dim_to_string(DimId id) const;
  std::string policy_to_string(PolicyId id) const;  // " @accum(f32) @saturate" or ""

 private:
  TypeId intern(const TypeInfo& info, std::span<const uint32_t> extra);
  DimId intern_dim(const Dim& dim);

  const IdentifierTable& identifiers_;
  std::vector<TypeInfo> types_;
  std::vector<uint32_t> extra_;
  std::unordered_multimap<uint64_t, TypeId> type_ids_;  // structural hash -> types
  std::vector<Dim> dims_;
  std::unordered_multimap<uint64_t, DimId> dim_ids_;
  std::vector<Policy> policies_;
  std::vector<MeshInfo> meshes_;
  std::vector<LayoutInfo> layouts_;
  std::vector<ShardingInfo> shardings_;
  std::unordered_map<std::string, PolicyId> policy_ids_;
  uint32_t next_dynamic_ = 0;
  TypeId error_, none_, string_, untyped_int_, untyped_float_, range_, dynamic_;
  // Scalars with the default policy are asked for constantly: cached by kind.
  std::vector<TypeId> plain_scalars_;
};

}  // namespace tessera::sema
