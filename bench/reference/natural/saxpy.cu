// bench/reference/natural/saxpy.cu: saxpy as a CUDA programmer writes it:
// __restrict__ pointers, unit stride, an int size. Compared with the
// contiguous variant tesserac compiles beside the general kernel
// (docs/abi.md, "Contiguous variants"); ../saxpy.cu is the stride-faithful
// twin of the general one.
extern "C" __global__ void __launch_bounds__(128)
saxpy(const float* __restrict__ x, float* __restrict__ y, int n, float alpha) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = alpha * x[i] + y[i];
}
