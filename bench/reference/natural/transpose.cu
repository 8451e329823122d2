// bench/reference/natural/transpose.cu: the padded shared-memory transpose
// as a CUDA programmer writes it (the CUDA samples' transposeNoBankConflicts
// with bounds checks): __restrict__ pointers, row-major int sizes.
#define TILE 32
#define ROWS 8

extern "C" __global__ void __launch_bounds__(TILE * ROWS)
transpose(const float* __restrict__ src, float* __restrict__ dst, int H, int W) {
  __shared__ float t[TILE][TILE + 1];
  int tx = threadIdx.x, ty = threadIdx.y;
  int x = blockIdx.x * TILE + tx;
  int y = blockIdx.y * TILE + ty;
  for (int j = 0; j < TILE; j += ROWS)
    if (x < W && y + j < H) t[ty + j][tx] = src[(y + j) * W + x];
  __syncthreads();
  x = blockIdx.y * TILE + tx;
  y = blockIdx.x * TILE + ty;
  for (int j = 0; j < TILE; j += ROWS)
    if (x < H && y + j < W) dst[(y + j) * H + x] = t[tx][ty + j];
}
