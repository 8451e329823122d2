/* The Tessera runtime (libtessera_rt): a C ABI for devices, memory, streams,
 * events, modules and kernel launches. docs/runtime.md describes it;
 * docs/abi.md is the contract between compiled kernels and the runtime.
 *
 * Every function that can fail returns a tessStatus. On failure the calling
 * thread's last error message (tessGetLastErrorMessage) says what failed in
 * words: the CUDA error name, the kernel, the sizes. A successful call leaves
 * the message alone. Nothing aborts the host process.
 *
 * Devices: device 0 is always the CPU device; CUDA devices follow when the
 * CUDA driver (libcuda.so.1, loaded with dlopen, so nothing needs the CUDA
 * Toolkit at build time) and a GPU are present. Devices live as long as the
 * process. The runtime is thread-safe: any thread may call any function.
 * Meshes and collectives are declared in tessera_collectives.h (included at
 * the end). */
#ifndef TESSERA_RUNTIME_H
#define TESSERA_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum tessStatus {
  TESS_SUCCESS = 0,
  TESS_ERROR_INVALID_VALUE = 1,     /* a bad argument: null pointer, bad size, bad or destroyed handle */
  TESS_ERROR_OUT_OF_MEMORY = 2,
  TESS_ERROR_NO_DEVICE = 3,         /* no such device */
  TESS_ERROR_DRIVER_NOT_FOUND = 4,  /* CUDA asked for, but libcuda.so.1 could not be loaded or initialised */
  TESS_ERROR_DRIVER = 5,            /* the CUDA driver reported an error (named in the message) */
  TESS_ERROR_NOT_FOUND = 6,         /* a kernel or symbol name that does not exist, a missing file */
  TESS_ERROR_INVALID_MODULE = 7,    /* an image that is not a loadable module */
  TESS_ERROR_LAUNCH = 8,            /* a launch shape or shared-memory size the device cannot run */
  TESS_ERROR_KERNEL = 9,            /* the kernel failed while running (it reported an error) */
  TESS_ERROR_UNSUPPORTED = 10,      /* the operation does not exist on this device */
  TESS_ERROR_LIBRARY_NOT_FOUND = 11, /* MPI (libtessera_rt_mpi.so, libmpi) or NCCL (libnccl.so.2) could not be loaded */
  TESS_ERROR_COLLECTIVE = 12        /* MPI or NCCL reported an error (named in the message) */
} tessStatus;

/* The status's name, e.g. "TESS_ERROR_LAUNCH". */
const char* tessGetErrorName(tessStatus status);
/* A short description of the status kind. */
const char* tessGetErrorString(tessStatus status);
/* The detailed message of the last failure on this thread ("" if none). The
 * pointer is valid until the thread's next failing call. */
const char* tessGetLastErrorMessage(void);

/* --- devices ------------------------------------------------------------------- */
typedef enum tessDeviceKind { TESS_DEVICE_CPU = 0, TESS_DEVICE_CUDA = 1 } tessDeviceKind;

typedef enum tessDeviceAttribute {
  TESS_ATTR_MAX_GROUP_SIZE = 0,          /* lanes per group */
  TESS_ATTR_MAX_SHARED_PER_GROUP = 1,    /* bytes of shared memory (static + dynamic) a group may use */
  TESS_ATTR_MULTIPROCESSOR_COUNT = 2,    /* SMs, or worker threads on the CPU */
  TESS_ATTR_WARP_SIZE = 3,
  TESS_ATTR_COMPUTE_CAPABILITY = 4,      /* major * 10 + minor; 0 on the CPU */
  TESS_ATTR_L2_CACHE_SIZE = 5            /* bytes of L2 cache (what the tuner flushes); 0 on the CPU */
} tessDeviceAttribute;

typedef struct tessDevice_st* tessDevice;

/* Number of devices: 1 (the CPU) plus the CUDA devices that work. */
tessStatus tessGetDeviceCount(int* count);
tessStatus tessGetDevice(int index, tessDevice* device);
/* The first CUDA device when one works, else the CPU device. */
tessStatus tessGetDefaultDevice(tessDevice* device);
/* Parses "cpu", "cuda" (cuda:0) and "cuda:N". */
tessStatus tessGetDeviceByName(const char* name, tessDevice* device);
tessStatus tessDeviceGetKind(tessDevice device, tessDeviceKind* kind);
/* Its index in the device list (0 for the CPU). */
tessStatus tessDeviceGetIndex(tessDevice device, int* index);
/* A NUL-terminated name such as "cpu (16 threads)" or "cuda:0 (NVIDIA H100)",
 * truncated to `capacity` bytes. */
