// The NCCL backend: communicators over CUDA devices, with NCCL loaded at run
// time with dlopen through the table of nccl_functions.def (no nccl.h at
// build time). A communicator keeps a bootstrap communicator over the same
// ranks (MPI in a job; loopback in the unit tests) that broadcasts NCCL's
// unique id, runs barriers and splits.
//
// Collectives are queued on the caller's stream and return. A watchdog thread
// follows each one through an event recorded after it: an operation still
// running after TESSERA_COLLECTIVE_TIMEOUT, or an asynchronous NCCL error
// (ncclCommGetAsyncError), aborts the communicator and ends the job with a
// message naming the collective, instead of a hang.
#pragma once

#include <memory>
#include <string>
#include <type_traits>

#include "communicator.h"
#include "nccl_api.h"

namespace tessera::rt {

struct NcclFunctions {
  using ncclResult_t = nccl::ncclResult_t;
  using ncclDataType_t = nccl::ncclDataType_t;
  using ncclRedOp_t = nccl::ncclRedOp_t;
  using ncclComm_t = nccl::ncclComm_t;
  using ncclUniqueId = nccl::ncclUniqueId;
  using cudaStream_t = nccl::cudaStream_t;
#define TESS_NCCL_FUNCTION(name, required, signature) std::add_pointer_t<signature> name = nullptr;
#include "nccl_functions.def"
#undef TESS_NCCL_FUNCTION
  int version = 0;   // ncclGetVersion's code
  std::string path;  // where it was loaded from
};

// Loads NCCL once: $TESSERA_LIBNCCL when set (only there), else libnccl.so.2
// through the dynamic loader's search path, else
// ${CUDA_PATH:-/usr/local/cuda}/lib64/libnccl.so.2. It must export every
// required entry point and be at least NCCL 2.10. On failure: null, and
// `error` says why.
const NcclFunctions* load_nccl(std::string& error);

// "2.28.9" from ncclGetVersion's code.
std::string nccl_version_string(int code);

// An NCCL communicator over the ranks of `bootstrap`, on `device` (which
// must be the device of every buffer and stream passed to it). Collective
// over the bootstrap's ranks.
tessStatus make_nccl_communicator(const CollectiveCall& call, const NcclFunctions& nccl,
                                  std::unique_ptr<Communicator> bootstrap, tessDevice device,
                                  std::unique_ptr<Communicator>* result);

}  // namespace tessera::rt
