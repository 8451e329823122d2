// tesserac: the Tessera compiler driver.
//
// Exit codes: 0 success; 1 the input has errors (or -verify found a
// mismatch); 2 the command line is wrong; 3 an internal compiler error.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <set>
#include <string>
#include <vector>

#include "frontend/ast/ast.h"
#include "frontend/diagnostics/diagnostics.h"
#include "frontend/diagnostics/internal_error.h"
#include "frontend/diagnostics/verify.h"
#include "frontend/lex/lexer.h"
#include "frontend/parse/parse.h"
#include "ir/core/ir_text.h"
#include "ir/lower/lower.h"
#include "ir/passes/pass_manager.h"
#include "codegen/aot.h"
#include "codegen/cpu_target.h"
#include "codegen/cuda_tools.h"
#include "codegen/gpu_arch.h"
#include "codegen/llvm_emitter.h"
#include "codegen/llvm_errors.h"
#include "codegen/nvjitlink.h"
#include "codegen/nvptx.h"
#include <filesystem>
#include <optional>
#include <sstream>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/Support/raw_ostream.h>
#include "sema/sema.h"
#include "tools/tesserac/output_file.h"
#include "tools/tesserac/aot_header.h"
#include "tools/tesserac/run.h"
#include "tools/tesserac/signature.h"

namespace tessera {
namespace {

constexpr int kExitOk = 0;
constexpr int kExitUserError = 1;
constexpr int kExitUsage = 2;
constexpr int kExitInternalError = 3;

// The phase running now, for internal-error and crash reports.
const char* volatile g_current_phase = "driver";

extern "C" void handle_crash(int signal_number) {
  // Only async-signal-safe calls here.
  const char* prefix = "tesserac: error: internal compiler error: crashed in phase '";
  const char* phase = g_current_phase;
  (void)!::write(STDERR_FILENO, prefix, std::strlen(prefix));
  (void)!::write(STDERR_FILENO, phase, std::strlen(phase));
  const char* suffix = "' (signal ";
  (void)!::write(STDERR_FILENO, suffix, std::strlen(suffix));
  char digits[4] = {static_cast<char>('0' + (signal_number / 10) % 10), static_cast<char>('0' + signal_number % 10),
                    ')', '\n'};
  (void)!::write(STDERR_FILENO, digits, sizeof digits);
  const char* report = "please report this bug with the input file that caused it [internal.compiler-error]\n";
  (void)!::write(STDERR_FILENO, report, std::strlen(report));
  ::_exit(kExitInternalError);
}

int report_internal_error(const std::string& phase, const std::string& what);

void report_llvm_fatal_error(const char* message) {
  report_internal_error(g_current_phase, std::string("LLVM: ") + message);
  std::fflush(stderr);
}

void install_crash_handlers() {
  codegen::on_llvm_fatal_error(report_llvm_fatal_error, kExitInternalError);
#if defined(__SANITIZE_ADDRESS__)
  return;  // the sanitizers' own reports are more useful than ours
#endif
  for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT}) std::signal(sig, handle_crash);
}

// A compiler bug: printed through the registry (so that it has a stable id)
// but never confused with a user error: exit code 3.
int report_internal_error(const std::string& phase, const std::string& what) {
  Diagnostic d{diag::InternalCompilerError,
               Severity::Error,
               false,
               false,
               {},
               format_diagnostic_message<diag::InternalCompilerError>(phase, what),
               {},
               {}};
  log_diagnostic_kind_for_coverage(d);
  SourceManager no_sources;
  std::string text = TextDiagnosticPrinter(no_sources, stderr).render(d);
  text += "tesserac: note: this is a bug in tesserac, not in your program; please report it with the input file\n";
  std::fputs(text.c_str(), stderr);
  return kExitInternalError;
}

enum class Emit { None, Tokens, Ast, TypedAst, TileIr, Llvm, Ptx, Cubin, Fatbin, Object };

// The last phase a run goes through.
enum class StopAfter { Lex, Parse, Sema };

struct Options {
  std::string input;
  std::string output = "-";
  std::string emit;
  bool syntax_only = false;
  bool parse_only = false;
  bool print_locations = false;
  std::string arch = "sm_80";
  bool compile_object = false;  // -c: an AOT host object and its C++ header
  std::string header;           // -c: the header's path (default: the object's with .h)
  std::string name_space;       // -c: the header's namespace (default: the file's stem)
  std::string gpu_code = "auto";
  std::string host_cpu = "generic";
  std::string target = "gpu";
  bool bounds_check = false;
  int opt_level = 3;
  std::string cuda_path;
  std::string assembler = "auto";  // PTX -> cubin: auto, nvjitlink (in-process), ptxas (a process)
  std::string mma = "auto";        // tensor-core instruction for tile.mma: auto, sync, wgmma
  std::string ptxas;
  std::string nvjitlink;
  std::string fatbinary;
  std::string ptxas_options;
  bool line_info = false;
  bool debug_info = false;
  bool verify = false;
  bool warnings_as_errors = false;
  bool no_warnings = false;
  uint32_t error_limit = 20;
  std::string color = "auto";
  bool list_diagnostics = false;
  std::string debug_internal_error;  // test hook: fail on purpose in this phase
};

