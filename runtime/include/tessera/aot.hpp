// The C++ side of ahead-of-time compiled kernels (docs/aot.md): what the
// headers that `tesserac model.tsr -c --header model.h` writes are made of.
//
//   #include "model.h"
//   tessera::TensorView<const float, 1> x(x_ptr, {n});
//   tessera::TensorView<float, 1> y(y_ptr, {n});
//   tessStatus s = model::saxpy(device, tessera::Grid(blocks), x, y, 2.0f);
//
// A view is a tessTensor whose element type and rank are part of its C++
// type, so passing an f16 tensor where the kernel wants f32, or a matrix for
// a vector, does not compile. Read-only parameters take `TensorView<const T,
// N>` (a mutable view converts to it); `mut` parameters take
// `TensorView<T, N>`. Shapes are checked when the kernel is launched.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string_view>
#include <type_traits>

#include "tessera/tessera_aot.h"

namespace tessera {

// Element types without a C++ equivalent: their bit patterns (docs/numerics.md).
struct f16 {
  uint16_t bits;
};
struct bf16 {
  uint16_t bits;
};
struct fp8_e4m3 {
  uint8_t bits;
};
struct fp8_e5m2 {
  uint8_t bits;
};
// Packed sub-byte formats: tensors of these are views of packed bytes
// (docs/abi.md); a scalar holds the code in its low bits.
struct fp6_e2m3 {
  uint8_t bits;
};
struct fp6_e3m2 {
  uint8_t bits;
};
struct fp4_e2m1 {
  uint8_t bits;
};

// The tessDtype of a C++ element type.
template <class T>
struct DtypeOf;
#define TESSERA_DTYPE_OF(T, D) \
  template <>                  \
  struct DtypeOf<T> {          \
    static constexpr tessDtype value = D; \
  };
TESSERA_DTYPE_OF(bool, TESS_BOOL)
TESSERA_DTYPE_OF(int8_t, TESS_I8)
TESSERA_DTYPE_OF(int16_t, TESS_I16)
TESSERA_DTYPE_OF(int32_t, TESS_I32)
TESSERA_DTYPE_OF(int64_t, TESS_I64)
TESSERA_DTYPE_OF(uint8_t, TESS_U8)
TESSERA_DTYPE_OF(uint16_t, TESS_U16)
TESSERA_DTYPE_OF(uint32_t, TESS_U32)
TESSERA_DTYPE_OF(uint64_t, TESS_U64)
TESSERA_DTYPE_OF(f16, TESS_F16)
TESSERA_DTYPE_OF(bf16, TESS_BF16)
TESSERA_DTYPE_OF(float, TESS_F32)
TESSERA_DTYPE_OF(double, TESS_F64)
TESSERA_DTYPE_OF(fp8_e4m3, TESS_FP8_E4M3)
TESSERA_DTYPE_OF(fp8_e5m2, TESS_FP8_E5M2)
TESSERA_DTYPE_OF(fp6_e2m3, TESS_FP6_E2M3)
TESSERA_DTYPE_OF(fp6_e3m2, TESS_FP6_E3M2)
TESSERA_DTYPE_OF(fp4_e2m1, TESS_FP4_E2M1)
#undef TESSERA_DTYPE_OF

// A view of a rank-`Rank` tensor of `T` in device memory (on the CPU device,
// ordinary host memory from tessMalloc). Strides are in elements.
template <class T, int Rank>
class TensorView {
  static_assert(Rank >= 0 && Rank <= TESS_MAX_RANK, "a tensor has at most TESS_MAX_RANK dimensions");
  using Element = std::remove_const_t<T>;

 public:
  static constexpr tessDtype dtype = DtypeOf<Element>::value;
  static constexpr int rank = Rank;

