// libtessera_rt_mpi.so: the runtime's MPI backend, a plugin built against the
// real mpi.h and linked with libmpi, loaded by the runtime with dlopen when a
// multi-process job creates its first mesh (mpi_plugin_abi.h;
// docs/distributed.md#loading-mpi). Programs that never create a mesh, the
// compiler among them, never load libmpi.
//
// Collectives are MPI's blocking ones (MPI_Allreduce, ...), which Open MPI
// implements with its tuned algorithms, watched by a watchdog thread: a call
// still running after TESSERA_COLLECTIVE_TIMEOUT makes the watchdog name the
// collective and end the job with MPI_Abort, so that a dead or absent peer
// never leaves the others hanging. (Non-blocking collectives polled with
// MPI_Test were measured 1.6-3x slower for small messages: libnbc's schedules
// against the tuned blocking algorithms; docs/distributed.md#timeouts.)
// The started collectives (tessMesh*Start) are MPI's non-blocking ones, and
// their wait blocks in MPI_Waitall under the same watchdog: never a polling
// loop.
// MPI runs at MPI_THREAD_MULTIPLE, which makes the watchdog's MPI_Abort legal
// while another thread is inside MPI. When the application started MPI
// itself at a lower level, a mutex serialises the plugin's calls and the
// watchdog ends this process instead (the launcher then ends the job).
//
// Links nothing of the runtime: it includes the runtime's public headers for
// tessStatus, tessDtype, tessReduceOp and the exact f16/bf16 conversions.
#include <mpi.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "mpi_plugin_abi.h"
#include "tessera/numerics.hpp"
#include "tessera/tessera_runtime.h"

#if defined(__SANITIZE_ADDRESS__)
#define TESSERA_LEAK_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TESSERA_LEAK_SANITIZER 1
#endif
#endif
#ifdef TESSERA_LEAK_SANITIZER
#include <dlfcn.h>
#include <link.h>
#include <sanitizer/lsan_interface.h>
#endif

struct tessMpiComm_st {
  MPI_Comm comm = MPI_COMM_NULL;
  int rank = 0;
  int size = 0;
};

namespace {

thread_local std::string last_error_message;
bool thread_multiple = false;  // MPI runs at MPI_THREAD_MULTIPLE
std::mutex serial_mutex;       // else: one plugin call in MPI at a time
int world_rank = -1;

// Open MPI keeps memory from MPI_Init to exit and frees little of it at
// MPI_Finalize, which also unloads the components that allocated it, so
// LeakSanitizer (the dev preset) would report Open MPI's memory as leaks
// with unknown frames. Allocations made inside MPI calls are Open MPI's and
// not checked; everything else in a multi-rank run still is.
struct InsideMpi {
#ifdef TESSERA_LEAK_SANITIZER
  InsideMpi() { __lsan_disable(); }
  ~InsideMpi() { __lsan_enable(); }
#else
  InsideMpi() {}  // user-provided: a guard, never an unused variable
  ~InsideMpi() {}
#endif
  InsideMpi(const InsideMpi&) = delete;
  InsideMpi& operator=(const InsideMpi&) = delete;
};

// Open MPI's own threads (PMIx's progress thread) allocate outside our calls
// and leak too. Keeping every library loaded by MPI_Init mapped until exit
// lets LeakSanitizer name them, so that the runtime's default suppressions
// (mpi_communicator.cpp) match; unloaded, they would be "<unknown module>".
void keep_mpi_libraries_loaded() {
#ifdef TESSERA_LEAK_SANITIZER
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void*) {
        if (info->dlpi_name && info->dlpi_name[0] == '/') dlopen(info->dlpi_name, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE);
        return 0;
      },
      nullptr);
#endif
}

int fail(tessStatus status, std::string message) {
  last_error_message = std::move(message);
  return status;
}

// "MPI_ERR_TRUNCATE: message truncated" (MPI_Error_string).
std::string mpi_error_string(int code) {
  char text[MPI_MAX_ERROR_STRING] = {};
  int length = 0;
  if (MPI_Error_string(code, text, &length) != MPI_SUCCESS) return "MPI error code " + std::to_string(code);
  return std::string(text, static_cast<size_t>(length));
}

int mpi_failure(const char* function, int code) {
  return fail(TESS_ERROR_COLLECTIVE, std::string(function) + " failed: " + mpi_error_string(code));
}

// --- Max and min of floats propagate NaN, as NumPy's maximum and minimum,
// the language's ts.max and ts.min and the loopback backend do: a NaN on any
// rank makes the result NaN. MPI_MAX and MPI_MIN on MPI_FLOAT compare with <
// or >, so whether a NaN survives depends on the order MPI combines the ranks
// in (Open MPI 4.1, 2 ranks: a NaN on rank 1 survives, one on rank 0 is
// dropped). User-defined operations take their place for f32 and f64;
// integers and bool keep the built-in ones.

