// The few NCCL types and constants the runtime uses, declared here so that
// the build needs no nccl.h (NCCL is loaded at run time with dlopen). They
// have nccl.h's names, values and layouts (checked against nccl.h by
// tests/nccl_declarations_test.cpp when it is installed); the entry points
// are in nccl_functions.def.
#pragma once

#include <cstddef>

namespace tessera::rt::nccl {

// The enums of nccl.h are C enums of int size.
using ncclResult_t = int;
using ncclDataType_t = int;
using ncclRedOp_t = int;
struct ncclComm;
using ncclComm_t = ncclComm*;
struct CUstream_st;
using cudaStream_t = CUstream_st*;
struct ncclUniqueId {
  char internal[128];
};

constexpr ncclResult_t ncclSuccess = 0;
constexpr ncclResult_t ncclUnhandledCudaError = 1;
constexpr ncclResult_t ncclSystemError = 2;
constexpr ncclResult_t ncclInternalError = 3;
constexpr ncclResult_t ncclInvalidArgument = 4;
constexpr ncclResult_t ncclInvalidUsage = 5;
constexpr ncclResult_t ncclRemoteError = 6;
constexpr ncclResult_t ncclInProgress = 7;

constexpr ncclDataType_t ncclInt8 = 0;
constexpr ncclDataType_t ncclUint8 = 1;
constexpr ncclDataType_t ncclInt32 = 2;
constexpr ncclDataType_t ncclUint32 = 3;
constexpr ncclDataType_t ncclInt64 = 4;
constexpr ncclDataType_t ncclUint64 = 5;
constexpr ncclDataType_t ncclFloat16 = 6;
constexpr ncclDataType_t ncclFloat32 = 7;
constexpr ncclDataType_t ncclFloat64 = 8;
constexpr ncclDataType_t ncclBfloat16 = 9;  // NCCL 2.10

constexpr ncclRedOp_t ncclSum = 0;
constexpr ncclRedOp_t ncclProd = 1;
constexpr ncclRedOp_t ncclMax = 2;
constexpr ncclRedOp_t ncclMin = 3;
constexpr ncclRedOp_t ncclAvg = 4;  // NCCL 2.10

// ncclGetVersion's code for 2.10.0 (NCCL_VERSION(2, 10, 0)): bf16 and avg.
constexpr int kMinimumVersion = 21000;

}  // namespace tessera::rt::nccl
