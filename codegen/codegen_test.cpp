#include <doctest/doctest.h>

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>

#include "codegen/cpu_target.h"
#include "codegen/cuda_tools.h"
#include "codegen/gpu_arch.h"
#include "codegen/narrow_float.h"

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
  // The first PTX ISA version that knows each target (LLVM aborts on older ones).
  CHECK(parse_gpu_arch("sm_89")->ptx_version() == 78);
  CHECK(parse_gpu_arch("sm_103a")->ptx_version() == 88);
  CHECK(parse_gpu_arch("sm_110")->ptx_version() == 90);
  CHECK(parse_gpu_arch("sm_121a")->ptx_version() == 88);
}

// The narrow-float conversions as the CPU runs them (the same LLVM IR as the
// GPU's, except where docs/codegen.md says a target uses a cvt), compiled by
// the JIT and compared with the specification (tessera/numerics.hpp) for
// every code: decode bit for bit, NaN payloads included, and encode of every
// decoded value (and of the values halfway between neighbours) back.
TEST_CASE("narrow-float decode and encode match numerics.hpp for every code") {
  using namespace tessera;
  const numerics::Format* formats[] = {&numerics::fp8_e4m3, &numerics::fp8_e5m2, &numerics::fp6_e2m3,
                                       &numerics::fp6_e3m2, &numerics::fp4_e2m1};
  HostTarget target;
  REQUIRE(!detect_host_target(target));
  auto context = std::make_unique<llvm::LLVMContext>();
  auto module = std::make_unique<llvm::Module>("narrow", *context);
  module->setTargetTriple(llvm::Triple(target.triple));
  module->setDataLayout(target.data_layout);
  llvm::IRBuilder<> b(*context);
  llvm::Type* ptr = b.getPtrTy();
  // What HostJit::load looks for: an empty kernel table and an ABI version.
  auto* entry = llvm::StructType::get(*context, {ptr, ptr, b.getInt64Ty(), b.getInt64Ty()});
  auto* table = llvm::ArrayType::get(entry, 1);
  new llvm::GlobalVariable(*module, table, true, llvm::GlobalValue::ExternalLinkage,
                           llvm::ConstantAggregateZero::get(table), "tessera_cpu_kernels");
  new llvm::GlobalVariable(*module, b.getInt32Ty(), true, llvm::GlobalValue::ExternalLinkage, b.getInt32(0),
                           "tessera_cpu_abi_version");
  for (const numerics::Format* format : formats) {
    auto* decode = llvm::Function::Create(llvm::FunctionType::get(b.getInt32Ty(), {b.getInt8Ty()}, false),
                                          llvm::GlobalValue::ExternalLinkage, std::string("decode_") + format->name,
                                          module.get());
    b.SetInsertPoint(llvm::BasicBlock::Create(*context, "entry", decode));
    b.CreateRet(b.CreateBitCast(emit_narrow_decode(b, *format, decode->getArg(0)), b.getInt32Ty()));
    auto* encode = llvm::Function::Create(llvm::FunctionType::get(b.getInt8Ty(), {b.getInt32Ty()}, false),
                                          llvm::GlobalValue::ExternalLinkage, std::string("encode_") + format->name,
                                          module.get());
    b.SetInsertPoint(llvm::BasicBlock::Create(*context, "entry", encode));
    b.CreateRet(emit_narrow_encode(b, *format, b.CreateBitCast(encode->getArg(0), b.getFloatTy())));
  }
  // The GPU's e5m2 decode through f16, run here by the JIT (the host's f16
  // conversion).
  auto* through_f16 = llvm::Function::Create(llvm::FunctionType::get(b.getInt32Ty(), {b.getInt8Ty()}, false),
                                             llvm::GlobalValue::ExternalLinkage, "decode_e5m2_through_f16", module.get());
  b.SetInsertPoint(llvm::BasicBlock::Create(*context, "entry", through_f16));
  b.CreateRet(b.CreateBitCast(emit_e5m2_decode_through_f16(b, through_f16->getArg(0)), b.getInt32Ty()));
  std::string error;
  std::unique_ptr<HostJit> jit = HostJit::load(std::move(module), std::move(context), 2, error);
  REQUIRE_MESSAGE(jit, error);
  auto e5m2 = reinterpret_cast<uint32_t (*)(uint8_t)>(jit->lookup("decode_e5m2_through_f16"));
  REQUIRE(static_cast<bool>(e5m2));
  for (uint32_t code = 0; code < 256; ++code) {
    CAPTURE(code);
    CHECK(e5m2(static_cast<uint8_t>(code)) == numerics::decode_bits(numerics::fp8_e5m2, code));
  }
  for (const numerics::Format* format : formats) {
    CAPTURE(format->name);
    auto decode = reinterpret_cast<uint32_t (*)(uint8_t)>(jit->lookup(std::string("decode_") + format->name));
    auto encode = reinterpret_cast<uint8_t (*)(uint32_t)>(jit->lookup(std::string("encode_") + format->name));
    REQUIRE(static_cast<bool>(decode));
    REQUIRE(static_cast<bool>(encode));
    for (uint32_t code = 0; code < (1u << format->bits()); ++code) {
      CAPTURE(code);
      uint32_t bits = numerics::decode_bits(*format, code);
      CHECK(decode(static_cast<uint8_t>(code)) == bits);
      CHECK(encode(bits) == numerics::encode_bits(*format, bits, numerics::Rounding::NearestEven,
                                                  numerics::Overflow::Propagate));
      CHECK(encode(bits + 1) == numerics::encode_bits(*format, bits + 1, numerics::Rounding::NearestEven,
                                                      numerics::Overflow::Propagate));
    }
  }
}

TEST_CASE("the spill stores of each kernel in a ptxas -v report") {
  std::string report =
      "ptxas info    : 0 bytes gmem\n"
      "ptxas info    : Compiling entry function 'big$v1' for 'sm_80'\n"
      "ptxas info    : Function properties for big$v1\n"
      "    2056 bytes stack frame, 2048 bytes spill stores, 2048 bytes spill loads\n"
      "ptxas info    : Used 255 registers, used 0 barriers, 2056 bytes cumulative stack size, 392 bytes cmem[0]\n"
      "ptxas info    : Compiling entry function 'big' for 'sm_80'\n"
      "ptxas info    : Function properties for big\n"
      "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
      "info    : Function properties for other\n"
      "    16 bytes stack frame, 12 bytes spill stores, 12 bytes spill loads\n";
  std::map<std::string, int64_t> spills = tessera::codegen::parse_spill_stores(report);
  CHECK(spills.size() == 3);
  CHECK(spills["big$v1"] == 2048);
  CHECK(spills["big"] == 0);
  CHECK(spills["other"] == 12);
  CHECK(tessera::codegen::parse_spill_stores("").empty());
}