template <class T>
T maximum(T a, T b) {
  return ((a > b) | (a != a)) ? a : b;  // b when b is NaN; `|`, not `||`: no branch, so the loop vectorizes
}
template <class T>
T minimum(T a, T b) {
  return ((a < b) | (a != a)) ? a : b;
}

// b[i] = Combine(a[i], b[i]). Vectorized at -O2: restrict parameters (MPI's
// two vectors never overlap; GCC honours restrict on parameters, not on
// locals) and blocks of a fixed count (GCC's -O2 cost model, "very cheap",
// vectorizes only loops that need no scalar epilogue and no alias check).
template <class T, T (*Combine)(T, T)>
void combine_all(const T* __restrict a, T* __restrict b, int n) {
  constexpr int kBlock = 16;
  int i = 0;
  for (; i + kBlock <= n; i += kBlock)
    for (int k = 0; k < kBlock; ++k) b[i + k] = Combine(a[i + k], b[i + k]);
  for (; i < n; ++i) b[i] = Combine(a[i], b[i]);
}

template <class T, T (*Combine)(T, T)>
void float_operation(void* in, void* inout, int* length, MPI_Datatype*) {
  combine_all<T, Combine>(static_cast<const T*>(in), static_cast<T*>(inout), *length);
}

// --- f16 and bf16: MPI has no such types; user-defined operations reduce them
// in f32 and round to nearest even. Correctly rounded: f32 has more than
// twice their precision plus two bits, so double rounding cannot occur for
// +, * and /.

float from_f16(uint16_t code) { return std::bit_cast<float>(tessera::numerics::f32_bits_from_f16(code)); }
uint16_t to_f16(float x) { return tessera::numerics::f16_from_f32_bits(std::bit_cast<uint32_t>(x)); }
float from_bf16(uint16_t code) { return std::bit_cast<float>(tessera::numerics::f32_bits_from_bf16(code)); }
uint16_t to_bf16(float x) { return tessera::numerics::bf16_from_f32_bits(std::bit_cast<uint32_t>(x)); }

float add(float a, float b) { return a + b; }
float multiply(float a, float b) { return a * b; }

template <float (*Decode)(uint16_t), uint16_t (*Encode)(float), float (*Combine)(float, float)>
void half_operation(void* in, void* inout, int* length, MPI_Datatype*) {
  const auto* a = static_cast<const uint16_t*>(in);
  auto* b = static_cast<uint16_t*>(inout);
  for (int i = 0; i < *length; ++i) b[i] = Encode(Combine(Decode(a[i]), Decode(b[i])));
}

// [dtype][op] for f16 (0) and bf16 (1); op SUM, PROD, MAX, MIN.
MPI_Op half_ops[2][4];
// [dtype][op] for f32 (0) and f64 (1); op MAX, MIN.
MPI_Op float_ops[2][2];

int create_operations() {
  InsideMpi inside_mpi;
  MPI_User_function* half_functions[2][4] = {
      {half_operation<from_f16, to_f16, add>, half_operation<from_f16, to_f16, multiply>,
       half_operation<from_f16, to_f16, maximum<float>>, half_operation<from_f16, to_f16, minimum<float>>},
      {half_operation<from_bf16, to_bf16, add>, half_operation<from_bf16, to_bf16, multiply>,
       half_operation<from_bf16, to_bf16, maximum<float>>, half_operation<from_bf16, to_bf16, minimum<float>>},
  };
  MPI_User_function* float_functions[2][2] = {
      {float_operation<float, maximum<float>>, float_operation<float, minimum<float>>},
      {float_operation<double, maximum<double>>, float_operation<double, minimum<double>>},
  };
  for (int t = 0; t < 2; ++t) {
    for (int o = 0; o < 4; ++o)
      if (int rc = MPI_Op_create(half_functions[t][o], /*commute=*/1, &half_ops[t][o]); rc != MPI_SUCCESS)
        return mpi_failure("MPI_Op_create", rc);
    for (int o = 0; o < 2; ++o)
      if (int rc = MPI_Op_create(float_functions[t][o], /*commute=*/1, &float_ops[t][o]); rc != MPI_SUCCESS)
        return mpi_failure("MPI_Op_create", rc);
  }
  return 0;
}

// Bytes of a reducible dtype (the plugin cannot call the runtime's tessDtypeBits).
size_t element_bytes(int dtype) {
  switch (static_cast<tessDtype>(dtype)) {
    case TESS_BOOL:
    case TESS_I8:
    case TESS_U8: return 1;
    case TESS_I16:
    case TESS_U16:
    case TESS_F16:
    case TESS_BF16: return 2;
    case TESS_I32:
    case TESS_U32:
    case TESS_F32: return 4;
    case TESS_I64:
    case TESS_U64:
    case TESS_F64: return 8;
    case TESS_FP8_E4M3:
    case TESS_FP8_E5M2:
    case TESS_FP6_E2M3:
    case TESS_FP6_E3M2:
    case TESS_FP4_E2M1: return 0;
  }
  return 0;
}

