#include "driver/gpu_code.h"

#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/Support/raw_ostream.h>

#include <algorithm>
#include <cstdio>
#include <memory>

#include "codegen/llvm_emitter.h"
#include "codegen/nvjitlink.h"
#include "codegen/nvptx.h"
#include "codegen/cuda_tools.h"
#include "support/diagnostics/internal_error.h"

namespace tessera::driver {

namespace {

codegen::DebugInfo debug_info(const CodegenOptions& options) {
  switch (options.debug) {
    case DebugLevel::None: return codegen::DebugInfo::None;
    case DebugLevel::LineTables: return codegen::DebugInfo::LineTables;
    case DebugLevel::Full: return codegen::DebugInfo::Full;
  }
  return codegen::DebugInfo::None;
}

// -g compiles the GPU code without optimisation, as nvcc -G does.
int gpu_opt_level(const CodegenOptions& options) { return options.debug == DebugLevel::Full ? 0 : options.opt_level; }

std::string cuda_root(const CodegenOptions& options) { return codegen::cuda_root_or_default(options.toolkit.cuda_path); }

// Tile IR -> LLVM IR (printed, optimised at -O) or PTX for one architecture;
// nullopt after an error.
std::optional<std::string> generate(ir::Operation* module, const codegen::GpuArch& arch, bool ptx,
                                    const CodegenOptions& options, DiagnosticEngine& diags) {
  llvm::LLVMContext context;
  std::unique_ptr<llvm::Module> llvm_module =
      codegen::emit_nvptx_module(module, context, arch, diags, debug_info(options), options.bounds_check);
  if (!llvm_module) return std::nullopt;
  codegen::PtxOptions ptx_options{arch, gpu_opt_level(options), ""};
  std::string root = cuda_root(options);
  ptx_options.libdevice_path = codegen::find_libdevice(root);  // empty when absent
  std::string text;
  std::optional<std::string> error = ptx ? codegen::emit_ptx(*llvm_module, ptx_options, text)
                                         : codegen::optimize_for_nvptx(*llvm_module, ptx_options);
  if (error && *error == "libdevice") {
    std::string first;
    for (const llvm::Function& f : *llvm_module)
      if (f.isDeclaration() && f.getName().starts_with("__nv_")) first = f.getName().str().substr(5);
    diags.emit_global<diag::CodegenNoLibdevice>(first, root + "/nvvm/libdevice/libdevice.10.bc");
    return std::nullopt;
  }
  if (error) internal_error("codegen", *error);
  if (!ptx) llvm::raw_string_ostream(text) << *llvm_module;
  return text;
}

// What turns PTX into a cubin: libnvJitLink in this process, or ptxas run
// as a process (docs/codegen.md, "Assemblers").
struct PtxAssembler {
  std::unique_ptr<codegen::NvJitLink> nvjitlink;  // null: run `ptxas`
  std::string ptxas;
};

// Assembler::Auto runs the ptxas process when there is one (the assembler
// nvcc runs: at -O2/-O3 nvJitLink 13.0 allocates registers differently, e.g.
// 120 instead of 32 for bench/codegen/matmul.tsr on sm_80), else nvJitLink
// in-process when it loads; an explicit ptxas path always means the process.
// Nullopt when there is none (`nvjitlink_error` says why nvJitLink did not
// load, if it was tried).
std::optional<PtxAssembler> find_assembler(const CodegenOptions& options, std::string& nvjitlink_error) {
  const Toolkit& toolkit = options.toolkit;
  std::string root = cuda_root(options);
  PtxAssembler assembler;
  bool want_nvjitlink = toolkit.assembler == Assembler::NvJitLink ||
                        (toolkit.assembler == Assembler::Auto && toolkit.ptxas.empty() &&
                         codegen::find_tool("ptxas", "", root).empty());
  if (want_nvjitlink) {
    assembler.nvjitlink = codegen::NvJitLink::load(toolkit.nvjitlink, root, nvjitlink_error);
    if (assembler.nvjitlink) return assembler;
    if (toolkit.assembler == Assembler::NvJitLink) return std::nullopt;
  }
  assembler.ptxas = codegen::find_tool("ptxas", toolkit.ptxas, root);
  if (assembler.ptxas.empty()) return std::nullopt;
  return assembler;
}

// find_assembler, reporting why there is none. Nullopt after an error.
std::optional<PtxAssembler> choose_assembler(const CodegenOptions& options, const std::string& output_kind,
                                             DiagnosticEngine& diags) {
  std::string error;
  std::optional<PtxAssembler> assembler = find_assembler(options, error);
  if (assembler) return assembler;
  std::string root = cuda_root(options);
  if (options.toolkit.assembler == Assembler::NvJitLink) {
    std::string where = options.toolkit.nvjitlink.empty()
                            ? root + "/lib64, /usr/local/cuda/lib64 or the library search path"
                            : "'" + options.toolkit.nvjitlink + "'";
    diags.emit_global<diag::CodegenNvJitLinkNotFound>(output_kind, where, error);
  } else if (!options.toolkit.ptxas.empty()) {
    diags.emit_global<diag::CodegenToolPathInvalid>(output_kind, "ptxas", options.toolkit.ptxas,
                                                    codegen::tool_path_problem(options.toolkit.ptxas));
  } else {
    diags.emit_global<diag::CodegenToolNotFound>(output_kind, "ptxas", root);
  }
  return std::nullopt;
}

// PTX -> cubin for one architecture, started before the PTX is made: ptxas
// begins at once when it can read the PTX from a pipe (its start-up then
// overlaps with LLVM's work; codegen::PtxasRun), and the runs of a fatbin's
// architectures overlap with each other. nvJitLink assembles in finish().
class AssemblyJob {
 public:
  // `entries`: whether the PTX holds several entries (contiguous variants).
  AssemblyJob(const PtxAssembler& assembler, const codegen::GpuArch& arch, const CodegenOptions& options,
              bool entries)
      : assembler_(assembler), arch_(arch), options_(options) {
    if (assembler.nvjitlink) return;
    // As nvcc: the line tables of -lineinfo and -g reach the cubin only when
    // ptxas is asked to keep them.
    std::vector<std::string> ptxas_options = options.toolkit.ptxas_options;
    if (options.debug == DebugLevel::Full) ptxas_options.insert(ptxas_options.begin(), "-g");  // device debugging
    else if (options.debug == DebugLevel::LineTables) ptxas_options.insert(ptxas_options.begin(), "-lineinfo");
    // Entries assembled on two threads (docs/codegen.md, "Two entries on two cores"):
    // the cubin is the same from run to run, and its code and registers the
    // same as from one thread; unless the user chose a number.
    bool user_split = std::any_of(ptxas_options.begin(), ptxas_options.end(), [](const std::string& o) {
      return o.find("split-compile") != std::string::npos;
    });
    if (entries && !user_split) ptxas_options.insert(ptxas_options.begin(), {"--split-compile", "2"});
    ptxas_ = std::make_unique<codegen::PtxasRun>(assembler.ptxas, arch, gpu_opt_level(options), std::move(ptxas_options));
  }

