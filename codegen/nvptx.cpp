// LLVM IR -> PTX: libdevice linking, the -O pipeline, the NVPTX backend.
#include "codegen/nvptx.h"

#include "codegen/llvm_pipeline.h"

#include <llvm/Bitcode/BitcodeReader.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/Module.h>
#include <llvm/IRReader/IRReader.h>
#include <llvm/Linker/Linker.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Support/CommandLine.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/SourceMgr.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/Target/TargetOptions.h>

#include <algorithm>
#include <filesystem>
#include <mutex>

extern "C" {
void LLVMInitializeNVPTXTargetInfo();
void LLVMInitializeNVPTXTarget();
void LLVMInitializeNVPTXTargetMC();
void LLVMInitializeNVPTXAsmPrinter();
}

namespace tessera::codegen {
namespace {

void initialize_nvptx() {
  static std::once_flag once;
  std::call_once(once, [] {
    LLVMInitializeNVPTXTargetInfo();
    LLVMInitializeNVPTXTarget();
    LLVMInitializeNVPTXTargetMC();
    LLVMInitializeNVPTXAsmPrinter();
    // 32-bit shared, constant and local pointers, as nvcc's NVVM uses them:
    // the emitter's data layout says so, and without this the target
    // machine's layout makes shared addresses 64-bit (two registers each).
    // LLVM keeps the switch only as a command-line option.
    auto&& options = llvm::cl::getRegisteredOptions();
    if (auto it = options.find("nvptx-short-ptr"); it != options.end())
      static_cast<llvm::cl::opt<bool>*>(it->second)->setValue(true);
  });
}

std::unique_ptr<llvm::TargetMachine> target_machine(const GpuArch& arch, int opt_level, std::string& error) {
  initialize_nvptx();
  llvm::Triple triple("nvptx64-nvidia-cuda");
  const llvm::Target* target = llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target) return nullptr;
  std::string features = "+ptx" + std::to_string(arch.ptx_version());
  llvm::CodeGenOptLevel level = opt_level <= 0   ? llvm::CodeGenOptLevel::None
                                : opt_level == 1 ? llvm::CodeGenOptLevel::Less
                                : opt_level == 2 ? llvm::CodeGenOptLevel::Default
                                                 : llvm::CodeGenOptLevel::Aggressive;
  return std::unique_ptr<llvm::TargetMachine>(target->createTargetMachine(
      triple, arch.name(), features, llvm::TargetOptions(), std::nullopt, std::nullopt, level));
}

bool calls_libdevice(const llvm::Module& module) {
  for (const llvm::Function& f : module)
    if (f.isDeclaration() && f.getName().starts_with("__nv_")) return true;
  return false;
}

// Links libdevice when needed and runs the -O pipeline with `machine`'s
// data layout and target information.
std::optional<std::string> optimize_with(llvm::Module& module, llvm::TargetMachine& machine, const PtxOptions& options) {
  module.setDataLayout(machine.createDataLayout());
  if (calls_libdevice(module)) {
    const std::string& path = options.libdevice_path;
    if (path.empty()) return std::string("libdevice");  // the caller reports codegen.no-libdevice
    llvm::SMDiagnostic diagnostic;
    std::unique_ptr<llvm::Module> libdevice = llvm::parseIRFile(path, diagnostic, module.getContext());
    if (!libdevice) return "cannot read libdevice '" + path + "': " + diagnostic.getMessage().str();
    libdevice->setTargetTriple(module.getTargetTriple());
    libdevice->setDataLayout(module.getDataLayout());
    // Only what the kernels call, internalized so that unused code is dropped.
    if (llvm::Linker::linkModules(module, std::move(libdevice), llvm::Linker::LinkOnlyNeeded,
                                  [](llvm::Module& m, const llvm::StringSet<>&) {
                                    for (llvm::Function& f : m)
                                      if (!f.isDeclaration() && f.getName().starts_with("__nv_"))
                                        f.setLinkage(llvm::GlobalValue::InternalLinkage);
                                  }))
      return "cannot link libdevice '" + path + "'";
  }
  // PTX names are letters, digits, '_' and '$': a '.' in a symbol (a @jit
  // instance `f.1`, a helper's specialisation `g.2`, a derived function
  // `loss.grad.1.value`, and the kernels generated from them) is not
  // assemblable, so every defined name spells it '$' (the runtime looks
  // kernels up the same way: runtime/src/cuda_device.cpp, find_kernel;
  // docs/abi.md). NVPTX's own renaming covers only internal symbols.
  for (llvm::GlobalValue& value : module.global_values())
    if (!value.isDeclaration() && !value.getName().starts_with("llvm.") && value.getName().contains('.')) {
      std::string name = value.getName().str();
      std::replace(name.begin(), name.end(), '.', '$');
      value.setName(name);
    }
  run_llvm_pipeline(module, &machine, options.opt_level);
  return std::nullopt;
}

}  // namespace

const char* default_cuda_root() { return TESSERA_CUDA_ROOT; }

std::string find_libdevice(const std::string& cuda_root) {
  std::filesystem::path path = std::filesystem::path(cuda_root) / "nvvm" / "libdevice" / "libdevice.10.bc";
  std::error_code ec;
  return std::filesystem::exists(path, ec) ? path.string() : std::string();
}

std::optional<std::string> optimize_for_nvptx(llvm::Module& module, const PtxOptions& options) {
  std::string error;
  auto machine = target_machine(options.arch, options.opt_level, error);
  if (!machine) return "cannot create the NVPTX target: " + error;
  return optimize_with(module, *machine, options);
}

std::optional<std::string> emit_ptx(llvm::Module& module, const PtxOptions& options, std::string& ptx) {
  // One target machine for the pipeline and the back end (creating one
  // builds the subtarget's lowering tables: about 0.5 ms each).
  std::string error;
  auto machine = target_machine(options.arch, options.opt_level, error);
  if (!machine) return "cannot create the NVPTX target: " + error;
  if (auto failure = optimize_with(module, *machine, options)) return failure;
  llvm::raw_string_ostream out(ptx);
  llvm::buffer_ostream buffered(out);
  llvm::legacy::PassManager passes;
  // No IR verifier in the back end's pipeline (clang's release builds leave
  // it out too): the emitter verifies every module it makes (emitter/core.cpp).
  if (machine->addPassesToEmitFile(passes, buffered, nullptr, llvm::CodeGenFileType::AssemblyFile,
                                   /*DisableVerify=*/true))
    return std::string("the NVPTX backend cannot emit PTX");
  passes.run(module);
  return std::nullopt;
}

}  // namespace tessera::codegen
