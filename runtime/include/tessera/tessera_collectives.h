/* Meshes and collectives of the Tessera runtime (libtessera_rt), part of its
 * C ABI and included by tessera_runtime.h. docs/distributed.md describes them.
 *
 * A job is one process per device (SPMD), started by mpirun (or any launcher
 * MPI supports) or alone. A mesh arranges the job's ranks in a grid with
 * named axes: rank r of the job is device r of the mesh, and the mesh has one
 * communicator per axis, over the ranks that differ only in that axis's
 * coordinate. Collectives run on one axis (or, with a null axis name, on every
 * rank of the mesh), on this rank's device memory:
 *
 *   CPU devices ("cpu:i")  MPI (Open MPI, loaded on first use from the plugin
 *                          libtessera_rt_mpi.so), host buffers, synchronous
 *   CUDA devices ("cuda:i") NCCL (libnccl.so.2, loaded with dlopen), device
 *                          buffers, asynchronous on the given stream
 *   a job of one rank      a loopback communicator (no MPI, no NCCL)
 *
 * Creating and destroying a mesh and every collective are collective calls:
 * every rank of the group (the job, the mesh, the axis) makes the same calls
 * in the same order with matching arguments. Errors follow the runtime's
 * convention: a tessStatus, and the thread's last error message naming the
 * call, the collective, the mesh axis and the backend's own error. A peer that
 * does not take part within TESSERA_COLLECTIVE_TIMEOUT seconds (default 600)
 * ends the whole job with a message naming the collective and axis and a
 * non-zero exit status, instead of hanging. */
#ifndef TESSERA_COLLECTIVES_H
#define TESSERA_COLLECTIVES_H

#include "tessera_runtime.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tessMesh_st* tessMesh;
/* A collective started by a tessMesh*Start function, until tessCollectiveWait. */
typedef struct tessCollectiveRequest_st* tessCollectiveRequest;

/* Reductions. AVG is SUM divided by the group size (integers: truncated toward
 * zero, as C's division). */
typedef enum tessReduceOp {
  TESS_REDUCE_SUM = 0,
  TESS_REDUCE_PROD = 1,
  TESS_REDUCE_MAX = 2,
  TESS_REDUCE_MIN = 3,
  TESS_REDUCE_AVG = 4
} tessReduceOp;

/* Which library carries a mesh's collectives. */
typedef enum tessCollectiveBackend {
  TESS_COLLECTIVES_LOOPBACK = 0, /* a job of one rank: copies on the device */
  TESS_COLLECTIVES_MPI = 1,      /* CPU devices */
  TESS_COLLECTIVES_NCCL = 2      /* CUDA devices */
} tessCollectiveBackend;

/* tessMeshCreate flags. FORCE_CPU maps every device of the mesh to a CPU rank
 * (the compiler's --device cpu), so that a GPU program runs without GPUs. */
#define TESS_MESH_FORCE_CPU 1u

#define TESS_MESH_MAX_AXES 8

/* --- the job ------------------------------------------------------------------------- */
/* This process's rank in the job and the number of processes, from the
 * launcher's environment (Open MPI's OMPI_COMM_WORLD_RANK/SIZE, or PMI_RANK/
 * PMI_SIZE of MPICH and Intel MPI); 0 and 1 for a process started alone.
 * Neither loads MPI. */
tessStatus tessJobRank(int* rank);
tessStatus tessJobSize(int* size);
/* Ends the whole job: prints "tessera: rank R: <message>" to stderr (when
 * `message` is not null) and aborts every process with `exit_code` (MPI_Abort
 * when MPI was started, else exit). For a rank that cannot go on while its
 * peers wait for it in a collective. Does not return. */
void tessJobAbort(int exit_code, const char* message);

/* --- meshes -------------------------------------------------------------------------- */
/* Creates a mesh of `device_count` devices ("cpu:i", "cuda:i"; "cpu" and
 * "cuda" mean index 0) arranged as `axis_count` axes (1 to TESS_MESH_MAX_AXES)
 * named `axis_names` (distinct, non-empty) of sizes `shape` (each >= 1, their
 * product device_count), row-major: the last axis varies fastest, as NumPy's
 * reshape of the device list. Collective over every rank of the job, with
 * the same arguments (checked). A mesh with more devices than the job has
 * ranks is an error naming both; ranks beyond the mesh's size get a mesh they
 * are not a member of (tessMeshGetRank gives -1) and may only query and
 * destroy it. `cuda:i` is local GPU i of this rank's node, all of a mesh's
 * devices are CPU or all CUDA (without TESS_MESH_FORCE_CPU). */
