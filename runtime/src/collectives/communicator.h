// The communicator interface behind meshes: one group of ranks and the
// collectives among them, with one implementation per backend
// (loopback_communicator.cpp, mpi_communicator.cpp, nccl_communicator.cpp).
//
// collectives_api.cpp checks every argument before it calls a communicator
// (buffers on this rank's device and inside its memory, dtype and op
// supported, root and peer in the group, overlaps allowed), so the backends
// may assume them.
// Reductions get an element count and a reducible dtype; data movement
// (all_gather, broadcast, send, recv) gets bytes, so that every dtype moves,
// the packed sub-byte ones included. Buffers are device addresses of this
// rank's device as pointers (host pointers on the CPU device).
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "tessera/tessera_runtime.h"

namespace tessera::rt {

// Names a backend in messages: "loopback", "MPI", "NCCL".
const char* backend_name(tessCollectiveBackend backend);
const char* reduce_op_name(tessReduceOp op);

// One collective call, for messages and the timeout. The strings are the
// caller's (the mesh keeps its groups' names): nothing is built per call.
struct CollectiveCall {
  const char* function = "";    // the C function: "tessMeshAllReduce"
  const char* collective = "";  // "all_reduce"
  const char* group = "";       // "mesh axis 'dp'", "the mesh (4 ranks)"
  double timeout_seconds = 0;   // <= 0: wait for ever

  // "all_reduce on mesh axis 'dp'"
  std::string description() const { return std::string(collective) + " on " + group; }
};

// Fails with `status` and "<function>: <collective> on <group> (<backend>)
// failed: <detail>".
tessStatus collective_failure(const CollectiveCall& call, tessCollectiveBackend backend, tessStatus status,
                              const std::string& detail);

// TESSERA_COLLECTIVE_TIMEOUT: seconds a rank waits for its peers in one
// collective before it ends the job; 0 waits for ever. Read when a mesh is
// created; a value that is not a number is an error of `function`.
constexpr double kDefaultCollectiveTimeoutSeconds = 600;
tessStatus collective_timeout_seconds(const char* function, double* seconds);

// A collective started and not complete yet (tessMesh*Start): wait() blocks
// until it is, under the call's timeout, and finishes it (AVG's division,
// a recv's size check). Waited for exactly once.
class PendingCollective {
 public:
  virtual ~PendingCollective() = default;
  virtual tessStatus wait() = 0;
};

class Communicator {
 public:
  virtual ~Communicator() = default;
  Communicator() = default;
  Communicator(const Communicator&) = delete;
  Communicator& operator=(const Communicator&) = delete;

  virtual tessCollectiveBackend backend() const = 0;
  virtual int rank() const = 0;
  virtual int size() const = 0;

  // `stream` is a stream of the communicator's device (null: the default
  // stream); MPI and loopback finish before they return and ignore it.
  virtual tessStatus all_reduce(const CollectiveCall& call, const void* send, void* recv, size_t count,
                                tessDtype dtype, tessReduceOp op, tessStream stream) = 0;
  // send: size() * count elements; recv: count.
  virtual tessStatus reduce_scatter(const CollectiveCall& call, const void* send, void* recv, size_t count,
                                    tessDtype dtype, tessReduceOp op, tessStream stream) = 0;
  // recv: size() * bytes.
  virtual tessStatus all_gather(const CollectiveCall& call, const void* send, void* recv, size_t bytes,
                                tessStream stream) = 0;
  virtual tessStatus broadcast(const CollectiveCall& call, void* buffer, size_t bytes, int root, tessStream stream) = 0;
  virtual tessStatus send(const CollectiveCall& call, const void* buffer, size_t bytes, int peer, tessStream stream) = 0;
  virtual tessStatus recv(const CollectiveCall& call, void* buffer, size_t bytes, int peer, tessStream stream) = 0;
  // A send to `send_peer` and a recv from `recv_peer` that neither waits for
  // the other (a ring shift does not deadlock).
  virtual tessStatus send_recv(const CollectiveCall& call, const void* send, int send_peer, void* recv, int recv_peer,
                               size_t bytes, tessStream stream) = 0;
  virtual tessStatus barrier(const CollectiveCall& call) = 0;

  // The collectives started: `*pending` is what to wait for, null when the
  // collective completed (or, NCCL, was queued on the stream) at the start.
  // By default the blocking call (loopback, NCCL); MPI starts MPI's
  // non-blocking ones.
  virtual tessStatus start_all_reduce(const CollectiveCall& call, const void* send, void* recv, size_t count,
                                      tessDtype dtype, tessReduceOp op, tessStream stream,
                                      std::unique_ptr<PendingCollective>* pending) {
    *pending = nullptr;
    return all_reduce(call, send, recv, count, dtype, op, stream);
  }
  virtual tessStatus start_reduce_scatter(const CollectiveCall& call, const void* send, void* recv, size_t count,
                                          tessDtype dtype, tessReduceOp op, tessStream stream,
                                          std::unique_ptr<PendingCollective>* pending) {
    *pending = nullptr;
    return reduce_scatter(call, send, recv, count, dtype, op, stream);
  }
  virtual tessStatus start_all_gather(const CollectiveCall& call, const void* send, void* recv, size_t bytes,
                                      tessStream stream, std::unique_ptr<PendingCollective>* pending) {
    *pending = nullptr;
    return all_gather(call, send, recv, bytes, stream);
  }
  virtual tessStatus start_broadcast(const CollectiveCall& call, void* buffer, size_t bytes, int root,
                                     tessStream stream, std::unique_ptr<PendingCollective>* pending) {
    *pending = nullptr;
    return broadcast(call, buffer, bytes, root, stream);
  }
  virtual tessStatus start_send(const CollectiveCall& call, const void* buffer, size_t bytes, int peer,
                                tessStream stream, std::unique_ptr<PendingCollective>* pending) {
    *pending = nullptr;
    return send(call, buffer, bytes, peer, stream);
  }
  virtual tessStatus start_recv(const CollectiveCall& call, void* buffer, size_t bytes, int peer, tessStream stream,
                                std::unique_ptr<PendingCollective>* pending) {
    *pending = nullptr;
    return recv(call, buffer, bytes, peer, stream);
  }
  virtual tessStatus start_send_recv(const CollectiveCall& call, const void* send_buffer, int send_peer,
                                     void* recv_buffer, int recv_peer, size_t bytes, tessStream stream,
                                     std::unique_ptr<PendingCollective>* pending) {
    *pending = nullptr;
    return send_recv(call, send_buffer, send_peer, recv_buffer, recv_peer, bytes, stream);
  }
  // MPI_Comm_split: the ranks passing the same color >= 0 form a group,
  // ordered by key (then by rank); a negative color takes part and gets null.
  virtual tessStatus split(const CollectiveCall& call, int color, int key, std::unique_ptr<Communicator>* result) = 0;
};

// A group of one rank on `device`: reductions and gathers copy send to recv,
// broadcast does nothing, a send is kept until the matching recv copies it.
std::unique_ptr<Communicator> make_loopback_communicator(tessDevice device);

}  // namespace tessera::rt
