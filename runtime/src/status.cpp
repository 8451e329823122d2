// Status names and the thread-local last error message.
#include "runtime_internal.h"

namespace tessera::rt {
namespace {
thread_local std::string last_error;
}

tessStatus fail(tessStatus status, std::string message) {
  last_error = std::move(message);
  return status;
}

const std::string& last_error_message() { return last_error; }

}  // namespace tessera::rt

extern "C" {

const char* tessGetErrorName(tessStatus status) {
  switch (status) {
    case TESS_SUCCESS: return "TESS_SUCCESS";
    case TESS_ERROR_INVALID_VALUE: return "TESS_ERROR_INVALID_VALUE";
    case TESS_ERROR_OUT_OF_MEMORY: return "TESS_ERROR_OUT_OF_MEMORY";
    case TESS_ERROR_NO_DEVICE: return "TESS_ERROR_NO_DEVICE";
    case TESS_ERROR_DRIVER_NOT_FOUND: return "TESS_ERROR_DRIVER_NOT_FOUND";
    case TESS_ERROR_DRIVER: return "TESS_ERROR_DRIVER";
    case TESS_ERROR_NOT_FOUND: return "TESS_ERROR_NOT_FOUND";
    case TESS_ERROR_INVALID_MODULE: return "TESS_ERROR_INVALID_MODULE";
    case TESS_ERROR_LAUNCH: return "TESS_ERROR_LAUNCH";
    case TESS_ERROR_KERNEL: return "TESS_ERROR_KERNEL";
    case TESS_ERROR_UNSUPPORTED: return "TESS_ERROR_UNSUPPORTED";
    case TESS_ERROR_LIBRARY_NOT_FOUND: return "TESS_ERROR_LIBRARY_NOT_FOUND";
    case TESS_ERROR_COLLECTIVE: return "TESS_ERROR_COLLECTIVE";
  }
  return "TESS_ERROR_UNKNOWN";
}

const char* tessGetErrorString(tessStatus status) {
  switch (status) {
    case TESS_SUCCESS: return "no error";
    case TESS_ERROR_INVALID_VALUE: return "invalid argument";
    case TESS_ERROR_OUT_OF_MEMORY: return "out of memory";
    case TESS_ERROR_NO_DEVICE: return "no such device";
    case TESS_ERROR_DRIVER_NOT_FOUND: return "the CUDA driver (libcuda.so.1) is not available";
    case TESS_ERROR_DRIVER: return "the CUDA driver reported an error";
    case TESS_ERROR_NOT_FOUND: return "name not found";
    case TESS_ERROR_INVALID_MODULE: return "not a loadable module";
    case TESS_ERROR_LAUNCH: return "invalid launch configuration";
    case TESS_ERROR_KERNEL: return "the kernel failed";
    case TESS_ERROR_UNSUPPORTED: return "not supported on this device";
    case TESS_ERROR_LIBRARY_NOT_FOUND: return "a communication library (MPI or NCCL) could not be loaded";
    case TESS_ERROR_COLLECTIVE: return "a collective failed";
  }
  return "unknown status";
}

const char* tessGetLastErrorMessage(void) { return tessera::rt::last_error_message().c_str(); }

}  // extern "C"