tessStatus tessMeshCreate(const char* const* devices, int device_count, const char* const* axis_names,
                          const int* shape, int axis_count, unsigned flags, tessMesh* mesh);
/* Collective like creation. */
tessStatus tessMeshDestroy(tessMesh mesh);

/* This process's rank in the mesh (its job rank), or -1 if it is not a member. */
tessStatus tessMeshGetRank(tessMesh mesh, int* rank);
/* Number of devices. */
tessStatus tessMeshGetSize(tessMesh mesh, int* size);
tessStatus tessMeshGetAxisCount(tessMesh mesh, int* count);
/* The name of axis `axis` (0-based); valid while the mesh is. */
tessStatus tessMeshGetAxisName(tessMesh mesh, int axis, const char** name);
/* The size of the named axis (a null name: the whole mesh). */
tessStatus tessMeshGetAxisSize(tessMesh mesh, const char* axis, int* size);
/* This rank's index in the named axis's group: its coordinate along the axis
 * (a null name: its mesh rank). The `root` and `peer` of the collectives are
 * such indices. */
tessStatus tessMeshGetAxisRank(tessMesh mesh, const char* axis, int* rank);
/* The coordinates of mesh rank `rank`: axis_count values written to `coords`
 * (capacity at least axis_count). */
tessStatus tessMeshGetCoords(tessMesh mesh, int rank, int* coords, int capacity);
/* The mesh rank at `coords` (axis_count values). */
tessStatus tessMeshGetRankAt(tessMesh mesh, const int* coords, int* rank);
/* This rank's device: where the buffers of its collectives live (the CPU
 * device for a CPU rank, local GPU i for "cuda:i"). */
tessStatus tessMeshGetDevice(tessMesh mesh, tessDevice* device);
tessStatus tessMeshGetBackend(tessMesh mesh, tessCollectiveBackend* backend);

/* --- collectives ----------------------------------------------------------------------- */
/* Every collective takes the mesh, the axis name (null: every rank of the
 * mesh), buffers in the device memory of this rank's device (tessMalloc), an
 * element count and dtype, and a stream of that device (null: the default
 * stream). On CUDA devices the collective is queued on the stream and the call
 * returns; on CPU devices it is complete when the call returns. A count of 0
 * does nothing. Reductions support bool (MAX, MIN only: or, and), the integer
 * types, f16, bf16, f32 and f64 (NCCL: not i16/u16); the narrow float types
 * move (all_gather, broadcast, send, recv) but do not reduce. Only the ranks
 * of the mesh call collectives. */

/* recv[i] = op over the group of send[i], for i < count. recv == send is in
 * place; otherwise the buffers must not overlap. */
tessStatus tessMeshAllReduce(tessMesh mesh, const char* axis, tessDevicePtr send, tessDevicePtr recv, size_t count,
                             tessDtype dtype, tessReduceOp op, tessStream stream);
/* recv (size * count elements) is the concatenation of every rank's send
 * (count elements) in the order of their index along the axis: index j's
 * block starts at element j * count. In place when send is recv's block of
 * this rank. */
tessStatus tessMeshAllGather(tessMesh mesh, const char* axis, tessDevicePtr send, tessDevicePtr recv, size_t count,
                             tessDtype dtype, tessStream stream);
/* send holds size * count elements, cut into size blocks of count; the rank
 * with index j receives in recv (count elements) the reduction over the group
 * of every rank's block j. In place when recv is send's block of this rank. */
tessStatus tessMeshReduceScatter(tessMesh mesh, const char* axis, tessDevicePtr send, tessDevicePtr recv, size_t count,
                                 tessDtype dtype, tessReduceOp op, tessStream stream);
/* The `count` elements of `buffer` at index `root` are copied into `buffer`
 * on every rank of the group. */
tessStatus tessMeshBroadcast(tessMesh mesh, const char* axis, tessDevicePtr buffer, size_t count, tessDtype dtype,
                             int root, tessStream stream);
