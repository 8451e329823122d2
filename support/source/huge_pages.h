// Storage for the frontend's few big arrays: the tokens, the AST nodes and
// the AST's child ids, each tens of MiB for a 100,000-line file.
//
// Why: a compiler run writes every page of those arrays once, and each first
// write of a 4 KiB page is a page fault. On the (virtualised) development
// machine the faults took about 40% of lexing + parsing time. Large blocks are
// therefore mapped on a 2 MiB boundary and advised to use transparent huge
// pages (one fault per 2 MiB instead of 512). Untouched reserved capacity costs
// nothing either way. Small blocks, non-Linux systems and AddressSanitizer
// builds (which must keep seeing every heap block) use operator new.
#pragma once

#include <cstddef>

namespace tessera {

void* huge_page_allocate(size_t bytes);
// `bytes` must be the size given to huge_page_allocate.
void huge_page_deallocate(void* block, size_t bytes);

// A std::allocator replacement over huge_page_allocate, for std::vector.
template <typename T>
struct HugePageAllocator {
  using value_type = T;

  HugePageAllocator() = default;
  template <typename U>
  HugePageAllocator(const HugePageAllocator<U>&) {}  // NOLINT(google-explicit-constructor)

  T* allocate(size_t n) { return static_cast<T*>(huge_page_allocate(n * sizeof(T))); }
  void deallocate(T* block, size_t n) { huge_page_deallocate(block, n * sizeof(T)); }

  template <typename U>
  friend bool operator==(HugePageAllocator, HugePageAllocator<U>) {
    return true;
  }
};

}  // namespace tessera
