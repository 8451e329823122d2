// The NCCL backend (nccl_communicator.h): loading libnccl, the communicator,
// and the watchdog that turns a hung or failed collective into a clear end of
// the job.
#include "nccl_communicator.h"

#include <dlfcn.h>
#include <fmt/format.h>

#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

#include "../dynamic_library.h"
#include "../runtime_internal.h"
#include "job.h"

namespace tessera::rt {

using namespace nccl;

namespace {

const char* result_name(ncclResult_t r) {
  switch (r) {
    case ncclSuccess: return "ncclSuccess";
    case ncclUnhandledCudaError: return "ncclUnhandledCudaError";
    case ncclSystemError: return "ncclSystemError";
    case ncclInternalError: return "ncclInternalError";
    case ncclInvalidArgument: return "ncclInvalidArgument";
    case ncclInvalidUsage: return "ncclInvalidUsage";
    case ncclRemoteError: return "ncclRemoteError";
    case ncclInProgress: return "ncclInProgress";
    default: return "unknown NCCL result";
  }
}

// "ncclInvalidArgument (4): invalid argument (run with NCCL_DEBUG=WARN for
// details); last error: <ncclGetLastError>".
std::string describe(const NcclFunctions& f, ncclResult_t r, ncclComm_t comm) {
  const char* text = f.ncclGetErrorString(r);
  std::string s = fmt::format("{} ({}){}{}", result_name(r), r, text ? ": " : "", text ? text : "");
  if (f.ncclGetLastError) {
    const char* last = f.ncclGetLastError(comm);
    if (last && *last) s += fmt::format("; last error: {}", last);
  }
  return s;
}

ncclDataType_t nccl_type(tessDtype dtype) {
  switch (dtype) {
    case TESS_BOOL: return ncclUint8;
    case TESS_I8: return ncclInt8;
    case TESS_U8: return ncclUint8;
    case TESS_I32: return ncclInt32;
    case TESS_U32: return ncclUint32;
    case TESS_I64: return ncclInt64;
    case TESS_U64: return ncclUint64;
    case TESS_F16: return ncclFloat16;
    case TESS_BF16: return ncclBfloat16;
    case TESS_F32: return ncclFloat32;
    case TESS_F64: return ncclFloat64;
    case TESS_I16:
    case TESS_U16:
    case TESS_FP8_E4M3:
    case TESS_FP8_E5M2:
    case TESS_FP6_E2M3:
    case TESS_FP6_E3M2:
    case TESS_FP4_E2M1: return -1;  // rejected by collectives_api.cpp before
  }
  return -1;
}

ncclRedOp_t nccl_op(tessReduceOp op) {
  switch (op) {
    case TESS_REDUCE_SUM: return ncclSum;
    case TESS_REDUCE_PROD: return ncclProd;
    case TESS_REDUCE_MAX: return ncclMax;
    case TESS_REDUCE_MIN: return ncclMin;
    case TESS_REDUCE_AVG: return ncclAvg;
  }
  return ncclSum;
}

// Follows queued collectives: one thread per process, started with the first
// watched operation, never stopped (like the device registry, it outlives
// static destruction).
class Watchdog {
 public:
  struct Operation {
    const void* owner;  // the communicator
    const NcclFunctions* nccl;
    ncclComm_t comm;
    tessDevice device;
    tessEvent event;
    std::chrono::steady_clock::time_point deadline;  // max(): none
    double timeout_seconds;
    std::string description;  // "all_reduce on mesh axis 'dp'"
  };

  static Watchdog& instance() {
    static Watchdog* watchdog = new Watchdog();
    return *watchdog;
  }

  // Records an event after the operation just queued on `stream` and
  // watches it.
  tessStatus watch(Operation operation, tessStream stream) {
    tessEvent event = take_event(operation.device);
    if (!event)
      if (auto s = operation.device->create_event(&event); s) return s;
    if (auto s = operation.device->record_event(event, stream); s) {
      (void)operation.device->destroy_event(event);
      return s;
    }
    operation.event = event;
    std::lock_guard lock(mutex_);
    pending_.push_back(std::move(operation));
    if (!thread_started_) {
      thread_started_ = true;
      std::thread([this] { run(); }).detach();
    }
    wake_.notify_one();
    return ok();
  }

