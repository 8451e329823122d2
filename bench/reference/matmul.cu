// bench/reference/matmul.cu: the CUDA C++ twin of bench/codegen/matmul.tsr.
// C = A @ B in f32, 16 x 16 threads per block, one element of C per thread;
// per step of K the block stages 16 x 16 tiles of A and B in shared memory.
// M, N, K multiples of 16; grid (N / 16) x (M / 16). Parameters as
// tesserac's kernel ABI: pointer, int64 sizes, int64 strides; sizes read
// as int, as Tessera reads a symbolic dimension (an i32 value).
#include <cstdint>

#define T 16

extern "C" __global__ void __launch_bounds__(T * T)
matmul(const float* A, int64_t a_n0, int64_t a_n1, int64_t a_s0, int64_t a_s1,
       const float* B, int64_t b_n0, int64_t b_n1, int64_t b_s0, int64_t b_s1,
       float* C, int64_t c_n0, int64_t c_n1, int64_t c_s0, int64_t c_s1) {
  __shared__ float sA[T][T];
  __shared__ float sB[T][T];
  const int K = (int)a_n1;
  int tx = threadIdx.x, ty = threadIdx.y;
  int row = blockIdx.y * T + ty;
  int col = blockIdx.x * T + tx;
  float acc = 0.0f;
  for (int k0 = 0; k0 < K; k0 += T) {
    sA[ty][tx] = A[row * a_s0 + (k0 + tx) * a_s1];
    sB[ty][tx] = B[(k0 + ty) * b_s0 + col * b_s1];
    __syncthreads();
    for (int kk = 0; kk < T; ++kk)
      acc += sA[ty][kk] * sB[kk][tx];
    __syncthreads();
  }
  C[row * c_s0 + col * c_s1] = acc;
}
