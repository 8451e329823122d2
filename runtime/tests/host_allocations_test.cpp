// The allocation cache of host contexts (src/host_allocations.cpp) through
// the host ABI: a freed block serves the next allocation of its size class,
// a call's leftovers are cached when it ends, returned blocks are not.
#include <doctest/doctest.h>

#include <vector>

// tessera_host.h uses the runtime's types: tessera_runtime.h first.
#include "tessera/tessera_runtime.h"
// clang-format off
#include "tessera/tessera_host.h"
// clang-format on

namespace {

tessDevice cpu_device() {
  tessDevice d = nullptr;
  REQUIRE(tessGetDevice(0, &d) == TESS_SUCCESS);
  return d;
}

// A host function that allocates `*args[0]` bytes and returns the block's
// address in `*results[0]` (without keeping it: the call frees it).
int allocate_one(tessHostContext context, void** args, void** results) {
  auto bytes = *static_cast<uint64_t*>(args[0]);
  tessDevicePtr p = 0;
  if (tessStatus s = tessHostAlloc(context, bytes, &p)) return s;
  *static_cast<tessDevicePtr*>(results[0]) = p;
  return TESS_SUCCESS;
}

}  // namespace

TEST_SUITE("runtime") {
  TEST_CASE("host allocations: a freed block serves the next request of its size class") {
    tessHostContext context = nullptr;
    REQUIRE(tessHostContextCreate(cpu_device(), nullptr, nullptr, &context) == TESS_SUCCESS);
    tessDevicePtr a = 0, b = 0, c = 0, d = 0;
    REQUIRE(tessHostAlloc(context, 1000, &a) == TESS_SUCCESS);
    REQUIRE(tessHostFree(context, a) == TESS_SUCCESS);
    // 900 and 1000 bytes are both in the 1024-byte class.
    REQUIRE(tessHostAlloc(context, 900, &b) == TESS_SUCCESS);
    CHECK(b == a);
    // 2000 bytes are another class (2048): a new block while b is taken.
    REQUIRE(tessHostAlloc(context, 2000, &c) == TESS_SUCCESS);
    CHECK(c != a);
    REQUIRE(tessHostFree(context, b) == TESS_SUCCESS);
    REQUIRE(tessHostFree(context, c) == TESS_SUCCESS);
    REQUIRE(tessHostAlloc(context, 1800, &d) == TESS_SUCCESS);
    CHECK(d == c);
    // The memory is usable: the whole class, written and read back.
    std::vector<unsigned char> bytes(1800, 0x5a), back(1800, 0);
    REQUIRE(tessMemcpyHtoD(cpu_device(), d, bytes.data(), bytes.size()) == TESS_SUCCESS);
    REQUIRE(tessMemcpyDtoH(cpu_device(), back.data(), d, back.size()) == TESS_SUCCESS);
    CHECK(back == bytes);
    REQUIRE(tessHostFree(context, d) == TESS_SUCCESS);
    REQUIRE(tessHostContextDestroy(context) == TESS_SUCCESS);
  }

  TEST_CASE("host allocations: what a call made and did not return is cached when it ends") {
    tessHostContext context = nullptr;
    REQUIRE(tessHostContextCreate(cpu_device(), nullptr, nullptr, &context) == TESS_SUCCESS);
    uint64_t bytes = 4096;
    tessDevicePtr first = 0, second = 0;
    void* args[] = {&bytes};
    void* results1[] = {&first};
    void* results2[] = {&second};
    REQUIRE(tessHostCall(context, allocate_one, args, results1) == TESS_SUCCESS);
    REQUIRE(tessHostCall(context, allocate_one, args, results2) == TESS_SUCCESS);
    CHECK(second == first);
    REQUIRE(tessHostContextDestroy(context) == TESS_SUCCESS);
  }
}
