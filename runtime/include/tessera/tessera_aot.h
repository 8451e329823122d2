/* Ahead-of-time compiled modules: what `tesserac model.tsr -c` puts in a host
 * object and how its launch stubs reach the runtime (docs/aot.md).
 *
 * An object holds one tessAotModule: the GPU image (a fatbin or PTX), the CPU
 * code of every kernel (a tessCpuKernelEntry table linked into the program,
 * no dlopen), and each kernel's signature. Its launch stubs call tessAotLaunch
 * with the module, the kernel's index and one pointer per source parameter.
 * The runtime checks the arguments against the signature (dtypes, ranks,
 * static dimensions, symbolic dimensions bound by several tensors, the
 * group and shared-memory limits of the device), loads the module on the
 * device the first time it is needed (once per device, thread-safe) and
 * launches. Generated C++ headers (tessera/aot.hpp) wrap the stubs in typed
 * functions; C code may call the stubs directly. */
#ifndef TESSERA_AOT_H
#define TESSERA_AOT_H

#include "tessera/tessera_runtime.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Bumped on any change to the structures below; tessAotLaunch refuses a
 * module of another version. */
#define TESS_AOT_ABI_VERSION 3u

typedef enum tessAotImageKind {
  TESS_AOT_IMAGE_NONE = 0,   /* compiled without GPU code (--gpu-code=none) */
  TESS_AOT_IMAGE_FATBIN = 1, /* cubins for the listed architectures + PTX of the newest */
  TESS_AOT_IMAGE_PTX = 2     /* PTX only (no ptxas at build time): the driver compiles it at load */
} tessAotImageKind;

/* One source parameter. A tensor's dimension d is dims[d]: a static size when
 * >= 0, symbolic dimension number (-1 - dims[d]) when < 0 (its name is
 * symbols[-1 - dims[d]] of the kernel), or TESS_AOT_ANY_DIM for `?`. */
#define TESS_AOT_ANY_DIM INT64_MIN
typedef struct tessAotParameter {
  const char* name;
  uint32_t is_tensor; /* 1: args[i] points at a tessTensor; 0: at the scalar's value */
  uint32_t is_mut;    /* a `mut` tensor: the kernel writes it */
  tessDtype dtype;    /* the element type or the scalar's type */
  int32_t rank;       /* tensors only */
  const int64_t* dims;
} tessAotParameter;

typedef struct tessAotKernel {
  const char* name;
  const char* signature; /* the source text, e.g. "saxpy(x: f32[n], y: mut f32[n], alpha: f32)" */
  uint32_t group[3];     /* the declared group shape (the code is compiled for it) */
  uint64_t static_shared_bytes; /* shared memory the kernel allocates itself */
  uint32_t parameter_count;
  const tessAotParameter* parameters;
  uint32_t symbol_count;
  const char* const* symbols; /* names of the symbolic dimensions */
  /* A variant of an autotuned kernel (docs/autotuning.md): the kernel's
   * name, and this variant's point ("BM=64, BN=128"); null otherwise. */
  const char* autotune_of;
  const char* autotune_point;
  /* ABI 3: the kernel's key=("n", ...) names, comma-separated ("n,k"); null
   * without key= (every tensor extent, bucketed, makes the tuner's key). */
  const char* autotune_key;
} tessAotKernel;

typedef struct tessAotModule {
  uint32_t abi_version;    /* TESS_AOT_ABI_VERSION */
  uint32_t image_kind;     /* tessAotImageKind */
  const char* source;      /* the .tsr file it was compiled from, as given to tesserac */
  const void* image;       /* the GPU image; PTX is NUL-terminated */
  uint64_t image_bytes;
  const tessCpuKernelEntry* cpu_kernels; /* CPU code, one entry per kernel, in kernel order */
  uint32_t cpu_abi_version;              /* TESS_CPU_ABI_VERSION of that code */
  uint32_t kernel_count;
  const tessAotKernel* kernels;
  void** cache; /* one pointer of zero-initialised storage the runtime uses to find its loaded modules */
} tessAotModule;

