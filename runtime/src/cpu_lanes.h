// Lane contexts for CPU kernels that synchronise (docs/abi.md, "Lanes as
// fibers"): the lanes of one group run as fibers on the worker thread, and a
// barrier or a warp exchange switches to the next lane that can run.
#pragma once

#include <cstdint>

#include "tessera/tessera_runtime.h"

namespace tessera::rt {

// The three lane services of tessCpuLaunchContext (ABI 2).
void run_lanes(const tessCpuLaunchContext* context, tessCpuLaneFunction lane_function, void** args);
void lane_barrier(const tessCpuLaunchContext* context);
uint64_t lane_shuffle(const tessCpuLaunchContext* context, uint64_t value, uint32_t source_lane);

}  // namespace tessera::rt
