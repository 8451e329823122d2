// The runtime declares the NCCL types and entry points it uses itself
// (src/collectives/nccl_api.h, nccl_functions.def) so that building needs no
// nccl.h. Where nccl.h is installed, this test checks those declarations
// against it: every table entry has nccl.h's signature, and the stand-in
// types and constants have its sizes and values. The checks are static; the
// test case only records that they compiled.
#include <doctest/doctest.h>
#include <nccl.h>

#include <type_traits>

#include "collectives/nccl_api.h"

namespace with_real_types {
// The table's signatures spelled with nccl.h's types must be nccl.h's.
using ::cudaStream_t;
using ::ncclComm_t;
using ::ncclDataType_t;
using ::ncclRedOp_t;
using ::ncclResult_t;
using ::ncclUniqueId;
#define TESS_NCCL_FUNCTION(name, required, signature) \
  static_assert(std::is_same_v<signature, decltype(::name)>, #name " differs from nccl.h");
#include "collectives/nccl_functions.def"
#undef TESS_NCCL_FUNCTION
}  // namespace with_real_types

namespace ours = tessera::rt::nccl;

// The stand-ins are laid out and passed as nccl.h's types.
static_assert(sizeof(ours::ncclUniqueId) == sizeof(::ncclUniqueId));
static_assert(sizeof(ours::ncclResult_t) == sizeof(::ncclResult_t));
static_assert(sizeof(ours::ncclDataType_t) == sizeof(::ncclDataType_t));
static_assert(sizeof(ours::ncclRedOp_t) == sizeof(::ncclRedOp_t));
static_assert(sizeof(ours::ncclComm_t) == sizeof(::ncclComm_t));
static_assert(sizeof(ours::cudaStream_t) == sizeof(::cudaStream_t));

static_assert(ours::ncclSuccess == ::ncclSuccess);
static_assert(ours::ncclUnhandledCudaError == ::ncclUnhandledCudaError);
static_assert(ours::ncclSystemError == ::ncclSystemError);
static_assert(ours::ncclInternalError == ::ncclInternalError);
static_assert(ours::ncclInvalidArgument == ::ncclInvalidArgument);
static_assert(ours::ncclInvalidUsage == ::ncclInvalidUsage);
static_assert(ours::ncclRemoteError == ::ncclRemoteError);
static_assert(ours::ncclInProgress == ::ncclInProgress);
static_assert(ours::ncclInt8 == ::ncclInt8);
static_assert(ours::ncclUint8 == ::ncclUint8);
static_assert(ours::ncclInt32 == ::ncclInt32);
static_assert(ours::ncclUint32 == ::ncclUint32);
static_assert(ours::ncclInt64 == ::ncclInt64);
static_assert(ours::ncclUint64 == ::ncclUint64);
static_assert(ours::ncclFloat16 == ::ncclFloat16);
static_assert(ours::ncclFloat32 == ::ncclFloat32);
static_assert(ours::ncclFloat64 == ::ncclFloat64);
static_assert(ours::ncclBfloat16 == ::ncclBfloat16);
static_assert(ours::ncclSum == ::ncclSum);
static_assert(ours::ncclProd == ::ncclProd);
static_assert(ours::ncclMax == ::ncclMax);
static_assert(ours::ncclMin == ::ncclMin);
static_assert(ours::ncclAvg == ::ncclAvg);
static_assert(ours::kMinimumVersion == NCCL_VERSION(2, 10, 0));

TEST_CASE("the runtime's NCCL declarations match nccl.h") {
  MESSAGE("checked against NCCL " << NCCL_MAJOR << "." << NCCL_MINOR << "." << NCCL_PATCH);
  CHECK(NCCL_VERSION_CODE >= ours::kMinimumVersion);
}