tessStatus tessDeviceGetName(tessDevice device, char* name, size_t capacity);
tessStatus tessDeviceGetAttribute(tessDevice device, tessDeviceAttribute attribute, int64_t* value);
/* Why there are no CUDA devices ("" when there are), e.g. "libcuda.so.1 not
 * found ...", or cuInit's error with its name. Never null. */
const char* tessCudaUnavailableReason(void);

/* --- memory -------------------------------------------------------------------- */
/* Device addresses are 64-bit integers (host pointers on the CPU device). On
 * the CPU device every copy and memset must lie inside one live allocation of
 * tessMalloc; an address outside is a TESS_ERROR_INVALID_VALUE naming it. */
typedef uint64_t tessDevicePtr;

/* 0 bytes gives a valid, unique address. Allocations are 256-byte aligned. */
tessStatus tessMalloc(tessDevice device, size_t bytes, tessDevicePtr* ptr);
/* Freeing 0 does nothing; freeing anything else that is not a live allocation
 * (never allocated, already freed, inside an allocation) is an error. */
tessStatus tessFree(tessDevice device, tessDevicePtr ptr);
tessStatus tessMemcpyHtoD(tessDevice device, tessDevicePtr dst, const void* src, size_t bytes);
tessStatus tessMemcpyDtoH(tessDevice device, void* dst, tessDevicePtr src, size_t bytes);
tessStatus tessMemcpyDtoD(tessDevice device, tessDevicePtr dst, tessDevicePtr src, size_t bytes);
tessStatus tessMemset(tessDevice device, tessDevicePtr dst, int value, size_t bytes);

/* --- streams and events ---------------------------------------------------------- */
/* Work on one stream runs in submission order. A null stream is the device's
 * default stream. On the CPU device all work runs before the call returns, so
 * every stream and event is always complete. */
typedef struct tessStream_st* tessStream;
typedef struct tessEvent_st* tessEvent;

tessStatus tessStreamCreate(tessDevice device, tessStream* stream);
/* The device a stream belongs to. */
tessStatus tessStreamGetDevice(tessStream stream, tessDevice* device);
tessStatus tessStreamSynchronize(tessStream stream);
/* Later work on `stream` waits for `event` (recorded on any stream of the same device). */
tessStatus tessStreamWaitEvent(tessStream stream, tessEvent event);
tessStatus tessStreamDestroy(tessStream stream);
/* Waits for all work on the device. */
tessStatus tessDeviceSynchronize(tessDevice device);
tessStatus tessEventCreate(tessDevice device, tessEvent* event);
/* Records the event on `stream` (null: the default stream of the event's device). */
tessStatus tessEventRecord(tessEvent event, tessStream stream);
tessStatus tessEventSynchronize(tessEvent event);
/* Milliseconds between two recorded events of one device. */
tessStatus tessEventElapsedTime(float* milliseconds, tessEvent start, tessEvent end);
tessStatus tessEventDestroy(tessEvent event);

/* --- modules and kernels -------------------------------------------------------------- */
typedef struct tessModule_st* tessModule;
/* A kernel handle stays valid until its module is unloaded. */
typedef struct tessKernel_st* tessKernel;

/* The CPU kernel ABI (docs/abi.md). A CPU code object exports
 * `uint32_t tessera_cpu_abi_version` equal to this value. */
#define TESS_CPU_ABI_VERSION 2u

struct tessCpuLaunchContext;

/* One lane of a group: the body of a kernel that synchronises (ABI 2). */
typedef void (*tessCpuLaneFunction)(void** args, const struct tessCpuLaunchContext* context, uint64_t lane);

/* What a CPU kernel receives besides its arguments. The runtime owns it; the
 * kernel must not keep pointers into it after returning. */
