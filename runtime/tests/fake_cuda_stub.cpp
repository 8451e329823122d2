// A fake CUDA driver that behaves like the CUDA Toolkit's stub libcuda.so
// (lib64/stubs): cuInit fails with CUDA_ERROR_STUB_LIBRARY (34). Loaded by the
// runtime tests through TESSERA_LIBCUDA.
extern "C" int cuInit(unsigned flags) {
  (void)flags;
  return 34;
}

extern "C" int cuGetErrorName(int error, const char** name) {
  if (error == 34) {
    *name = "CUDA_ERROR_STUB_LIBRARY";
    return 0;
  }
  *name = nullptr;
  return 1;  // CUDA_ERROR_INVALID_VALUE
}
