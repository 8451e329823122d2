// The allocation cache of a host context (docs/runtime.md, "Host programs"):
// what compiled host code frees (host.free, and the allocations of a call
// that it does not return) is kept for the next allocation of the same size
// class instead of going back to the device, so a loop that allocates
// buffers of the same sizes on every iteration calls tessMalloc (malloc,
// cuMemAlloc) only on its first.
//
// Size classes are those of jemalloc: four per power of two (a request is
// rounded up to a multiple of a quarter of the power of two below it), at
// least 256 bytes, so a block serves requests up to 25% smaller and no
// request wastes more. Blocks are never split or merged; a class's free
// blocks are a LIFO list. When the device is out of memory the cache is
// given back and the allocation tried once more. TESSERA_HOST_ALLOC_CACHE=0
// turns the cache off (every free goes to the device at once), for tools
// such as AddressSanitizer that find uses after a free.
#include <bit>
#include <cstdlib>
#include <cstring>

#include "runtime_internal.h"

using tessera::rt::ok;

#include "host_context.h"

namespace tessera::rt {

uint64_t host_size_class(uint64_t bytes) {
  constexpr uint64_t kSmallest = 256;
  if (bytes <= kSmallest) return kSmallest;
  uint64_t quarter = std::bit_floor(bytes - 1) / 4;
  return (bytes + quarter - 1) / quarter * quarter;
}

bool host_cache_enabled_by_environment() {
  const char* value = std::getenv("TESSERA_HOST_ALLOC_CACHE");
  return !(value && std::strcmp(value, "0") == 0);
}

void host_drop_cache(tessHostContext context) {
  for (auto& [size_class, blocks] : context->cached)
    for (tessDevicePtr p : blocks) {
      context->size_class.erase(p);
      tessFree(context->device, p);
    }
  context->cached.clear();
}

tessStatus host_allocate(tessHostContext context, uint64_t bytes, tessDevicePtr* ptr) {
  if (!context->cache_enabled) return tessMalloc(context->device, bytes, ptr);
  uint64_t size_class = host_size_class(bytes);
  if (auto it = context->cached.find(size_class); it != context->cached.end() && !it->second.empty()) {
    *ptr = it->second.back();
    it->second.pop_back();
    return ok();
  }
  if (tessMalloc(context->device, size_class, ptr) != TESS_SUCCESS) {
    host_drop_cache(context);
    if (tessStatus s = tessMalloc(context->device, size_class, ptr)) return s;
  }
  context->size_class[*ptr] = size_class;
  return ok();
}

tessStatus host_release(tessHostContext context, tessDevicePtr ptr) {
  auto it = context->size_class.find(ptr);
  if (it == context->size_class.end()) return tessFree(context->device, ptr);
  context->cached[it->second].push_back(ptr);
  return ok();
}

void host_disown(tessHostContext context, tessDevicePtr ptr) { context->size_class.erase(ptr); }

}  // namespace tessera::rt
