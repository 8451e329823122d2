// .npy reading and writing (npy.h). The format: the magic "\x93NUMPY", a
// version, the header's length, then a Python dict literal padded to a
// multiple of 64 bytes, then the raw data.
#include "support/npy.h"

#include <charconv>
#include <climits>
#include <cstring>
#include <fstream>
#include <sstream>

namespace tessera::npy {
namespace {

struct DtypeName {
  const char* descr;
  const char* tessera;
};
constexpr DtypeName kDtypes[] = {
    {"|b1", "bool"}, {"|i1", "i8"},  {"<i2", "i16"}, {"<i4", "i32"}, {"<i8", "i64"},
    {"|u1", "u8"},   {"<u2", "u16"}, {"<u4", "u32"}, {"<u8", "u64"}, {"<f2", "f16"},
    {"<f4", "f32"},  {"<f8", "f64"},
};

// NumPy writes single-byte types with '|', but '<' and '=' are accepted too.
std::string normalize(std::string descr) {
  if (descr.size() == 3 && descr[2] == '1' && (descr[0] == '<' || descr[0] == '=')) descr[0] = '|';
  if (descr.size() == 3 && descr[0] == '=') descr[0] = '<';  // native is little-endian on our targets
  return descr;
}

void skip_spaces(const std::string& s, size_t& i) {
  while (i < s.size() && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n')) ++i;
}

// Parses the header dict: {'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }
bool parse_header(const std::string& header, Array& array, bool& fortran, std::string& error) {
  bool have_descr = false, have_order = false, have_shape = false;
  size_t i = 0;
  skip_spaces(header, i);
  if (i >= header.size() || header[i++] != '{') return error = "the header is not a dict", false;
  while (true) {
    skip_spaces(header, i);
    if (i < header.size() && header[i] == '}') break;
    if (i >= header.size() || (header[i] != '\'' && header[i] != '"')) return error = "malformed header", false;
    char quote = header[i++];
    size_t end = header.find(quote, i);
    if (end == std::string::npos) return error = "malformed header", false;
    std::string key = header.substr(i, end - i);
    i = end + 1;
    skip_spaces(header, i);
    if (i >= header.size() || header[i++] != ':') return error = "malformed header", false;
    skip_spaces(header, i);
    if (key == "descr") {
      if (i >= header.size() || (header[i] != '\'' && header[i] != '"'))
        return error = "the descr is not a simple type string (structured arrays are not supported)", false;
      char q = header[i++];
      size_t e = header.find(q, i);
      if (e == std::string::npos) return error = "malformed header", false;
      array.descr = normalize(header.substr(i, e - i));
      i = e + 1;
      have_descr = true;
    } else if (key == "fortran_order") {
      if (header.compare(i, 4, "True") == 0) fortran = true, i += 4;
      else if (header.compare(i, 5, "False") == 0) fortran = false, i += 5;
      else return error = "malformed fortran_order", false;
      have_order = true;
    } else if (key == "shape") {
      if (i >= header.size() || header[i++] != '(') return error = "malformed shape", false;
      while (true) {
        skip_spaces(header, i);
        if (i < header.size() && header[i] == ')') {
          ++i;
          break;
        }
        size_t start = i;
        while (i < header.size() && header[i] >= '0' && header[i] <= '9') ++i;
        if (start == i) return error = "malformed shape", false;
        int64_t extent = 0;
        auto [last, ec] = std::from_chars(header.data() + start, header.data() + i, extent);
        if (ec != std::errc() || last != header.data() + i)
          return error = "the shape's extent " + header.substr(start, i - start) + " is too large", false;
        array.shape.push_back(extent);
        skip_spaces(header, i);
        if (i < header.size() && header[i] == ',') ++i;
      }
      have_shape = true;
    } else {
      return error = "unknown header key '" + key + "'", false;
    }
    skip_spaces(header, i);
    if (i < header.size() && header[i] == ',') ++i;
  }
  if (!have_descr || !have_order || !have_shape) return error = "the header lacks descr, fortran_order or shape", false;
  return true;
}

}  // namespace

int64_t Array::element_count() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

size_t Array::element_bytes() const {
  if (descr.size() < 3) return 0;
  return static_cast<size_t>(std::strtoul(descr.c_str() + 2, nullptr, 10));
}

std::string tessera_dtype_of(const std::string& descr) {
  std::string d = normalize(descr);
  for (const auto& entry : kDtypes)
    if (d == entry.descr) return entry.tessera;
  return "";
}

std::string descr_of(const std::string& tessera_dtype) {
  for (const auto& entry : kDtypes)
    if (tessera_dtype == entry.tessera) return entry.descr;
  return "";
}

namespace {

// The header's dict and where the data starts; nullopt with `error` set.
std::optional<Array> parse_prefix(const std::string& bytes, bool complete, size_t& data, std::string& error) {
  if (bytes.size() < 10 || std::memcmp(bytes.data(), "\x93NUMPY", 6) != 0) {
    error = "not a NumPy .npy file (no \\x93NUMPY magic)";
    return std::nullopt;
  }
  const auto major = static_cast<unsigned char>(bytes[6]);
  size_t header_length = 0, offset = 0;
  if (major == 1) {
    header_length = static_cast<unsigned char>(bytes[8]) | static_cast<size_t>(static_cast<unsigned char>(bytes[9])) << 8;
    offset = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) {
      error = "truncated header";
      return std::nullopt;
    }
    for (int b = 3; b >= 0; --b) header_length = header_length << 8 | static_cast<unsigned char>(bytes[8 + b]);
    offset = 12;
  } else {
    error = "unsupported .npy format version " + std::to_string(major);
    return std::nullopt;
  }
  if (bytes.size() < offset + header_length) {
    error = "truncated header";
    return std::nullopt;
  }
  Array array;
  bool fortran = false;
  if (!parse_header(bytes.substr(offset, header_length), array, fortran, error)) return std::nullopt;
  if (fortran && array.shape.size() > 1) {
    error = "Fortran-order arrays are not supported (save with numpy.ascontiguousarray)";
    return std::nullopt;
  }
  if (tessera_dtype_of(array.descr).empty()) {
    error = "unsupported dtype '" + array.descr + "'";
    return std::nullopt;
  }
  // The data's size must be representable: a shape such as
  // (4611686018427387904,) of f32 would wrap around to 0 bytes. As NumPy,
  // the extents other than 0 must multiply to a size that fits.
  uint64_t bytes_total = array.element_bytes();
  bool empty = false;
  for (int64_t extent : array.shape) {
    if (extent == 0) {
      empty = true;
      continue;
    }
    if (bytes_total > static_cast<uint64_t>(INT64_MAX) / static_cast<uint64_t>(extent)) {
      std::string shape;
      for (int64_t e : array.shape) shape += (shape.empty() ? "" : ", ") + std::to_string(e);
      error = "the shape (" + shape + ") of " + std::to_string(array.element_bytes()) +
              "-byte elements is larger than any file can hold (more than 2^63 bytes)";
      return std::nullopt;
    }
    bytes_total *= static_cast<uint64_t>(extent);
  }
  if (empty) bytes_total = 0;
  data = offset + header_length;
  if (!complete) return array;
  const auto expected = static_cast<size_t>(bytes_total);
  if (bytes.size() - data != expected) {
    error = "the data holds " + std::to_string(bytes.size() - data) + " bytes, the header promises " +
            std::to_string(expected);
    return std::nullopt;
  }
  return array;
}

}  // namespace

std::optional<Array> parse(const std::string& bytes, std::string& error) {
  size_t data = 0;
  std::optional<Array> array = parse_prefix(bytes, true, data, error);
  if (array) array->data.assign(bytes.begin() + static_cast<std::ptrdiff_t>(data), bytes.end());
  return array;
}

std::optional<Header> read_header(const std::string& path, std::string& error) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    error = std::strerror(errno);
    return std::nullopt;
  }
  std::string prefix(65536 + 12, '\0');
  in.read(prefix.data(), static_cast<std::streamsize>(prefix.size()));
  prefix.resize(static_cast<size_t>(in.gcount()));
  size_t data = 0;
  std::optional<Array> array = parse_prefix(prefix, false, data, error);
  if (!array) return std::nullopt;
  return Header{array->descr, array->shape};
}

std::optional<Array> read(const std::string& path, std::string& error) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    error = "cannot open '" + path + "': " + std::strerror(errno);
    return std::nullopt;
  }
  std::ostringstream contents;
  contents << in.rdbuf();
  auto array = parse(contents.str(), error);
  if (!array) error = "'" + path + "': " + error;
  return array;
}

std::string serialize(const Array& array) {
  std::string shape = "(";
  for (size_t i = 0; i < array.shape.size(); ++i) shape += std::to_string(array.shape[i]) + (array.shape.size() == 1 ? "," : i + 1 < array.shape.size() ? ", " : "");
  shape += ")";
  std::string header = "{'descr': '" + array.descr + "', 'fortran_order': False, 'shape': " + shape + ", }";
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::string out("\x93NUMPY\x01\x00", 8);
  out += static_cast<char>(header.size() & 0xff);
  out += static_cast<char>(header.size() >> 8);
  out += header;
  out.append(array.data.begin(), array.data.end());
  return out;
}

}  // namespace tessera::npy