  // Stops watching `owner`'s operations (before its communicator goes).
  void forget(const void* owner) {
    std::lock_guard lock(mutex_);
    for (auto it = pending_.begin(); it != pending_.end();) {
      if (it->owner == owner) {
        free_events_.push_back({it->device, it->event});
        it = pending_.erase(it);
      } else {
        ++it;
      }
    }
  }

 private:
  tessEvent take_event(tessDevice device) {
    std::lock_guard lock(mutex_);
    for (auto it = free_events_.begin(); it != free_events_.end(); ++it)
      if (it->first == device) {
        tessEvent e = it->second;
        free_events_.erase(it);
        return e;
      }
    return nullptr;
  }

  void run() {
    using namespace std::chrono_literals;
    std::unique_lock lock(mutex_);
    while (true) {
      wake_.wait_for(lock, 100ms, [this] { return !pending_.empty(); });
      for (auto it = pending_.begin(); it != pending_.end();) {
        ncclResult_t async = ncclSuccess;
        it->nccl->ncclCommGetAsyncError(it->comm, &async);
        if (async != ncclSuccess && async != ncclInProgress) {
          const std::string error = describe(*it->nccl, async, it->comm);
          it->nccl->ncclCommAbort(it->comm);
          abort_job(1, fmt::format("{} (NCCL) failed: {}; aborting the job", it->description, error));
        }
        bool complete = false;
        if (it->device->query_event(it->event, &complete) == TESS_SUCCESS && complete) {
          free_events_.push_back({it->device, it->event});
          it = pending_.erase(it);
          continue;
        }
        if (std::chrono::steady_clock::now() > it->deadline) {
          it->nccl->ncclCommAbort(it->comm);
          abort_job(1, fmt::format("{} (NCCL) did not complete within {} s (TESSERA_COLLECTIVE_TIMEOUT): a peer rank "
                                   "has exited, failed or is not taking part in it; aborting the job",
                                   it->description, it->timeout_seconds));
        }
        ++it;
      }
    }
  }

  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<Operation> pending_;
  std::vector<std::pair<tessDevice, tessEvent>> free_events_;
  bool thread_started_ = false;
};

class NcclCommunicator : public Communicator {
 public:
  NcclCommunicator(const NcclFunctions& nccl, std::unique_ptr<Communicator> bootstrap, tessDevice device,
                   ncclComm_t comm)
      : f_(nccl), bootstrap_(std::move(bootstrap)), device_(device), comm_(comm) {}
  ~NcclCommunicator() override {
    Watchdog::instance().forget(this);
    if (device_->make_current() == TESS_SUCCESS) f_.ncclCommDestroy(comm_);
  }

  tessCollectiveBackend backend() const override { return TESS_COLLECTIVES_NCCL; }
  int rank() const override { return bootstrap_->rank(); }
  int size() const override { return bootstrap_->size(); }