typedef struct tessCpuLaunchContext {
  uint32_t grid[3];                /* groups per axis */
  uint32_t group[3];               /* lanes per axis */
  uint32_t group_id[3];            /* this group; axis 0 varies fastest */
  uint32_t worker;                 /* the host thread running it, < TESS_ATTR_MULTIPROCESSOR_COUNT */
  void* shared;                    /* this group's static shared memory, 64-byte aligned */
  void* dynamic_shared;            /* its dynamic shared memory, 64-byte aligned, after the static part */
  uint64_t static_shared_bytes;    /* the kernel entry's static_shared_bytes */
  uint64_t dynamic_shared_bytes;   /* the launch's dynamic_shared_bytes */
  void* scratch;                   /* lanes * scratch_bytes_per_lane bytes, 64-byte aligned (null if 0) */
  uint64_t scratch_bytes;
  /* Reports a failure (a bounds check, a trap): the launch returns
   * TESS_ERROR_KERNEL with this message; groups not yet started are skipped.
   * The kernel should return after calling it. Thread-safe. */
  void (*report_error)(const struct tessCpuLaunchContext* context, const char* message);
  void* runtime_private;           /* for report_error; opaque */
  /* Lane services (ABI 2) for kernels with barriers or warp operations:
   * run_lanes runs lane_function(args, context, l) for every lane l of the
   * group as a light-weight lane context (a fiber) on the calling thread;
   * inside it, barrier waits until every lane of the group that has not
   * returned arrived, and shuffle exchanges values among the 32 lanes of the
   * caller's warp, returning the value `source_lane` (0..31, in the warp)
   * passed to the same shuffle, or the caller's own value when that lane does
   * not exist or has returned. Both may only be called under run_lanes. */
  void (*run_lanes)(const struct tessCpuLaunchContext* context, tessCpuLaneFunction lane_function, void** args);
  void (*barrier)(const struct tessCpuLaunchContext* context);
  uint64_t (*shuffle)(const struct tessCpuLaunchContext* context, uint64_t value, uint32_t source_lane);
} tessCpuLaunchContext;

/* A CPU kernel runs every lane of one group: in a loop when it never
 * synchronises, else through context->run_lanes. `args` are tessLaunchKernel's. */
typedef void (*tessCpuKernelFunction)(void** args, const tessCpuLaunchContext* context);

typedef struct tessCpuKernelEntry {
  const char* name;                    /* the kernel's name; null ends a table */
  tessCpuKernelFunction function;
  uint64_t static_shared_bytes;        /* shared memory the kernel allocates itself */
  uint64_t scratch_bytes_per_lane;     /* per-lane storage for values live across barriers */
} tessCpuKernelEntry;

/* A CPU module from `count` entries (what AOT objects embed). The table is
 * copied; the functions must stay loaded while the module is. */
tessStatus tessModuleLoadCpuTable(tessDevice device, const tessCpuKernelEntry* entries, size_t count,
                                  tessModule* module);
/* A module from an image in memory: a fatbin, cubin or PTX on CUDA devices;
 * on the CPU, an ELF shared object exporting `tessera_cpu_kernels`, an array
 * of tessCpuKernelEntry ended by an entry with a null name, and
 * `tessera_cpu_abi_version` (docs/abi.md). */
tessStatus tessModuleLoadData(tessDevice device, const void* image, size_t bytes, tessModule* module);
/* The same from a file (on the CPU the shared object is loaded in place). */
tessStatus tessModuleLoadFile(tessDevice device, const char* path, tessModule* module);
tessStatus tessModuleGetKernel(tessModule module, const char* name, tessKernel* kernel);
tessStatus tessModuleUnload(tessModule module);

/* Launches `kernel` over grid[0] x grid[1] x grid[2] groups of
 * group[0] x group[1] x group[2] lanes with `dynamic_shared_bytes` of dynamic
 * shared memory per group, on `stream` (null: the default stream of the
 * kernel's device). `args[j]` points at the value of flattened parameter j: a
 * scalar is one, a tensor of rank r is 1 + 2r (its base address, r sizes, r
 * strides; tessTensorKernelArgs), as on the GPU (docs/abi.md). The values
 * are read before the call returns. */
tessStatus tessLaunchKernel(tessKernel kernel, const uint32_t grid[3], const uint32_t group[3],
                            size_t dynamic_shared_bytes, tessStream stream, void** args);

