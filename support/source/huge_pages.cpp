#include "support/source/huge_pages.h"

#include <cstdint>
#include <new>

#if defined(__linux__)
#include <sys/mman.h>
#endif

// AddressSanitizer only checks blocks it allocated itself.
#if defined(__SANITIZE_ADDRESS__)
#define TESSERA_NO_HUGE_PAGES 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TESSERA_NO_HUGE_PAGES 1
#endif
#endif
#if !defined(__linux__) || !defined(MADV_HUGEPAGE)
#define TESSERA_NO_HUGE_PAGES 1
#endif

namespace tessera {

#if !defined(TESSERA_NO_HUGE_PAGES)

namespace {

constexpr size_t kHugePage = size_t{2} << 20;
// Below this, a huge page would mostly hold unused capacity: operator new.
constexpr size_t kHugePageThreshold = size_t{4} << 20;

size_t round_up(size_t value, size_t to) { return (value + to - 1) / to * to; }

}  // namespace

void* huge_page_allocate(size_t bytes) {
  if (bytes < kHugePageThreshold) return ::operator new(bytes);
  size_t length = round_up(bytes, kHugePage);
  // Map one huge page more than needed, then cut the block down to a 2 MiB
  // aligned one: huge pages only back aligned 2 MiB ranges.
  void* raw = mmap(nullptr, length + kHugePage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) throw std::bad_alloc();
  auto raw_begin = reinterpret_cast<uintptr_t>(raw);
  uintptr_t begin = round_up(raw_begin, kHugePage);
  size_t head = begin - raw_begin;
  if (head != 0) munmap(raw, head);
  if (head != kHugePage) munmap(reinterpret_cast<void*>(begin + length), kHugePage - head);
  // Only a hint: without transparent huge pages the block still works.
  madvise(reinterpret_cast<void*>(begin), length, MADV_HUGEPAGE);
  return reinterpret_cast<void*>(begin);
}

void huge_page_deallocate(void* block, size_t bytes) {
  if (bytes < kHugePageThreshold) {
    ::operator delete(block);
    return;
  }
  munmap(block, round_up(bytes, kHugePage));
}

#else

void* huge_page_allocate(size_t bytes) { return ::operator new(bytes); }
void huge_page_deallocate(void* block, size_t /*bytes*/) { ::operator delete(block); }

#endif

}  // namespace tessera