// The MPI type of a reducible dtype; MPI_DATATYPE_NULL for the narrow floats.
MPI_Datatype element_type(int dtype) {
  switch (static_cast<tessDtype>(dtype)) {
    case TESS_BOOL: return MPI_UINT8_T;
    case TESS_I8: return MPI_INT8_T;
    case TESS_I16: return MPI_INT16_T;
    case TESS_I32: return MPI_INT32_T;
    case TESS_I64: return MPI_INT64_T;
    case TESS_U8: return MPI_UINT8_T;
    case TESS_U16: return MPI_UINT16_T;
    case TESS_U32: return MPI_UINT32_T;
    case TESS_U64: return MPI_UINT64_T;
    case TESS_F16: return MPI_UINT16_T;
    case TESS_BF16: return MPI_UINT16_T;
    case TESS_F32: return MPI_FLOAT;
    case TESS_F64: return MPI_DOUBLE;
    case TESS_FP8_E4M3:
    case TESS_FP8_E5M2:
    case TESS_FP6_E2M3:
    case TESS_FP6_E3M2:
    case TESS_FP4_E2M1: return MPI_DATATYPE_NULL;
  }
  return MPI_DATATYPE_NULL;
}

// AVG reduces with SUM and divides afterwards (divide_by_size). Float max and
// min, and every f16 and bf16 operation, are the user-defined ones above.
MPI_Op reduce_operation(int dtype, int op) {
  int index = 0;
  MPI_Op builtin = MPI_SUM;
  switch (static_cast<tessReduceOp>(op)) {
    case TESS_REDUCE_SUM:
    case TESS_REDUCE_AVG: index = 0, builtin = MPI_SUM; break;
    case TESS_REDUCE_PROD: index = 1, builtin = MPI_PROD; break;
    case TESS_REDUCE_MAX: index = 2, builtin = MPI_MAX; break;
    case TESS_REDUCE_MIN: index = 3, builtin = MPI_MIN; break;
  }
  if (dtype == TESS_F16) return half_ops[0][index];
  if (dtype == TESS_BF16) return half_ops[1][index];
  const bool max_or_min = index >= 2;
  if (dtype == TESS_F32 && max_or_min) return float_ops[0][index - 2];
  if (dtype == TESS_F64 && max_or_min) return float_ops[1][index - 2];
  return builtin;
}

template <class T>
void divide_all(void* data, uint64_t count, int n) {
  auto* p = static_cast<T*>(data);
  for (uint64_t i = 0; i < count; ++i) p[i] = static_cast<T>(p[i] / static_cast<T>(n));
}

template <float (*Decode)(uint16_t), uint16_t (*Encode)(float)>
void divide_half(void* data, uint64_t count, int n) {
  auto* p = static_cast<uint16_t*>(data);
  for (uint64_t i = 0; i < count; ++i) p[i] = Encode(Decode(p[i]) / static_cast<float>(n));
}

// The second half of AVG. Integers divide as C does (truncating toward zero).
void divide_by_size(void* data, uint64_t count, int dtype, int n) {
  switch (static_cast<tessDtype>(dtype)) {
    case TESS_I8: return divide_all<int8_t>(data, count, n);
    case TESS_I16: return divide_all<int16_t>(data, count, n);
    case TESS_I32: return divide_all<int32_t>(data, count, n);
    case TESS_I64: return divide_all<int64_t>(data, count, n);
    case TESS_U8: return divide_all<uint8_t>(data, count, n);
    case TESS_U16: return divide_all<uint16_t>(data, count, n);
    case TESS_U32: return divide_all<uint32_t>(data, count, n);
    case TESS_U64: return divide_all<uint64_t>(data, count, n);
    case TESS_F16: return divide_half<from_f16, to_f16>(data, count, n);
    case TESS_BF16: return divide_half<from_bf16, to_bf16>(data, count, n);
    case TESS_F32: return divide_all<float>(data, count, n);
    case TESS_F64: return divide_all<double>(data, count, n);
    case TESS_BOOL:
    case TESS_FP8_E4M3:
    case TESS_FP8_E5M2:
    case TESS_FP6_E2M3:
    case TESS_FP6_E3M2:
    case TESS_FP4_E2M1: return;  // not reducible with AVG: rejected by the runtime
  }
}

// The runtime rejects these before they get here; this is the plugin's own guard.
int unsupported_dtype(const char* collective, int dtype) {
  return fail(TESS_ERROR_UNSUPPORTED,
              std::string(collective) + " cannot reduce elements of tessDtype " + std::to_string(dtype) + " with MPI");
}