// Options spelled with one dash and a long name, clang style (-verify,
// -fsyntax-only, -Werror, -ferror-limit=N). CLI11 wants two dashes for long
// names, so these are rewritten before parsing.
const std::set<std::string, std::less<>> kSingleDashLongOptions = {
    "verify",       "fsyntax-only",       "fparse-only",           "Werror",
    "ferror-limit", "fcolor-diagnostics", "fno-color-diagnostics", "emit",
    "arch",         "lineinfo",           "target",
};

std::vector<std::string> normalize_arguments(int argc, char** argv) {
  std::vector<std::string> args;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg.size() > 2 && arg[0] == '-' && arg[1] != '-') {
      std::string_view name(arg);
      name.remove_prefix(1);
      name = name.substr(0, name.find('='));
      if (kSingleDashLongOptions.count(name)) arg.insert(0, "-");
      // -O0 .. -O3, as in every compiler.
      if (arg.size() == 3 && arg[1] == 'O' && arg[2] >= '0' && arg[2] <= '3') arg = "--opt-level=" + arg.substr(2);
    }
    args.push_back(std::move(arg));
  }
  std::reverse(args.begin(), args.end());  // CLI11 takes them in reverse order
  return args;
}

bool use_color(const std::string& mode) {
  if (mode == "always") return true;
  if (mode == "never") return false;
  const char* term = std::getenv("TERM");
  return ::isatty(STDERR_FILENO) && std::getenv("NO_COLOR") == nullptr && term != nullptr &&
         std::string_view(term) != "dumb";
}

int list_diagnostics() {
  for (const DiagnosticKindInfo& info : all_diagnostic_kinds()) {
    std::printf("%s %s\n", std::string(info.id).c_str(), std::string(severity_name(info.severity)).c_str());
  }
  return kExitOk;
}

// Tile IR -> LLVM IR (printed, optimised at -O) or PTX for one
// architecture; nullopt after an error.
std::optional<std::string> generate_gpu_code(ir::Operation* module, const codegen::GpuArch& arch, bool ptx,
                                             const Options& options, DiagnosticEngine& diags) {
  llvm::LLVMContext context;
  codegen::DebugInfo debug = options.debug_info      ? codegen::DebugInfo::Full
                             : options.line_info     ? codegen::DebugInfo::LineTables
                                                     : codegen::DebugInfo::None;
  std::unique_ptr<llvm::Module> llvm_module =
      codegen::emit_nvptx_module(module, context, arch, diags, debug, options.bounds_check);
  if (!llvm_module) return std::nullopt;
  codegen::PtxOptions ptx_options{arch, options.debug_info ? 0 : options.opt_level, ""};
  std::string cuda_root = codegen::cuda_root_or_default(options.cuda_path);
  ptx_options.libdevice_path = codegen::find_libdevice(cuda_root);  // empty when absent
  std::string text;
  std::optional<std::string> error = ptx ? codegen::emit_ptx(*llvm_module, ptx_options, text)
                                         : codegen::optimize_for_nvptx(*llvm_module, ptx_options);
  if (error && *error == "libdevice") {
    std::string first;
    for (const llvm::Function& f : *llvm_module)
      if (f.isDeclaration() && f.getName().starts_with("__nv_")) first = f.getName().str().substr(5);
    diags.emit_global<diag::CodegenNoLibdevice>(first, cuda_root + "/nvvm/libdevice/libdevice.10.bc");
    return std::nullopt;
  }
  if (error) internal_error("codegen", *error);
  if (!ptx) llvm::raw_string_ostream(text) << *llvm_module;
  return text;
}

std::vector<std::string> split(const std::string& text, char separator) {
  std::vector<std::string> parts;
  std::stringstream stream(text);
  std::string part;
  while (std::getline(stream, part, separator))
    if (!part.empty()) parts.push_back(part);
  return parts;
}

// --host-cpu names a CPU of the host's architecture (objects only); false
// after reporting codegen.unknown-host-cpu.
bool host_cpu_known(const Options& options, DiagnosticEngine& diags) {
  std::optional<std::string> triple = codegen::unknown_host_cpu(options.host_cpu);
  if (triple) diags.emit_global<diag::CodegenUnknownHostCpu>(options.host_cpu, *triple);
  return !triple;
}

