#include "driver/aot_object.h"

#include "codegen/aot.h"
#include "codegen/kernel_signature.h"
#include "driver/aot_header.h"
#include "driver/cpu_code.h"
#include "driver/gpu_code.h"
#include "support/diagnostics/internal_error.h"

namespace tessera::driver {

namespace {

// The GPU image to embed, by `gpu_code`; nullopt after an error.
std::optional<std::pair<codegen::AotImageKind, std::string>> gpu_image(ir::Operation* module, GpuCode gpu_code,
                                                                     const CodegenOptions& options,
                                                                     DiagnosticEngine& diags) {
  using Kind = codegen::AotImageKind;
  if (gpu_code == GpuCode::None) return std::make_pair(Kind::None, std::string());
  // Auto: a fatbin when an assembler and fatbinary are here; else PTX, which
  // the driver compiles when the module is loaded. A tool path given on the
  // command line is meant to be used: one that cannot run is an error
  // (codegen.tool-path-invalid), not a silent fallback to PTX.
  bool tool_named = !options.toolkit.ptxas.empty() || !options.toolkit.fatbinary.empty();
  bool fatbin = gpu_code == GpuCode::Fatbin ||
                (gpu_code == GpuCode::Auto && (tool_named || fatbin_tools_found(options)));
  if (fatbin) {
    std::optional<std::string> image = gpu_binary(module, GpuBinary::Fatbin, options, diags);
    if (!image) return std::nullopt;
    return std::make_pair(Kind::Fatbin, std::move(*image));
  }
  std::optional<std::vector<codegen::GpuArch>> archs = gpu_archs(options, diags);
  if (!archs) return std::nullopt;
  std::optional<std::string> ptx = gpu_ptx(module, forward_compatible_arch(*archs), options, diags);
  if (!ptx) return std::nullopt;
  return std::make_pair(Kind::Ptx, std::move(*ptx));
}

}  // namespace

std::optional<AotOutput> aot_object(ir::Operation* module, const AotOptions& aot, const CodegenOptions& options,
                                    DiagnosticEngine& diags) {
  std::vector<codegen::AotKernel> kernels = codegen::kernel_signatures(module);
  std::vector<codegen::AotKernel> functions = codegen::jit_function_signatures(module);
  if (kernels.empty() && functions.empty()) diags.emit_global<diag::CodegenNoKernels>(aot.source);
  if (!host_cpu_known(options, diags)) return std::nullopt;
  auto image = gpu_image(module, aot.gpu_code, options, diags);
  if (!image) return std::nullopt;
  codegen::AotObjectOptions object_options;
  object_options.name_space = aot.name_space;
  object_options.source = aot.source;
  object_options.image_kind = image->first;
  object_options.image = std::move(image->second);
  object_options.opt_level = options.opt_level;
  object_options.host_cpu = options.host_cpu;
  object_options.bounds_check = options.bounds_check;
  AotOutput output;
  bool reported = false;
  if (auto error = codegen::emit_aot_object(module, kernels, functions, object_options, diags, output.object, reported))
    internal_error("codegen", *error);
  if (reported) return std::nullopt;
  output.header = aot_header(aot.name_space, aot.source, aot.object_name, kernels, functions,
                             object_options.image_kind, options.arch_list);
  return output;
}

}  // namespace tessera::driver