/* --- tensors ------------------------------------------------------------------------ */
/* The element types, one per line of <tessera/scalar_type.def>: the dtype
 * table the compiler uses too, so the codes cannot drift apart. A tessDtype
 * is the line's index: TESS_BOOL = 0, TESS_I8, TESS_I16, TESS_I32, TESS_I64,
 * TESS_U8, TESS_U16, TESS_U32, TESS_U64, TESS_F16, TESS_BF16, TESS_F32 = 11,
 * TESS_F64, TESS_FP8_E4M3, TESS_FP8_E5M2, TESS_FP6_E2M3 (packed: element i
 * occupies bits [6i, 6i + 6) of the buffer), TESS_FP6_E3M2, TESS_FP4_E2M1 = 17
 * (packed: two per byte, the even element in the low nibble). */
typedef enum tessDtype {
#define TESSERA_SCALAR(Name, Spelling, Bits, Kind, Runtime, StorageBits) TESS_##Runtime,
#include "tessera/scalar_type.def"
} tessDtype;

/* The number of dtypes (not a tessDtype, so that switches over one stay exhaustive). */
enum {
  TESS_DTYPE_COUNT = 0
#define TESSERA_SCALAR(Name, Spelling, Bits, Kind, Runtime, StorageBits) +1
#include "tessera/scalar_type.def"
};

#define TESS_MAX_RANK 8

/* A view of a tensor in device memory; strides are in elements. */
typedef struct tessTensor {
  tessDevicePtr data;
  tessDtype dtype;
  int32_t rank;
  int64_t shape[TESS_MAX_RANK];
  int64_t strides[TESS_MAX_RANK];
} tessTensor;

/* The source-language name ("f32", "fp8_e4m3", ...); null for an invalid dtype. */
const char* tessDtypeName(tessDtype dtype);
/* Storage bits per element: 8 for bool, 6 and 4 for the packed sub-byte
 * floats; 0 for an invalid dtype. */
int tessDtypeBits(tessDtype dtype);
/* Looks a dtype up by its name. */
tessStatus tessDtypeFromName(const char* name, tessDtype* dtype);
/* A contiguous row-major view of `data` (rank 0 to TESS_MAX_RANK). */
tessStatus tessTensorMakeContiguous(tessDevicePtr data, tessDtype dtype, int32_t rank, const int64_t* shape,
                                    tessTensor* tensor);
/* The kernel arguments of a tensor parameter: writes 1 + 2 * rank pointers to
 * `args` (at most `capacity`), to the tensor's data address, its sizes and its
 * strides, all pointing into `*tensor`, which must live until the launch
 * returns; `*count` is how many. */
tessStatus tessTensorKernelArgs(const tessTensor* tensor, void** args, size_t capacity, size_t* count);
/* Bytes a view spans from `data`: the highest element's offset plus one, in
 * whole bytes (0 for an empty tensor). Strides must not be negative. */
tessStatus tessTensorStorageBytes(const tessTensor* tensor, uint64_t* bytes);

/* --- contiguous variants (docs/abi.md, "Contiguous variants") ------------------------ */
/* A GPU module holds, beside each kernel with tensor parameters, its variant
 * compiled for contiguous tensors, named with this suffix ("saxpy$contiguous"). */
#define TESS_CONTIGUOUS_VARIANT_SUFFIX "$contiguous"
/* Whether a launch with these tensors may run a kernel's contiguous variant:
 * every tensor's innermost stride is 1 (or its innermost extent at most 1),
 * its other strides in [0, 2^31), every non-empty tensor's data is 16-byte
 * aligned, and no tensor the kernel
 * writes (writes[i] nonzero: a `mut` parameter) shares a byte with another
 * tensor. *applies gets 1 or 0. tessAotLaunch and `tesserac run` pick the
 * variant with it; the CPU target's kernels check the same rule themselves. */
tessStatus tessContiguousVariantApplies(const tessTensor* const* tensors, const uint8_t* writes, size_t count,
                                        int* applies);

#ifdef __cplusplus
}
#endif

/* Meshes and collectives. */
#include "tessera_collectives.h"
/* Host programs: what compiled @jit functions and programs call. */
#include "tessera_host.h"

#endif /* TESSERA_RUNTIME_H */