  void feed(std::string ptx) {
    if (ptxas_) ptxas_->feed(ptx);
    else ptx_ = std::move(ptx);
  }

  // False after an error (reported). ptxas's messages on success (-v,
  // warnings) go to standard error, or to `kept` when given.
  bool finish(DiagnosticEngine& diags, std::string& cubin, std::string* kept = nullptr) {
    std::string messages;
    std::optional<std::string> error;
    if (ptxas_) {
      error = ptxas_->finish(cubin, messages);
    } else {
      error = assembler_.nvjitlink->assemble(ptx_, arch_, gpu_opt_level(options_),
                                             options_.debug == DebugLevel::LineTables,
                                             options_.debug == DebugLevel::Full, options_.toolkit.ptxas_options, cubin,
                                             messages);
    }
    if (error) {
      diags.emit_global<diag::CodegenToolFailed>(ptxas_ ? "ptxas" : "nvJitLink", arch_.name(), *error);
      return false;
    }
    if (kept) *kept = std::move(messages);
    else if (!messages.empty()) std::fprintf(stderr, "%s\n", messages.c_str());
    return true;
  }

 private:
  const PtxAssembler& assembler_;
  codegen::GpuArch arch_;
  const CodegenOptions& options_;
  std::unique_ptr<codegen::PtxasRun> ptxas_;  // null: nvJitLink
  std::string ptx_;                           // for nvJitLink
};

}  // namespace

std::optional<std::vector<codegen::GpuArch>> gpu_archs(const CodegenOptions& options, DiagnosticEngine& diags) {
  std::vector<codegen::GpuArch> archs;
  for (const std::string& name : options.archs) {
    std::optional<codegen::GpuArch> arch = codegen::parse_gpu_arch(name);
    if (!arch) {
      diags.emit_global<diag::CodegenUnknownArch>(name);
      return std::nullopt;
    }
    arch->wgmma = options.mma == Mma::Wgmma;
    archs.push_back(*arch);
  }
  if (archs.empty()) archs.push_back(*codegen::parse_gpu_arch("sm_80"));
  return archs;
}

std::optional<codegen::GpuArch> single_gpu_arch(const CodegenOptions& options, const std::string& emit_name,
                                                DiagnosticEngine& diags) {
  std::optional<std::vector<codegen::GpuArch>> archs = gpu_archs(options, diags);
  if (!archs) return std::nullopt;
  if (archs->size() != 1) {
    diags.emit_global<diag::CodegenOneArch>(emit_name, static_cast<unsigned>(archs->size()), options.arch_list);
    return std::nullopt;
  }
  return archs->front();
}

codegen::GpuArch forward_compatible_arch(const std::vector<codegen::GpuArch>& archs) {
  codegen::GpuArch newest = archs[0];
  for (const codegen::GpuArch& arch : archs)
    if (arch.sm > newest.sm) newest = arch;
  newest.arch_specific = false;
  return newest;
}

std::optional<std::string> gpu_llvm_ir(ir::Operation* module, const codegen::GpuArch& arch,
                                       const CodegenOptions& options, DiagnosticEngine& diags) {
  return generate(module, arch, false, options, diags);
}

std::optional<std::string> gpu_ptx(ir::Operation* module, const codegen::GpuArch& arch, const CodegenOptions& options,
                                   DiagnosticEngine& diags) {
  return generate(module, arch, true, options, diags);
}

std::optional<std::string> gpu_binary(ir::Operation* module, GpuBinary kind, const CodegenOptions& options,
                                      DiagnosticEngine& diags) {
  std::optional<std::vector<codegen::GpuArch>> listed = gpu_archs(options, diags);
  if (!listed) return std::nullopt;
  const std::vector<codegen::GpuArch>& archs = *listed;
  const bool fatbin = kind == GpuBinary::Fatbin;
  if (!fatbin && !single_gpu_arch(options, "cubin", diags)) return std::nullopt;
  std::optional<PtxAssembler> assembler = choose_assembler(options, fatbin ? "fatbin" : "cubin", diags);
  if (!assembler) return std::nullopt;
  // Each architecture's assembler starts before its PTX is made; they are
  // waited for, in order, once every PTX is made (an early return kills them).
  // A fatbin holds the PTX of the newest architecture too, so that newer
  // GPUs can JIT it. When that is one of the cubins' architectures, its PTX
  // is made once.
  codegen::GpuArch newest = forward_compatible_arch(archs);
  std::optional<std::string> newest_ptx;
  std::vector<std::unique_ptr<AssemblyJob>> jobs;
  bool entries = codegen::has_contiguous_variants(module);
  for (const codegen::GpuArch& arch : archs) {
    jobs.push_back(std::make_unique<AssemblyJob>(*assembler, arch, options, entries));
    std::optional<std::string> ptx = gpu_ptx(module, arch, options, diags);
    if (!ptx) return std::nullopt;
    if (fatbin && !newest_ptx && arch.name() == newest.name()) newest_ptx = *ptx;
    jobs.back()->feed(std::move(*ptx));
  }
  if (fatbin && !newest_ptx) {
    newest_ptx = gpu_ptx(module, newest, options, diags);
    if (!newest_ptx) return std::nullopt;
  }
  std::vector<codegen::FatbinImage> images;
  for (size_t i = 0; i < jobs.size(); ++i) {
    std::string cubin;
    if (!jobs[i]->finish(diags, cubin)) return std::nullopt;
    if (!fatbin) return cubin;
    images.push_back({false, archs[i], std::move(cubin)});
  }
  images.push_back({true, newest, std::move(*newest_ptx)});
  std::string root = cuda_root(options);
  std::string fatbinary = codegen::find_tool("fatbinary", options.toolkit.fatbinary, root);
  if (fatbinary.empty() && !options.toolkit.fatbinary.empty()) {
    diags.emit_global<diag::CodegenToolPathInvalid>("fatbin", "fatbinary", options.toolkit.fatbinary,
                                                    codegen::tool_path_problem(options.toolkit.fatbinary));
    return std::nullopt;
  }
  if (fatbinary.empty()) {
    diags.emit_global<diag::CodegenToolNotFound>("fatbin", "fatbinary", root);
    return std::nullopt;
  }
  std::string image;
  if (auto error = codegen::make_fatbin(fatbinary, images, image)) {
    diags.emit_global<diag::CodegenToolFailed>("fatbinary", options.arch_list, *error);
    return std::nullopt;
  }
  return image;
}

std::optional<std::vector<ArchSpillStores>> kernel_spill_stores(ir::Operation* module, const CodegenOptions& options,
                                                                DiagnosticEngine& diags) {
  // Problems here are the real compilation's to report.
  CollectingDiagnosticConsumer collected;
  DiagnosticEngine quiet(diags.sources(), collected, DiagnosticOptions{false, true, 1});
  std::optional<std::vector<codegen::GpuArch>> archs = gpu_archs(options, quiet);
  std::string ignored;
  std::optional<PtxAssembler> assembler = archs ? find_assembler(options, ignored) : std::nullopt;
  if (!assembler) return std::nullopt;
  CodegenOptions verbose = options;
  verbose.toolkit.ptxas_options.push_back("-v");
  std::vector<ArchSpillStores> result;
  for (const codegen::GpuArch& arch : *archs) {
    AssemblyJob job(*assembler, arch, verbose, codegen::has_contiguous_variants(module));
    std::optional<std::string> ptx = gpu_ptx(module, arch, verbose, quiet);
    if (!ptx) return std::nullopt;
    job.feed(std::move(*ptx));
    std::string cubin, report;
    if (!job.finish(quiet, cubin, &report)) return std::nullopt;
    result.push_back({arch.name(), codegen::parse_spill_stores(report)});
  }
  return result;
}

bool fatbin_tools_found(const CodegenOptions& options) {
  std::string ignored;
  return find_assembler(options, ignored) &&
         !codegen::find_tool("fatbinary", options.toolkit.fatbinary, cuda_root(options)).empty();
}

}  // namespace tessera::driver