  // A contiguous row-major view of `shape` at device address `data`.
  TensorView(tessDevicePtr data, std::initializer_list<int64_t> shape) { make_list(data, shape, {}); }
  // A strided view.
  TensorView(tessDevicePtr data, std::initializer_list<int64_t> shape, std::initializer_list<int64_t> strides) {
    make_list(data, shape, strides);
  }
  // The same from a pointer (a CPU device allocation, or a CUDA device pointer).
  TensorView(T* data, std::initializer_list<int64_t> shape)
      : TensorView(static_cast<tessDevicePtr>(reinterpret_cast<uintptr_t>(data)), shape) {}
  TensorView(T* data, std::initializer_list<int64_t> shape, std::initializer_list<int64_t> strides)
      : TensorView(static_cast<tessDevicePtr>(reinterpret_cast<uintptr_t>(data)), shape, strides) {}
  // Any tessTensor; its dtype and rank are checked at launch.
  explicit TensorView(const tessTensor& tensor) : tensor_(tensor) {}
  // A mutable view is also a read-only view.
  template <class U, class = std::enable_if_t<std::is_const_v<T> && std::is_same_v<U, Element>>>
  TensorView(const TensorView<U, Rank>& other) : tensor_(*other.tensor()) {}

  const tessTensor* tensor() const { return &tensor_; }
  tessDevicePtr data() const { return tensor_.data; }
  int64_t size(int axis) const { return tensor_.shape[axis]; }
  int64_t stride(int axis) const { return tensor_.strides[axis]; }

 private:
  void make(tessDevicePtr data, const int64_t* shape, const int64_t* strides) {
    tensor_ = tessTensor{};
    tensor_.data = data;
    tensor_.dtype = dtype;
    tensor_.rank = Rank;
    int64_t step = 1;
    for (int d = Rank - 1; d >= 0; --d) {
      tensor_.shape[d] = shape[d];
      tensor_.strides[d] = strides ? strides[d] : step;
      step *= shape[d];
    }
  }
  void make_list(tessDevicePtr data, std::initializer_list<int64_t> shape, std::initializer_list<int64_t> strides) {
    int64_t sizes[TESS_MAX_RANK] = {}, steps[TESS_MAX_RANK] = {};
    std::copy_n(shape.begin(), std::min<size_t>(shape.size(), TESS_MAX_RANK), sizes);
    std::copy_n(strides.begin(), std::min<size_t>(strides.size(), TESS_MAX_RANK), steps);
    make(data, sizes, strides.size() ? steps : nullptr);
    // A wrong number of sizes or strides makes the rank wrong, which the
    // launch reports with the kernel's signature.
    if (shape.size() != Rank || (strides.size() && strides.size() != Rank)) {
      tensor_.rank = static_cast<int32_t>(shape.size());
      std::copy_n(sizes, TESS_MAX_RANK, tensor_.shape);
    }
  }

  tessTensor tensor_;
};

// Groups per axis and dynamic shared memory of a launch. The group shape is
// the kernel's declared `tile[...]` shape: its code is compiled for it.
struct Grid {
  Grid(uint32_t x, uint32_t y = 1, uint32_t z = 1, size_t dynamic_shared = 0)
      : groups{x, y, z}, dynamic_shared_bytes(dynamic_shared) {}
  uint32_t groups[3];
  size_t dynamic_shared_bytes;
};

// The point of a variant of an autotuned kernel: its knobs' values by name
// (docs/autotuning.md, "AOT"). A name the kernel does not have is 0.
class Knobs {
 public:
  Knobs(const tessAotKnob* knobs, size_t count) : knobs_(knobs), count_(count) {}
  int64_t operator[](std::string_view name) const {
    for (size_t i = 0; i < count_; ++i)
      if (name == knobs_[i].name) return knobs_[i].value;
    return 0;
  }

 private:
  const tessAotKnob* knobs_;
  size_t count_;
};

// a / b rounded up: the groups that cover `a` items, `b` per group.
inline uint32_t cdiv(int64_t a, int64_t b) { return static_cast<uint32_t>((a + b - 1) / b); }

// Launches an autotuned kernel through the tuner: `grid_of(Knobs)` returns
// the Grid of each variant (its dynamic shared memory is not used: tuned
// launches have none).
template <class GridOf>
tessStatus launch_tuned(const tessAotModule& module, uint32_t kernel_index, tessDevice device, tessStream stream,
                        GridOf& grid_of, const void* const* args) {
  auto thunk = [](void* user, const tessAotKnob* knobs, size_t count, uint32_t out[3]) -> tessStatus {
    Grid g = (*static_cast<GridOf*>(user))(Knobs(knobs, count));
    std::copy_n(g.groups, 3, out);
    return TESS_SUCCESS;
  };
  return tessAotLaunchTuned(&module, kernel_index, device, stream, thunk, &grid_of, 0, args);
}

}  // namespace tessera