/* Launches kernel `kernel_index` of `module` on `stream`, or on the default
 * stream of `device` when `stream` is null (then `device` must not be null;
 * with a stream, `device` may be null or must be the stream's device).
 * `args[i]` points at a tessTensor for a tensor parameter and at the value
 * for a scalar one (bool: one byte; f16/bf16: the 16-bit pattern; fp8: one
 * byte). Nothing runs unless every check passes; the message names the
 * kernel, the parameter and the sizes. */
tessStatus tessAotLaunch(const tessAotModule* module, uint32_t kernel_index, tessDevice device, tessStream stream,
                         const uint32_t grid[3], size_t dynamic_shared_bytes, const void* const* args);

/* One knob of a variant's point. */
typedef struct tessAotKnob {
  const char* name;
  int64_t value;
} tessAotKnob;

/* The grid of one variant: fills grid[0..2] for the variant's knobs. */
typedef tessStatus (*tessAotGridFunction)(void* user, const tessAotKnob* knobs, size_t knob_count, uint32_t grid[3]);

/* Launches autotuned kernel `kernel_index` (its default variant) through
 * the tuner (tessera_tuner.h, docs/autotuning.md, "AOT"): the variant the
 * cache names for the arguments' key, else every variant of the module
 * timed with these arguments (the `mut` tensors are copied first and put
 * back after), or the default with TESSERA_AUTOTUNE=0. Each variant runs on
 * the grid `grid` gives for its knobs. The choice is remembered in the
 * process for the key. Then launches the choice like tessAotLaunch. */
tessStatus tessAotLaunchTuned(const tessAotModule* module, uint32_t kernel_index, tessDevice device, tessStream stream,
                              tessAotGridFunction grid, void* grid_user, size_t dynamic_shared_bytes,
                              const void* const* args);

/* The kernel handle for `device`, loading the module there on first use. */
tessStatus tessAotGetKernel(const tessAotModule* module, uint32_t kernel_index, tessDevice device, tessKernel* kernel);

/* Calls the compiled host code of a @jit function of `module` (docs/aot.md,
 * "@jit functions"): `function` is its signature (the group fields unused),
 * `host` its code. Device and stream as tessAotLaunch's; `args` as
 * tessAotLaunch's, checked against the signature the same way. `results[i]`
 * points at a tessTensor that receives result i, a new tensor on the device
 * the caller frees with tessFree(device, tensor.data), or at a scalar of the
 * result's type. The kernels it launches run on the stream; it returns when
 * they are done. Allocations of the call that are not results are freed, also
 * when it fails. */
tessStatus tessAotCall(const tessAotModule* module, const tessAotKernel* function, tessHostFunction host,
                       tessDevice device, tessStream stream, const void* const* args, void** results);

/* What a generated header's @jit wrapper returns for a null result pointer:
 * TESS_ERROR_INVALID_VALUE, with the message "calling 'FUNCTION': the result
 * pointer 'RESULT' is null" (the call would write through it). */
tessStatus tessAotNullResult(const char* function, const char* result);

/* tessAotCall for a @jit function whose collectives run on a mesh (docs/aot.md,
 * "@jit functions on a mesh"): `mesh_description` is the function's mesh as
 * compiled ("2;tp;cpu:0,cpu:1": shape; axes; devices), `mesh` the caller's
 * mesh (tessMeshCreate), which must have the same axes and shape (the devices
 * may differ: the caller's mesh says where this rank runs). The call's
 * collectives run on `mesh`, which stays the caller's: it is not destroyed. */
tessStatus tessAotCallOnMesh(const tessAotModule* module, const tessAotKernel* function, tessHostFunction host,
                             const char* mesh_description, tessMesh mesh, tessDevice device, tessStream stream,
                             const void* const* args, void** results);

#ifdef __cplusplus
}
#endif

#endif /* TESSERA_AOT_H */
