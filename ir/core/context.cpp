#include "ir/core/context.h"

#include <fmt/format.h>

#include <cmath>

#include "support/diagnostics/internal_error.h"

namespace tessera::ir {

std::string_view memory_space_name(MemorySpace space) {
  switch (space) {
    case MemorySpace::Global: return "global";
    case MemorySpace::Shared: return "shared";
    case MemorySpace::Local: return "local";
    case MemorySpace::Constant: return "constant";
  }
  return "?";
}

std::string_view tile_layout_name(TileLayout layout) {
  switch (layout) {
    case TileLayout::Generic: return "generic";
    case TileLayout::MmaA: return "mma_a";
    case TileLayout::MmaB: return "mma_b";
    case TileLayout::MmaAccumulator: return "mma_acc";
  }
  return "?";
}

bool Type::is_int() const {
  if (!is_scalar()) return false;
  auto c = scalar_info(scalar()).category;
  return c == ScalarCategory::SignedInt || c == ScalarCategory::UnsignedInt;
}
bool Type::is_float() const { return is_scalar() && tessera::is_float(scalar()); }
bool Type::is_bool() const { return is_scalar() && scalar() == ScalarType::Bool; }
bool Type::is_shaped() const {
  if (!storage_) return false;
  switch (kind()) {
    case TypeKind::Tensor:
    case TypeKind::MemRef:
    case TypeKind::Vector:
    case TypeKind::Tile: return true;
    case TypeKind::Index:
    case TypeKind::Scalar:
    case TypeKind::Token:
    case TypeKind::Function:
    case TypeKind::Opaque: return false;
  }
  return false;
}
unsigned Type::bit_width() const { return is_index() ? 64 : scalar_info(scalar()).bits; }
bool Type::has_static_shape() const {
  for (int64_t d : shape())
    if (d == kDynamic) return false;
  return true;
}
int64_t Type::num_elements() const {
  int64_t n = 1;
  for (int64_t d : shape()) {
    if (d == kDynamic) return kDynamic;
    n *= d;
  }
  return n;
}

std::vector<int64_t> Attribute::int_array() const {
  std::vector<int64_t> values;
  for (size_t i = 0; i < size(); ++i) values.push_back((*this)[i].int_value());
  return values;
}

Location Location::primary() const { return kind() == LocationKind::Fused ? part(0) : *this; }

namespace {

std::string shape_prefix(std::span<const int64_t> shape) {
  std::string s;
  for (int64_t d : shape) {
    if (d == kDynamic)
      s += '?';
    else
      s += std::to_string(d);
    s += 'x';
  }
  return s;
}

std::string quoted(std::string_view text) {
  std::string s = "\"";
  for (unsigned char c : text) {
    if (c == '"' || c == '\\') {
      s += '\\';
      s += static_cast<char>(c);
    } else if (c < 0x20 || c >= 0x7f) {
      s += fmt::format("\\{:02X}", c);
    } else {
      s += static_cast<char>(c);
    }
  }
  return s + "\"";
}

std::string float_text(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value < 0 ? "-inf" : "inf";
  std::string s = fmt::format("{}", value);
  if (s.find_first_of(".en") == std::string::npos) s += ".0";
  return s;
}

}  // namespace

Context::Context() = default;
Context::~Context() = default;

Type Context::intern(TypeStorage storage) {
  auto it = types_.find(storage.key);
  if (it != types_.end()) return Type(it->second.get());
  std::string key = storage.key;
  auto owned = std::make_unique<TypeStorage>(std::move(storage));
  Type t(owned.get());
  types_.emplace(std::move(key), std::move(owned));
  return t;
}

Type Context::index_type() {
  TypeStorage s;
  s.kind = TypeKind::Index;
  s.key = "index";
  return intern(std::move(s));
}

Type Context::scalar_type(ScalarType scalar) {
  TypeStorage s;
  s.kind = TypeKind::Scalar;
  s.scalar = scalar;
  s.key = std::string(scalar_info(scalar).name);
  return intern(std::move(s));
}

Type Context::tensor_type(std::span<const int64_t> shape, ScalarType element) {
  TypeStorage s;
  s.kind = TypeKind::Tensor;
  s.scalar = element;
  s.shape.assign(shape.begin(), shape.end());
  s.key = fmt::format("tensor<{}{}>", shape_prefix(shape), scalar_info(element).name);
  return intern(std::move(s));
}

Type Context::memref_type(std::span<const int64_t> shape, ScalarType element, MemorySpace space, int64_t padding,
                          Swizzle swizzle) {
  TypeStorage s;
  s.kind = TypeKind::MemRef;
  s.scalar = element;
  s.space = space;
  s.padding = padding;
  s.swizzle = swizzle;
  s.shape.assign(shape.begin(), shape.end());
  s.key = fmt::format("memref<{}{}, {}", shape_prefix(shape), scalar_info(element).name,
                      memory_space_name(space));
  if (padding != 0) s.key += fmt::format(", pad {}", padding);
  if (swizzle == Swizzle::Xor) s.key += ", swizzle xor";
  s.key += '>';
  return intern(std::move(s));
}

Type Context::vector_type(int64_t width, ScalarType element) {
  TypeStorage s;
  s.kind = TypeKind::Vector;
  s.scalar = element;
  s.shape = {width};
  s.key = fmt::format("vector<{}x{}>", width, scalar_info(element).name);
  return intern(std::move(s));
}

Type Context::tile_type(std::span<const int64_t> shape, ScalarType element, TileLayout layout) {
  TypeStorage s;
  s.kind = TypeKind::Tile;
  s.scalar = element;
  s.layout = layout;
  s.shape.assign(shape.begin(), shape.end());
  s.key = fmt::format("tile<{}{}", shape_prefix(shape), scalar_info(element).name);
  if (layout != TileLayout::Generic) s.key += fmt::format(", {}", tile_layout_name(layout));
  s.key += '>';
  return intern(std::move(s));
}

Type Context::token_type() {
  TypeStorage s;
  s.kind = TypeKind::Token;
  s.key = "token";
  return intern(std::move(s));
}

Type Context::function_type(std::span<const Type> inputs, std::span<const Type> results) {
  TypeStorage s;
  s.kind = TypeKind::Function;
  s.key = "(";
  for (size_t i = 0; i < inputs.size(); ++i) {
    s.inputs.push_back(inputs[i].storage());
    s.key += (i ? ", " : "") + std::string(inputs[i].str());
  }
  s.key += ") -> (";
  for (size_t i = 0; i < results.size(); ++i) {
    s.results.push_back(results[i].storage());
    s.key += (i ? ", " : "") + std::string(results[i].str());
  }
  s.key += ")";
  return intern(std::move(s));
}

Type Context::opaque_type(std::string_view name) {
  TypeStorage s;
  s.kind = TypeKind::Opaque;
  s.name = std::string(name);
  s.key = "opaque<" + quoted(name) + ">";
  return intern(std::move(s));
}

Attribute Context::intern(AttributeStorage storage) {
  auto it = attributes_.find(storage.key);
  if (it != attributes_.end()) return Attribute(it->second.get());
  std::string key = storage.key;
  auto owned = std::make_unique<AttributeStorage>(std::move(storage));
  Attribute a(owned.get());
  attributes_.emplace(std::move(key), std::move(owned));
  return a;
}

Attribute Context::unit_attr() {
  AttributeStorage s;
  s.kind = AttributeKind::Unit;
  s.key = "unit";
  return intern(std::move(s));
}

Attribute Context::bool_attr(bool value) {
  AttributeStorage s;
  s.kind = AttributeKind::Bool;
  s.bool_value = value;
  s.key = value ? "true" : "false";
  return intern(std::move(s));
}

Attribute Context::int_attr(int64_t value, Type type) {
  if (!type) type = i64_type();
  internal_check(type.is_integer_like(), "ir", "integer attribute of a non-integer type");
  AttributeStorage s;
  s.kind = AttributeKind::Integer;
  s.int_value = value;
  s.type = type;
  s.key = type == i64_type() ? std::to_string(value) : fmt::format("{} : {}", value, type.str());
  return intern(std::move(s));
}

Attribute Context::float_attr(double value, Type type) {
  if (!type) type = scalar_type(ScalarType::F64);
  internal_check(type.is_float(), "ir", "float attribute of a non-float type");
  AttributeStorage s;
  s.kind = AttributeKind::Float;
  s.float_value = value;
  s.type = type;
  s.key = type == scalar_type(ScalarType::F64) ? float_text(value) : fmt::format("{} : {}", float_text(value), type.str());
  // -0.0 and 0.0 print differently but NaNs all print "nan": one NaN value.
  if (std::isnan(value)) s.float_value = std::nan("");
  return intern(std::move(s));
}

Attribute Context::string_attr(std::string_view value) {
  AttributeStorage s;
  s.kind = AttributeKind::String;
  s.string_value = std::string(value);
  s.key = quoted(value);
  return intern(std::move(s));
}

Attribute Context::type_attr(Type type) {
  AttributeStorage s;
  s.kind = AttributeKind::Type;
  s.type = type;
  s.key = std::string(type.str());
  return intern(std::move(s));
}

Attribute Context::symbol_attr(std::string_view name) {
  AttributeStorage s;
  s.kind = AttributeKind::Symbol;
  s.string_value = std::string(name);
  s.key = "@" + std::string(name);
  return intern(std::move(s));
}

Attribute Context::array_attr(std::span<const Attribute> elements) {
  AttributeStorage s;
  s.kind = AttributeKind::Array;
  s.key = "[";
  for (size_t i = 0; i < elements.size(); ++i) {
    s.elements.push_back(elements[i].storage());
    // A size or bound known only at run time (kDynamic, an i64 element of
    // an array: graph.slice's starts/limits/sizes) prints as `?`, as in
    // tensor types; the parser reads it back.
    bool dynamic = elements[i].is(AttributeKind::Integer) && elements[i].int_value() == kDynamic &&
                   elements[i].type() == i64_type();
    s.key += (i ? ", " : "") + (dynamic ? std::string("?") : std::string(elements[i].str()));
  }
  s.key += "]";
  return intern(std::move(s));
}

Attribute Context::int_array_attr(std::span<const int64_t> values) {
  std::vector<Attribute> elements;
  for (int64_t v : values) elements.push_back(int_attr(v));
  return array_attr(elements);
}

Location Context::intern(LocationStorage storage) {
  auto it = locations_.find(storage.key);
  if (it != locations_.end()) return Location(it->second.get());
  std::string key = storage.key;
  auto owned = std::make_unique<LocationStorage>(std::move(storage));
  Location l(owned.get());
  locations_.emplace(std::move(key), std::move(owned));
  return l;
}

Location Context::file_location(std::string_view file, uint32_t line, uint32_t column) {
  LocationStorage s;
  s.kind = LocationKind::FileLineColumn;
  s.file = std::string(file);
  s.line = line;
  s.column = column;
  s.key = fmt::format("{}:{}:{}", quoted(file), line, column);
  return intern(std::move(s));
}

Location Context::fused_location(std::span<const Location> parts) {
  std::vector<Location> flat;
  auto add = [&](Location l) {
    if (!l.known()) return;
    for (Location seen : flat)
      if (seen == l) return;
    flat.push_back(l);
  };
  for (Location l : parts) {
    if (l.kind() == LocationKind::Fused) {
      for (size_t i = 0; i < l.num_parts(); ++i) add(l.part(i));
    } else {
      add(l);
    }
  }
  if (flat.empty()) return unknown_location();
  if (flat.size() == 1) return flat[0];
  LocationStorage s;
  s.kind = LocationKind::Fused;
  s.key = "fused[";
  for (size_t i = 0; i < flat.size(); ++i) {
    s.parts.push_back(flat[i].storage());
    s.key += (i ? ", " : "") + std::string(flat[i].str());
  }
  s.key += "]";
  return intern(std::move(s));
}

}  // namespace tessera::ir
