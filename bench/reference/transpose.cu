// bench/reference/transpose.cu: the CUDA C++ twin of
// bench/codegen/transpose.tsr. dst = src^T through a padded 32 x 33 shared
// tile, 32 x 8 threads per block, 4 elements per thread per phase. Parameters
// as tesserac's kernel ABI: pointer, int64 sizes [H, W], int64 strides;
// sizes read as int, as Tessera reads a symbolic dimension (an i32 value).
#include <cstdint>

#define TILE 32
#define ROWS 8

extern "C" __global__ void __launch_bounds__(TILE * ROWS)
transpose(const float* src, int64_t src_n0, int64_t src_n1, int64_t src_s0, int64_t src_s1,
          float* dst, int64_t dst_n0, int64_t dst_n1, int64_t dst_s0, int64_t dst_s1) {
  __shared__ float t[TILE][TILE + 1];
  const int H = (int)src_n0, W = (int)src_n1;
  int tx = threadIdx.x, ty = threadIdx.y;
  int x = blockIdx.x * TILE + tx;
  int y = blockIdx.y * TILE + ty;
  for (int j = 0; j < TILE; j += ROWS)
    if (x < W && y + j < H)
      t[ty + j][tx] = src[(y + j) * src_s0 + x * src_s1];
  __syncthreads();
  x = blockIdx.y * TILE + tx;
  y = blockIdx.x * TILE + ty;
  for (int j = 0; j < TILE; j += ROWS)
    if (x < H && y + j < W)
      dst[(y + j) * dst_s0 + x * dst_s1] = t[tx][ty + j];
}
