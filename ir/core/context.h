// The IR context: owns every interned type, attribute and location.
//
// A context outlives every module built in it. It is not thread-safe; each
// compilation has its own.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>

#include "ir/core/attributes.h"
#include "ir/core/types.h"

namespace tessera::ir {

class Context {
 public:
  Context();
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;
  ~Context();

  // --- types -------------------------------------------------------------------
  Type index_type();
  Type scalar_type(ScalarType scalar);
  Type bool_type() { return scalar_type(ScalarType::Bool); }
  Type f32_type() { return scalar_type(ScalarType::F32); }
  Type i32_type() { return scalar_type(ScalarType::I32); }
  Type i64_type() { return scalar_type(ScalarType::I64); }
  Type tensor_type(std::span<const int64_t> shape, ScalarType element);
  Type memref_type(std::span<const int64_t> shape, ScalarType element, MemorySpace space, int64_t padding = 0,
                   Swizzle swizzle = Swizzle::None);
  Type vector_type(int64_t width, ScalarType element);
  Type tile_type(std::span<const int64_t> shape, ScalarType element, TileLayout layout = TileLayout::Generic);
  Type token_type();
  Type function_type(std::span<const Type> inputs, std::span<const Type> results);
  Type opaque_type(std::string_view name);

  // --- attributes --------------------------------------------------------------
  Attribute unit_attr();
  Attribute bool_attr(bool value);
  Attribute int_attr(int64_t value, Type type = {});  // default type: i64
  Attribute index_attr(int64_t value) { return int_attr(value, index_type()); }
  Attribute float_attr(double value, Type type = {});  // default type: f64
  Attribute string_attr(std::string_view value);
  Attribute type_attr(Type type);
  Attribute symbol_attr(std::string_view name);
  Attribute array_attr(std::span<const Attribute> elements);
  Attribute int_array_attr(std::span<const int64_t> values);

  // --- locations ---------------------------------------------------------------
  Location unknown_location() { return Location(); }
  Location file_location(std::string_view file, uint32_t line, uint32_t column);
  // Merges locations (operations fused into one); unknown parts are dropped and
  // a single remaining location is returned as itself.
  Location fused_location(std::span<const Location> parts);

 private:
  Type intern(TypeStorage storage);
  Attribute intern(AttributeStorage storage);
  Location intern(LocationStorage storage);

  std::unordered_map<std::string, std::unique_ptr<TypeStorage>> types_;
  std::unordered_map<std::string, std::unique_ptr<AttributeStorage>> attributes_;
  std::unordered_map<std::string, std::unique_ptr<LocationStorage>> locations_;
};

}  // namespace tessera::ir
