// A CPU code object as the compiler's CPU target will emit one (docs/abi.md):
// kernel functions that run every lane of a group, a `tessera_cpu_kernels`
// table ended by a null name, and `tessera_cpu_abi_version`. Loaded by the
// runtime tests through tessModuleLoadFile and tessModuleLoadData.
#include <cstring>

#include "tessera/tessera_runtime.h"

namespace {

// fill_iota(out: mut i32[n], base: i32): out[i] = base + i.
void fill_iota(void** args, const tessCpuLaunchContext* context) {
  const auto* out = static_cast<const tessTensor*>(args[0]);
  const int32_t base = *static_cast<const int32_t*>(args[1]);
  auto* data = reinterpret_cast<int32_t*>(out->data);
  const uint32_t lanes = context->group[0];
  for (uint32_t lane = 0; lane < lanes; ++lane) {
    const int64_t i = int64_t{context->group_id[0]} * lanes + lane;
    if (i < out->shape[0]) data[i] = base + static_cast<int32_t>(i);
  }
}

// reverse_in_group(x: mut f32[n]): reverses each group's slice through shared
// memory (a store, a barrier, a load: two lane loops).
void reverse_in_group(void** args, const tessCpuLaunchContext* context) {
  const auto* x = static_cast<const tessTensor*>(args[0]);
  auto* data = reinterpret_cast<float*>(x->data);
  auto* shared = static_cast<float*>(context->shared);
  const uint32_t lanes = context->group[0];
  const int64_t first = int64_t{context->group_id[0]} * lanes;
  for (uint32_t lane = 0; lane < lanes; ++lane) shared[lane] = data[first + lane];
  // tile.barrier()
  for (uint32_t lane = 0; lane < lanes; ++lane) data[first + lane] = shared[lanes - 1 - lane];
}

}  // namespace

extern "C" const uint32_t tessera_cpu_abi_version = TESS_CPU_ABI_VERSION;

extern "C" const tessCpuKernelEntry tessera_cpu_kernels[] = {
    {"fill_iota", &fill_iota, 0, 0},
    {"reverse_in_group", &reverse_in_group, 1024 * sizeof(float), 0},
    {nullptr, nullptr, 0, 0},
};
