// NumPy .npy files (format versions 1.0 to 3.0): the tensors `tesserac run`,
// programs (ts.load / ts.save) and sema (a program's ts.load is typed from the
// file's header) read and write. Little-endian, C order; the dtypes Tessera
// shares with NumPy (bool, int8..int64, uint8..uint64, float16, float32,
// float64). Pure C++, no dependency: the runtime compiles it too.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tessera::npy {

struct Array {
  std::string descr;           // NumPy's type string: "<f4", "|b1", "<i8", ...
  std::vector<int64_t> shape;  // () for a scalar array
  std::vector<char> data;      // row-major, little-endian

  int64_t element_count() const;
  size_t element_bytes() const;  // from descr
};

// The Tessera dtype name ("f32") of a NumPy descr ("<f4"), or empty.
std::string tessera_dtype_of(const std::string& descr);
// The NumPy descr of a Tessera dtype name, or empty when NumPy has none.
std::string descr_of(const std::string& tessera_dtype);

// The header of a .npy file: its descr and shape, read without the data.
struct Header {
  std::string descr;
  std::vector<int64_t> shape;
};
std::optional<Header> read_header(const std::string& path, std::string& error);

// Reads a .npy file; nullopt with `error` (what is wrong, in words) on failure.
std::optional<Array> read(const std::string& path, std::string& error);
std::optional<Array> parse(const std::string& bytes, std::string& error);
// The bytes of a version 1.0 .npy file holding `array`.
std::string serialize(const Array& array);

}  // namespace tessera::npy
