// The MPI backend on the runtime's side: finding and loading the plugin
// libtessera_rt_mpi.so (mpi_plugin.cpp) on first use, and a Communicator over
// its table. The plugin, not the runtime, links libmpi, so that programs that
// never create a multi-process mesh (the compiler itself) never pay for
// loading MPI (docs/distributed.md#loading-mpi).
//
// Where the plugin is looked for, first found wins:
//   1. $TESSERA_MPI_PLUGIN (only there, when set)
//   2. beside the executable, and in ../<libdir> of its directory (an
//      installed tesserac, programs installed into the same prefix)
//   3. the executable's library search path (LD_LIBRARY_PATH, its RUNPATH,
//      which find_package(Tessera) makes name the installed library
//      directory, the system directories), read with dlinfo: dlopen's own
//      use of the caller's RUNPATH does not survive interposers (ASan's
//      dlopen makes libasan the caller); then the name alone (ld.so.cache)
//   4. the installation's library directory, then the build tree's runtime/
//      folder, both as configured (TESSERA_MPI_PLUGIN_DIRS, set by CMake; the
//      build tree's programs, tesserac and the tests, find it there)
#include <dlfcn.h>
#include <fmt/format.h>
#include <unistd.h>

#include <atomic>
#include <climits>
#include <cstddef>
#include <mutex>
#include <string>
#include <vector>

#include "../dynamic_library.h"
#include "../runtime_internal.h"
#include "job.h"

#ifndef TESSERA_MPI_PLUGIN_FILE
#define TESSERA_MPI_PLUGIN_FILE "libtessera_rt_mpi.so"
#endif
#ifndef TESSERA_MPI_PLUGIN_DIRS  // ':'-separated
#define TESSERA_MPI_PLUGIN_DIRS ""
#endif
#ifndef TESSERA_INSTALL_LIBDIR  // relative to the installation prefix
#define TESSERA_INSTALL_LIBDIR "lib"
#endif
#ifndef TESSERA_BUILT_WITH_MPI
#define TESSERA_BUILT_WITH_MPI 0
#endif

#if defined(__SANITIZE_ADDRESS__)
// The ASan+UBSan build (dev preset): what Open MPI keeps until exit is not a
// leak of ours. Its libraries stay loaded while LeakSanitizer runs
// (mpi_plugin.cpp), so these names match. Not in other builds: an
// application may define this hook itself.
extern "C" const char* __lsan_default_suppressions() {
  return "leak:libmpi.so\nleak:libopen-pal.so\nleak:libopen-rte.so\nleak:libpmix.so\nleak:mca_\n";
}
// ... and says nothing of them (LSAN_OPTIONS still overrides).
extern "C" const char* __lsan_default_options() { return "print_suppressions=0"; }
#endif