// The arguments of reduce_scatter and all_gather that MPI cannot take (its
// counts are ints), checked alike by the blocking and the started forms:
// 0, or the failure.
int check_reduce_scatter(uint64_t count, int dtype) {
  if (element_type(dtype) == MPI_DATATYPE_NULL) return unsupported_dtype("reduce_scatter", dtype);
  if (count > INT_MAX)
    return fail(TESS_ERROR_UNSUPPORTED, "reduce_scatter of " + std::to_string(count) +
                                            " elements per rank: MPI's limit is 2147483647 (INT_MAX)");
  return 0;
}

int check_all_gather(uint64_t bytes) {
  if (bytes > INT_MAX)
    return fail(TESS_ERROR_UNSUPPORTED,
                "all_gather of " + std::to_string(bytes) + " bytes per rank: MPI's limit is 2147483647 (INT_MAX)");
  return 0;
}

// Follows every MPI call that waits for other ranks and ends the job when one
// outlives its deadline. One thread, started with the first watched call,
// never stopped. A watch lives on the caller's stack and is linked into the
// list under the mutex (no allocation per call); the watchdog reads it only
// under the mutex, which the caller takes again before its frame ends.
class Watchdog {
 public:
  struct Watch {
    const tessMpiCall* call;
    std::chrono::steady_clock::time_point deadline;
    Watch* previous = nullptr;
    Watch* next = nullptr;
  };

  static Watchdog& instance() {
    static auto* watchdog = new Watchdog();  // outlives static destruction
    return *watchdog;
  }

  void arm(Watch* watch) {
    std::lock_guard lock(mutex_);
    if (!started_) {
      started_ = true;
      std::thread([this] { run(); }).detach();
    }
    watch->previous = last_;
    watch->next = nullptr;
    (last_ ? last_->next : first_) = watch;
    last_ = watch;
  }
  void disarm(Watch* watch) {
    std::lock_guard lock(mutex_);
    (watch->previous ? watch->previous->next : first_) = watch->next;
    (watch->next ? watch->next->previous : last_) = watch->previous;
  }

 private:
  void run() {
    std::unique_lock lock(mutex_);
    while (true) {
      wake_.wait_for(lock, std::chrono::milliseconds(100));
      const auto now = std::chrono::steady_clock::now();
      for (const Watch* w = first_; w; w = w->next)
        if (now > w->deadline) end_job(w->call);
    }
  }

  [[noreturn]] static void end_job(const tessMpiCall* call) {
    std::fprintf(stderr,
                 "tessera: rank %d: %s on %s (MPI) did not complete within %g s (TESSERA_COLLECTIVE_TIMEOUT): a peer "
                 "rank has exited, failed or is not taking part in it; aborting the job\n",
                 world_rank, call->collective, call->group, call->timeout_seconds);
    std::fflush(stderr);
    // Should MPI_Abort itself hang, this process still ends.
    std::thread([] {
      std::this_thread::sleep_for(std::chrono::seconds(10));
      std::_Exit(1);
    }).detach();
    if (thread_multiple) MPI_Abort(MPI_COMM_WORLD, 1);
    std::_Exit(1);
  }

  std::mutex mutex_;
  std::condition_variable wake_;
  Watch* first_ = nullptr;
  Watch* last_ = nullptr;
  bool started_ = false;
};

// Runs one MPI call, one thread at a time unless MPI is thread-multiple;
// its return code.
template <class Call>
int serialized(Call mpi_call) {
  InsideMpi inside_mpi;
  if (thread_multiple) return mpi_call();
  std::lock_guard lock(serial_mutex);
  return mpi_call();
}

// Runs one MPI call that waits for other ranks under the watchdog (when the
// call has a timeout), and names its error.
template <class Call>
int guarded(const char* function, const tessMpiCall* call, Call mpi_call) {
  const bool watched = call->timeout_seconds > 0;
  Watchdog::Watch watch{call, {}};
  if (watched) {
    watch.deadline = std::chrono::steady_clock::now() + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                                            std::chrono::duration<double>(call->timeout_seconds));
    Watchdog::instance().arm(&watch);
  }
  int rc = serialized(mpi_call);
  if (watched) Watchdog::instance().disarm(&watch);
  if (rc != MPI_SUCCESS) return mpi_failure(function, rc);
  return 0;
}

const char* last_error() { return last_error_message.c_str(); }

const char* library_version() {
  InsideMpi inside_mpi;
  static std::string version = [] {
    char text[MPI_MAX_LIBRARY_VERSION_STRING] = {};
    int length = 0;
    if (MPI_Get_library_version(text, &length) != MPI_SUCCESS) return std::string("unknown MPI");
    std::string v(text, static_cast<size_t>(length));
    return v.substr(0, v.find_first_of("\n,"));
  }();
  return version.c_str();
}

void finalize_at_exit() {
  InsideMpi inside_mpi;
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) MPI_Finalize();
}

