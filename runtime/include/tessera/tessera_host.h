/* Host programs: what the compiled host code of @jit functions and programs
 * calls (docs/abi.md, "Host functions"). Included by tessera_runtime.h.
 *
 * A compiled @jit function (or a module's program) is a host function:
 *
 *   int32_t f(tessHostContext context, void** args, void** results);
 *
 * `args[j]` points at flattened parameter j exactly as for kernels (a
 * tensor is 1 + 2 * rank parameters: its data address, sizes, strides, see
 * tessTensorKernelArgs); `results[i]` points at a tessTensor that receives
 * result i (a new allocation the caller owns and frees with
 * tessHostFreeTensor), or at a scalar of the result's type. It returns a
 * tessStatus. Call it through tessHostCall, which frees what the call
 * allocated and did not return, also when it fails.
 *
 * The context holds what the host code runs with: the device, the stream,
 * the module whose kernels it launches (by name) and where `print` writes. */
#ifndef TESSERA_HOST_H
#define TESSERA_HOST_H

#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tessHostContext_st* tessHostContext;

typedef int32_t (*tessHostFunction)(tessHostContext context, void** args, void** results);

/* The host ABI's version: a CPU code object with host functions exports
 * `uint32_t tessera_host_abi_version` equal to it. */
#define TESS_HOST_ABI_VERSION 7u

/* What compiled host code calls, through the context (so that a code object
 * loaded with dlopen needs no symbols from the runtime): a context points at
 * a struct whose first member is a pointer to this table, and the table's
 * members are in this order (docs/abi.md). */
typedef struct tessHostServices {
  uint32_t abi_version;
  tessStatus (*alloc)(tessHostContext context, uint64_t bytes, tessDevicePtr* ptr);
  tessStatus (*free)(tessHostContext context, tessDevicePtr ptr);
  tessStatus (*keep)(tessHostContext context, tessDevicePtr ptr);
  tessStatus (*launch)(tessHostContext context, const char* name, const uint32_t grid[3], const uint32_t group[3],
                       void** args);
  tessStatus (*print_text)(tessHostContext context, const char* text);
  tessStatus (*print_tensor)(tessHostContext context, const tessTensor* tensor);
  tessStatus (*print_scalar)(tessHostContext context, tessDtype dtype, const void* value);
  /* ABI 7: save, load and save_text take `where`, the ts.save/ts.load's source position. */
  tessStatus (*save)(tessHostContext context, const char* path, const tessTensor* tensor, const char* where);
  tessStatus (*load)(tessHostContext context, const char* path, tessDtype dtype, int32_t rank, const int64_t* dims,
                     tessTensor* tensor, const char* where);
  tessStatus (*fail)(tessHostContext context, const char* message);
  /* ABI 2: meshes and collectives (docs/distributed.md, "The language"). */
  tessStatus (*mesh)(tessHostContext context, const char* mesh);
  tessStatus (*collective)(tessHostContext context, const char* mesh, const char* operation, const tessTensor* source,
                           const tessTensor* target);
  /* ABI 3: a value read back to the host (a 0-d tensor's, docs/ir/host.md). */
  tessStatus (*read)(tessHostContext context, tessDevicePtr source, uint64_t bytes, void* destination);
  /* ABI 4: a launch of an autotuned kernel through the tuner (docs/autotuning.md). */
  tessStatus (*launch_tuned)(tessHostContext context, const char* tuning, const uint32_t* grids,
                             const uint32_t* groups, void** args, const tessTensor* const* tensors);
  /* ABI 4 too: a number printed by a Python format spec (an f-string's `{v:.4f}`). */
  tessStatus (*print_formatted)(tessHostContext context, tessDtype dtype, const void* value, const char* spec);
  /* ABI 5: a collective in two halves (the pass overlap-collectives, docs/distributed.md). */
  tessStatus (*collective_start)(tessHostContext context, const char* mesh, const char* operation,
                                 const tessTensor* source, const tessTensor* target, int64_t* request);
  tessStatus (*collective_wait)(tessHostContext context, int64_t request);
  /* ABI 6: ts.save to a path formatted when the program runs (`f"ckpt_{step}.npy"`). */
  tessStatus (*text_begin)(tessHostContext context);
  tessStatus (*save_text)(tessHostContext context, const tessTensor* tensor, const char* where);
} tessHostServices;