// --target=cpu: --emit=llvm (optimised host LLVM IR) or --emit=obj (an ELF
// object exporting tessera_cpu_kernels, docs/abi.md); "" after an error.
std::string generate_cpu_code(ir::Operation* module, Emit emit, const Options& options, DiagnosticEngine& diags) {
  codegen::HostTarget target;
  if (auto error = codegen::detect_host_target(target)) internal_error("codegen", *error);
  target.emulate_mma = codegen::emulated_mma(options.mma);
  llvm::LLVMContext context;
  std::unique_ptr<llvm::Module> llvm_module = codegen::emit_host_module(module, context, target, diags, options.bounds_check);
  if (!llvm_module) return "";
  std::string text;
  if (emit == Emit::Object) {
    if (!host_cpu_known(options, diags)) return "";
    if (auto error = codegen::emit_host_object(*llvm_module, options.opt_level, text, options.host_cpu))
      internal_error("codegen", *error);
    return text;
  }
  if (auto error = codegen::optimize_for_host(*llvm_module, options.opt_level)) internal_error("codegen", *error);
  llvm::raw_string_ostream(text) << *llvm_module;
  return text;
}

// What turns PTX into a cubin: libnvJitLink in this process, or ptxas run
// as a process (docs/codegen.md, "Assemblers").
struct PtxAssembler {
  std::unique_ptr<codegen::NvJitLink> nvjitlink;  // null: run `ptxas`
  std::string ptxas;
};

// --assembler=auto runs the ptxas process when there is one (the assembler
// nvcc runs: at -O2/-O3 nvJitLink 13.0 allocates registers differently, e.g.
// 120 instead of 32 for bench/codegen/matmul.tsr on sm_80), else nvJitLink
// in-process when it loads; --ptxas=PATH always means the process. Nullopt
// when there is none (`nvjitlink_error` says why nvJitLink did not load, if
// it was tried).
std::optional<PtxAssembler> find_assembler(const Options& options, std::string& nvjitlink_error) {
  std::string cuda_root = codegen::cuda_root_or_default(options.cuda_path);
  PtxAssembler assembler;
  bool want_nvjitlink = options.assembler == "nvjitlink" ||
                        (options.assembler == "auto" && options.ptxas.empty() &&
                         codegen::find_tool("ptxas", "", cuda_root).empty());
  if (want_nvjitlink) {
    assembler.nvjitlink = codegen::NvJitLink::load(options.nvjitlink, cuda_root, nvjitlink_error);
    if (assembler.nvjitlink) return assembler;
    if (options.assembler == "nvjitlink") return std::nullopt;
  }
  assembler.ptxas = codegen::find_tool("ptxas", options.ptxas, cuda_root);
  if (assembler.ptxas.empty()) return std::nullopt;
  return assembler;
}

// find_assembler, reporting why there is none. Nullopt after an error.
std::optional<PtxAssembler> choose_assembler(const Options& options, const std::string& output_kind,
                                             DiagnosticEngine& diags) {
  std::string error;
  std::optional<PtxAssembler> assembler = find_assembler(options, error);
  if (assembler) return assembler;
  std::string cuda_root = codegen::cuda_root_or_default(options.cuda_path);
  if (options.assembler == "nvjitlink") {
    std::string where = options.nvjitlink.empty() ? cuda_root + "/lib64, /usr/local/cuda/lib64 or the library search path"
                                                  : "'" + options.nvjitlink + "'";
    diags.emit_global<diag::CodegenNvJitLinkNotFound>(output_kind, where, error);
  } else {
    diags.emit_global<diag::CodegenToolNotFound>(output_kind, "ptxas", cuda_root);
  }
  return std::nullopt;
}

// PTX -> cubin for one architecture, started before the PTX is made: ptxas
// begins at once when it can read the PTX from a pipe (its start-up then
// overlaps with LLVM's work; codegen::PtxasRun), and the runs of a fatbin's
// architectures overlap with each other. nvJitLink assembles in finish().
class AssemblyJob {
 public:
  AssemblyJob(const PtxAssembler& assembler, const codegen::GpuArch& arch, const Options& options)
      : assembler_(assembler), arch_(arch), options_(options) {
    if (assembler.nvjitlink) return;
    // As nvcc: the line tables of -lineinfo and -g reach the cubin only when
    // ptxas is asked to keep them.
    std::vector<std::string> ptxas_options = split(options.ptxas_options, ' ');
    if (options.debug_info) ptxas_options.insert(ptxas_options.begin(), "-g");  // device debugging
    else if (options.line_info) ptxas_options.insert(ptxas_options.begin(), "-lineinfo");
    ptxas_ = std::make_unique<codegen::PtxasRun>(assembler.ptxas, arch, opt_level(), std::move(ptxas_options));
  }

  void feed(std::string ptx) {
    if (ptxas_) ptxas_->feed(ptx);
    else ptx_ = std::move(ptx);
  }