int rank_and_size(tessMpiComm comm, int* rank, int* size) {
  *rank = comm->rank;
  *size = comm->size;
  return 0;
}

tessMpiComm wrap(MPI_Comm comm) {
  auto* c = new tessMpiComm_st;
  c->comm = comm;
  MPI_Comm_rank(comm, &c->rank);
  MPI_Comm_size(comm, &c->size);
  return c;
}

int initialize(const tessMpiCall* call, tessMpiComm* world) {
  InsideMpi inside_mpi;
  // For the watchdog's message until MPI says.
  for (const char* variable : {"OMPI_COMM_WORLD_RANK", "PMI_RANK"})
    if (const char* value = std::getenv(variable)) world_rank = std::atoi(value);
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (finalized) return fail(TESS_ERROR_COLLECTIVE, "MPI was already finalized (MPI_Finalize) in this process");
  int provided = MPI_THREAD_SINGLE;
  if (!initialized) {
    if (int s = guarded("MPI_Init_thread", call,
                        [&] { return MPI_Init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE, &provided); });
        s)
      return s;
    std::atexit(finalize_at_exit);
    keep_mpi_libraries_loaded();
  } else {
    MPI_Query_thread(&provided);
  }
  thread_multiple = provided >= MPI_THREAD_MULTIPLE;
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  if (int s = create_operations(); s) return s;
  // A private duplicate: our messages never match the application's, and its
  // error handler returns errors instead of aborting.
  MPI_Comm duplicate = MPI_COMM_NULL;
  if (int s = guarded("MPI_Comm_dup", call, [&] { return MPI_Comm_dup(MPI_COMM_WORLD, &duplicate); }); s) return s;
  MPI_Comm_set_errhandler(duplicate, MPI_ERRORS_RETURN);
  *world = wrap(duplicate);
  return 0;
}

int barrier(tessMpiComm comm, const tessMpiCall* call) {
  return guarded("MPI_Barrier", call, [&] { return MPI_Barrier(comm->comm); });
}

int split(tessMpiComm comm, int color, int key, const tessMpiCall* call, tessMpiComm* result) {
  MPI_Comm out = MPI_COMM_NULL;
  if (int s = guarded("MPI_Comm_split", call,
                      [&] { return MPI_Comm_split(comm->comm, color < 0 ? MPI_UNDEFINED : color, key, &out); });
      s)
    return s;
  *result = out == MPI_COMM_NULL ? nullptr : wrap(out);
  return 0;
}

void free_comm(tessMpiComm comm) {
  if (!comm) return;
  InsideMpi inside_mpi;
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) {
    std::unique_lock lock(serial_mutex, std::defer_lock);
    if (!thread_multiple) lock.lock();
    MPI_Comm_free(&comm->comm);
  }
  delete comm;
}

int all_reduce(tessMpiComm comm, const void* send, void* recv, uint64_t count, int dtype, int op,
               const tessMpiCall* call) {
  const MPI_Datatype type = element_type(dtype);
  if (type == MPI_DATATYPE_NULL) return unsupported_dtype("all_reduce", dtype);
  const MPI_Op mpi_op = reduce_operation(dtype, op);
  const size_t size = element_bytes(dtype);
  // MPI counts are int: larger buffers reduce in pieces.
  for (uint64_t done = 0; done < count;) {
    const int n = static_cast<int>(std::min<uint64_t>(count - done, INT_MAX));
    const void* in = send == recv ? MPI_IN_PLACE : static_cast<const char*>(send) + done * size;
    void* out = static_cast<char*>(recv) + done * size;
    if (int s = guarded("MPI_Allreduce", call, [&] { return MPI_Allreduce(in, out, n, type, mpi_op, comm->comm); }); s)
      return s;
    done += static_cast<uint64_t>(n);
  }
  if (op == TESS_REDUCE_AVG) divide_by_size(recv, count, dtype, comm->size);
  return 0;
}

int reduce_scatter(tessMpiComm comm, const void* send, void* recv, uint64_t count, int dtype, int op,
                   const tessMpiCall* call) {
  if (int s = check_reduce_scatter(count, dtype)) return s;
  const MPI_Datatype type = element_type(dtype);
  const MPI_Op mpi_op = reduce_operation(dtype, op);
  const size_t bytes = count * element_bytes(dtype);
  // In place (recv is this rank's block of send): MPI_IN_PLACE would put the
  // result at the start of the buffer, so reduce into a temporary.
  const bool in_place = static_cast<const char*>(send) + static_cast<size_t>(comm->rank) * bytes == recv;
  std::vector<unsigned char> temporary(in_place ? bytes : 0);
  void* out = in_place ? temporary.data() : recv;
  const int n = static_cast<int>(count);
  if (int s = guarded("MPI_Reduce_scatter_block", call,
                      [&] { return MPI_Reduce_scatter_block(send, out, n, type, mpi_op, comm->comm); });
      s)
    return s;
  if (in_place) std::memcpy(recv, temporary.data(), bytes);
  if (op == TESS_REDUCE_AVG) divide_by_size(recv, count, dtype, comm->size);
  return 0;
}

