// The CPU target's back end (cpu_target.h, docs/cpu-target.md).
#include "codegen/cpu_target.h"

#include <llvm/ExecutionEngine/Orc/ExecutionUtils.h>
#include <llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/ExecutionEngine/Orc/ThreadSafeModule.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/Module.h>
#include <llvm/MC/MCSubtargetInfo.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Support/DynamicLibrary.h>
#include <llvm/Support/Error.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/TargetParser/Host.h>

#include <cstddef>
#include <mutex>

#include "codegen/llvm_pipeline.h"
#include "tessera/tessera_runtime.h"

namespace tessera::codegen {
namespace {

// The ABI pinned (docs/abi.md); the emitter reads these fields through
// offsetof (codegen/emitter/cpu_hooks.h, cpu_context).
static_assert(offsetof(tessCpuLaunchContext, grid) == 0);
static_assert(offsetof(tessCpuLaunchContext, group) == 12);
static_assert(offsetof(tessCpuLaunchContext, group_id) == 24);
static_assert(offsetof(tessCpuLaunchContext, shared) == 40);
static_assert(offsetof(tessCpuLaunchContext, report_error) == 88);
static_assert(offsetof(tessCpuLaunchContext, run_lanes) == 104);
static_assert(offsetof(tessCpuLaunchContext, barrier) == 112);
static_assert(offsetof(tessCpuLaunchContext, shuffle) == 120);
static_assert(sizeof(tessCpuKernelEntry) == 32);
static_assert(sizeof(tessCpuLaunchContext) == 128);

void initialize_native_target() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
  });
}

std::string to_string(llvm::Error error) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << error;
  return text;
}

// x86's vcvtneps2bf16 (AVX512-BF16, AVX-NE-CONVERT), which the back end
// uses for f32 -> bf16 when the CPU has it, flushes subnormals to zero; the
// GPU (cvt.rn.bf16.f32) and docs/numerics.md do not. Without the features
// the back end calls the module's exact __truncsfbf2 (emitter/cpu_entries.cpp).
void disable_inexact_bf16(llvm::orc::JITTargetMachineBuilder& builder) {
  if (!builder.getTargetTriple().isX86()) return;
  builder.getFeatures().AddFeature("avx512bf16", false);
  builder.getFeatures().AddFeature("avxneconvert", false);
}

// `cpu` "native" is the running machine with all its features; any other
// name is an LLVM CPU of the host's architecture ("generic", "x86-64-v3").
std::unique_ptr<llvm::TargetMachine> host_machine(int opt_level, std::string& error, const std::string& cpu = "native") {
  initialize_native_target();
  llvm::Expected<llvm::orc::JITTargetMachineBuilder> builder =
      cpu == "native" ? llvm::orc::JITTargetMachineBuilder::detectHost()
                      : llvm::Expected<llvm::orc::JITTargetMachineBuilder>(
                            llvm::orc::JITTargetMachineBuilder(llvm::Triple(llvm::sys::getProcessTriple())));
  if (!builder) {
    error = to_string(builder.takeError());
    return nullptr;
  }
  if (cpu != "native") {
    if (std::optional<std::string> triple = unknown_host_cpu(cpu)) {
      error = "unknown CPU '" + cpu + "' for " + *triple;
      return nullptr;
    }
    builder->setCPU(cpu);
  }
  disable_inexact_bf16(*builder);
  builder->setCodeGenOptLevel(opt_level <= 0   ? llvm::CodeGenOptLevel::None
                              : opt_level == 1 ? llvm::CodeGenOptLevel::Less
                              : opt_level == 2 ? llvm::CodeGenOptLevel::Default
                                               : llvm::CodeGenOptLevel::Aggressive);
  // Position-independent: objects go into shared libraries and executables alike.
  builder->setRelocationModel(llvm::Reloc::PIC_);
  auto machine = builder->createTargetMachine();
  if (!machine) {
    error = to_string(machine.takeError());
    return nullptr;
  }
  return std::move(*machine);
}

}  // namespace

std::optional<std::string> unknown_host_cpu(const std::string& cpu) {
  if (cpu == "native") return std::nullopt;
  initialize_native_target();
  llvm::Triple triple(llvm::sys::getProcessTriple());
  std::string error;
  const llvm::Target* target = llvm::TargetRegistry::lookupTarget(triple, error);
  // Made for the default CPU: made for an unknown one, LLVM prints a warning.
  std::unique_ptr<llvm::MCSubtargetInfo> subtarget(target ? target->createMCSubtargetInfo(triple, "", "") : nullptr);
  if (subtarget && subtarget->isCPUStringValid(cpu)) return std::nullopt;
  return triple.str();
}