/* What a CPU code object exports as `tessera_host_functions`, ended by an
 * entry with a null name. */
typedef struct tessHostFunctionEntry {
  const char* name;
  tessHostFunction function;
} tessHostFunctionEntry;

/* A context on `device` launching the kernels of `module` (a module of the
 * same device) on `stream` (null: the device's default stream); print
 * writes to standard output. */
tessStatus tessHostContextCreate(tessDevice device, tessStream stream, tessModule module, tessHostContext* context);
/* Where print writes (null: standard output). */
tessStatus tessHostContextSetOutput(tessHostContext context, FILE* output);
tessStatus tessHostContextDestroy(tessHostContext context);

/* Runs `function`; on return the allocations the call made are freed except
 * the tensors it returned. The runtime's last error message says what failed. */
tessStatus tessHostCall(tessHostContext context, tessHostFunction function, void** args, void** results);
/* Frees a tensor a host function returned. */
tessStatus tessHostFreeTensor(tessHostContext context, const tessTensor* tensor);

/* --- the services (compiled code calls them through tessHostServices) --------------- */
tessStatus tessHostAlloc(tessHostContext context, uint64_t bytes, tessDevicePtr* ptr);
tessStatus tessHostFree(tessHostContext context, tessDevicePtr ptr);
/* Marks an allocation as returned to the caller (not freed by tessHostCall). */
tessStatus tessHostKeep(tessHostContext context, tessDevicePtr ptr);
/* Launches kernel `name` of the context's module: grid and group as
 * tessLaunchKernel's, no dynamic shared memory. A grid with no groups (a
 * size 0 in it: the grid of a tensor without elements) launches nothing. */
tessStatus tessHostLaunch(tessHostContext context, const char* name, const uint32_t grid[3], const uint32_t group[3],
                          void** args);
/* Launches an autotuned kernel through the tuner (tessera_tuner.h,
 * docs/autotuning.md, "Launches from @jit code"): the variant the tuner
 * picks for the key of these arguments, on its own grid and group. `tuning`
 * is the compiler's text: the kernel's name, the default variant's index,
 * then lines "v NAME\tPOINT" (each variant, in order), "t PARAM\tMUT" (each
 * tensor argument: its name, 1 when the kernel writes it) and "k DIM\tT\tA"
 * (each key= dimension: axis A of tensor T), each ended by '\n'. `grids`
 * and `groups` hold 3 sizes per variant, `args` the flattened arguments as
 * tessHostLaunch's, `tensors` the tensor arguments. The first launch for a
 * key in the process asks the tuner (the cache, else every variant timed
 * with these arguments, the `mut` tensors copied first and put back after);
 * later ones reuse its choice. In a job of several ranks (TESSERA_AUTOTUNE
 * not 0), rank 0 tunes and broadcasts its choice (docs/autotuning.md). */
tessStatus tessHostLaunchTuned(tessHostContext context, const char* tuning, const uint32_t* grids,
                               const uint32_t* groups, void** args, const tessTensor* const* tensors);
/* print: text, a tensor (NumPy's nested-list layout), a scalar of `dtype` at
 * `value` (bool is one byte; fp8/fp6/fp4 their code in one byte). */
tessStatus tessHostPrintText(tessHostContext context, const char* text);
tessStatus tessHostPrintTensor(tessHostContext context, const tessTensor* tensor);
tessStatus tessHostPrintScalar(tessHostContext context, tessDtype dtype, const void* value);
/* The number at `value` formatted as Python's format(value, spec) would
 * (support/format_spec.h: fill, alignment, sign, '#', '0', width, precision,
 * the types d b o x X e E f F g G %). */
