// The launch-time choice between a kernel's general and contiguous variants
// (tessera_runtime.h, docs/abi.md "Contiguous variants").
#include <fmt/format.h>

#include <cstdint>

#include <vector>

#include "runtime_internal.h"

extern "C" tessStatus tessContiguousVariantApplies(const tessTensor* const* tensors, const uint8_t* writes,
                                                   size_t count, int* applies) {
  using namespace tessera::rt;
  if (!applies) return fail(TESS_ERROR_INVALID_VALUE, "tessContiguousVariantApplies: `applies` is null");
  *applies = 0;
  if (count && (!tensors || !writes))
    return fail(TESS_ERROR_INVALID_VALUE, "tessContiguousVariantApplies: `tensors` or `writes` is null");
  // Each tensor's bytes [data, data + span): empty tensors touch none.
  struct Range {
    uint64_t begin, end;
  };
  std::vector<Range> ranges(count);
  bool contiguous = true;
  for (size_t i = 0; i < count; ++i) {
    const tessTensor* t = tensors[i];
    if (!t) return fail(TESS_ERROR_INVALID_VALUE, fmt::format("tessContiguousVariantApplies: tensor {} is null", i));
    uint64_t bytes = 0;
    if (auto s = tessTensorStorageBytes(t, &bytes); s) return s;
    ranges[i] = {t->data, t->data + bytes};
    if (t->rank > 0 && t->shape[t->rank - 1] > 1 && t->strides[t->rank - 1] != 1) contiguous = false;
    for (int32_t d = 0; d < t->rank; ++d)
      // The variant reads each stride as its low 32 bits, zero-extended.
      if (t->strides[d] < 0 || t->strides[d] > INT32_MAX) contiguous = false;
    if (bytes > 0 && t->data % 16 != 0) contiguous = false;
  }
  for (size_t i = 0; contiguous && i < count; ++i) {
    if (!writes[i] || ranges[i].begin == ranges[i].end) continue;
    for (size_t j = 0; j < count; ++j)
      if (j != i && ranges[j].begin != ranges[j].end && ranges[j].begin < ranges[i].end &&
          ranges[i].begin < ranges[j].end)
        contiguous = false;
  }
  *applies = contiguous ? 1 : 0;
  return ok();
}
