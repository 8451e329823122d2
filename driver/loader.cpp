#include "driver/loader.h"

#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>

#include <optional>

#include "codegen/gpu_arch.h"
#include "codegen/cpu_target.h"
#include "codegen/llvm_emitter.h"
#include "codegen/nvptx.h"
#include "driver/target_options.h"

namespace tessera::driver {

namespace {

std::string last_error(const std::string& what) { return what + ": " + tessGetLastErrorMessage(); }

// The newest architecture the compiler knows that a GPU of compute
// capability `capability` runs; with Mma::Wgmma on a 9.0 GPU the
// arch-specific sm_90a that wgmma needs.
std::optional<codegen::GpuArch> arch_for_device(int64_t capability, Mma mma) {
  std::optional<codegen::GpuArch> arch;
  for (int sm : {120, 100, 90, 89, 87, 86, 80})
    if (!arch && sm <= capability) arch = codegen::parse_gpu_arch("sm_" + std::to_string(sm));
  if (arch && mma == Mma::Wgmma && capability == 90) {
    arch->arch_specific = true;
    arch->wgmma = true;
  }
  return arch;
}

}  // namespace

LoadedModule::LoadedModule() = default;
LoadedModule::~LoadedModule() {
  if (module_) tessModuleUnload(module_);
}
LoadedModule::LoadedModule(LoadedModule&& other) noexcept
    : module_(std::exchange(other.module_, nullptr)), jit_(std::move(other.jit_)),
      host_jit_(std::move(other.host_jit_)), host_table_(std::exchange(other.host_table_, nullptr)) {}
LoadedModule& LoadedModule::operator=(LoadedModule&& other) noexcept {
  if (this != &other) {
    if (module_) tessModuleUnload(module_);
    module_ = std::exchange(other.module_, nullptr);
    jit_ = std::move(other.jit_);
    host_jit_ = std::move(other.host_jit_);
    host_table_ = std::exchange(other.host_table_, nullptr);
  }
  return *this;
}

tessHostFunction LoadedModule::host_function(const std::string& name) const {
  for (const tessHostFunctionEntry* e = host_table_; e && e->name; ++e)
    if (name == e->name) return e->function;
  return nullptr;
}

namespace {

// The module compiled for this CPU and loaded in-process; null with `error`
// set (or a diagnostic reported) on failure.
std::unique_ptr<codegen::HostJit> load_cpu_code(ir::Operation* module, const CodegenOptions& options,
                                                DiagnosticEngine& diags, std::string& error) {
  codegen::HostTarget target;
  if (auto failure = codegen::detect_host_target(target)) {
    error = *failure;
    return nullptr;
  }
  target.emulate_mma = emulated_mma(options.mma);
  target.lanes_as_fibers = options.cpu_fibers;
  auto context = std::make_unique<llvm::LLVMContext>();
  std::unique_ptr<llvm::Module> llvm_module = codegen::emit_host_module(module, *context, target, diags, options.bounds_check);
  diags.flush();
  if (!llvm_module) return nullptr;
  std::string failure;
  std::unique_ptr<codegen::HostJit> jit =
      codegen::HostJit::load(std::move(llvm_module), std::move(context), options.opt_level, failure);
  if (!jit) error = "the CPU target: " + failure;
  return jit;
}

bool has_host_functions(ir::Operation* module) {
  for (ir::Operation* f : ir::module_functions(module))
    if (ir::is_host_level_function(f)) return true;
  return false;
}

}  // namespace

LoadedModule load_module(ir::Operation* module, tessDevice device, const CodegenOptions& options,
                         DiagnosticEngine& diags, std::string& error) {
  LoadedModule loaded;
  tessDeviceKind kind;
  if (tessDeviceGetKind(device, &kind) != TESS_SUCCESS) {
    error = last_error("device");
    return loaded;
  }
  if (kind == TESS_DEVICE_CPU) {
    loaded.jit_ = load_cpu_code(module, options, diags, error);
    if (!loaded.jit_) return loaded;
    loaded.host_table_ = static_cast<const tessHostFunctionEntry*>(loaded.jit_->lookup("tessera_host_functions"));
    const auto* table = static_cast<const tessCpuKernelEntry*>(loaded.jit_->kernel_table());
    size_t count = 0;
    while (table[count].name) ++count;
    if (tessModuleLoadCpuTable(device, table, count, &loaded.module_) != TESS_SUCCESS)
      error = last_error("loading the CPU code");
    return loaded;
  }
  int64_t capability = 0;
  if (tessDeviceGetAttribute(device, TESS_ATTR_COMPUTE_CAPABILITY, &capability) != TESS_SUCCESS) {
    error = last_error("device");
    return loaded;
  }
  std::optional<codegen::GpuArch> arch = arch_for_device(capability, options.mma);
  if (!arch) {
    error = "the GPU's compute capability " + std::to_string(capability) + " is older than sm_80, the oldest target";
    return loaded;
  }
  llvm::LLVMContext context;
  std::unique_ptr<llvm::Module> llvm_module =
      codegen::emit_nvptx_module(module, context, *arch, diags, codegen::DebugInfo::None, options.bounds_check);
  diags.flush();
  if (!llvm_module) return loaded;
  codegen::PtxOptions ptx_options{*arch, options.opt_level, ""};
  std::string cuda_root = codegen::cuda_root_or_default(options.toolkit.cuda_path);
  ptx_options.libdevice_path = codegen::find_libdevice(cuda_root);
  std::string ptx;
  if (auto failure = codegen::emit_ptx(*llvm_module, ptx_options, ptx)) {
    error = *failure == "libdevice" ? "the kernel calls math functions from libdevice, which is not at " + cuda_root +
                                          "/nvvm/libdevice/libdevice.10.bc (use --cuda-path)"
                                    : "PTX generation: " + *failure;
    return loaded;
  }
  if (tessModuleLoadData(device, ptx.c_str(), ptx.size() + 1, &loaded.module_) != TESS_SUCCESS) {
    error = last_error("loading the PTX (" + arch->name() + ")");
    return loaded;
  }
  if (has_host_functions(module)) {
    loaded.host_jit_ = load_cpu_code(module, options, diags, error);
    if (loaded.host_jit_)
      loaded.host_table_ = static_cast<const tessHostFunctionEntry*>(loaded.host_jit_->lookup("tessera_host_functions"));
  }
  return loaded;
}

}  // namespace tessera::driver