tessStatus tessHostPrintFormatted(tessHostContext context, tessDtype dtype, const void* value, const char* spec);
/* ts.save: the tensor as a .npy file (types NumPy lacks are saved as float32).
 * `where` ("file.tsr:LINE:COL" of the ts.save, or null) starts the message of
 * a failure (a file that cannot be written), as it does tessHostLoad's. */
tessStatus tessHostSave(tessHostContext context, const char* path, const tessTensor* tensor, const char* where);
/* A path formatted when the program runs: after tessHostTextBegin the print
 * services write into the context's text instead of the output (on every
 * rank), and tessHostSaveText saves `tensor` as tessHostSave would to the
 * file that text names, ending it. */
tessStatus tessHostTextBegin(tessHostContext context);
tessStatus tessHostSaveText(tessHostContext context, const tessTensor* tensor, const char* where);
/* ts.load: a new contiguous tensor of `dtype` and `rank` from a .npy file;
 * `dims[i]` >= 0 must match the file's size, -1 takes it. A file that
 * cannot be read or does not match fails with a message that starts with
 * `where` (the ts.load's "file.tsr:LINE:COL", or null). */
tessStatus tessHostLoad(tessHostContext context, const char* path, tessDtype dtype, int32_t rank,
                        const int64_t* dims, tessTensor* tensor, const char* where);
/* A run-time check failed: returns TESS_ERROR_INVALID_VALUE with `message`. */
tessStatus tessHostFail(tessHostContext context, const char* message);
/* The mesh `mesh` describes ("SHAPE;AXES;DEVICES", comma-separated lists:
 * "2,2;dp,tp;cpu:0,cpu:1,cpu:2,cpu:3"): created on first use (collectively,
 * tessMeshCreate) and kept until the context is destroyed. On a CPU device
 * every device of the mesh is a CPU rank (TESS_MESH_FORCE_CPU). */
tessStatus tessHostMesh(tessHostContext context, const char* mesh);
/* One collective on `mesh` from `source` into `target` (contiguous tensors
 * of this rank's device), as `operation` says: "kind=K;axis=A;op=O;dim=D;
 * root=R;spec=S;partial=P" with K all_reduce, all_gather (along dimension
 * D), reduce_scatter (along D), broadcast, shard (this rank's block of a
 * whole tensor; S: per dimension the axis it is split over, or empty) or
 * unshard (the whole tensor from every rank's block, reducing the axes P
 * with O first). */
tessStatus tessHostCollective(tessHostContext context, const char* mesh, const char* operation,
                              const tessTensor* source, const tessTensor* target);
/* tessHostCollective in two halves: the start begins the operation and
 * gives `*request`, a number the wait takes back once (0: the operation
 * completed at the start). Between them `source` must not be written and
 * `target` neither read nor written. all_reduce, all_gather and
 * reduce_scatter along dimension 0, broadcast, send, recv and sendrecv start
 * the runtime's tessMesh*Start collectives (MPI's non-blocking ones); the
 * others (along another dimension, shard, unshard, autodiff's transposed
 * forms) complete at the start. tessHostCall waits for any the code left. */
tessStatus tessHostCollectiveStart(tessHostContext context, const char* mesh, const char* operation,
                                   const tessTensor* source, const tessTensor* target, int64_t* request);
tessStatus tessHostCollectiveWait(tessHostContext context, int64_t request);
/* Copies `bytes` at device address `source` to host memory `destination`
 * after the context's earlier launches finished (a condition on a tensor, a
 * 0-d tensor passed as a kernel's scalar). */
tessStatus tessHostRead(tessHostContext context, tessDevicePtr source, uint64_t bytes, void* destination);

#ifdef __cplusplus
}
#endif

#endif /* TESSERA_HOST_H */
