// Types of the Tessera IR.
//
// A `Type` is a handle to an immutable description interned in a `Context`:
// structurally equal types are the same handle, so equality is pointer
// equality and a type is one word to pass around. The kinds:
//
//   index                      machine-sized integer for ids, sizes, offsets
//   bool, i8..i64, u8..u64,    scalars (the Tessera dtypes of sema)
//   f16, bf16, f32, f64, fp8_e4m3, fp8_e5m2, fp6_e2m3, fp6_e3m2, fp4_e2m1
//   tensor<4x?xf32>            a whole tensor as a value (Graph IR)
//   memref<?x128xf32, global>  a view of memory: shape, element, address space
//                              and, for shared buffers, the physical layout
//                              (`pad N` extra elements per row, `swizzle xor`)
//   vector<4xf32>              a short vector held by one lane (vector loads)
//   tile<128x128xf32>          a tile distributed over the lanes of a group
//                              (an mma accumulator); `, mma_a` etc. name a layout
//   token                      an async-copy group in flight
//   (f32, index) -> (f32)      function signatures
//   opaque<"mesh">             a host-level object (meshes, shard specs)
//
// `?` is a dimension known only at run time (kDynamic).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "support/scalar_type.h"

namespace tessera::ir {


class Context;

inline constexpr int64_t kDynamic = INT64_MIN;

enum class TypeKind : uint8_t { Index, Scalar, Tensor, MemRef, Vector, Tile, Token, Function, Opaque };

enum class MemorySpace : uint8_t { Global, Shared, Local, Constant };
std::string_view memory_space_name(MemorySpace space);

enum class Swizzle : uint8_t { None, Xor };

// How a tile's elements are spread over lanes; `Generic` is a layout chosen by
// code generation.
enum class TileLayout : uint8_t { Generic, MmaA, MmaB, MmaAccumulator };
std::string_view tile_layout_name(TileLayout layout);

struct TypeStorage {
  TypeKind kind = TypeKind::Index;
  ScalarType scalar = ScalarType::F32;  // Scalar, and the element of shaped types
  MemorySpace space = MemorySpace::Global;
  Swizzle swizzle = Swizzle::None;
  TileLayout layout = TileLayout::Generic;
  int64_t padding = 0;                // MemRef: extra elements after each innermost row
  std::vector<int64_t> shape;         // shaped types
  std::vector<const TypeStorage*> inputs, results;  // Function
  std::string name;                   // Opaque
  std::string key;                    // the printed form; the interning key
};

class Type {
 public:
  Type() = default;
  explicit Type(const TypeStorage* storage) : storage_(storage) {}

  explicit operator bool() const { return storage_ != nullptr; }
  friend bool operator==(Type, Type) = default;

  TypeKind kind() const { return storage_->kind; }
  bool is_index() const { return storage_ && kind() == TypeKind::Index; }
  bool is_scalar() const { return storage_ && kind() == TypeKind::Scalar; }
  bool is_int() const;    // signed or unsigned integer scalar
  bool is_float() const;  // float scalar
  bool is_bool() const;
  bool is_integer_like() const { return is_index() || is_int() || is_bool(); }
  bool is_shaped() const;  // tensor, memref, vector, tile
  bool is(TypeKind k) const { return storage_ && kind() == k; }

  ScalarType scalar() const { return storage_->scalar; }  // scalar or element type
  unsigned bit_width() const;                              // scalars; index is 64
  std::span<const int64_t> shape() const { return storage_->shape; }
  size_t rank() const { return storage_->shape.size(); }
  MemorySpace space() const { return storage_->space; }
  Swizzle swizzle() const { return storage_->swizzle; }
  int64_t padding() const { return storage_->padding; }
  TileLayout layout() const { return storage_->layout; }
  std::string_view opaque_name() const { return storage_->name; }
  size_t num_inputs() const { return storage_->inputs.size(); }
  size_t num_results() const { return storage_->results.size(); }
  Type input(size_t i) const { return Type(storage_->inputs[i]); }
  Type result(size_t i) const { return Type(storage_->results[i]); }
  bool has_static_shape() const;
  int64_t num_elements() const;  // kDynamic when a dimension is

  // The printed form (also the interning key).
  std::string_view str() const { return storage_->key; }
  const TypeStorage* storage() const { return storage_; }

 private:
  const TypeStorage* storage_ = nullptr;
};

inline bool operator<(Type a, Type b) { return a.str() < b.str(); }

}  // namespace tessera::ir