namespace tessera::rt {
namespace {

std::string executable_directory() {
  char path[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
  if (n <= 0) return "";
  std::string p(path, static_cast<size_t>(n));
  return p.substr(0, p.rfind('/'));
}

// The directories the dynamic loader searches for the executable's own
// libraries, in order (dlinfo's RTLD_DI_SERINFO on the main program).
std::vector<std::string> executable_search_path() {
  std::vector<std::string> dirs;
  void* self = dlopen(nullptr, RTLD_NOW);
  if (!self) return dirs;
  Dl_serinfo size{};
  if (dlinfo(self, RTLD_DI_SERINFOSIZE, &size) == 0 && size.dls_size >= sizeof(Dl_serinfo)) {
    std::vector<std::max_align_t> storage((size.dls_size + sizeof(std::max_align_t) - 1) / sizeof(std::max_align_t));
    auto* info = reinterpret_cast<Dl_serinfo*>(storage.data());
    if (dlinfo(self, RTLD_DI_SERINFOSIZE, info) == 0 && dlinfo(self, RTLD_DI_SERINFO, info) == 0)
      for (unsigned i = 0; i < info->dls_cnt; ++i)
        if (info->dls_serpath[i].dls_name && *info->dls_serpath[i].dls_name)
          dirs.emplace_back(info->dls_serpath[i].dls_name);
  }
  dlclose(self);
  return dirs;
}

struct Candidate {
  std::string path;  // with a '/': opened as is; a bare name: the dynamic loader searches
  bool quiet;        // not named in the error when missing (one of many search directories)
};

// The candidates in order.
std::vector<Candidate> plugin_candidates(bool& overridden) {
  std::vector<Candidate> candidates;
  if (const char* path = std::getenv("TESSERA_MPI_PLUGIN"); path && *path) {
    overridden = true;
    candidates.push_back({path, false});
    return candidates;
  }
  overridden = false;
  const std::string file = TESSERA_MPI_PLUGIN_FILE;
  if (const std::string dir = executable_directory(); !dir.empty()) {
    candidates.push_back({dir + "/" + file, false});
    candidates.push_back({dir + "/../" TESSERA_INSTALL_LIBDIR "/" + file, false});
    if (std::string(TESSERA_INSTALL_LIBDIR) != "lib") candidates.push_back({dir + "/../lib/" + file, false});
  }
  for (const std::string& dir : executable_search_path()) candidates.push_back({dir + "/" + file, true});
  candidates.push_back({file, false});
  const std::string dirs = TESSERA_MPI_PLUGIN_DIRS;
  for (size_t begin = 0; begin < dirs.size();) {
    size_t end = dirs.find(':', begin);
    if (end == std::string::npos) end = dirs.size();
    if (end > begin) candidates.push_back({dirs.substr(begin, end - begin) + "/" + file, false});
    begin = end + 1;
  }
  return candidates;
}

struct Plugin {
  const tessMpiPlugin* table = nullptr;
  std::string path;
};

// Loads the plugin once; `error` says why not (then TESS_ERROR_LIBRARY_NOT_FOUND).
const Plugin* load_plugin(std::string& error) {
  static std::once_flag once;
  static Plugin* plugin = nullptr;
  static std::string failure;
  std::call_once(once, [] {
    bool overridden = false;
    std::string tried;
    for (const auto& [candidate, quiet] : plugin_candidates(overridden)) {
      const bool explicit_path = candidate.find('/') != std::string::npos;
      if (explicit_path && access(candidate.c_str(), F_OK) != 0) {
        if (!quiet) tried += fmt::format("\n  {}: no such file", candidate);
        continue;
      }
      dlerror();
      // RTLD_GLOBAL: Open MPI's own components (dlopen'ed by libmpi) expect
      // libmpi's symbols to be global, as when a program links it.
      void* library = dlopen(candidate.c_str(), RTLD_NOW | RTLD_GLOBAL);
      if (!library) {
        const std::string why = dl_error();
        tried += explicit_path ? fmt::format("\n  {}: {}", candidate, why)
                               : fmt::format("\n  the library search path: {}", why);
        continue;
      }
      tessMpiPluginEntry entry = nullptr;
      resolve_function(library, entry, TESS_MPI_PLUGIN_ENTRY);
      const tessMpiPlugin* table = entry ? entry() : nullptr;
      if (!table || table->abi_version != TESS_MPI_PLUGIN_ABI_VERSION || table->struct_size != sizeof(tessMpiPlugin)) {
        tried += fmt::format("\n  {}: not a tessera MPI plugin of interface version {} (another build's?)", candidate,
                             TESS_MPI_PLUGIN_ABI_VERSION);
        dlclose(library);
        continue;
      }
      plugin = new Plugin{table, candidate};  // kept for the life of the process, like the library
      return;
    }
    const char* hint =
        tried.find("libmpi") != std::string::npos
            ? "the plugin needs Open MPI's libmpi: install Open MPI (apt-get install openmpi-bin)"
        : TESSERA_BUILT_WITH_MPI
            ? "the plugin is built with the runtime and installed beside libtessera_rt.a: install it there, or point "
              "TESSERA_MPI_PLUGIN at it"
            : "this runtime was configured without MPI: install libopenmpi-dev and rebuild";
    failure = fmt::format("the MPI plugin {} could not be loaded{}; tried:{}\n  ({})", TESSERA_MPI_PLUGIN_FILE,
                          overridden ? " from TESSERA_MPI_PLUGIN" : "", tried, hint);
  });
  error = failure;
  return plugin;
}

tessMpiCall mpi_call(const CollectiveCall& call) { return tessMpiCall{call.collective, call.group, call.timeout_seconds}; }

// A collective the plugin started: waited for under the call's timeout; the
// call's strings are copied (the request may outlive the caller's frame).
class MpiPending : public PendingCollective {
 public:
  MpiPending(const tessMpiPlugin& plugin, tessMpiRequest request, const CollectiveCall& call)
      : p_(plugin),
        request_(request),
        collective_(call.collective),
        group_(call.group),
        timeout_seconds_(call.timeout_seconds) {}
  ~MpiPending() override {
    if (request_) wait();
  }
  tessStatus wait() override {
    const tessMpiCall c{collective_.c_str(), group_.c_str(), timeout_seconds_};
    tessMpiRequest r = request_;
    request_ = nullptr;
    if (int status = p_.wait(r, &c); status) {
      const CollectiveCall call{"tessCollectiveWait", collective_.c_str(), group_.c_str(), timeout_seconds_};
      return collective_failure(call, TESS_COLLECTIVES_MPI, static_cast<tessStatus>(status), p_.last_error());
    }
    return ok();
  }

 private:
  const tessMpiPlugin& p_;
  tessMpiRequest request_;
  std::string collective_, group_;
  double timeout_seconds_;
};

class MpiCommunicator : public Communicator {
 public:
  MpiCommunicator(const tessMpiPlugin& plugin, tessMpiComm comm) : p_(plugin), comm_(comm) {
    p_.rank_and_size(comm_, &rank_, &size_);
  }
  ~MpiCommunicator() override { p_.free(comm_); }

  tessCollectiveBackend backend() const override { return TESS_COLLECTIVES_MPI; }
  int rank() const override { return rank_; }
  int size() const override { return size_; }

  tessStatus all_reduce(const CollectiveCall& call, const void* send, void* recv, size_t count, tessDtype dtype,
                        tessReduceOp op, tessStream) override {
    const tessMpiCall c = mpi_call(call);
    return check(call, p_.all_reduce(comm_, send, recv, count, dtype, op, &c));
  }
  tessStatus reduce_scatter(const CollectiveCall& call, const void* send, void* recv, size_t count, tessDtype dtype,
                            tessReduceOp op, tessStream) override {
    const tessMpiCall c = mpi_call(call);
    return check(call, p_.reduce_scatter(comm_, send, recv, count, dtype, op, &c));
  }
  tessStatus all_gather(const CollectiveCall& call, const void* send, void* recv, size_t bytes, tessStream) override {
    const tessMpiCall c = mpi_call(call);
    return check(call, p_.all_gather(comm_, send, recv, bytes, &c));
  }
  tessStatus broadcast(const CollectiveCall& call, void* buffer, size_t bytes, int root, tessStream) override {
    const tessMpiCall c = mpi_call(call);
    return check(call, p_.broadcast(comm_, buffer, bytes, root, &c));
  }
  tessStatus send(const CollectiveCall& call, const void* buffer, size_t bytes, int peer, tessStream) override {
    const tessMpiCall c = mpi_call(call);
    return check(call, p_.send(comm_, buffer, bytes, peer, &c));
  }
  tessStatus recv(const CollectiveCall& call, void* buffer, size_t bytes, int peer, tessStream) override {
    const tessMpiCall c = mpi_call(call);
    return check(call, p_.recv(comm_, buffer, bytes, peer, &c));
  }
  tessStatus send_recv(const CollectiveCall& call, const void* send, int send_peer, void* recv, int recv_peer,
                       size_t bytes, tessStream) override {
    const tessMpiCall c = mpi_call(call);
    return check(call, p_.send_recv(comm_, send, send_peer, recv, recv_peer, bytes, &c));
  }
  tessStatus barrier(const CollectiveCall& call) override {
    const tessMpiCall c = mpi_call(call);
    return check(call, p_.barrier(comm_, &c));
  }
  tessStatus start_all_reduce(const CollectiveCall& call, const void* send, void* recv, size_t count, tessDtype dtype,
                              tessReduceOp op, tessStream, std::unique_ptr<PendingCollective>* pending) override {
    tessMpiRequest r = nullptr;
    const int status = p_.start_all_reduce(comm_, send, recv, count, dtype, op, &r);
    return started(call, status, r, pending);
  }
  tessStatus start_reduce_scatter(const CollectiveCall& call, const void* send, void* recv, size_t count,
                                  tessDtype dtype, tessReduceOp op, tessStream,
                                  std::unique_ptr<PendingCollective>* pending) override {
    tessMpiRequest r = nullptr;
    const int status = p_.start_reduce_scatter(comm_, send, recv, count, dtype, op, &r);
    return started(call, status, r, pending);
  }
  tessStatus start_all_gather(const CollectiveCall& call, const void* send, void* recv, size_t bytes, tessStream,
                              std::unique_ptr<PendingCollective>* pending) override {
    tessMpiRequest r = nullptr;
    const int status = p_.start_all_gather(comm_, send, recv, bytes, &r);
    return started(call, status, r, pending);
  }
  tessStatus start_broadcast(const CollectiveCall& call, void* buffer, size_t bytes, int root, tessStream,
                             std::unique_ptr<PendingCollective>* pending) override {
    tessMpiRequest r = nullptr;
    const int status = p_.start_broadcast(comm_, buffer, bytes, root, &r);
    return started(call, status, r, pending);
  }
  tessStatus start_send(const CollectiveCall& call, const void* buffer, size_t bytes, int peer, tessStream,
                        std::unique_ptr<PendingCollective>* pending) override {
    tessMpiRequest r = nullptr;
    const int status = p_.start_send(comm_, buffer, bytes, peer, &r);
    return started(call, status, r, pending);
  }
  tessStatus start_recv(const CollectiveCall& call, void* buffer, size_t bytes, int peer, tessStream,
                        std::unique_ptr<PendingCollective>* pending) override {
    tessMpiRequest r = nullptr;
    const int status = p_.start_recv(comm_, buffer, bytes, peer, &r);
    return started(call, status, r, pending);
  }
  tessStatus start_send_recv(const CollectiveCall& call, const void* send_buffer, int send_peer, void* recv_buffer,
                             int recv_peer, size_t bytes, tessStream,
                             std::unique_ptr<PendingCollective>* pending) override {
    tessMpiRequest r = nullptr;
    const int status = p_.start_send_recv(comm_, send_buffer, send_peer, recv_buffer, recv_peer, bytes, &r);
    return started(call, status, r, pending);
  }
  tessStatus split(const CollectiveCall& call, int color, int key, std::unique_ptr<Communicator>* result) override {
    const tessMpiCall c = mpi_call(call);
    tessMpiComm out = nullptr;
    if (auto s = check(call, p_.split(comm_, color, key, &c, &out)); s) return s;
    *result = out ? std::make_unique<MpiCommunicator>(p_, out) : nullptr;
    return ok();
  }

 private:
  tessStatus started(const CollectiveCall& call, int status, tessMpiRequest request,
                     std::unique_ptr<PendingCollective>* pending) {
    *pending = nullptr;
    if (auto s = check(call, status); s) return s;
    *pending = std::make_unique<MpiPending>(p_, request, call);
    return ok();
  }
  tessStatus check(const CollectiveCall& call, int status) {
    if (status == 0) return ok();
    return collective_failure(call, TESS_COLLECTIVES_MPI, static_cast<tessStatus>(status), p_.last_error());
  }

  const tessMpiPlugin& p_;
  tessMpiComm comm_;
  int rank_ = 0;
  int size_ = 1;
};

std::mutex world_mutex;
bool world_tried = false;
Communicator* world_communicator = nullptr;  // never destroyed: MPI outlives static destructors
tessStatus world_status = TESS_SUCCESS;
std::string world_error;
std::atomic<const tessMpiPlugin*> started_plugin{nullptr};  // read without the mutex by abort_job

}  // namespace

tessStatus mpi_world(const CollectiveCall& call, Communicator** world) {
  std::lock_guard lock(world_mutex);
  if (!world_tried) {
    world_tried = true;
    std::string error;
    const Plugin* plugin = load_plugin(error);
    if (!plugin) {
      world_status = TESS_ERROR_LIBRARY_NOT_FOUND;
      world_error = fmt::format("{}: {}", call.function, error);
    } else {
      const tessMpiCall c = mpi_call(call);
      tessMpiComm comm = nullptr;
      if (int s = plugin->table->initialize(&c, &comm); s) {
        world_status = static_cast<tessStatus>(s);
        world_error = fmt::format("{}: starting MPI ({}, plugin {}) failed: {}", call.function,
                                  plugin->table->library_version(), plugin->path, plugin->table->last_error());
      } else {
        started_plugin = plugin->table;
        world_communicator = new MpiCommunicator(*plugin->table, comm);
      }
    }
  }
  if (!world_communicator) return fail(world_status, world_error);
  *world = world_communicator;
  return ok();
}

const tessMpiPlugin* started_mpi_plugin() { return started_plugin.load(); }

}  // namespace tessera::rt
