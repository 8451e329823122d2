#include <doctest/doctest.h>

#include "codegen/gpu_arch.h"

using namespace tessera::codegen;

TEST_CASE("GPU architectures parse in nvcc's spellings") {
  auto a = parse_gpu_arch("sm_90a");
  REQUIRE(a);
  CHECK(a->sm == 90);
  CHECK(a->arch_specific);
  CHECK(a->name() == "sm_90a");
  CHECK(parse_gpu_arch("80")->name() == "sm_80");
  CHECK(parse_gpu_arch("compute_100")->sm == 100);
  CHECK(!parse_gpu_arch("sm_75"));  // below the supported range
  CHECK(!parse_gpu_arch("sm_8x"));
  CHECK(!parse_gpu_arch(""));
}
