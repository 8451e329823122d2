// Element types and tensor views.
#include <fmt/format.h>

#include <cstring>
#include <string_view>

#include "runtime_internal.h"

using namespace tessera::rt;

namespace {

struct DtypeInfo {
  const char* name;  // as the language spells it
  int bits;          // storage bits per element
};

constexpr DtypeInfo kDtypes[TESS_DTYPE_COUNT] = {
#define TESSERA_SCALAR(Name, Spelling, Bits, Kind, Runtime, StorageBits) {Spelling, StorageBits},
#include "tessera/scalar_type.def"
};

// The aliases of docs/language/types.md (the bare fp8/fp6/fp4 defaults are
// not accepted: a runtime name should be explicit).
struct Alias {
  const char* name;
  tessDtype dtype;
};
constexpr Alias kAliases[] = {
    {"int8", TESS_I8},        {"int16", TESS_I16},      {"int32", TESS_I32},         {"int64", TESS_I64},
    {"uint8", TESS_U8},       {"uint16", TESS_U16},     {"uint32", TESS_U32},        {"uint64", TESS_U64},
    {"fp16", TESS_F16},       {"float16", TESS_F16},    {"bfloat16", TESS_BF16},     {"fp32", TESS_F32},
    {"float32", TESS_F32},    {"fp64", TESS_F64},       {"float64", TESS_F64},       {"fp8[e4m3]", TESS_FP8_E4M3},
    {"fp8_e4m3fn", TESS_FP8_E4M3}, {"fp8[e5m2]", TESS_FP8_E5M2}, {"fp6[e2m3]", TESS_FP6_E2M3},
    {"fp6[e3m2]", TESS_FP6_E3M2},  {"fp4[e2m1]", TESS_FP4_E2M1},
};

bool valid(tessDtype dtype) { return static_cast<int>(dtype) >= 0 && static_cast<int>(dtype) < TESS_DTYPE_COUNT; }

}  // namespace

static_assert(sizeof(kDtypes) / sizeof(kDtypes[0]) == TESS_DTYPE_COUNT);