  // False after an error (reported). ptxas's messages on success (-v,
  // warnings) go to standard error.
  bool finish(DiagnosticEngine& diags, std::string& cubin) {
    std::string messages;
    std::optional<std::string> error;
    if (ptxas_) {
      error = ptxas_->finish(cubin, messages);
    } else {
      error = assembler_.nvjitlink->assemble(ptx_, arch_, opt_level(), options_.line_info, options_.debug_info,
                                             split(options_.ptxas_options, ' '), cubin, messages);
    }
    if (error) {
      diags.emit_global<diag::CodegenToolFailed>(ptxas_ ? "ptxas" : "nvJitLink", arch_.name(), *error);
      return false;
    }
    if (!messages.empty()) std::fprintf(stderr, "%s\n", messages.c_str());
    return true;
  }

 private:
  int opt_level() const { return options_.debug_info ? 0 : options_.opt_level; }

  const PtxAssembler& assembler_;
  codegen::GpuArch arch_;
  const Options& options_;
  std::unique_ptr<codegen::PtxasRun> ptxas_;  // null: nvJitLink
  std::string ptx_;                           // for nvJitLink
};

// The architectures of -arch (sm_80 when none), with --mma; nullopt after
// reporting an unknown one.
std::optional<std::vector<codegen::GpuArch>> listed_archs(const Options& options, DiagnosticEngine& diags) {
  std::vector<codegen::GpuArch> archs;
  for (const std::string& name : split(options.arch, ',')) {
    std::optional<codegen::GpuArch> arch = codegen::parse_gpu_arch(name);
    if (!arch) {
      diags.emit_global<diag::CodegenUnknownArch>(name);
      return std::nullopt;
    }
    arch->wgmma = options.mma == "wgmma";
    archs.push_back(*arch);
  }
  if (archs.empty()) archs.push_back(*codegen::parse_gpu_arch("sm_80"));
  return archs;
}

// The PTX that ships for GPUs newer than those listed: the newest listed
// architecture without its 'a' features (those are not forward compatible).
codegen::GpuArch forward_compatible_arch(const std::vector<codegen::GpuArch>& archs) {
  codegen::GpuArch newest = archs[0];
  for (const codegen::GpuArch& arch : archs)
    if (arch.sm > newest.sm) newest = arch;
  newest.arch_specific = false;
  return newest;
}

// --emit=llvm|ptx|cubin|fatbin; "" after an error.
std::string generate_gpu_binary(ir::Operation* module, Emit emit, const Options& options, DiagnosticEngine& diags) {
  std::optional<std::vector<codegen::GpuArch>> listed = listed_archs(options, diags);
  if (!listed) return "";
  const std::vector<codegen::GpuArch>& archs = *listed;
  if (emit != Emit::Fatbin && archs.size() != 1) {
    diags.emit_global<diag::CodegenOneArch>(options.emit, static_cast<unsigned>(archs.size()), options.arch);
    return "";
  }
  if (emit == Emit::Llvm || emit == Emit::Ptx)
    return generate_gpu_code(module, archs[0], emit == Emit::Ptx, options, diags).value_or("");

  std::string cuda_root = codegen::cuda_root_or_default(options.cuda_path);
  std::optional<PtxAssembler> assembler = choose_assembler(options, emit == Emit::Cubin ? "cubin" : "fatbin", diags);
  if (!assembler) return "";
  // Each architecture's assembler starts before its PTX is made; they are
  // waited for, in order, once every PTX is made (an early return kills them).
  // A fatbin holds the PTX of the newest architecture too, so that newer
  // GPUs can JIT it. When that is one of the cubins' architectures, its PTX
  // is made once.
  codegen::GpuArch newest = forward_compatible_arch(archs);
  std::optional<std::string> newest_ptx;
  std::vector<std::unique_ptr<AssemblyJob>> jobs;
  for (const codegen::GpuArch& arch : archs) {
    jobs.push_back(std::make_unique<AssemblyJob>(*assembler, arch, options));
    std::optional<std::string> ptx = generate_gpu_code(module, arch, true, options, diags);
    if (!ptx) return "";
    if (emit == Emit::Fatbin && !newest_ptx && arch.name() == newest.name()) newest_ptx = *ptx;
    jobs.back()->feed(std::move(*ptx));
  }
  if (emit == Emit::Fatbin && !newest_ptx) {
    newest_ptx = generate_gpu_code(module, newest, true, options, diags);
    if (!newest_ptx) return "";
  }
  std::vector<codegen::FatbinImage> images;
  for (size_t i = 0; i < jobs.size(); ++i) {
    std::string cubin;
    if (!jobs[i]->finish(diags, cubin)) return "";
    if (emit == Emit::Cubin) return cubin;
    images.push_back({false, archs[i], std::move(cubin)});
  }
  images.push_back({true, newest, std::move(*newest_ptx)});
  std::string fatbinary = codegen::find_tool("fatbinary", options.fatbinary, cuda_root);
  if (fatbinary.empty()) {
    diags.emit_global<diag::CodegenToolNotFound>("fatbin", "fatbinary", cuda_root);
    return "";
  }
  std::string fatbin;
  if (auto error = codegen::make_fatbin(fatbinary, images, fatbin)) {
    diags.emit_global<diag::CodegenToolFailed>("fatbinary", options.arch, *error);
    return "";
  }
  return fatbin;
}

