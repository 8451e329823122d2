// bench/reference/natural/matmul.cu: the 16 x 16 shared-tile SIMT matmul as a
// CUDA programmer writes it (the CUDA programming guide's example):
// __restrict__ pointers, row-major int sizes.
#define T 16

extern "C" __global__ void __launch_bounds__(T * T)
matmul(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C, int M, int N, int K) {
  __shared__ float sA[T][T];
  __shared__ float sB[T][T];
  int tx = threadIdx.x, ty = threadIdx.y;
  int row = blockIdx.y * T + ty;
  int col = blockIdx.x * T + tx;
  float acc = 0.0f;
  for (int k0 = 0; k0 < K; k0 += T) {
    sA[ty][tx] = A[row * K + k0 + tx];
    sB[ty][tx] = B[(k0 + ty) * N + col];
    __syncthreads();
    for (int kk = 0; kk < T; ++kk) acc += sA[ty][kk] * sB[kk][tx];
    __syncthreads();
  }
  C[row * N + col] = acc;
}
