// A CPU code object as the compiler's CPU target will emit one (docs/abi.md):
// kernel functions that run every lane of a group, a `tessera_cpu_kernels`
// table ended by a null name, and `tessera_cpu_abi_version`. Loaded by the
// runtime tests through tessModuleLoadFile and tessModuleLoadData.
#include <cstring>

#include "tessera/tessera_runtime.h"

namespace {

int64_t parameter(void** args, int j) { return *static_cast<const int64_t*>(args[j]); }
template <class T>
T* base(void** args, int j) {
  return reinterpret_cast<T*>(*static_cast<const uint64_t*>(args[j]));
}

// fill_iota(out: mut i32[n], base: i32): out[i] = base + i. A tensor is
// three arguments here: base address, size, stride.
void fill_iota(void** args, const tessCpuLaunchContext* context) {
  auto* out = base<int32_t>(args, 0);
  const int64_t n = parameter(args, 1), stride = parameter(args, 2);
  const int32_t first = *static_cast<const int32_t*>(args[3]);
  const uint32_t lanes = context->group[0];
  for (uint32_t lane = 0; lane < lanes; ++lane) {
    const int64_t i = int64_t{context->group_id[0]} * lanes + lane;
    if (i < n) out[i * stride] = first + static_cast<int32_t>(i);
  }
}

// reverse_in_group(x: mut f32[n]): reverses each group's slice through shared
// memory (a store, a barrier, a load: two lane loops).
void reverse_in_group(void** args, const tessCpuLaunchContext* context) {
  auto* x = base<float>(args, 0);
  const int64_t stride = parameter(args, 2);
  auto* shared = static_cast<float*>(context->shared);
  const uint32_t lanes = context->group[0];
  const int64_t first = int64_t{context->group_id[0]} * lanes;
  for (uint32_t lane = 0; lane < lanes; ++lane) shared[lane] = x[(first + lane) * stride];
  // tile.barrier()
  for (uint32_t lane = 0; lane < lanes; ++lane) x[(first + lane) * stride] = shared[lanes - 1 - lane];
}

}  // namespace

extern "C" const uint32_t tessera_cpu_abi_version = TESS_CPU_ABI_VERSION;

extern "C" const tessCpuKernelEntry tessera_cpu_kernels[] = {
    {"fill_iota", &fill_iota, 0, 0},
    {"reverse_in_group", &reverse_in_group, 1024 * sizeof(float), 0},
    {nullptr, nullptr, 0, 0},
};
