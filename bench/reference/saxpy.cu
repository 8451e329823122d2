// bench/reference/saxpy.cu: the CUDA C++ twin of bench/codegen/saxpy.tsr.
// Parameters as tesserac's kernel ABI passes them (docs/codegen.md, "The
// kernel ABI"): each tensor is a pointer, int64 sizes, int64 strides (in
// elements), and the kernel indexes through the strides. As in Tessera, a
// size read in the body is an int (a symbolic dimension is an i32 value,
// docs/language/types.md): index arithmetic is 32-bit, then widened and
// multiplied by the 64-bit stride. 128 threads per block, as the .tsr
// kernel's default group shape (.maxntid 128).
#include <cstdint>

extern "C" __global__ void __launch_bounds__(128)
saxpy(const float* x, int64_t x_n, int64_t x_s0,
      float* y, int64_t y_n, int64_t y_s0,
      float alpha) {
  const int n = (int)x_n;
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    y[i * y_s0] = alpha * x[i * x_s0] + y[i * y_s0];
}