// -c: the GPU image to embed, by --gpu-code; nullopt after an error.
std::optional<std::pair<codegen::AotImageKind, std::string>> aot_gpu_image(ir::Operation* module, const Options& options,
                                                                         DiagnosticEngine& diags) {
  using Kind = codegen::AotImageKind;
  if (options.gpu_code == "none") return std::make_pair(Kind::None, std::string());
  bool fatbin = options.gpu_code == "fatbin";
  if (options.gpu_code == "auto") {
    // A fatbin when an assembler and fatbinary are here; else PTX, which the
    // driver compiles when the module is loaded.
    std::string ignored;
    fatbin = find_assembler(options, ignored) &&
             !codegen::find_tool("fatbinary", options.fatbinary, codegen::cuda_root_or_default(options.cuda_path)).empty();
  }
  if (fatbin) {
    std::string image = generate_gpu_binary(module, Emit::Fatbin, options, diags);
    if (image.empty()) return std::nullopt;
    return std::make_pair(Kind::Fatbin, std::move(image));
  }
  std::optional<std::vector<codegen::GpuArch>> archs = listed_archs(options, diags);
  if (!archs) return std::nullopt;
  std::optional<std::string> ptx = generate_gpu_code(module, forward_compatible_arch(*archs), true, options, diags);
  if (!ptx) return std::nullopt;
  return std::make_pair(Kind::Ptx, std::move(*ptx));
}

// -c: the object's bytes ("" after an error) and, in `header`, its C++ header.
std::string generate_aot_object(ir::Operation* module, const std::vector<codegen::AotKernel>& kernels,
                                const std::string& name_space, const std::string& object_path, const Options& options,
                                DiagnosticEngine& diags, std::string& header) {
  if (!host_cpu_known(options, diags)) return "";
  auto image = aot_gpu_image(module, options, diags);
  if (!image) return "";
  codegen::AotObjectOptions aot;
  aot.name_space = name_space;
  aot.source = options.input;
  aot.image_kind = image->first;
  aot.image = std::move(image->second);
  aot.opt_level = options.opt_level;
  aot.host_cpu = options.host_cpu;
  aot.bounds_check = options.bounds_check;
  std::string object;
  bool reported = false;
  if (auto error = codegen::emit_aot_object(module, kernels, aot, diags, object, reported)) internal_error("codegen", *error);
  if (reported) return "";
  header = aot_header(name_space, options.input, std::filesystem::path(object_path).filename().string(), kernels,
                      aot.image_kind, options.arch);
  return object;
}

// -c: where the object goes: -o, else the input's stem with .o in the
// current directory (as cc -c does).
std::string object_path(const Options& options) {
  if (options.output != "-") return options.output;
  return (options.input == "-" ? std::string("stdin") : std::filesystem::path(options.input).stem().string()) + ".o";
}

std::string header_path(const Options& options, const std::string& object) {
  if (!options.header.empty()) return options.header;
  return std::filesystem::path(object).replace_extension(".h").string();
}

// -c: both files or neither (a failed run also removes what an earlier run left).
int write_object_and_header(const Options& options, const std::string& object_file, const std::string& object,
                            const std::string& header, DiagnosticEngine& diags) {
  std::string header_file = header_path(options, object_file);
  if (diags.has_errors() || object.empty()) {
    remove_output_file(object_file);
    remove_output_file(header_file);
    diags.flush();
    return kExitUserError;
  }
  std::string error;
  for (const auto& [path, contents] : {std::pair{object_file, &object}, std::pair{header_file, &header}}) {
    if (!write_output_atomically(path, *contents, error)) {
      remove_output_file(object_file);
      diags.emit_global<diag::DriverCannotWriteOutput>(path, error);
      diags.flush();
      return kExitUserError;
    }
  }
  return kExitOk;
}