  tessStatus all_reduce(const CollectiveCall& call, const void* send, void* recv, size_t count, tessDtype dtype,
                        tessReduceOp op, tessStream stream) override {
    if (auto s = current(call); s) return s;
    return queued(call, "ncclAllReduce",
                  f_.ncclAllReduce(send, recv, count, nccl_type(dtype), nccl_op(op), comm_, native(stream)), stream);
  }
  tessStatus reduce_scatter(const CollectiveCall& call, const void* send, void* recv, size_t count, tessDtype dtype,
                            tessReduceOp op, tessStream stream) override {
    if (auto s = current(call); s) return s;
    return queued(call, "ncclReduceScatter",
                  f_.ncclReduceScatter(send, recv, count, nccl_type(dtype), nccl_op(op), comm_, native(stream)),
                  stream);
  }
  tessStatus all_gather(const CollectiveCall& call, const void* send, void* recv, size_t bytes,
                        tessStream stream) override {
    if (auto s = current(call); s) return s;
    return queued(call, "ncclAllGather", f_.ncclAllGather(send, recv, bytes, ncclUint8, comm_, native(stream)),
                  stream);
  }
  tessStatus broadcast(const CollectiveCall& call, void* buffer, size_t bytes, int root, tessStream stream) override {
    if (auto s = current(call); s) return s;
    return queued(call, "ncclBroadcast",
                  f_.ncclBroadcast(buffer, buffer, bytes, ncclUint8, root, comm_, native(stream)), stream);
  }
  tessStatus send(const CollectiveCall& call, const void* buffer, size_t bytes, int peer, tessStream stream) override {
    if (auto s = current(call); s) return s;
    return queued(call, "ncclSend", f_.ncclSend(buffer, bytes, ncclUint8, peer, comm_, native(stream)), stream);
  }
  tessStatus recv(const CollectiveCall& call, void* buffer, size_t bytes, int peer, tessStream stream) override {
    if (auto s = current(call); s) return s;
    return queued(call, "ncclRecv", f_.ncclRecv(buffer, bytes, ncclUint8, peer, comm_, native(stream)), stream);
  }
  // One NCCL group, so that neither operation waits for the other.
  tessStatus send_recv(const CollectiveCall& call, const void* send, int send_peer, void* recv, int recv_peer,
                       size_t bytes, tessStream stream) override {
    if (auto s = current(call); s) return s;
    if (ncclResult_t r = f_.ncclGroupStart(); r != ncclSuccess) return queued(call, "ncclGroupStart", r, stream);
    ncclResult_t sent = f_.ncclSend(send, bytes, ncclUint8, send_peer, comm_, native(stream));
    ncclResult_t received = f_.ncclRecv(recv, bytes, ncclUint8, recv_peer, comm_, native(stream));
    ncclResult_t ended = f_.ncclGroupEnd();
    if (sent != ncclSuccess) return queued(call, "ncclSend", sent, stream);
    if (received != ncclSuccess) return queued(call, "ncclRecv", received, stream);
    return queued(call, "ncclGroupEnd", ended, stream);
  }
  // The device's queued work first (the watchdog bounds it), then the ranks.
  tessStatus barrier(const CollectiveCall& call) override {
    if (auto s = device_->synchronize(); s) return collective_failure(call, backend(), s, last_error_message());
    return bootstrap_->barrier(call);
  }
  tessStatus split(const CollectiveCall& call, int color, int key, std::unique_ptr<Communicator>* result) override {
    std::unique_ptr<Communicator> sub;
    if (auto s = bootstrap_->split(call, color, key, &sub); s) return s;
    if (!sub) {
      result->reset();
      return ok();
    }
    return make_nccl_communicator(call, f_, std::move(sub), device_, result);
  }

 private:
  nccl::cudaStream_t native(tessStream stream) { return static_cast<nccl::cudaStream_t>(device_->native_stream(stream)); }

  tessStatus current(const CollectiveCall& call) {
    if (auto s = device_->make_current(); s) return collective_failure(call, backend(), s, last_error_message());
    return ok();
  }

  tessStatus queued(const CollectiveCall& call, const char* function, ncclResult_t r, tessStream stream) {
    if (r != ncclSuccess)
      return collective_failure(call, backend(), TESS_ERROR_COLLECTIVE,
                                fmt::format("{} failed with {}", function, describe(f_, r, comm_)));
    if (call.timeout_seconds <= 0) return ok();
    Watchdog::Operation operation{this,
                                  &f_,
                                  comm_,
                                  device_,
                                  nullptr,
                                  std::chrono::steady_clock::now() +
                                      std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                          std::chrono::duration<double>(call.timeout_seconds)),
                                  call.timeout_seconds,
                                  call.description()};
    if (auto s = Watchdog::instance().watch(std::move(operation), stream); s)
      return collective_failure(call, backend(), s, "recording the event that follows it: " + last_error_message());
    return ok();
  }

  const NcclFunctions& f_;
  std::unique_ptr<Communicator> bootstrap_;
  tessDevice device_;
  ncclComm_t comm_;
};

}  // namespace

std::string nccl_version_string(int code) {
  // NCCL_VERSION(X, Y, Z): X * 1000 + Y * 100 + Z up to 2.8, X * 10000 + Y * 100 + Z after.
  if (code >= 20900) return fmt::format("{}.{}.{}", code / 10000, code % 10000 / 100, code % 100);
  return fmt::format("{}.{}.{}", code / 1000, code % 1000 / 100, code % 100);
}

