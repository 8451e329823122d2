// A fake libnccl.so.2 for the NCCL backend's unit tests (no GPU, no NCCL):
// it exports the entry points of runtime/src/collectives/nccl_functions.def
// with nccl.h's signatures, logs every call with its arguments, and carries
// out the collectives of a one-rank communicator on host memory (the tests
// run the NCCL backend on the CPU device), so both the calls and their effect
// can be checked. Loaded through TESSERA_LIBNCCL; the tests reach the log with
// dlsym(fake_nccl_log).
//
// Switches: fake_nccl_fail_next(result) makes the next collective return
// `result`; FAKE_NCCL_VERSION sets ncclGetVersion's code; FAKE_NCCL_ASYNC_ERROR
// makes ncclCommGetAsyncError report that result.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>

namespace {

struct FakeComm {
  int nranks;
  int rank;
};
struct UniqueId {
  char internal[128];
};

std::string log_text;
int fail_next = 0;

void log(const std::string& line) { log_text += line + "\n"; }

size_t type_size(int datatype) {
  switch (datatype) {
    case 0:
    case 1: return 1;  // ncclInt8, ncclUint8
    case 2:
    case 3:
    case 7: return 4;  // ncclInt32, ncclUint32, ncclFloat32
    case 4:
    case 5:
    case 8: return 8;  // ncclInt64, ncclUint64, ncclFloat64
    case 6:
    case 9: return 2;  // ncclFloat16, ncclBfloat16
    default: return 0;
  }
}

std::string pointer(const void* p) { return std::to_string(reinterpret_cast<std::uintptr_t>(p)); }

// The injected failure, if any, consumed.
int injected() {
  int r = fail_next;
  fail_next = 0;
  return r;
}

}  // namespace

extern "C" {

const char* fake_nccl_log() { return log_text.c_str(); }
void fake_nccl_clear_log() { log_text.clear(); }
void fake_nccl_fail_next(int result) { fail_next = result; }

int ncclGetVersion(int* version) {
  const char* v = std::getenv("FAKE_NCCL_VERSION");
  *version = v ? std::atoi(v) : 22809;
  return 0;
}

const char* ncclGetErrorString(int result) {
  switch (result) {
    case 0: return "no error";
    case 1: return "unhandled cuda error (run with NCCL_DEBUG=INFO for details)";
    case 4: return "invalid argument (run with NCCL_DEBUG=WARN for details)";
    case 6: return "remote process exited or there was a network error";
    default: return "fake NCCL error";
  }
}

const char* ncclGetLastError(FakeComm*) { return "fake NCCL: the injected failure"; }

int ncclGetUniqueId(UniqueId* id) {
  std::memset(id->internal, 0, sizeof id->internal);
  std::strcpy(id->internal, "fake-unique-id");
  log("ncclGetUniqueId");
  return 0;
}

int ncclCommInitRank(FakeComm** comm, int nranks, UniqueId id, int rank) {
  log("ncclCommInitRank nranks=" + std::to_string(nranks) + " rank=" + std::to_string(rank) +
      " id=" + std::string(id.internal));
  *comm = new FakeComm{nranks, rank};
  return 0;
}

int ncclCommDestroy(FakeComm* comm) {
  log("ncclCommDestroy");
  delete comm;
  return 0;
}

int ncclCommAbort(FakeComm*) {
  log("ncclCommAbort");
  return 0;
}

int ncclCommGetAsyncError(FakeComm*, int* error) {
  const char* e = std::getenv("FAKE_NCCL_ASYNC_ERROR");
  *error = e ? std::atoi(e) : 0;
  return 0;
}

int ncclAllReduce(const void* send, void* recv, size_t count, int datatype, int op, FakeComm* comm, void* stream) {
  log("ncclAllReduce send=" + pointer(send) + " recv=" + pointer(recv) + " count=" + std::to_string(count) +
      " datatype=" + std::to_string(datatype) + " op=" + std::to_string(op) + " stream=" + pointer(stream));
  if (int r = injected()) return r;
  if (comm->nranks == 1 && send != recv) std::memmove(recv, send, count * type_size(datatype));
  return 0;
}

int ncclReduceScatter(const void* send, void* recv, size_t count, int datatype, int op, FakeComm* comm,
                      void* stream) {
  log("ncclReduceScatter send=" + pointer(send) + " recv=" + pointer(recv) + " count=" + std::to_string(count) +
      " datatype=" + std::to_string(datatype) + " op=" + std::to_string(op) + " stream=" + pointer(stream));
  if (int r = injected()) return r;
  if (comm->nranks == 1 && send != recv) std::memmove(recv, send, count * type_size(datatype));
  return 0;
}

int ncclAllGather(const void* send, void* recv, size_t count, int datatype, FakeComm* comm, void* stream) {
  log("ncclAllGather send=" + pointer(send) + " recv=" + pointer(recv) + " count=" + std::to_string(count) +
      " datatype=" + std::to_string(datatype) + " stream=" + pointer(stream));
  if (int r = injected()) return r;
  if (comm->nranks == 1 && send != recv) std::memmove(recv, send, count * type_size(datatype));
  return 0;
}

int ncclBroadcast(const void* send, void* recv, size_t count, int datatype, int root, FakeComm*, void* stream) {
  log("ncclBroadcast send=" + pointer(send) + " recv=" + pointer(recv) + " count=" + std::to_string(count) +
      " datatype=" + std::to_string(datatype) + " root=" + std::to_string(root) + " stream=" + pointer(stream));
  return injected();
}

int ncclSend(const void* buffer, size_t count, int datatype, int peer, FakeComm*, void* stream) {
  log("ncclSend buffer=" + pointer(buffer) + " count=" + std::to_string(count) + " datatype=" +
      std::to_string(datatype) + " peer=" + std::to_string(peer) + " stream=" + pointer(stream));
  return injected();
}

int ncclRecv(void* buffer, size_t count, int datatype, int peer, FakeComm*, void* stream) {
  log("ncclRecv buffer=" + pointer(buffer) + " count=" + std::to_string(count) + " datatype=" +
      std::to_string(datatype) + " peer=" + std::to_string(peer) + " stream=" + pointer(stream));
  return injected();
}

int ncclGroupStart() {
  log("ncclGroupStart");
  return 0;
}

int ncclGroupEnd() {
  log("ncclGroupEnd");
  return injected();
}

}  // extern "C"