extern "C" {

const char* tessDtypeName(tessDtype dtype) { return valid(dtype) ? kDtypes[dtype].name : nullptr; }

int tessDtypeBits(tessDtype dtype) { return valid(dtype) ? kDtypes[dtype].bits : 0; }

tessStatus tessDtypeFromName(const char* name, tessDtype* dtype) {
  if (!name) return fail(TESS_ERROR_INVALID_VALUE, "tessDtypeFromName: `name` is null");
  if (!dtype) return fail(TESS_ERROR_INVALID_VALUE, "tessDtypeFromName: `dtype` is null");
  std::string_view n = name;
  if (n.substr(0, 3) == "ts.") n.remove_prefix(3);
  for (int i = 0; i < TESS_DTYPE_COUNT; ++i)
    if (n == kDtypes[i].name) {
      *dtype = static_cast<tessDtype>(i);
      return ok();
    }
  for (const Alias& a : kAliases)
    if (n == a.name) {
      *dtype = a.dtype;
      return ok();
    }
  return fail(TESS_ERROR_NOT_FOUND, fmt::format("tessDtypeFromName: unknown element type '{}'", name));
}

tessStatus tessTensorMakeContiguous(tessDevicePtr data, tessDtype dtype, int32_t rank, const int64_t* shape,
                                    tessTensor* tensor) {
  if (!tensor) return fail(TESS_ERROR_INVALID_VALUE, "tessTensorMakeContiguous: `tensor` is null");
  if (!valid(dtype))
    return fail(TESS_ERROR_INVALID_VALUE,
                fmt::format("tessTensorMakeContiguous: invalid dtype {}", static_cast<int>(dtype)));
  if (rank < 0 || rank > TESS_MAX_RANK)
    return fail(TESS_ERROR_INVALID_VALUE,
                fmt::format("tessTensorMakeContiguous: rank {} is outside 0..{}", rank, TESS_MAX_RANK));
  if (rank > 0 && !shape) return fail(TESS_ERROR_INVALID_VALUE, "tessTensorMakeContiguous: `shape` is null");
  tessTensor t;
  std::memset(&t, 0, sizeof t);
  t.data = data;
  t.dtype = dtype;
  t.rank = rank;
  int64_t stride = 1;
  for (int32_t i = rank - 1; i >= 0; --i) {
    if (shape[i] < 0)
      return fail(TESS_ERROR_INVALID_VALUE,
                  fmt::format("tessTensorMakeContiguous: dimension {} is negative ({})", i, shape[i]));
    t.shape[i] = shape[i];
    t.strides[i] = stride;
    if (shape[i] > 0 && stride > (int64_t{1} << 62) / shape[i])
      return fail(TESS_ERROR_INVALID_VALUE, "tessTensorMakeContiguous: the tensor has more than 2^62 elements");
    stride *= shape[i] > 0 ? shape[i] : 1;
  }
  *tensor = t;
  return ok();
}

tessStatus tessTensorKernelArgs(const tessTensor* tensor, void** args, size_t capacity, size_t* count) {
  if (!tensor) return fail(TESS_ERROR_INVALID_VALUE, "tessTensorKernelArgs: `tensor` is null");
  if (!count) return fail(TESS_ERROR_INVALID_VALUE, "tessTensorKernelArgs: `count` is null");
  if (tensor->rank < 0 || tensor->rank > TESS_MAX_RANK)
    return fail(TESS_ERROR_INVALID_VALUE,
                fmt::format("tessTensorKernelArgs: rank {} is outside 0..{}", tensor->rank, TESS_MAX_RANK));
  const size_t needed = 1 + 2 * static_cast<size_t>(tensor->rank);
  if (!args || capacity < needed)
    return fail(TESS_ERROR_INVALID_VALUE,
                fmt::format("tessTensorKernelArgs: a rank-{} tensor needs {} argument slots, {} given", tensor->rank,
                            needed, args ? capacity : 0));
  auto* t = const_cast<tessTensor*>(tensor);
  size_t j = 0;
  args[j++] = &t->data;
  for (int32_t i = 0; i < t->rank; ++i) args[j++] = &t->shape[i];
  for (int32_t i = 0; i < t->rank; ++i) args[j++] = &t->strides[i];
  *count = needed;
  return ok();
}

tessStatus tessTensorStorageBytes(const tessTensor* tensor, uint64_t* bytes) {
  if (!tensor) return fail(TESS_ERROR_INVALID_VALUE, "tessTensorStorageBytes: `tensor` is null");
  if (!bytes) return fail(TESS_ERROR_INVALID_VALUE, "tessTensorStorageBytes: `bytes` is null");
  if (!valid(tensor->dtype))
    return fail(TESS_ERROR_INVALID_VALUE,
                fmt::format("tessTensorStorageBytes: invalid dtype {}", static_cast<int>(tensor->dtype)));
  if (tensor->rank < 0 || tensor->rank > TESS_MAX_RANK)
    return fail(TESS_ERROR_INVALID_VALUE,
                fmt::format("tessTensorStorageBytes: rank {} is outside 0..{}", tensor->rank, TESS_MAX_RANK));
  // The highest element offset, in elements, then in bits.
  uint64_t last = 0;
  bool overflow = false;
  for (int32_t i = 0; i < tensor->rank; ++i) {
    if (tensor->shape[i] < 0 || tensor->strides[i] < 0)
      return fail(TESS_ERROR_INVALID_VALUE,
                  fmt::format("tessTensorStorageBytes: axis {} has shape {} and stride {}; both must be non-negative",
                              i, tensor->shape[i], tensor->strides[i]));
    if (tensor->shape[i] == 0) {
      *bytes = 0;
      return ok();
    }
    uint64_t span = 0;
    overflow |= __builtin_mul_overflow(static_cast<uint64_t>(tensor->shape[i] - 1),
                                       static_cast<uint64_t>(tensor->strides[i]), &span);
    overflow |= __builtin_add_overflow(last, span, &last);
  }
  uint64_t bits = 0;
  overflow |= __builtin_mul_overflow(last + 1, static_cast<uint64_t>(kDtypes[tensor->dtype].bits), &bits);
  if (overflow || last == UINT64_MAX)
    return fail(TESS_ERROR_INVALID_VALUE, "tessTensorStorageBytes: the view spans more than 2^64 bits");
  const uint64_t total = bits / 8 + (bits % 8 != 0);
  *bytes = static_cast<uint64_t>(total);
  return ok();
}

}  // extern "C"