const NcclFunctions* load_nccl(std::string& error) {
  static std::once_flag once;
  static NcclFunctions* loaded = nullptr;
  static std::string failure;
  std::call_once(once, [] {
    std::vector<std::string> candidates;
    const char* override_path = std::getenv("TESSERA_LIBNCCL");
    const bool overridden = override_path && *override_path;
    if (overridden) {
      candidates.emplace_back(override_path);
    } else {
      const char* cuda = std::getenv("CUDA_PATH");
      candidates.emplace_back("libnccl.so.2");
      candidates.push_back(fmt::format("{}/lib64/libnccl.so.2", cuda && *cuda ? cuda : "/usr/local/cuda"));
    }
    std::string tried;
    for (const std::string& candidate : candidates) {
      dlerror();
      void* library = dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL);
      if (!library) {
        tried += fmt::format("\n  {}: {}", candidate, dl_error());
        continue;
      }
      auto f = std::make_unique<NcclFunctions>();
      std::string missing;
#define TESS_NCCL_FUNCTION(name, required, signature) \
  resolve_function(library, f->name, #name, nullptr, required ? &missing : nullptr);
#include "nccl_functions.def"
#undef TESS_NCCL_FUNCTION
      if (!missing.empty()) {
        tried += fmt::format("\n  {}: not NCCL, or an NCCL without {}", candidate, missing);
        dlclose(library);
        continue;
      }
      if (f->ncclGetVersion(&f->version) != ncclSuccess || f->version < kMinimumVersion) {
        tried += fmt::format("\n  {}: NCCL {} is older than 2.10, which the runtime needs (bf16, avg)", candidate,
                             nccl_version_string(f->version));
        dlclose(library);
        continue;
      }
      f->path = candidate;
      loaded = f.release();  // kept for the life of the process, like the library
      return;
    }
    failure = fmt::format("NCCL could not be loaded{}; tried:{}", overridden ? " from TESSERA_LIBNCCL" : "", tried);
  });
  error = failure;
  return loaded;
}

tessStatus make_nccl_communicator(const CollectiveCall& call, const NcclFunctions& nccl,
                                  std::unique_ptr<Communicator> bootstrap, tessDevice device,
                                  std::unique_ptr<Communicator>* result) {
  if (auto s = device->make_current(); s) return collective_failure(call, TESS_COLLECTIVES_NCCL, s, last_error_message());
  // Index 0 makes the unique id; the bootstrap gives it to the others.
  ncclUniqueId id{};
  ncclResult_t r = ncclSuccess;
  if (bootstrap->rank() == 0) r = nccl.ncclGetUniqueId(&id);
  // Everyone learns whether index 0 got an id before anyone waits for it.
  int32_t failed = r != ncclSuccess;
  if (auto s = bootstrap->all_reduce(call, &failed, &failed, 1, TESS_I32, TESS_REDUCE_MAX, nullptr); s) return s;
  if (failed)
    return collective_failure(call, TESS_COLLECTIVES_NCCL, TESS_ERROR_COLLECTIVE,
                              bootstrap->rank() == 0
                                  ? fmt::format("ncclGetUniqueId failed with {}", describe(nccl, r, nullptr))
                                  : std::string("ncclGetUniqueId failed on index 0 of the group (its message says why)"));
  if (auto s = bootstrap->broadcast(call, &id, sizeof id, 0, nullptr); s) return s;
  ncclComm_t comm = nullptr;
  r = nccl.ncclCommInitRank(&comm, bootstrap->size(), id, bootstrap->rank());
  if (r != ncclSuccess)
    return collective_failure(
        call, TESS_COLLECTIVES_NCCL, TESS_ERROR_COLLECTIVE,
        fmt::format("ncclCommInitRank (rank {} of {}) failed with {}", bootstrap->rank(), bootstrap->size(),
                    describe(nccl, r, nullptr)));
  *result = std::make_unique<NcclCommunicator>(nccl, std::move(bootstrap), device, comm);
  return ok();
}

}  // namespace tessera::rt