std::optional<std::string> detect_host_target(HostTarget& target) {
  std::string error;
  auto machine = host_machine(0, error);
  if (!machine) return "cannot create the host target: " + error;
  target.triple = machine->getTargetTriple().str();
  target.data_layout = machine->createDataLayout().getStringRepresentation();
  target.abi_version = TESS_CPU_ABI_VERSION;
  return std::nullopt;
}

std::optional<std::string> optimize_for_host(llvm::Module& module, int opt_level, const std::string& cpu) {
  std::string error;
  auto machine = host_machine(opt_level, error, cpu);
  if (!machine) return "cannot create the host target: " + error;
  module.setDataLayout(machine->createDataLayout());
  run_llvm_pipeline(module, machine.get(), opt_level);
  return std::nullopt;
}

std::optional<std::string> emit_host_object(llvm::Module& module, int opt_level, std::string& object,
                                            const std::string& cpu) {
  if (auto error = optimize_for_host(module, opt_level, cpu)) return error;
  std::string error;
  auto machine = host_machine(opt_level, error, cpu);
  if (!machine) return "cannot create the host target: " + error;
  llvm::raw_string_ostream out(object);
  llvm::buffer_ostream buffered(out);
  llvm::legacy::PassManager passes;
  if (machine->addPassesToEmitFile(passes, buffered, nullptr, llvm::CodeGenFileType::ObjectFile))
    return std::string("the host backend cannot emit object files");
  passes.run(module);
  return std::nullopt;
}

HostJit::~HostJit() = default;

std::unique_ptr<HostJit> HostJit::load(std::unique_ptr<llvm::Module> module, std::unique_ptr<llvm::LLVMContext> context,
                                       int opt_level, std::string& error) {
  if (auto failure = optimize_for_host(*module, opt_level)) {
    error = *failure;
    return nullptr;
  }
  auto builder = llvm::orc::JITTargetMachineBuilder::detectHost();
  if (!builder) {
    error = to_string(builder.takeError());
    return nullptr;
  }
  disable_inexact_bf16(*builder);
  builder->setCodeGenOptLevel(opt_level <= 0 ? llvm::CodeGenOptLevel::None : llvm::CodeGenOptLevel::Aggressive);
  auto jit = llvm::orc::LLJITBuilder().setJITTargetMachineBuilder(std::move(*builder)).create();
  if (!jit) {
    error = "cannot start the JIT: " + to_string(jit.takeError());
    return nullptr;
  }
  // libm's functions (expf, tanhf, ...) and memcpy come from this process,
  // libmvec's (_ZGVdN8v_expf, ...) too once it is loaded.
  if (std::string mvec_error; llvm::sys::DynamicLibrary::LoadLibraryPermanently("libmvec.so.1", &mvec_error)) {
    auto machine = host_machine(opt_level, error);
    if (machine && uses_vector_math_library(*machine)) {
      error = "cannot load glibc's vector math library: " + mvec_error;
      return nullptr;
    }
  }
  auto process = llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess((*jit)->getDataLayout().getGlobalPrefix());
  if (!process) {
    error = to_string(process.takeError());
    return nullptr;
  }
  (*jit)->getMainJITDylib().addGenerator(std::move(*process));
  if (auto e = (*jit)->addIRModule(llvm::orc::ThreadSafeModule(std::move(module), std::move(context)))) {
    error = "cannot load the kernels: " + to_string(std::move(e));
    return nullptr;
  }
  auto table = (*jit)->lookup("tessera_cpu_kernels");
  if (!table) {
    error = "cannot link the kernels: " + to_string(table.takeError());
    return nullptr;
  }
  auto version = (*jit)->lookup("tessera_cpu_abi_version");
  if (!version) {
    error = "cannot link the kernels: " + to_string(version.takeError());
    return nullptr;
  }
  std::unique_ptr<HostJit> loaded(new HostJit());
  loaded->kernel_table_ = table->toPtr<const void*>();
  loaded->abi_version_ = *version->template toPtr<const uint32_t*>();
  loaded->jit_ = std::move(*jit);
  return loaded;
}

void* HostJit::lookup(const std::string& name) const {
  auto symbol = jit_->lookup(name);
  if (!symbol) {
    llvm::consumeError(symbol.takeError());
    return nullptr;
  }
  return symbol->toPtr<void*>();
}

}  // namespace tessera::codegen