int all_gather(tessMpiComm comm, const void* send, void* recv, uint64_t bytes, const tessMpiCall* call) {
  if (int s = check_all_gather(bytes)) return s;
  const bool in_place = static_cast<const char*>(recv) + static_cast<size_t>(comm->rank) * bytes == send;
  const int n = static_cast<int>(bytes);
  return guarded("MPI_Allgather", call, [&] {
    return MPI_Allgather(in_place ? MPI_IN_PLACE : send, n, MPI_BYTE, recv, n, MPI_BYTE, comm->comm);
  });
}

int broadcast(tessMpiComm comm, void* buffer, uint64_t bytes, int root, const tessMpiCall* call) {
  for (uint64_t done = 0; done < bytes;) {
    const int n = static_cast<int>(std::min<uint64_t>(bytes - done, INT_MAX));
    char* p = static_cast<char*>(buffer) + done;
    if (int s = guarded("MPI_Bcast", call, [&] { return MPI_Bcast(p, n, MPI_BYTE, root, comm->comm); }); s) return s;
    done += static_cast<uint64_t>(n);
  }
  return 0;
}

constexpr int kTag = 0;  // messages between two ranks arrive in order

int send(tessMpiComm comm, const void* buffer, uint64_t bytes, int peer, const tessMpiCall* call) {
  for (uint64_t done = 0; done < bytes;) {
    const int n = static_cast<int>(std::min<uint64_t>(bytes - done, INT_MAX));
    const char* p = static_cast<const char*>(buffer) + done;
    if (int s = guarded("MPI_Send", call, [&] { return MPI_Send(p, n, MPI_BYTE, peer, kTag, comm->comm); }); s)
      return s;
    done += static_cast<uint64_t>(n);
  }
  return 0;
}

int recv(tessMpiComm comm, void* buffer, uint64_t bytes, int peer, const tessMpiCall* call) {
  for (uint64_t done = 0; done < bytes;) {
    const int n = static_cast<int>(std::min<uint64_t>(bytes - done, INT_MAX));
    char* p = static_cast<char*>(buffer) + done;
    MPI_Status status;
    if (int s = guarded("MPI_Recv", call, [&] { return MPI_Recv(p, n, MPI_BYTE, peer, kTag, comm->comm, &status); });
        s)
      return s;
    int received = 0;
    MPI_Get_count(&status, MPI_BYTE, &received);
    if (received != n)
      return fail(TESS_ERROR_COLLECTIVE, "the message from index " + std::to_string(peer) + " has " +
                                             std::to_string(done + static_cast<uint64_t>(received)) +
                                             " bytes, the recv expects " + std::to_string(bytes) +
                                             " (the send's count or dtype differs)");
    done += static_cast<uint64_t>(n);
  }
  return 0;
}

// Pieces of at most INT_MAX bytes, each one MPI_Sendrecv; both peers cut the
// message the same way, so the pieces match.
int send_recv(tessMpiComm comm, const void* send, int send_peer, void* recv, int recv_peer, uint64_t bytes,
              const tessMpiCall* call) {
  for (uint64_t done = 0; done < bytes;) {
    const int n = static_cast<int>(std::min<uint64_t>(bytes - done, INT_MAX));
    const char* out = static_cast<const char*>(send) + done;
    char* in = static_cast<char*>(recv) + done;
    MPI_Status status;
    if (int s = guarded("MPI_Sendrecv", call,
                        [&] {
                          return MPI_Sendrecv(out, n, MPI_BYTE, send_peer, kTag, in, n, MPI_BYTE, recv_peer, kTag,
                                              comm->comm, &status);
                        });
        s)
      return s;
    int received = 0;
    MPI_Get_count(&status, MPI_BYTE, &received);
    if (received != n)
      return fail(TESS_ERROR_COLLECTIVE, "the message from index " + std::to_string(recv_peer) + " has " +
                                             std::to_string(done + static_cast<uint64_t>(received)) +
                                             " bytes, the recv expects " + std::to_string(bytes) +
                                             " (the send's count or dtype differs)");
    done += static_cast<uint64_t>(n);
  }
  return 0;
}

void abort_job(int exit_code) {
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (initialized && !finalized) MPI_Abort(MPI_COMM_WORLD, exit_code);
}

// --- started collectives (version 3): MPI's non-blocking calls, the wait in
// MPI_Waitall under the watchdog. What the blocking forms do after MPI's call
// (AVG's division, the in-place reduce_scatter's copy, a recv's size check)
// the request remembers and the wait does.

}  // namespace

