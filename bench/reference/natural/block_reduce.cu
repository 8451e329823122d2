// bench/reference/natural/block_reduce.cu: the shared-memory block reduction
// as a CUDA programmer writes it: __restrict__ pointers, unit stride, an int
// size, a grid-stride loop, a tree with barriers, one atomic per block.
extern "C" __global__ void __launch_bounds__(128)
block_reduce(const float* __restrict__ x, float* __restrict__ out, int n) {
  __shared__ float sm[128];
  int lid = threadIdx.x;
  float acc = 0.0f;
  for (int k = blockIdx.x * blockDim.x + threadIdx.x; k < n; k += blockDim.x * gridDim.x) acc += x[k];
  sm[lid] = acc;
  __syncthreads();
  for (int s = 64; s > 0; s /= 2) {
    if (lid < s) sm[lid] += sm[lid + s];
    __syncthreads();
  }
  if (lid == 0) atomicAdd(&out[blockIdx.x], sm[0]);
}
