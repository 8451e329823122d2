// Attributes and locations of the Tessera IR.
//
// An `Attribute` is a compile-time constant attached to an operation by name:
// an integer or float with its type, a bool, a string, a type, a symbol
// reference (`@callee`), an array, or `unit` (a flag: present or not). Like
// types they are interned in the `Context`, so two equal attributes are the
// same handle (CSE compares operations by comparing attribute handles).
//
// A `Location` says which source text an operation came from: a file, line
// and column; `fused[...]` when operations from several places were merged;
// or unknown. Every operation has one.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ir/core/types.h"

namespace tessera::ir {

enum class AttributeKind : uint8_t { Unit, Bool, Integer, Float, String, Type, Symbol, Array };

struct AttributeStorage {
  AttributeKind kind = AttributeKind::Unit;
  bool bool_value = false;
  int64_t int_value = 0;
  double float_value = 0.0;
  std::string string_value;  // String; Symbol: the name without '@'
  Type type;                 // Integer, Float: the value's type; Type: the type
  std::vector<const AttributeStorage*> elements;
  std::string key;  // the printed form; the interning key
};

class Attribute {
 public:
  Attribute() = default;
  explicit Attribute(const AttributeStorage* storage) : storage_(storage) {}

  explicit operator bool() const { return storage_ != nullptr; }
  friend bool operator==(Attribute, Attribute) = default;

  AttributeKind kind() const { return storage_->kind; }
  bool is(AttributeKind k) const { return storage_ && storage_->kind == k; }
  bool bool_value() const { return storage_->bool_value; }
  int64_t int_value() const { return storage_->int_value; }
  double float_value() const { return storage_->float_value; }
  std::string_view string_value() const { return storage_->string_value; }  // String and Symbol
  Type type() const { return storage_->type; }
  size_t size() const { return storage_->elements.size(); }
  Attribute operator[](size_t i) const { return Attribute(storage_->elements[i]); }
  // Integer elements of an array attribute.
  std::vector<int64_t> int_array() const;

  std::string_view str() const { return storage_->key; }
  const AttributeStorage* storage() const { return storage_; }

 private:
  const AttributeStorage* storage_ = nullptr;
};

struct NamedAttribute {
  std::string name;
  Attribute value;
  friend bool operator==(const NamedAttribute&, const NamedAttribute&) = default;
};

enum class LocationKind : uint8_t { Unknown, FileLineColumn, Fused };

struct LocationStorage {
  LocationKind kind = LocationKind::Unknown;
  std::string file;
  uint32_t line = 0, column = 0;
  std::vector<const LocationStorage*> parts;  // Fused: distinct, in first-seen order
  std::string key;
};

class Location {
 public:
  Location() = default;
  explicit Location(const LocationStorage* storage) : storage_(storage) {}
  friend bool operator==(Location, Location) = default;

  // A default-constructed location is unknown.
  LocationKind kind() const { return storage_ ? storage_->kind : LocationKind::Unknown; }
  bool known() const { return kind() != LocationKind::Unknown; }
  std::string_view file() const { return storage_->file; }
  uint32_t line() const { return storage_->line; }
  uint32_t column() const { return storage_->column; }
  size_t num_parts() const { return storage_ ? storage_->parts.size() : 0; }
  Location part(size_t i) const { return Location(storage_->parts[i]); }
  // The first file position this location names (the first part of a fused one).
  Location primary() const;
  // `"f.tsr":3:5`, `fused["f.tsr":3:5, "f.tsr":4:1]`, or `unknown`.
  std::string_view str() const { return storage_ ? std::string_view(storage_->key) : std::string_view("unknown"); }
  const LocationStorage* storage() const { return storage_; }

 private:
  const LocationStorage* storage_ = nullptr;
};

}  // namespace tessera::ir