struct tessMpiRequest_st {
  std::vector<MPI_Request> requests;
  // AVG: divide `count` elements of `dtype` at `divide` by `divide_by`.
  void* divide = nullptr;
  uint64_t count = 0;
  int dtype = 0;
  int divide_by = 1;
  // In-place reduce_scatter: the result, reduced into `temporary`, copied to `copy_to`.
  std::vector<unsigned char> temporary;
  void* copy_to = nullptr;
  // A recv: the request index of each piece and its expected bytes; from `peer`.
  std::vector<std::pair<size_t, int>> received;
  int peer = 0;
  uint64_t recv_bytes = 0;
};

namespace {

// Runs one non-blocking MPI call (it waits for no other rank: no watchdog).
template <class Call>
int started(const char* function, Call mpi_call) {
  int rc = serialized(mpi_call);
  if (rc != MPI_SUCCESS) return mpi_failure(function, rc);
  return 0;
}

// Hands the request to the caller, or on failure waits for what was started
// (MPI must complete every request) and frees it.
int hand_over(int status, tessMpiRequest_st* r, tessMpiRequest* request) {
  if (status) {
    InsideMpi inside_mpi;
    std::unique_lock lock(serial_mutex, std::defer_lock);
    if (!thread_multiple) lock.lock();
    if (!r->requests.empty())
      MPI_Waitall(static_cast<int>(r->requests.size()), r->requests.data(), MPI_STATUSES_IGNORE);
    delete r;
    return status;
  }
  *request = r;
  return 0;
}

int start_all_reduce(tessMpiComm comm, const void* send, void* recv, uint64_t count, int dtype, int op,
                     tessMpiRequest* request) {
  const MPI_Datatype type = element_type(dtype);
  if (type == MPI_DATATYPE_NULL) return unsupported_dtype("all_reduce", dtype);
  const MPI_Op mpi_op = reduce_operation(dtype, op);
  const size_t size = element_bytes(dtype);
  auto* r = new tessMpiRequest_st;
  if (op == TESS_REDUCE_AVG) r->divide = recv, r->count = count, r->dtype = dtype, r->divide_by = comm->size;
  int status = 0;
  for (uint64_t done = 0; done < count && !status;) {
    const int n = static_cast<int>(std::min<uint64_t>(count - done, INT_MAX));
    const void* in = send == recv ? MPI_IN_PLACE : static_cast<const char*>(send) + done * size;
    void* out = static_cast<char*>(recv) + done * size;
    r->requests.push_back(MPI_REQUEST_NULL);
    status = started("MPI_Iallreduce",
                     [&] { return MPI_Iallreduce(in, out, n, type, mpi_op, comm->comm, &r->requests.back()); });
    done += static_cast<uint64_t>(n);
  }
  return hand_over(status, r, request);
}

int start_reduce_scatter(tessMpiComm comm, const void* send, void* recv, uint64_t count, int dtype, int op,
                         tessMpiRequest* request) {
  if (int s = check_reduce_scatter(count, dtype)) return s;
  const MPI_Datatype type = element_type(dtype);
  const MPI_Op mpi_op = reduce_operation(dtype, op);
  const size_t bytes = count * element_bytes(dtype);
  auto* r = new tessMpiRequest_st;
  const bool in_place = static_cast<const char*>(send) + static_cast<size_t>(comm->rank) * bytes == recv;
  if (in_place) r->temporary.resize(bytes), r->copy_to = recv;
  void* out = in_place ? r->temporary.data() : recv;
  if (op == TESS_REDUCE_AVG) r->divide = recv, r->count = count, r->dtype = dtype, r->divide_by = comm->size;
  const int n = static_cast<int>(count);
  r->requests.push_back(MPI_REQUEST_NULL);
  int status = started("MPI_Ireduce_scatter_block", [&] {
    return MPI_Ireduce_scatter_block(send, out, n, type, mpi_op, comm->comm, &r->requests.back());
  });
  return hand_over(status, r, request);
}

int start_all_gather(tessMpiComm comm, const void* send, void* recv, uint64_t bytes, tessMpiRequest* request) {
  if (int s = check_all_gather(bytes)) return s;
  const bool in_place = static_cast<const char*>(recv) + static_cast<size_t>(comm->rank) * bytes == send;
  const int n = static_cast<int>(bytes);
  auto* r = new tessMpiRequest_st;
  r->requests.push_back(MPI_REQUEST_NULL);
  int status = started("MPI_Iallgather", [&] {
    return MPI_Iallgather(in_place ? MPI_IN_PLACE : send, n, MPI_BYTE, recv, n, MPI_BYTE, comm->comm,
                          &r->requests.back());
  });
  return hand_over(status, r, request);
}

int start_broadcast(tessMpiComm comm, void* buffer, uint64_t bytes, int root, tessMpiRequest* request) {
  auto* r = new tessMpiRequest_st;
  int status = 0;
  for (uint64_t done = 0; done < bytes && !status;) {
    const int n = static_cast<int>(std::min<uint64_t>(bytes - done, INT_MAX));
    char* p = static_cast<char*>(buffer) + done;
    r->requests.push_back(MPI_REQUEST_NULL);
    status = started("MPI_Ibcast", [&] { return MPI_Ibcast(p, n, MPI_BYTE, root, comm->comm, &r->requests.back()); });
    done += static_cast<uint64_t>(n);
  }
  return hand_over(status, r, request);
}

// Sends and recvs in pieces of at most INT_MAX bytes, each its own request.
int post_sends(tessMpiComm comm, const void* buffer, uint64_t bytes, int peer, tessMpiRequest_st* r) {
  for (uint64_t done = 0; done < bytes;) {
    const int n = static_cast<int>(std::min<uint64_t>(bytes - done, INT_MAX));
    const char* p = static_cast<const char*>(buffer) + done;
    r->requests.push_back(MPI_REQUEST_NULL);
    if (int s = started("MPI_Isend",
                        [&] { return MPI_Isend(p, n, MPI_BYTE, peer, kTag, comm->comm, &r->requests.back()); }))
      return s;
    done += static_cast<uint64_t>(n);
  }
  return 0;
}

int post_recvs(tessMpiComm comm, void* buffer, uint64_t bytes, int peer, tessMpiRequest_st* r) {
  r->peer = peer;
  r->recv_bytes = bytes;
  for (uint64_t done = 0; done < bytes;) {
    const int n = static_cast<int>(std::min<uint64_t>(bytes - done, INT_MAX));
    char* p = static_cast<char*>(buffer) + done;
    r->received.emplace_back(r->requests.size(), n);
    r->requests.push_back(MPI_REQUEST_NULL);
    if (int s = started("MPI_Irecv",
                        [&] { return MPI_Irecv(p, n, MPI_BYTE, peer, kTag, comm->comm, &r->requests.back()); }))
      return s;
    done += static_cast<uint64_t>(n);
  }
  return 0;
}

int start_send(tessMpiComm comm, const void* buffer, uint64_t bytes, int peer, tessMpiRequest* request) {
  auto* r = new tessMpiRequest_st;
  return hand_over(post_sends(comm, buffer, bytes, peer, r), r, request);
}

int start_recv(tessMpiComm comm, void* buffer, uint64_t bytes, int peer, tessMpiRequest* request) {
  auto* r = new tessMpiRequest_st;
  return hand_over(post_recvs(comm, buffer, bytes, peer, r), r, request);
}

int start_send_recv(tessMpiComm comm, const void* send, int send_peer, void* recv, int recv_peer, uint64_t bytes,
                    tessMpiRequest* request) {
  auto* r = new tessMpiRequest_st;
  int status = post_recvs(comm, recv, bytes, recv_peer, r);
  if (!status) status = post_sends(comm, send, bytes, send_peer, r);
  return hand_over(status, r, request);
}

int wait_request(tessMpiRequest request, const tessMpiCall* call) {
  std::unique_ptr<tessMpiRequest_st> r(request);
  std::vector<MPI_Status> statuses(r->requests.size());
  if (!r->requests.empty())
    if (int s = guarded("MPI_Waitall", call, [&] {
          return MPI_Waitall(static_cast<int>(r->requests.size()), r->requests.data(), statuses.data());
        }))
      return s;
  uint64_t received_bytes = 0;
  for (auto [index, expected] : r->received) {
    int received = 0;
    MPI_Get_count(&statuses[index], MPI_BYTE, &received);
    received_bytes += static_cast<uint64_t>(received);
    if (received != expected)
      return fail(TESS_ERROR_COLLECTIVE, "the message from index " + std::to_string(r->peer) + " has " +
                                             std::to_string(received_bytes) + " bytes, the recv expects " +
                                             std::to_string(r->recv_bytes) + " (the send's count or dtype differs)");
  }
  if (r->copy_to) std::memcpy(r->copy_to, r->temporary.data(), r->temporary.size());
  if (r->divide) divide_by_size(r->divide, r->count, r->dtype, r->divide_by);
  return 0;
}

const tessMpiPlugin plugin = {
    TESS_MPI_PLUGIN_ABI_VERSION,
    sizeof(tessMpiPlugin),
    last_error,
    library_version,
    initialize,
    rank_and_size,
    split,
    free_comm,
    all_reduce,
    reduce_scatter,
    all_gather,
    broadcast,
    send,
    recv,
    send_recv,
    barrier,
    abort_job,
    start_all_reduce,
    start_reduce_scatter,
    start_all_gather,
    start_broadcast,
    start_send,
    start_recv,
    start_send_recv,
    wait_request,
};

}  // namespace

extern "C" __attribute__((visibility("default"))) const tessMpiPlugin* tessera_mpi_plugin(void) { return &plugin; }
