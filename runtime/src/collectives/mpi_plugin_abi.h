/* The interface between the runtime and its MPI plugin, libtessera_rt_mpi.so
 * (mpi_plugin.cpp), a shared library built against the real mpi.h and loaded
 * with dlopen when the first mesh of a multi-process job is created
 * (docs/distributed.md#loading-mpi). Plain C: the plugin exports one
 * function, tessera_mpi_plugin(), returning this table, and links nothing of
 * the runtime (whose symbols the executable does not export).
 *
 * Every function returning int returns 0 or a tessStatus; last_error() then
 * says why (thread-local, valid until the thread's next failing call). */
#ifndef TESSERA_MPI_PLUGIN_ABI_H
#define TESSERA_MPI_PLUGIN_ABI_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Bumped on every change of the table: the runtime refuses other versions. */
#define TESS_MPI_PLUGIN_ABI_VERSION 3u
#define TESS_MPI_PLUGIN_ENTRY "tessera_mpi_plugin"

typedef struct tessMpiComm_st* tessMpiComm;
/* A collective started and not yet waited for (version 3). */
typedef struct tessMpiRequest_st* tessMpiRequest;

/* What a call is, for the timeout's message: "<collective> on <group>". */
typedef struct tessMpiCall {
  const char* collective; /* "all_reduce" */
  const char* group;      /* "mesh axis 'dp'" */
  double timeout_seconds; /* <= 0: wait for ever */
} tessMpiCall;

typedef struct tessMpiPlugin {
  uint32_t abi_version; /* TESS_MPI_PLUGIN_ABI_VERSION */
  uint32_t struct_size; /* sizeof(tessMpiPlugin) */
  const char* (*last_error)(void);
  /* MPI_Get_library_version's first line. */
  const char* (*library_version)(void);
  /* Starts MPI with MPI_Init_thread(MPI_THREAD_SERIALIZED) unless the
   * application already did (then MPI_Finalize runs at exit), and returns a
   * duplicate of MPI_COMM_WORLD with MPI_ERRORS_RETURN. Once per process. */
  int (*initialize)(const tessMpiCall* call, tessMpiComm* world);
  int (*rank_and_size)(tessMpiComm comm, int* rank, int* size);
  /* MPI_Comm_split; a negative color gives a null result. */
  int (*split)(tessMpiComm comm, int color, int key, const tessMpiCall* call, tessMpiComm* result);
  void (*free)(tessMpiComm comm);
  /* dtype: a tessDtype; op: a tessReduceOp. Counts are elements for the
   * reductions and bytes for the rest. In place: send == recv (all_reduce),
   * send == recv + rank * bytes (all_gather), recv == send + rank * count *
   * element size (reduce_scatter). */
  int (*all_reduce)(tessMpiComm comm, const void* send, void* recv, uint64_t count, int dtype, int op,
                    const tessMpiCall* call);
  int (*reduce_scatter)(tessMpiComm comm, const void* send, void* recv, uint64_t count, int dtype, int op,
                        const tessMpiCall* call);
  int (*all_gather)(tessMpiComm comm, const void* send, void* recv, uint64_t bytes, const tessMpiCall* call);
  int (*broadcast)(tessMpiComm comm, void* buffer, uint64_t bytes, int root, const tessMpiCall* call);
  int (*send)(tessMpiComm comm, const void* buffer, uint64_t bytes, int peer, const tessMpiCall* call);
  int (*recv)(tessMpiComm comm, void* buffer, uint64_t bytes, int peer, const tessMpiCall* call);
  /* MPI_Sendrecv of bytes (version 2). */
  int (*send_recv)(tessMpiComm comm, const void* send, int send_peer, void* recv, int recv_peer, uint64_t bytes,
                   const tessMpiCall* call);
  int (*barrier)(tessMpiComm comm, const tessMpiCall* call);
  /* MPI_Abort(MPI_COMM_WORLD, exit_code) when MPI is running; returns when
   * it is not. */
  void (*abort_job)(int exit_code);
  /* Version 3: the collectives above started with MPI's non-blocking calls
   * (MPI_Iallreduce, MPI_Ireduce_scatter_block, MPI_Iallgather, MPI_Ibcast,
   * MPI_Isend, MPI_Irecv; same arguments and in-place forms); *request is
   * then waited for with wait(), which blocks in MPI_Waitall under the
   * watchdog (the call's timeout, counted from the wait), finishes the
   * collective (AVG's division, a recv's size check) and frees the request,
   * also when it fails. */
  int (*start_all_reduce)(tessMpiComm comm, const void* send, void* recv, uint64_t count, int dtype, int op,
                          tessMpiRequest* request);
  int (*start_reduce_scatter)(tessMpiComm comm, const void* send, void* recv, uint64_t count, int dtype, int op,
                              tessMpiRequest* request);
  int (*start_all_gather)(tessMpiComm comm, const void* send, void* recv, uint64_t bytes, tessMpiRequest* request);
  int (*start_broadcast)(tessMpiComm comm, void* buffer, uint64_t bytes, int root, tessMpiRequest* request);
  int (*start_send)(tessMpiComm comm, const void* buffer, uint64_t bytes, int peer, tessMpiRequest* request);
  int (*start_recv)(tessMpiComm comm, void* buffer, uint64_t bytes, int peer, tessMpiRequest* request);
  int (*start_send_recv)(tessMpiComm comm, const void* send, int send_peer, void* recv, int recv_peer, uint64_t bytes,
                         tessMpiRequest* request);
  int (*wait)(tessMpiRequest request, const tessMpiCall* call);
} tessMpiPlugin;

typedef const tessMpiPlugin* (*tessMpiPluginEntry)(void);

#ifdef __cplusplus
}
#endif

#endif /* TESSERA_MPI_PLUGIN_ABI_H */