int compile(const Options& options) {
  SourceManager sources;
  CollectingDiagnosticConsumer collected;
  TextDiagnosticPrinter printer(sources, stderr, TextPrinterOptions{use_color(options.color)});
  DiagnosticConsumer& consumer = options.verify ? static_cast<DiagnosticConsumer&>(collected) : printer;
  DiagnosticEngine diags(
      sources, consumer,
      DiagnosticOptions{options.warnings_as_errors, options.no_warnings, options.verify ? 0u : options.error_limit});

  std::string error;
  std::optional<FileId> file = sources.load_file(options.input, error);
  if (!file) {
    diags.emit_global<diag::DriverCannotOpenInput>(options.input, error);
    diags.flush();
    if (options.verify) std::fputs(printer.render(collected.diagnostics.back()).c_str(), stderr);
    return kExitUserError;
  }

  ValueStores values;
  Emit emit = options.emit == "tokens"      ? Emit::Tokens
              : options.emit == "ast"       ? Emit::Ast
              : options.emit == "typed-ast" ? Emit::TypedAst
              : options.emit == "tile-ir"   ? Emit::TileIr
              : options.emit == "llvm"      ? Emit::Llvm
              : options.emit == "ptx"       ? Emit::Ptx
              : options.emit == "cubin"     ? Emit::Cubin
              : options.emit == "fatbin"    ? Emit::Fatbin
              : options.emit == "obj"       ? Emit::Object
                                            : Emit::None;
  StopAfter stop = emit == Emit::Tokens                        ? StopAfter::Lex
                   : (emit == Emit::Ast || options.parse_only) ? StopAfter::Parse
                                                               : StopAfter::Sema;

  auto debug_hook = [&](const char* phase) {
    if (options.debug_internal_error == phase) internal_error(phase, "failure requested by --debug-internal-error");
    if (options.debug_internal_error == "llvm" && std::string_view(phase) == "codegen")
      codegen::raise_llvm_fatal_error("failure requested by --debug-internal-error=llvm");
  };
  g_current_phase = "lex";
  debug_hook("lex");
  TokenizedBuffer tokens = lex_file(*file, sources, values, diags);
  std::string output;
  std::string header;  // -c
  if (stop == StopAfter::Lex) {
    output = dump_tokens(tokens, sources, values);
  } else {
    g_current_phase = "parse";
    debug_hook("parse");
    Ast ast;
    parse_file(tokens, ast, values, diags);
    if (emit == Emit::Ast) output = dump_ast(ast, sources, values);
    // Sema runs on a syntactically valid file only: a recovered parse leaves
    // holes that would produce misleading follow-on errors.
    if (stop == StopAfter::Sema && !diags.has_errors()) {
      g_current_phase = "sema";
      debug_hook("sema");
      std::unique_ptr<sema::TypedModule> typed = sema::check_module(ast, values, diags);
      if (emit == Emit::TypedAst) output = sema::dump_typed_ast(*typed, ast, sources, values);
      bool wants_ir = emit == Emit::TileIr || emit == Emit::Llvm || emit == Emit::Ptx || emit == Emit::Cubin ||
                      emit == Emit::Fatbin || emit == Emit::Object || options.compile_object;
      if (wants_ir && !diags.has_errors()) {
        g_current_phase = "lower";
        debug_hook("lower");
        ir::Context context;
        ir::OwningModule module = ir::lower_to_tile_ir(context, ast, values, *typed, diags);
        if (module) {
          g_current_phase = "ir passes";
          ir::PassContext pass_context{context, diags};
          ir::run_codegen_tile_pipeline(module.get(), pass_context);
        }
        if (module && emit == Emit::TileIr) {
          ir::PrintOptions print{options.print_locations};
          output = ir::print_operation(module.get(), print);
          if (ir::round_trip_checks_enabled()) {
            std::string mismatch = ir::round_trip_mismatch(output, print);
            if (!mismatch.empty()) internal_error("ir printer", mismatch);
          }
        }
        if (module && options.compile_object) {
          g_current_phase = "codegen";
          debug_hook("codegen");
          std::string name_space = options.name_space.empty()
                                       ? cxx_identifier(options.input == "-" ? "stdin" : std::filesystem::path(options.input).stem().string())
                                       : options.name_space;
          auto kernels = kernel_signatures(*typed, ast, values);
          if (kernels.empty()) diags.emit_global<diag::CodegenNoKernels>(options.input);
          output = generate_aot_object(module.get(), kernels, name_space, object_path(options), options, diags, header);
        } else if (module && emit != Emit::TileIr) {
          g_current_phase = "codegen";
          debug_hook("codegen");
          output = options.target == "cpu" ? generate_cpu_code(module.get(), emit, options, diags)
                                           : generate_gpu_binary(module.get(), emit, options, diags);
        }
      }
    } else if (emit == Emit::TypedAst) {
      output = dump_ast(ast, sources, values);
    }
  }
  g_current_phase = "driver";
  diags.flush();

  if (options.verify) {
    VerifyResult result = verify_diagnostics(sources, *file, tokens.comments(), collected.diagnostics);
    std::fputs(result.report.c_str(), stderr);
    if (!result.ok) return kExitUserError;
    return kExitOk;
  }

  // Dumps to standard output are printed even after errors (they show how
  // the compiler recovered); files are only written by a clean run.
  // Binaries go next to nothing on a terminal: like nvcc, `k.tsr` makes
  // `k.cubin` / `k.fatbin` in the current directory unless -o says otherwise.
  std::string output_path = options.compile_object ? object_path(options) : options.output;
  bool binary = emit == Emit::Cubin || emit == Emit::Fatbin || emit == Emit::Object || options.compile_object;
  if (binary && output_path == "-" && options.input != "-")
    output_path = std::filesystem::path(options.input).stem().string() +
                  (emit == Emit::Cubin ? ".cubin" : emit == Emit::Fatbin ? ".fatbin" : ".o");
  if (options.compile_object) return write_object_and_header(options, output_path, output, header, diags);
  bool to_stdout = output_path == "-";
  if (binary && output.empty()) to_stdout = false;  // nothing was produced: write nothing
  // A failed run removes the file an earlier run left at the output path, so
  // that a build never takes a stale output for an up-to-date one (clang
  // does the same).
  if (emit != Emit::None && !to_stdout && output_path != "-" && diags.has_errors()) remove_output_file(output_path);
  if (emit != Emit::None && (to_stdout || !diags.has_errors())) {
    if (!write_output_atomically(output_path, output, error)) {
      diags.emit_global<diag::DriverCannotWriteOutput>(output_path, error);
      diags.flush();
      return kExitUserError;
    }
  }
  return diags.has_errors() ? kExitUserError : kExitOk;
}