/* Point to point along an axis: `peer` is an index in the axis's group. A
 * send is matched by the peer's recv of the same count and dtype; messages
 * between two ranks arrive in the order they were sent. On CPU ranks a send
 * returns when `buffer` may be reused, a recv when the data has arrived. */
tessStatus tessMeshSend(tessMesh mesh, const char* axis, tessDevicePtr buffer, size_t count, tessDtype dtype, int peer,
                        tessStream stream);
tessStatus tessMeshRecv(tessMesh mesh, const char* axis, tessDevicePtr buffer, size_t count, tessDtype dtype, int peer,
                        tessStream stream);
/* Both at once: `send` goes to index `send_peer` while `recv` takes what
 * index `recv_peer` sends (its send of this call, or a plain tessMeshSend),
 * without deadlock whatever the order of the ranks (MPI_Sendrecv; a NCCL
 * group of ncclSend and ncclRecv). A ring shift is every rank calling it with
 * send_peer = (j + 1) % size and recv_peer = (j - 1 + size) % size. The
 * buffers must not overlap. */
tessStatus tessMeshSendRecv(tessMesh mesh, const char* axis, tessDevicePtr send, int send_peer, tessDevicePtr recv,
                            int recv_peer, size_t count, tessDtype dtype, tessStream stream);
/* Returns when every rank of the group has called it (on CUDA devices, after
 * this rank's device has finished its queued work). */
tessStatus tessMeshBarrier(tessMesh mesh, const char* axis);

/* --- started collectives (docs/distributed.md, "Started collectives") ------------------ */
/* The same collectives in two halves: the Start function checks the same
 * arguments, starts the collective and returns a request; tessCollectiveWait
 * returns when it is complete (and frees the request), so that the caller
 * works between the two. Until the wait, the send buffer must not be
 * written and the recv buffer neither read nor written. MPI: MPI_Iallreduce,
 * MPI_Iallgather, MPI_Ireduce_scatter_block, MPI_Ibcast, MPI_Isend,
 * MPI_Irecv; the wait blocks in MPI_Waitall under the same timeout as a
 * blocking call (TESSERA_COLLECTIVE_TIMEOUT, counted from the wait).
 * Loopback: complete at the start. NCCL: the start queues the collective on
 * the stream, as the blocking call does, and the wait does nothing more (order
 * later work on the stream). Every request must be waited for once, before
 * its mesh is destroyed; starts on one group are matched in the order made. */
tessStatus tessMeshAllReduceStart(tessMesh mesh, const char* axis, tessDevicePtr send, tessDevicePtr recv, size_t count,
                                  tessDtype dtype, tessReduceOp op, tessStream stream, tessCollectiveRequest* request);
tessStatus tessMeshAllGatherStart(tessMesh mesh, const char* axis, tessDevicePtr send, tessDevicePtr recv, size_t count,
                                  tessDtype dtype, tessStream stream, tessCollectiveRequest* request);
tessStatus tessMeshReduceScatterStart(tessMesh mesh, const char* axis, tessDevicePtr send, tessDevicePtr recv,
                                      size_t count, tessDtype dtype, tessReduceOp op, tessStream stream,
                                      tessCollectiveRequest* request);
tessStatus tessMeshBroadcastStart(tessMesh mesh, const char* axis, tessDevicePtr buffer, size_t count, tessDtype dtype,
                                  int root, tessStream stream, tessCollectiveRequest* request);
tessStatus tessMeshSendStart(tessMesh mesh, const char* axis, tessDevicePtr buffer, size_t count, tessDtype dtype,
                             int peer, tessStream stream, tessCollectiveRequest* request);
tessStatus tessMeshRecvStart(tessMesh mesh, const char* axis, tessDevicePtr buffer, size_t count, tessDtype dtype,
                             int peer, tessStream stream, tessCollectiveRequest* request);
tessStatus tessMeshSendRecvStart(tessMesh mesh, const char* axis, tessDevicePtr send, int send_peer, tessDevicePtr recv,
                                 int recv_peer, size_t count, tessDtype dtype, tessStream stream,
                                 tessCollectiveRequest* request);
/* Waits for a started collective and frees `request`; its status is the
 * collective's (an error names the collective, the axis and the backend's
 * error, as for the blocking calls). */
tessStatus tessCollectiveWait(tessCollectiveRequest request);

#ifdef __cplusplus
}
#endif

#endif /* TESSERA_COLLECTIVES_H */
