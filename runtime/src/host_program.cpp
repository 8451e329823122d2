// Host programs (tessera_host.h): the context compiled host code runs with,
// its allocations (freed when a call ends unless returned), kernel launches
// by name, print, and .npy I/O (support/npy.cpp, compiled into the runtime).
#include <fmt/format.h>

#include <charconv>
#include <cstddef>
#include <cmath>
#include <cstring>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "runtime_internal.h"
#include "support/format_spec.h"
#include "support/npy.h"
#include "tessera/numerics.hpp"

static_assert(offsetof(tessTensor, dtype) == 8 && offsetof(tessTensor, rank) == 12 &&
                  offsetof(tessTensor, shape) == 16 && offsetof(tessTensor, strides) == 80 && sizeof(tessTensor) == 144,
              "the tessTensor layout compiled host code assumes (docs/abi.md)");

using tessera::rt::fail;
using tessera::rt::ok;

#include "host_context.h"

namespace {

tessStatus null_context(const char* function) {
  return fail(TESS_ERROR_INVALID_VALUE, fmt::format("{}: the host context is null", function));
}

FILE* output_of(tessHostContext context) { return context->output ? context->output : stdout; }

// What the print services write: to the output, or to the text a
// tessHostTextBegin started (a path). A job's output is rank 0's; every
// rank captures its own text.
void write_text(tessHostContext context, const std::string& text) {
  if (context->capturing) {
    context->captured += text;
    return;
  }
  if (!tessera::rt::is_first_rank()) return;
  std::fputs(text.c_str(), output_of(context));
  if (text.find('\n') != std::string::npos) std::fflush(output_of(context));
}

bool is_float_dtype(tessDtype d) {
  switch (d) {
    case TESS_F16: case TESS_BF16: case TESS_F32: case TESS_F64: case TESS_FP8_E4M3: case TESS_FP8_E5M2:
    case TESS_FP6_E2M3: case TESS_FP6_E3M2: case TESS_FP4_E2M1: return true;
    default: return false;
  }
}

const tessera::numerics::Format* narrow_format(tessDtype d) {
  switch (d) {
    case TESS_F16: return &tessera::numerics::f16;
    case TESS_BF16: return &tessera::numerics::bf16;
    case TESS_FP8_E4M3: return &tessera::numerics::fp8_e4m3;
    case TESS_FP8_E5M2: return &tessera::numerics::fp8_e5m2;
    case TESS_FP6_E2M3: return &tessera::numerics::fp6_e2m3;
    case TESS_FP6_E3M2: return &tessera::numerics::fp6_e3m2;
    case TESS_FP4_E2M1: return &tessera::numerics::fp4_e2m1;
    default: return nullptr;
  }
}

float f32_from_bits(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

// Element `index` (row-major position in storage, in elements) of a host
// copy of a tensor's storage, as a double (floats) or an int64 (the rest).
struct Element {
  bool is_float;
  double f;
  int64_t i;
  uint64_t u;
  bool is_unsigned;
};

Element read_element(const std::vector<uint8_t>& storage, tessDtype dtype, int64_t offset) {
  Element e{is_float_dtype(dtype), 0, 0, 0, false};
  const uint8_t* p = storage.data();
  auto load = [&](auto tag) {
    decltype(tag) v;
    std::memcpy(&v, p + offset * static_cast<int64_t>(sizeof(v)), sizeof(v));
    return v;
  };
  switch (dtype) {
    case TESS_BOOL: e.i = p[offset] != 0; break;
    case TESS_I8: e.i = load(int8_t{}); break;
    case TESS_I16: e.i = load(int16_t{}); break;
    case TESS_I32: e.i = load(int32_t{}); break;
    case TESS_I64: e.i = load(int64_t{}); break;
    case TESS_U8: e.u = load(uint8_t{}), e.is_unsigned = true; break;
    case TESS_U16: e.u = load(uint16_t{}), e.is_unsigned = true; break;
    case TESS_U32: e.u = load(uint32_t{}), e.is_unsigned = true; break;
    case TESS_U64: e.u = load(uint64_t{}), e.is_unsigned = true; break;
    case TESS_F32: e.f = load(float{}); break;
    case TESS_F64: e.f = load(double{}); break;
    case TESS_F16: e.f = f32_from_bits(tessera::numerics::f32_bits_from_f16(load(uint16_t{}))); break;
    case TESS_BF16: e.f = f32_from_bits(tessera::numerics::f32_bits_from_bf16(load(uint16_t{}))); break;
    case TESS_FP8_E4M3:
    case TESS_FP8_E5M2: e.f = f32_from_bits(tessera::numerics::decode_bits(*narrow_format(dtype), p[offset])); break;
    case TESS_FP6_E2M3:
    case TESS_FP6_E3M2:
      e.f = f32_from_bits(tessera::numerics::decode_bits(
          *narrow_format(dtype), tessera::numerics::fp6_get(p, static_cast<uint64_t>(offset))));
      break;
    case TESS_FP4_E2M1:
      e.f = f32_from_bits(tessera::numerics::decode_bits(*narrow_format(dtype),
                                                         tessera::numerics::fp4_get(p, static_cast<uint64_t>(offset))));
      break;
  }
  return e;
}

// Python's repr of a float: the shortest digits that round-trip in the
// element's own precision (f64, else f32), positional for exponents in
// [-4, 16), else scientific; always a '.' or an exponent.
std::string float_repr(double v, bool f64) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buffer[64];
  std::to_chars_result r = f64 ? std::to_chars(buffer, buffer + sizeof buffer, v, std::chars_format::scientific)
                               : std::to_chars(buffer, buffer + sizeof buffer, static_cast<float>(v),
                                               std::chars_format::scientific);
  std::string text(buffer, r.ptr);
  size_t e = text.find('e');
  std::string mantissa = text.substr(0, e);
  int exponent = std::stoi(text.substr(e + 1));
  bool negative = mantissa[0] == '-';
  if (negative) mantissa.erase(0, 1);
  std::string digits;
  for (char c : mantissa)
    if (c != '.') digits += c;
  std::string out;
  if (exponent >= -4 && exponent < 16) {
    int point = exponent + 1;  // digits before the point
    if (point <= 0) {
      out = "0." + std::string(static_cast<size_t>(-point), '0') + digits;
    } else if (static_cast<size_t>(point) >= digits.size()) {
      out = digits + std::string(static_cast<size_t>(point) - digits.size(), '0') + ".0";
    } else {
      out = digits.substr(0, static_cast<size_t>(point)) + "." + digits.substr(static_cast<size_t>(point));
    }
  } else {
    out = digits.substr(0, 1);
    if (digits.size() > 1) out += "." + digits.substr(1);
    out += fmt::format("e{}{:02d}", exponent < 0 ? '-' : '+', std::abs(exponent));
  }
  return negative ? "-" + out : out;
}

std::string element_text(const Element& e, tessDtype dtype) {
  if (dtype == TESS_BOOL) return e.i ? "True" : "False";
  if (e.is_float) return float_repr(e.f, dtype == TESS_F64);
  if (e.is_unsigned) return std::to_string(e.u);
  return std::to_string(e.i);
}

// NumPy's layout: [a b c], nested rows on new lines indented by depth; more
// than 1000 elements are summarised with the first and last three of each axis.
void format_tensor(std::string& out, const std::vector<uint8_t>& storage, const tessTensor& t, int axis,
                   int64_t offset, bool summarise) {
  if (axis == t.rank) {
    out += element_text(read_element(storage, t.dtype, offset), t.dtype);
    return;
  }
  out += '[';
  int64_t n = t.shape[axis];
  bool cut = summarise && n > 6;
  for (int64_t i = 0; i < n; ++i) {
    if (cut && i == 3) {
      out += axis + 1 == t.rank ? " ..." : "\n" + std::string(static_cast<size_t>(axis + 1), ' ') + "...";
      i = n - 3;
    }
    if (i > 0 || (cut && i == n - 3)) {
      if (axis + 1 == t.rank) {
        out += ' ';
      } else {
        out += std::string(static_cast<size_t>(t.rank - axis - 1), '\n');
        out += std::string(static_cast<size_t>(axis + 1), ' ');
      }
    }
    format_tensor(out, storage, t, axis + 1, offset + i * t.strides[axis], summarise);
  }
  out += ']';
}

// A host copy of the bytes a tensor spans (from its data address).
tessStatus copy_out(tessHostContext context, const tessTensor& t, std::vector<uint8_t>& storage) {
  uint64_t bytes = 0;
  if (tessStatus s = tessTensorStorageBytes(&t, &bytes)) return s;
  storage.assign(bytes, 0);
  if (bytes == 0) return ok();
  if (context->stream)
    if (tessStatus s = tessStreamSynchronize(context->stream)) return s;
  return tessMemcpyDtoH(context->device, storage.data(), t.data, bytes);
}

// The start of a failed ts.save's or ts.load's message: its source
// position, "file.tsr:3:5: " (nothing when the caller has none).
std::string at(const char* where) { return where && *where ? std::string(where) + ": " : std::string(); }

int64_t element_count(const tessTensor& t) {
  int64_t n = 1;
  for (int32_t a = 0; a < t.rank; ++a) n *= t.shape[a];
  return n;
}

}  // namespace