int run(int argc, char** argv) {
  CLI::App app{"tesserac: the ahead-of-time compiler for the Tessera tile language", "tesserac"};
  app.set_version_flag("--version", std::string("tesserac ") + TESSERA_VERSION);
  Options options;
  app.add_option("input", options.input, "Input .tsr file ('-' reads standard input)");
  app.add_option("-o,--output", options.output, "Output file ('-' for standard output, the default for dumps)");
  app.add_option("--emit", options.emit,
                 "What to produce: tokens, ast, typed-ast, tile-ir, llvm, ptx, cubin, fatbin (GPU); llvm, obj (--target=cpu)")
      ->check(CLI::IsMember({"tokens", "ast", "typed-ast", "tile-ir", "llvm", "ptx", "cubin", "fatbin", "obj"}));
  app.add_flag("-c", options.compile_object,
               "Compile to a host object (GPU code + CPU code + launch stubs) and a C++ header for linking into "
               "programs (docs/aot.md)");
  app.add_option("--header", options.header, "With -c: where the C++ header goes (default: the object's path with .h)");
  app.add_option("--namespace", options.name_space,
                 "With -c: the header's C++ namespace and the objects' symbol infix (default: the file's stem)");
  app.add_option("--gpu-code", options.gpu_code,
                 "With -c: GPU code to embed: auto (a fatbin when ptxas and fatbinary are found, else PTX), fatbin, "
                 "ptx, none")
      ->check(CLI::IsMember({"auto", "fatbin", "ptx", "none"}));
  app.add_option("--host-cpu", options.host_cpu,
                 "With -c or --target=cpu --emit=obj: the host CPU to compile for: generic (default: runs on every "
                 "machine of the architecture), native, or an LLVM CPU name such as x86-64-v3");
  app.add_option("--target", options.target, "gpu (NVPTX, the default) or cpu (the host: --emit=llvm or obj)")
      ->check(CLI::IsMember({"gpu", "cpu"}));
  app.add_flag("--bounds-check", options.bounds_check,
               "Check every tensor and shared-memory index; out of bounds fails the launch naming the .tsr location");
  app.add_option("--mma", options.mma,
                 "tensor-core instruction for tile.mma: auto (mma.sync; wgmma has not run on a GPU yet), sync "
                 "(mma.sync), wgmma (wgmma.mma_async on sm_90a where the shared operands allow it, else mma.sync)")
      ->check(CLI::IsMember({"auto", "sync", "wgmma"}));
  app.add_option("--assembler", options.assembler,
                 "PTX -> cubin: auto (the ptxas process when it is found, else libnvJitLink in-process; --ptxas=PATH "
                 "means the process), nvjitlink, ptxas")
      ->check(CLI::IsMember({"auto", "nvjitlink", "ptxas"}));
  app.add_option("--ptxas", options.ptxas, "ptxas to run for cubin/fatbin (default: <cuda-path>/bin/ptxas, then PATH)");
  app.add_option("--nvjitlink", options.nvjitlink,
                 "libnvJitLink to load (default: <cuda-path>/lib64, /usr/local/cuda/lib64, then the library search path)");
  app.add_option("--fatbinary", options.fatbinary, "fatbinary to run for fatbin (default: <cuda-path>/bin/fatbinary, then PATH)");
  app.add_flag("--lineinfo", options.line_info, "PTX .loc lines pointing at the .tsr source (-lineinfo)");
  app.add_flag("-g", options.debug_info, "Debug information: line tables, no optimisation (-O0)");
  app.add_option("--ptxas-options", options.ptxas_options, "Extra options for ptxas, separated by spaces");
  app.add_option("--arch,--gpu-architecture", options.arch,
                 "GPU architecture(s): sm_80, sm_86, sm_89, sm_90, sm_90a, sm_100, sm_120; a comma-separated list for fatbin (-arch=sm_XX)");
  app.add_option("--opt-level", options.opt_level, "Optimisation level 0-3 (-O0 .. -O3; default 3)")
      ->check(CLI::Range(0, 3));
  app.add_option("--cuda-path", options.cuda_path, "CUDA Toolkit root for libdevice (default: " TESSERA_CUDA_ROOT_DEFAULT ")");
  app.add_flag("--fsyntax-only", options.syntax_only,
               "Check the input (lexing, parsing, names, types, kernel rules) and stop (-fsyntax-only)");
  app.add_flag("--fparse-only", options.parse_only, "Stop after parsing (-fparse-only)");
  app.add_flag("--print-locations", options.print_locations,
               "Print the source location of every operation in IR output (loc(\"file\":line:col))");
  app.add_flag("--verify", options.verify,
               "Check diagnostics against '# expected-error {{...}}' comments in the input (-verify)");
  app.add_flag("--Werror", options.warnings_as_errors, "Turn warnings into errors (-Werror)");
  app.add_flag("-w", options.no_warnings, "Suppress all warnings");
  app.add_option("--ferror-limit", options.error_limit, "Stop after N errors; 0 for no limit (-ferror-limit=N)");
  app.add_option("--color", options.color, "Colour diagnostics: auto, always, never")
      ->check(CLI::IsMember({"auto", "always", "never"}));
  bool color_on = false;
  bool color_off = false;
  app.add_flag("--fcolor-diagnostics", color_on, "Same as --color=always (-fcolor-diagnostics)");
  app.add_flag("--fno-color-diagnostics", color_off, "Same as --color=never (-fno-color-diagnostics)");
  app.add_flag("--list-diagnostics", options.list_diagnostics, "Print every diagnostic kind and its severity");
  // Hidden: lets the test suite check how internal errors are reported.
  app.add_option("--debug-internal-error", options.debug_internal_error)->group("");

  try {
    std::vector<std::string> args = normalize_arguments(argc, argv);
    app.parse(args);
  } catch (const CLI::Success& e) {
    return app.exit(e) == 0 ? kExitOk : kExitUsage;
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return kExitUsage;
  }
  if (color_on) options.color = "always";
  if (color_off) options.color = "never";
  if (options.list_diagnostics) return list_diagnostics();
  if (options.input.empty()) {
    std::fprintf(stderr, "tesserac: error: no input file (run 'tesserac --help' for usage)\n");
    return kExitUsage;
  }
  if (options.target == "cpu" && !options.emit.empty() && options.emit != "llvm" && options.emit != "obj" &&
      options.emit != "tokens" && options.emit != "ast" && options.emit != "typed-ast" && options.emit != "tile-ir") {
    std::fprintf(stderr, "tesserac: error: --target=cpu produces --emit=llvm or --emit=obj, not '%s'\n", options.emit.c_str());
    return kExitUsage;
  }
  if (options.target != "cpu" && options.emit == "obj") {
    std::fprintf(stderr, "tesserac: error: --emit=obj needs --target=cpu (GPU code is --emit=cubin or fatbin)\n");
    return kExitUsage;
  }
  if (options.compile_object && !options.emit.empty()) {
    std::fprintf(stderr, "tesserac: error: -c makes an object and a header; it cannot be combined with --emit\n");
    return kExitUsage;
  }
  if (options.compile_object && options.target == "cpu") {
    std::fprintf(stderr, "tesserac: error: -c embeds GPU and CPU code already; leave out --target=cpu (use --gpu-code=none for CPU code only)\n");
    return kExitUsage;
  }
  if (options.compile_object && (options.output == "-" && options.input == "-")) {
    std::fprintf(stderr, "tesserac: error: -c with standard input needs -o FILE.o\n");
    return kExitUsage;
  }
  if (!options.name_space.empty() && cxx_identifier(options.name_space) != options.name_space) {
    std::fprintf(stderr, "tesserac: error: --namespace '%s' is not a C++ identifier (or is a keyword)\n", options.name_space.c_str());
    return kExitUsage;
  }
  if ((options.syntax_only || options.parse_only) && (!options.emit.empty() || options.compile_object)) {
    std::fprintf(stderr, "tesserac: error: -fsyntax-only and -fparse-only cannot be combined with --emit\n");
    return kExitUsage;
  }
  return compile(options);
}

}  // namespace
}  // namespace tessera

int main(int argc, char** argv) {
  tessera::install_crash_handlers();
  try {
    if (argc > 1 && std::strcmp(argv[1], "run") == 0) return tessera::run_command(argc - 1, argv + 1);
    return tessera::run(argc, argv);
  } catch (const tessera::InternalError& e) {
    return tessera::report_internal_error(e.phase(), e.what());
  } catch (const std::exception& e) {
    return tessera::report_internal_error(tessera::g_current_phase, e.what());
  }
}
