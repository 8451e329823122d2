#include "sema/types.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "support/diagnostics/internal_error.h"

namespace tessera::sema {

namespace {

// Appends the raw bytes of a value to an interning key.
template <typename T>
void put(std::string& key, const T& value) {
  key.append(reinterpret_cast<const char*>(&value), sizeof(T));
}

}  // namespace

std::string_view rounding_mode_name(RoundingMode mode) {
  switch (mode) {
    case RoundingMode::NearestEven:
      return "rne";
    case RoundingMode::TowardZero:
      return "rz";
    case RoundingMode::Down:
      return "rd";
    case RoundingMode::Up:
      return "ru";
    case RoundingMode::NearestAway:
      return "rna";
  }
  return "rne";
}

std::optional<RoundingMode> rounding_mode_by_name(std::string_view name) {
  for (RoundingMode mode : {RoundingMode::NearestEven, RoundingMode::TowardZero, RoundingMode::Down, RoundingMode::Up,
                            RoundingMode::NearestAway}) {
    if (rounding_mode_name(mode) == name) return mode;
  }
  return std::nullopt;
}

TypeStore::TypeStore(const IdentifierTable& identifiers) : identifiers_(identifiers) {
  policies_.push_back(Policy{});  // PolicyId{0}: the default policy
  policy_ids_.emplace(std::string(), PolicyId{0});
  auto simple = [&](TypeKind kind) {
    TypeInfo info;
    info.kind = kind;
    return intern(info, {});
  };
  error_ = simple(TypeKind::Error);
  none_ = simple(TypeKind::None);
  string_ = simple(TypeKind::String);
  untyped_int_ = simple(TypeKind::UntypedInt);
  untyped_float_ = simple(TypeKind::UntypedFloat);
  range_ = simple(TypeKind::Range);
  dynamic_ = simple(TypeKind::Dynamic);
}

namespace {

// 64-bit FNV-1a over the words that identify a type or dimension.
struct Hasher {
  uint64_t value = 1469598103934665603ull;
  void add(uint64_t word) {
    for (int i = 0; i < 8; ++i) {
      value = (value ^ ((word >> (8 * i)) & 0xFF)) * 1099511628211ull;
    }
  }
};

bool same_type(const TypeInfo& a, const TypeInfo& b) {
  return a.kind == b.kind && a.scalar == b.scalar && a.space == b.space && a.mut == b.mut &&
         a.seed_style == b.seed_style && a.policy == b.policy && a.payload == b.payload;
}

}  // namespace

TypeId TypeStore::intern(const TypeInfo& info, std::span<const uint32_t> extra) {
  // Interning is on sema's hot path: hash the fields directly (no key strings)
  // and compare the few candidates with the same hash structurally.
  Hasher h;
  h.add(static_cast<uint64_t>(info.kind) | static_cast<uint64_t>(info.scalar) << 8 |
        static_cast<uint64_t>(info.space) << 16 | static_cast<uint64_t>(info.mut) << 24 |
        static_cast<uint64_t>(info.seed_style) << 32);
  h.add(static_cast<uint64_t>(info.policy.index) | static_cast<uint64_t>(info.payload) << 32);
  for (uint32_t word : extra) h.add(word);
  auto [first, last] = type_ids_.equal_range(h.value);
  for (auto it = first; it != last; ++it) {
    const TypeInfo& candidate = types_[it->second.index];
    if (!same_type(candidate, info) || candidate.extra_count != extra.size()) continue;
    if (std::equal(extra.begin(), extra.end(), extra_.begin() + candidate.extra_begin)) return it->second;
  }
  TypeInfo stored = info;
  stored.extra_begin = static_cast<uint32_t>(extra_.size());
  stored.extra_count = static_cast<uint32_t>(extra.size());
  extra_.insert(extra_.end(), extra.begin(), extra.end());
  types_.push_back(stored);
  TypeId id{static_cast<uint32_t>(types_.size() - 1)};
  type_ids_.emplace(h.value, id);
  return id;
}

TypeId TypeStore::scalar(ScalarType type, PolicyId policy) {
  size_t index = static_cast<size_t>(type);
  if (policy == PolicyId{} && index < plain_scalars_.size() && plain_scalars_[index].valid()) {
    return plain_scalars_[index];
  }
  TypeInfo info;
  info.kind = TypeKind::Scalar;
  info.scalar = type;
  info.policy = policy;
  TypeId id = intern(info, {});
  if (policy == PolicyId{}) {
    if (plain_scalars_.size() <= index) plain_scalars_.resize(index + 1);
    plain_scalars_[index] = id;
  }
  return id;
}

TypeId TypeStore::tensor(ScalarType element, PolicyId policy, std::span<const DimId> dims, AddressSpace space, bool mut,
                         bool seed_style) {
  TypeInfo info;
  info.kind = TypeKind::Tensor;
  info.scalar = element;
  info.policy = policy;
  info.space = space;
  info.mut = mut;
  info.seed_style = seed_style;
  std::vector<uint32_t> extra;
  for (DimId d : dims) extra.push_back(d.index);
  return intern(info, extra);
}

TypeId TypeStore::tuple(std::span<const TypeId> elements) {
  TypeInfo info;
  info.kind = TypeKind::Tuple;
  std::vector<uint32_t> extra;
  for (TypeId t : elements) extra.push_back(t.index);
  return intern(info, extra);
}

namespace {
TypeInfo with_payload(TypeKind kind, uint32_t payload) {
  TypeInfo info;
  info.kind = kind;
  info.payload = payload;
  return info;
}
}  // namespace

TypeId TypeStore::list(TypeId element) {
  return intern(with_payload(TypeKind::List, element.index), {});
}
TypeId TypeStore::dtype(TypeId scalar_type) {
  return intern(with_payload(TypeKind::Dtype, scalar_type.index), {});
}
TypeId TypeStore::module(uint32_t module_id) {
  return intern(with_payload(TypeKind::Module, module_id), {});
}
TypeId TypeStore::builtin(uint32_t builtin_id) {
  return intern(with_payload(TypeKind::Builtin, builtin_id), {});
}
TypeId TypeStore::function(uint32_t node_index) {
  return intern(with_payload(TypeKind::Function, node_index), {});
}
TypeId TypeStore::object(IdentifierId class_name) {
  return intern(with_payload(TypeKind::Object, class_name.index), {});
}

TypeId TypeStore::transform(const TransformInfo& transform) {
  TypeInfo info = with_payload(TypeKind::Transform, transform.function);
  std::vector<uint32_t> extra{static_cast<uint32_t>(transform.kind),
                             (transform.tuple ? 1u : 0u) | (transform.has_aux ? 2u : 0u) |
                                 static_cast<uint32_t>(transform.inner_argnums.size()) << 8,
                             transform.instance};
  extra.insert(extra.end(), transform.argnums.begin(), transform.argnums.end());
  extra.insert(extra.end(), transform.inner_argnums.begin(), transform.inner_argnums.end());
  return intern(info, extra);
}

TransformInfo TypeStore::transform_info(TypeId id) const {
  const TypeInfo& t = info(id);
  internal_check(t.kind == TypeKind::Transform, "sema", "transform_info of another type");
  TransformInfo out;
  out.function = t.payload;
  out.kind = static_cast<TransformKind>(extra_[t.extra_begin]);
  out.tuple = (extra_[t.extra_begin + 1] & 1u) != 0;
  out.has_aux = (extra_[t.extra_begin + 1] & 2u) != 0;
  out.instance = extra_[t.extra_begin + 2];
  uint32_t inner = extra_[t.extra_begin + 1] >> 8;
  auto end = extra_.begin() + t.extra_begin + t.extra_count;
  out.argnums.assign(extra_.begin() + t.extra_begin + 3, end - inner);
  out.inner_argnums.assign(end - inner, end);
  return out;
}

TypeId TypeStore::with_mut(TypeId tensor_type, bool mut) {
  TypeInfo t = info(tensor_type);
  internal_check(t.kind == TypeKind::Tensor, "sema", "with_mut on a non-tensor type");
  std::vector<DimId> d(dims(tensor_type).begin(), dims(tensor_type).end());
  return with_sharding(tensor(t.scalar, t.policy, d, t.space, mut, t.seed_style), t.payload);
}

std::string_view partial_op_name(PartialOp op) {
  switch (op) {
    case PartialOp::Sum: return "sum";
    case PartialOp::Max: return "max";
    case PartialOp::Min: return "min";
    case PartialOp::Avg: return "avg";
    case PartialOp::Prod: return "prod";
  }
  return "sum";
}

TypeId TypeStore::mesh(const MeshInfo& m) {
  auto it = std::find(meshes_.begin(), meshes_.end(), m);
  auto index = static_cast<uint32_t>(it - meshes_.begin());
  if (it == meshes_.end()) meshes_.push_back(m);
  return intern(with_payload(TypeKind::Mesh, index), {});
}

TypeId TypeStore::layout(const LayoutInfo& l) {
  auto it = std::find(layouts_.begin(), layouts_.end(), l);
  auto index = static_cast<uint32_t>(it - layouts_.begin());
  if (it == layouts_.end()) layouts_.push_back(l);
  return intern(with_payload(TypeKind::Layout, index), {});
}

uint32_t TypeStore::intern_sharding(const ShardingInfo& s) {
  auto it = std::find(shardings_.begin(), shardings_.end(), s);
  if (it == shardings_.end()) {
    shardings_.push_back(s);
    return static_cast<uint32_t>(shardings_.size());
  }
  return static_cast<uint32_t>(it - shardings_.begin()) + 1;
}

const ShardingInfo* TypeStore::sharding(TypeId tensor_type) const {
  const TypeInfo& t = types_[tensor_type.index];
  if (t.kind != TypeKind::Tensor || t.payload == 0) return nullptr;
  return &shardings_[t.payload - 1];
}

TypeId TypeStore::with_sharding(TypeId tensor_type, uint32_t sharding_id) {
  TypeInfo t = info(tensor_type);
  if (t.kind != TypeKind::Tensor || t.payload == sharding_id) return tensor_type;
  std::vector<uint32_t> extra(extra_.begin() + t.extra_begin, extra_.begin() + t.extra_begin + t.extra_count);
  t.payload = sharding_id;
  return intern(t, extra);
}

std::string TypeStore::mesh_to_string(uint32_t index) const {
  const MeshInfo& m = meshes_[index];
  std::string out = "mesh(";
  for (size_t a = 0; a < m.axes.size(); ++a) out += fmt::format("{}{}={}", a ? ", " : "", m.axes[a], m.shape[a]);
  return out + ")";
}

std::string TypeStore::sharding_to_string(uint32_t id) const {
  const ShardingInfo& s = shardings_[id - 1];
  const MeshInfo& m = meshes_[s.mesh];
  if (s.unknown) return "sharded(unknown) on " + mesh_to_string(s.mesh);
  std::string out = "sharded[";
  for (size_t d = 0; d < s.dim_axes.size(); ++d)
    out += (d ? ", " : "") + (s.dim_axes[d] < 0 ? std::string("_") : m.axes[static_cast<size_t>(s.dim_axes[d])]);
  out += "]";
  if (s.partial_axes) {
    out += fmt::format(" partial {}(", partial_op_name(s.partial_op));
    bool first = true;
    for (size_t a = 0; a < m.axes.size(); ++a)
      if (s.partial_axes & (1u << a)) {
        out += (first ? "" : ", ") + m.axes[a];
        first = false;
      }
    out += ")";
  }
  if (s.varying_axes) {
    out += " varying(";
    bool first = true;
    for (size_t a = 0; a < m.axes.size(); ++a)
      if (s.varying_axes & (1u << a)) {
        out += (first ? "" : ", ") + m.axes[a];
        first = false;
      }
    out += ")";
  }
  return out + " on " + mesh_to_string(s.mesh);
}

TypeId TypeStore::element_type(TypeId tensor_type) {
  const TypeInfo& t = info(tensor_type);
  internal_check(t.kind == TypeKind::Tensor, "sema", "element_type of a non-tensor type");
  return scalar(t.scalar, t.policy);
}

std::span<const DimId> TypeStore::dims(TypeId tensor_type) const {
  const TypeInfo& t = info(tensor_type);
  return std::span<const DimId>(reinterpret_cast<const DimId*>(extra_.data() + t.extra_begin), t.extra_count);
}

std::span<const TypeId> TypeStore::tuple_elements(TypeId tuple_type) const {
  const TypeInfo& t = info(tuple_type);
  return std::span<const TypeId>(reinterpret_cast<const TypeId*>(extra_.data() + t.extra_begin), t.extra_count);
}

bool TypeStore::is_numeric_scalar(TypeId id) const {
  TypeKind k = kind(id);
  return k == TypeKind::Scalar || k == TypeKind::UntypedInt || k == TypeKind::UntypedFloat;
}

DimId TypeStore::intern_dim(const Dim& d) {
  Hasher h;
  h.add(static_cast<uint64_t>(d.kind) | static_cast<uint64_t>(d.symbol.index) << 32);
  h.add(static_cast<uint64_t>(d.value));
  h.add(static_cast<uint64_t>(d.lhs.index) | static_cast<uint64_t>(d.rhs.index) << 32);
  h.add(d.dynamic_id);
  auto [first, last] = dim_ids_.equal_range(h.value);
  for (auto it = first; it != last; ++it) {
    const Dim& c = dims_[it->second.index];
    if (c.kind == d.kind && c.value == d.value && c.symbol == d.symbol && c.lhs == d.lhs && c.rhs == d.rhs &&
        c.dynamic_id == d.dynamic_id) {
      return it->second;
    }
  }
  DimId id{static_cast<uint32_t>(dims_.size())};
  dims_.push_back(d);
  dim_ids_.emplace(h.value, id);
  return id;
}

DimId TypeStore::constant_dim(int64_t value) {
  Dim d;
  d.kind = DimKind::Constant;
  d.value = value;
  return intern_dim(d);
}

DimId TypeStore::symbol_dim(IdentifierId symbol) {
  Dim d;
  d.kind = DimKind::Symbol;
  d.symbol = symbol;
  return intern_dim(d);
}

DimId TypeStore::dynamic_dim() {
  Dim d;
  d.kind = DimKind::Dynamic;
  d.dynamic_id = next_dynamic_++;
  dims_.push_back(d);
  return DimId{static_cast<uint32_t>(dims_.size() - 1)};
}

DimId TypeStore::binary_dim(DimKind kind, DimId lhs, DimId rhs) {
  auto a = constant_value(lhs);
  auto b = constant_value(rhs);
  if (a && b) {
    switch (kind) {
      case DimKind::Add:
        return constant_dim(*a + *b);
      case DimKind::Sub:
        return constant_dim(*a - *b);
      case DimKind::Mul:
        return constant_dim(*a * *b);
      case DimKind::Div:
      case DimKind::FloorDiv:
        if (*b != 0 && *a % *b == 0) return constant_dim(*a / *b);
        break;
      case DimKind::Mod:
        if (*b != 0) return constant_dim(*a % *b);
        break;
      default:
        break;
    }
  }
  Dim d;
  d.kind = kind;
  d.lhs = lhs;
  d.rhs = rhs;
  return intern_dim(d);
}

std::optional<int64_t> TypeStore::constant_value(DimId id) const {
  const Dim& d = dims_[id.index];
  if (d.kind == DimKind::Constant) return d.value;
  return std::nullopt;
}

PolicyId TypeStore::intern_policy(const Policy& p) {
  std::string key;
  if (p.accum || p.stochastic_round || p.saturate || p.rounding != RoundingMode::NearestEven || p.loss_scale != 0.0 ||
      p.custom.valid()) {
    put(key, p.accum.has_value());
    put(key, p.accum.value_or(ScalarType::F32));
    put(key, p.stochastic_round);
    put(key, p.seed);
    put(key, p.seed_name.index);
    put(key, p.saturate);
    put(key, p.rounding);
    put(key, p.loss_scale);
    put(key, p.custom.index);
  }
  auto [it, inserted] = policy_ids_.emplace(key, PolicyId{static_cast<uint32_t>(policies_.size())});
  if (inserted) policies_.push_back(p);
  return it->second;
}

std::string TypeStore::dim_to_string(DimId id) const {
  const Dim& d = dims_[id.index];
  auto binary = [&](const char* op) { return fmt::format("({}{}{})", dim_to_string(d.lhs), op, dim_to_string(d.rhs)); };
  switch (d.kind) {
    case DimKind::Constant:
      return std::to_string(d.value);
    case DimKind::Symbol:
      return std::string(identifiers_.name(d.symbol));
    case DimKind::Dynamic:
      return "?";
    case DimKind::Add:
      return binary("+");
    case DimKind::Sub:
      return binary("-");
    case DimKind::Mul:
      return binary("*");
    case DimKind::Div:
      return binary("/");
    case DimKind::FloorDiv:
      return binary("//");
    case DimKind::Mod:
      return binary("%");
  }
  return "?";
}

std::string TypeStore::policy_to_string(PolicyId id) const {
  const Policy& p = policies_[id.index];
  std::string out;
  if (p.custom.valid()) out += fmt::format(" @{}", identifiers_.name(p.custom));
  if (p.accum) out += fmt::format(" @accum({})", scalar_info(*p.accum).name);
  if (p.stochastic_round) {
    out += " @stochastic_round";
    if (p.seed_name.valid()) out += fmt::format("({})", identifiers_.name(p.seed_name));
    else if (p.seed != 0) out += fmt::format("({})", p.seed);
  }
  if (p.saturate) out += " @saturate";
  if (p.rounding != RoundingMode::NearestEven) out += fmt::format(" @rounding(\"{}\")", rounding_mode_name(p.rounding));
  if (p.loss_scale != 0.0) out += fmt::format(" @loss_scale({})", p.loss_scale);
  return out;
}

std::string TypeStore::to_string(TypeId id) const {
  const TypeInfo& t = info(id);
  switch (t.kind) {
    case TypeKind::Error:
      return "<error>";
    case TypeKind::None:
      return "None";
    case TypeKind::Scalar:
      return std::string(scalar_info(t.scalar).name) + policy_to_string(t.policy);
    case TypeKind::UntypedInt:
      return "int literal";
    case TypeKind::UntypedFloat:
      return "float literal";
    case TypeKind::String:
      return "str";
    case TypeKind::Tensor: {
      std::string out;
      // Shared and local buffers are always writable: no `mut` for them.
      if (t.mut && t.space == AddressSpace::Global) out += "mut ";
      if (t.space == AddressSpace::Shared) out += "shared ";
      if (t.space == AddressSpace::Local) out += "local ";
      if (t.space == AddressSpace::Register) out += "register ";
      out += scalar_info(t.scalar).name;
      out += "[";
      auto d = dims(id);
      for (size_t i = 0; i < d.size(); ++i) {
        if (i > 0) out += ", ";
        out += dim_to_string(d[i]);
      }
      out += "]";
      out += policy_to_string(t.policy);
      if (t.payload) out += " " + sharding_to_string(t.payload);
      return out;
    }
    case TypeKind::Tuple: {
      std::string out = "(";
      auto e = tuple_elements(id);
      for (size_t i = 0; i < e.size(); ++i) {
        if (i > 0) out += ", ";
        out += to_string(e[i]);
      }
      if (e.size() == 1) out += ",";
      return out + ")";
    }
    case TypeKind::List:
      return "list[" + to_string(TypeId{t.payload}) + "]";
    case TypeKind::Dtype:
      return "dtype " + to_string(TypeId{t.payload});
    case TypeKind::Module:
      return "module";
    case TypeKind::Builtin:
      return "builtin function";
    case TypeKind::Function:
      return "function";
    case TypeKind::Range:
      return "range";
    case TypeKind::Object:
      return std::string(identifiers_.name(IdentifierId{t.payload}));
    case TypeKind::Mesh:
      return mesh_to_string(t.payload);
    case TypeKind::Layout:
      return "ShardSpec";
    case TypeKind::Dynamic:
      return "dynamic";
    case TypeKind::Transform:
      switch (transform_info(id).kind) {
        case TransformKind::Grad: return "gradient function";
        case TransformKind::ValueAndGrad: return "value-and-gradient function";
        case TransformKind::Vjp: return "vjp function";
      }
      return "";
  }
  return "?";
}

}  // namespace tessera::sema