extern "C" {

tessStatus tessHostContextCreate(tessDevice device, tessStream stream, tessModule module, tessHostContext* context) {
  if (!device || !context) return fail(TESS_ERROR_INVALID_VALUE, "tessHostContextCreate: null device or context");
  static const tessHostServices services{TESS_HOST_ABI_VERSION,  tessHostAlloc,           tessHostFree,
                                        tessHostKeep,           tessHostLaunch,          tessHostPrintText,
                                        tessHostPrintTensor,    tessHostPrintScalar,     tessHostSave,
                                        tessHostLoad,           tessHostFail,            tessHostMesh,
                                        tessHostCollective,     tessHostRead,            tessHostLaunchTuned,
                                        tessHostPrintFormatted, tessHostCollectiveStart, tessHostCollectiveWait,
                                        tessHostTextBegin,      tessHostSaveText};
  auto* c = new tessHostContext_st;
  c->services = &services;
  c->device = device;
  c->stream = stream;
  c->module = module;
  c->cache_enabled = tessera::rt::host_cache_enabled_by_environment();
  *context = c;
  return ok();
}

tessStatus tessHostContextSetOutput(tessHostContext context, FILE* output) {
  if (!context) return null_context("tessHostContextSetOutput");
  context->output = output;
  return ok();
}

tessStatus tessHostContextDestroy(tessHostContext context) {
  if (!context) return null_context("tessHostContextDestroy");
  tessera::rt::wait_host_requests(context);
  for (tessDevicePtr p : context->frame) tessera::rt::host_release(context, p);
  tessera::rt::host_drop_cache(context);
  tessera::rt::destroy_host_meshes(context);
  delete context;
  return ok();
}

tessStatus tessHostCall(tessHostContext context, tessHostFunction function, void** args, void** results) {
  if (!context) return null_context("tessHostCall");
  if (!function) return fail(TESS_ERROR_INVALID_VALUE, "tessHostCall: null function");
  bool outermost = context->depth++ == 0;
  auto status = static_cast<tessStatus>(function(context, args, results));
  --context->depth;
  if (!outermost) return status;
  context->capturing = false;  // a call that failed while formatting a path
  std::string message = status ? tessGetLastErrorMessage() : "";
  tessera::rt::wait_host_requests(context);
  for (tessDevicePtr p : context->frame) {
    if (status || !context->kept.count(p)) tessera::rt::host_release(context, p);
    else tessera::rt::host_disown(context, p);
  }
  context->frame.clear();
  context->kept.clear();
  if (status) return fail(status, message);
  if (context->stream) return tessStreamSynchronize(context->stream);
  return ok();
}

tessStatus tessHostFreeTensor(tessHostContext context, const tessTensor* tensor) {
  if (!context || !tensor) return fail(TESS_ERROR_INVALID_VALUE, "tessHostFreeTensor: null context or tensor");
  return tessFree(context->device, tensor->data);
}

tessStatus tessHostAlloc(tessHostContext context, uint64_t bytes, tessDevicePtr* ptr) {
  if (!context) return null_context("tessHostAlloc");
  if (tessStatus s = tessera::rt::host_allocate(context, bytes, ptr)) return s;
  context->frame.insert(*ptr);
  return ok();
}

tessStatus tessHostFree(tessHostContext context, tessDevicePtr ptr) {
  if (!context) return null_context("tessHostFree");
  context->frame.erase(ptr);
  return tessera::rt::host_release(context, ptr);
}

tessStatus tessHostKeep(tessHostContext context, tessDevicePtr ptr) {
  if (!context) return null_context("tessHostKeep");
  context->kept.insert(ptr);
  return ok();
}

tessStatus tessHostLaunch(tessHostContext context, const char* name, const uint32_t grid[3], const uint32_t group[3],
                          void** args) {
  if (!context) return null_context("tessHostLaunch");
  if (!context->module) return fail(TESS_ERROR_INVALID_VALUE, "tessHostLaunch: the host context has no module");
  if (!grid || !group) return fail(TESS_ERROR_INVALID_VALUE, "tessHostLaunch: a null grid or group");
  // Host code computes a grid from run-time sizes (ceil(M / tile) groups of
  // a GEMM): a tensor without elements gives a grid without groups, and the
  // kernel has nothing to do. tessLaunchKernel refuses such a grid, so the
  // launch is skipped here.
  if (grid[0] == 0 || grid[1] == 0 || grid[2] == 0) return ok();
  auto it = context->kernels.find(name);
  if (it == context->kernels.end()) {
    tessKernel kernel = nullptr;
    if (tessStatus s = tessModuleGetKernel(context->module, name, &kernel)) return s;
    it = context->kernels.emplace(name, kernel).first;
  }
  return tessLaunchKernel(it->second, grid, group, 0, context->stream, args);
}

tessStatus tessHostPrintText(tessHostContext context, const char* text) {
  if (!context || !text) return fail(TESS_ERROR_INVALID_VALUE, "tessHostPrintText: null context or text");
  write_text(context, text);
  return ok();
}

tessStatus tessHostPrintTensor(tessHostContext context, const tessTensor* tensor) {
  if (!context || !tensor) return fail(TESS_ERROR_INVALID_VALUE, "tessHostPrintTensor: null context or tensor");
  if (!context->capturing && !tessera::rt::is_first_rank()) return ok();  // a job's output is rank 0's
  std::vector<uint8_t> storage;
  if (tessStatus s = copy_out(context, *tensor, storage)) return s;
  std::string text;
  // NumPy prints every array without elements as `[]`, whatever its rank.
  if (tensor->rank > 0 && element_count(*tensor) == 0)
    text = "[]";
  else
    format_tensor(text, storage, *tensor, 0, 0, element_count(*tensor) > 1000);
  write_text(context, text);
  return ok();
}

tessStatus tessHostPrintScalar(tessHostContext context, tessDtype dtype, const void* value) {
  if (!context || !value) return fail(TESS_ERROR_INVALID_VALUE, "tessHostPrintScalar: null context or value");
  int bits = tessDtypeBits(dtype);
  std::vector<uint8_t> storage(static_cast<size_t>(std::max(1, bits / 8)));
  std::memcpy(storage.data(), value, storage.size());
  write_text(context, element_text(read_element(storage, dtype, 0), dtype));
  return ok();
}

tessStatus tessHostPrintFormatted(tessHostContext context, tessDtype dtype, const void* value, const char* spec) {
  if (!context || !value || !spec) return fail(TESS_ERROR_INVALID_VALUE, "tessHostPrintFormatted: null argument");
  std::string why;
  std::optional<tessera::FormatSpec> parsed = tessera::parse_format_spec(spec, &why);
  if (!parsed) return fail(TESS_ERROR_INVALID_VALUE, fmt::format("print: the format spec '{}' is not one print formats: {}", spec, why));
  int bits = tessDtypeBits(dtype);
  std::vector<uint8_t> storage(static_cast<size_t>(std::max(1, bits / 8)));
  std::memcpy(storage.data(), value, storage.size());
  Element e = read_element(storage, dtype, 0);
  std::optional<std::string> text =
      tessera::format_number(*parsed, e.is_float, e.f, e.i, e.u, e.is_unsigned, element_text(e, dtype));
  if (!text)
    return fail(TESS_ERROR_INVALID_VALUE, fmt::format("print: the format spec '{}' is for integers, the value is a float", spec));
  write_text(context, *text);
  return ok();
}

tessStatus tessHostTextBegin(tessHostContext context) {
  if (!context) return null_context("tessHostTextBegin");
  context->capturing = true;
  context->captured.clear();
  return ok();
}

tessStatus tessHostSaveText(tessHostContext context, const tessTensor* tensor, const char* where) {
  if (!context) return null_context("tessHostSaveText");
  if (!context->capturing) return fail(TESS_ERROR_INVALID_VALUE, "tessHostSaveText: no tessHostTextBegin before it");
  context->capturing = false;
  std::string path = std::move(context->captured);
  context->captured.clear();
  return tessHostSave(context, path.c_str(), tensor, where);
}

tessStatus tessHostSave(tessHostContext context, const char* path, const tessTensor* tensor, const char* where) {
  if (!context || !path || !tensor) return fail(TESS_ERROR_INVALID_VALUE, "tessHostSave: null argument");
  if (!tessera::rt::is_first_rank()) return ok();  // a job's output is rank 0's
  std::vector<uint8_t> storage;
  if (tessStatus s = copy_out(context, *tensor, storage)) return s;
  tessera::npy::Array array;
  std::string descr = tessera::npy::descr_of(tessDtypeName(tensor->dtype));
  bool as_f32 = descr.empty();
  array.descr = as_f32 ? "<f4" : descr;
  array.shape.assign(tensor->shape, tensor->shape + tensor->rank);
  int64_t count = element_count(*tensor);
  size_t bytes = as_f32 ? 4 : static_cast<size_t>(std::max(1, tessDtypeBits(tensor->dtype) / 8));
  array.data.resize(static_cast<size_t>(count) * bytes);
  std::vector<int64_t> index(static_cast<size_t>(tensor->rank), 0);
  for (int64_t n = 0; n < count; ++n) {
    int64_t offset = 0;
    for (int32_t a = 0; a < tensor->rank; ++a) offset += index[static_cast<size_t>(a)] * tensor->strides[a];
    char* to = array.data.data() + static_cast<size_t>(n) * bytes;
    if (as_f32) {
      float f = static_cast<float>(read_element(storage, tensor->dtype, offset).f);
      std::memcpy(to, &f, 4);
    } else {
      std::memcpy(to, storage.data() + static_cast<size_t>(offset) * bytes, bytes);
    }
    for (int32_t a = tensor->rank; a-- > 0;) {
      if (++index[static_cast<size_t>(a)] < tensor->shape[a]) break;
      index[static_cast<size_t>(a)] = 0;
    }
  }
  std::string file = tessera::npy::serialize(array);
  FILE* f = std::fopen(path, "wb");
  if (!f)
    return fail(TESS_ERROR_NOT_FOUND, fmt::format("{}ts.save: cannot write '{}': {}", at(where), path, std::strerror(errno)));
  bool written = std::fwrite(file.data(), 1, file.size(), f) == file.size();
  if (std::fclose(f) != 0 || !written)
    return fail(TESS_ERROR_INVALID_VALUE, fmt::format("{}ts.save: writing '{}' failed", at(where), path));
  return ok();
}

tessStatus tessHostLoad(tessHostContext context, const char* path, tessDtype dtype, int32_t rank, const int64_t* dims,
                        tessTensor* tensor, const char* where) {
  if (!context || !path || !tensor) return fail(TESS_ERROR_INVALID_VALUE, "tessHostLoad: null argument");
  std::string error;
  std::optional<tessera::npy::Array> array = tessera::npy::read(path, error);
  if (!array) return fail(TESS_ERROR_NOT_FOUND, fmt::format("{}ts.load('{}'): {}", at(where), path, error));
  std::string have = tessera::npy::tessera_dtype_of(array->descr);
  if (have != tessDtypeName(dtype))
    return fail(TESS_ERROR_INVALID_VALUE,
                fmt::format("{}ts.load('{}'): the file holds {} ({}), the program was compiled for {}", at(where), path,
                            have.empty() ? array->descr : have, array->descr, tessDtypeName(dtype)));
  if (static_cast<int32_t>(array->shape.size()) != rank)
    return fail(TESS_ERROR_INVALID_VALUE, fmt::format("{}ts.load('{}'): the file's array has {} dimensions, the program "
                                                      "was compiled for {}",
                                                      at(where), path, array->shape.size(), rank));
  for (int32_t a = 0; a < rank; ++a)
    if (dims[a] >= 0 && dims[a] != array->shape[static_cast<size_t>(a)])
      return fail(TESS_ERROR_INVALID_VALUE,
                  fmt::format("{}ts.load('{}'): dimension {} of the file's array is {}, the program was compiled for {}",
                              at(where), path, a, array->shape[static_cast<size_t>(a)], dims[a]));
  tessDevicePtr data = 0;
  if (tessStatus s = tessHostAlloc(context, array->data.size(), &data)) return s;
  // The block may be one the cache gave back while a kernel queued before
  // still uses its bytes.
  if (context->stream)
    if (tessStatus s = tessStreamSynchronize(context->stream)) return s;
  if (!array->data.empty())
    if (tessStatus s = tessMemcpyHtoD(context->device, data, array->data.data(), array->data.size())) return s;
  return tessTensorMakeContiguous(data, dtype, rank, array->shape.data(), tensor);
}

tessStatus tessHostRead(tessHostContext context, tessDevicePtr source, uint64_t bytes, void* destination) {
  if (!context) return null_context("tessHostRead");
  if (!destination || (bytes && !source)) return fail(TESS_ERROR_INVALID_VALUE, "tessHostRead: null source or destination");
  if (context->stream)
    if (tessStatus s = tessStreamSynchronize(context->stream)) return s;
  return tessMemcpyDtoH(context->device, destination, source, bytes);
}

tessStatus tessHostFail(tessHostContext context, const char* message) {
  (void)context;
  return fail(TESS_ERROR_INVALID_VALUE, message ? message : "a run-time check failed");
}

}  // extern "C"
