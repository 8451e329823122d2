// The host context (tessera_host.h) as the runtime's host services see it:
// host_program.cpp (allocations, launches, print, I/O) and
// host_collectives.cpp (meshes and collectives).
#pragma once

#include <functional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "runtime_internal.h"

struct tessHostContext_st {
  const tessHostServices* services;  // first: what compiled code calls (tessera_host.h)
  tessDevice device = nullptr;
  tessStream stream = nullptr;
  tessModule module = nullptr;
  FILE* output = nullptr;
  // Between tessHostTextBegin and tessHostSaveText the print services write
  // here: a ts.save path formatted when the program runs.
  bool capturing = false;
  std::string captured;
  std::unordered_map<std::string, tessKernel> kernels;
  std::unordered_set<tessDevicePtr> frame;  // allocations of the running call
  std::unordered_set<tessDevicePtr> kept;   // ... that it returns
  // Freed allocations kept for the next of the same size class
  // (host_program.cpp, "The allocation cache"), and the class of each
  // allocation the context made and still owns.
  std::unordered_map<uint64_t, std::vector<tessDevicePtr>> cached;
  std::unordered_map<tessDevicePtr, uint64_t> size_class;
  bool cache_enabled = true;
  int depth = 0;
  // The meshes the program's code has met, by description (host_collectives.cpp).
  std::unordered_map<std::string, tessMesh> meshes;
  // ... of which the caller's (tessAotCallOnMesh): not destroyed with the context.
  std::unordered_set<tessMesh> lent_meshes;
  // A collective started by the code (tessHostCollectiveStart) and not
  // waited for yet. A gather or scatter along a dimension other than the
  // first moves its blocks through `staging` (from host_allocate, released at
  // the wait); `finish`, run after a successful wait, completes what the
  // runtime's collective leaves (placing the gathered blocks, a root's zeros).
  struct Request {
    tessCollectiveRequest started = nullptr;
    tessDevicePtr staging = 0;
    std::function<tessStatus()> finish;
  };
  // ... by the number the code holds; 0 is one that completed at its start.
  std::unordered_map<int64_t, Request> requests;
  int64_t next_request = 1;
};

namespace tessera::rt {
void destroy_host_meshes(tessHostContext context);
// Waits for every collective the code started and did not wait for (a call
// that failed between a start and its wait): their buffers are freed next.
void wait_host_requests(tessHostContext context);
// Makes the code of `context` run its collectives on `description`'s mesh
// on the caller's `mesh`, after checking that it has the described axes and
// shape; `what` names the call for messages.
tessStatus lend_host_mesh(tessHostContext context, const char* description, tessMesh mesh, const std::string& what);
// The allocation cache (host_allocations.cpp): allocate (from the cache when
// it has a block of the size class), release (into the cache when the
// context made the block), disown (a returned block: the caller frees it),
// drop (give every cached block back to the device).
uint64_t host_size_class(uint64_t bytes);
bool host_cache_enabled_by_environment();
tessStatus host_allocate(tessHostContext context, uint64_t bytes, tessDevicePtr* ptr);
tessStatus host_release(tessHostContext context, tessDevicePtr ptr);
void host_disown(tessHostContext context, tessDevicePtr ptr);
void host_drop_cache(tessHostContext context);
// Whether this process is rank 0 of its job (print and ts.save write only there).
bool is_first_rank();
}  // namespace tessera::rt
