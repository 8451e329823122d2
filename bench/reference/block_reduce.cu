// bench/reference/block_reduce.cu: the CUDA C++ twin of
// bench/codegen/block_reduce.tsr. A shared-memory block reduction: each
// thread sums a grid-strided slice of x, the block halves the active threads
// between barriers, thread 0 adds the block's total to out[block] atomically.
// Parameters as tesserac's kernel ABI: pointer, int64 sizes, int64 strides;
// sizes read as int, as Tessera reads a symbolic dimension (an i32 value).
#include <cstdint>

extern "C" __global__ void __launch_bounds__(128)
block_reduce(const float* x, int64_t x_n, int64_t x_s0,
             float* out, int64_t out_n, int64_t out_s0) {
  __shared__ float sm[128];
  const int n = (int)x_n;
  int lid = threadIdx.x;
  float acc = 0.0f;
  for (int k = blockIdx.x * blockDim.x + threadIdx.x; k < n;
       k += blockDim.x * gridDim.x)
    acc += x[k * x_s0];
  sm[lid] = acc;
  __syncthreads();
  for (int s = 64; s > 0; s /= 2) {
    if (lid < s) sm[lid] += sm[lid + s];
    __syncthreads();
  }
  if (lid == 0) atomicAdd(&out[blockIdx.x * out_s0], sm[0]);
}
