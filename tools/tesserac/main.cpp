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
#include <map>
#include <set>
#include <string>
#include <vector>

#include <filesystem>
#include <optional>
#include <sstream>

#include "codegen/llvm_errors.h"
#include "driver/aot_header.h"
#include "driver/aot_object.h"
#include "driver/compilation.h"
#include "driver/cpu_code.h"
#include "driver/gpu_code.h"
#include "frontend/ast/ast.h"
#include "frontend/lex/lexer.h"
#include "ir/core/ir_text.h"
#include "sema/sema.h"
#include "support/diagnostics/diagnostics.h"
#include "support/diagnostics/internal_error.h"
#include "support/diagnostics/verify.h"
#include "tools/tesserac/crash_report.h"
#include "tools/tesserac/diagnostic_flags.h"
#include "tools/tesserac/output_file.h"
#include "tools/tesserac/run.h"
#include "tessera/tessera_tuner.h"

namespace tessera {
namespace {

constexpr int kExitOk = 0;
constexpr int kExitUserError = 1;
constexpr int kExitUsage = 2;
constexpr int kExitInternalError = 3;

int report_internal_error(const std::string& phase, const std::string& what);

void report_llvm_fatal_error(const char* message) {
  report_internal_error(g_current_phase, std::string("LLVM: ") + message);
  std::fflush(stderr);
}

void install_handlers() {
  codegen::on_llvm_fatal_error(report_llvm_fatal_error, kExitInternalError);
  install_crash_handlers();
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

enum class Emit { None, Tokens, Ast, TypedAst, Tuning, GraphIr, ScheduleIr, TileIr, Llvm, Ptx, Cubin, Fatbin, Object };

// The last phase a run goes through.
enum class StopAfter { Lex, Parse, Sema };

struct Options {
  std::string input;
  std::string output = "-";
  std::string emit;
  bool syntax_only = false;
  bool parse_only = false;
  bool print_locations = false;
  bool no_ir_passes = false;  // --emit=tile-ir as lowering makes it
  std::vector<std::string> defines;  // -D NAME=VALUE
  std::string stdlib_dir;            // --stdlib-dir
  std::string arch = "sm_80";
  bool compile_object = false;  // -c: an AOT host object and its C++ header
  std::string header;           // -c: the header's path (default: the object's with .h)
  std::string tune_cache;       // -c: keep only the variants this tuning cache chose (docs/autotuning.md)
  std::string name_space;       // -c: the header's namespace (default: the file's stem)
  std::string gpu_code = "auto";
  std::string host_cpu;  // empty: generic for objects, native for --emit=llvm
  std::string target = "gpu";
  bool bounds_check = false;
  bool no_overlap_collectives = false;
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
  DiagnosticFlags diagnostics;  // -w, -Werror, -ferror-limit, --color
  bool list_diagnostics = false;
  std::string debug_internal_error;  // test hook: fail on purpose in this phase
};

// Options spelled with one dash and a long name, clang style (-verify,
// -fsyntax-only, -Werror, -ferror-limit=N). CLI11 wants two dashes for long
// names, so these are rewritten before parsing.
const std::set<std::string, std::less<>> kSingleDashLongOptions = {
    "verify", "fsyntax-only", "fparse-only", "emit", "arch", "lineinfo", "target",
};

int list_diagnostics() {
  for (const DiagnosticKindInfo& info : all_diagnostic_kinds()) {
    std::printf("%s %s\n", std::string(info.id).c_str(), std::string(severity_name(info.severity)).c_str());
  }
  return kExitOk;
}

std::vector<std::string> split(const std::string& text, char separator) {
  std::vector<std::string> parts;
  std::stringstream stream(text);
  std::string part;
  while (std::getline(stream, part, separator))
    if (!part.empty()) parts.push_back(part);
  return parts;
}

// The flags as the driver library's typed options.
driver::CodegenOptions codegen_options(const Options& options) {
  driver::CodegenOptions c;
  c.target = options.target == "cpu" ? driver::Target::Cpu : driver::Target::Gpu;
  c.archs = split(options.arch, ',');
  c.arch_list = options.arch;
  c.opt_level = options.opt_level;
  c.bounds_check = options.bounds_check;
  c.mma = options.mma == "sync" ? driver::Mma::Sync : options.mma == "wgmma" ? driver::Mma::Wgmma : driver::Mma::Auto;
  c.debug = options.debug_info  ? driver::DebugLevel::Full
            : options.line_info ? driver::DebugLevel::LineTables
                                : driver::DebugLevel::None;
  // Objects run elsewhere (generic by default); --target=cpu --emit=llvm
  // shows what this machine would run (native) unless a CPU is named.
  bool llvm_text = options.target == "cpu" && options.emit == "llvm";
  c.host_cpu = !options.host_cpu.empty() ? options.host_cpu : llvm_text ? "native" : "generic";
  c.toolkit.cuda_path = options.cuda_path;
  c.toolkit.ptxas = options.ptxas;
  c.toolkit.nvjitlink = options.nvjitlink;
  c.toolkit.fatbinary = options.fatbinary;
  c.toolkit.assembler = options.assembler == "nvjitlink" ? driver::Assembler::NvJitLink
                        : options.assembler == "ptxas"   ? driver::Assembler::Ptxas
                                                         : driver::Assembler::Auto;
  c.toolkit.ptxas_options = split(options.ptxas_options, ' ');
  return c;
}

driver::GpuCode gpu_code(const Options& options) {
  return options.gpu_code == "fatbin" ? driver::GpuCode::Fatbin
         : options.gpu_code == "ptx"  ? driver::GpuCode::Ptx
         : options.gpu_code == "none" ? driver::GpuCode::None
                                      : driver::GpuCode::Auto;
}

// --emit=llvm|ptx|cubin|fatbin|obj of a lowered module; "" after an error.
std::string generate_code(ir::Operation* module, Emit emit, const Options& options, DiagnosticEngine& diags) {
  driver::CodegenOptions c = codegen_options(options);
  std::optional<std::string> code;
  if (c.target == driver::Target::Cpu) {
    code = emit == Emit::Object ? driver::cpu_object(module, c, diags) : driver::cpu_llvm_ir(module, c, diags);
  } else if (emit == Emit::Llvm || emit == Emit::Ptx) {
    if (std::optional<codegen::GpuArch> arch = driver::single_gpu_arch(c, options.emit, diags))
      code = emit == Emit::Ptx ? driver::gpu_ptx(module, *arch, c, diags) : driver::gpu_llvm_ir(module, *arch, c, diags);
  } else {
    code = driver::gpu_binary(module, emit == Emit::Cubin ? driver::GpuBinary::Cubin : driver::GpuBinary::Fatbin, c, diags);
  }
  return code.value_or("");
}

// An input named *.ir is IR text (what --emit=tile-ir and tesserac-opt
// print): it is verified and compiled from there.
bool is_ir_input(const Options& options) { return std::filesystem::path(options.input).extension() == ".ir"; }

// -c: where the object goes: -o, else the input's stem with .o in the
// current directory (as cc -c does).
std::string object_path(const Options& options) {
  if (options.output != "-") return options.output;
  return (options.input == "-" ? std::string("stdin") : std::filesystem::path(options.input).stem().string()) + ".o";
}

// "" when there is none: an object written to a device or a FIFO (-o
// /dev/null) has no directory for a header beside it (/dev/null.h), so
// only --header asks for one then.
std::string header_path(const Options& options, const std::string& object) {
  if (!options.header.empty()) return options.header;
  if (output_is_stream(object)) return "";
  return std::filesystem::path(object).replace_extension(".h").string();
}

// -c: both files or neither (a failed run also removes what an earlier run left).
int write_object_and_header(const Options& options, const std::string& object_file, const std::string& object,
                            const std::string& header, DiagnosticEngine& diags) {
  std::string header_file = header_path(options, object_file);
  if (diags.has_errors() || object.empty()) {
    remove_output_file(object_file);
    if (!header_file.empty()) remove_output_file(header_file);
    diags.flush();
    return kExitUserError;
  }
  std::string error;
  for (const auto& [path, contents] : {std::pair{object_file, &object}, std::pair{header_file, &header}}) {
    if (path.empty()) continue;
    if (!write_output(path, *contents, error)) {
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
  TextDiagnosticPrinter printer(sources, stderr, options.diagnostics.printer());
  DiagnosticConsumer& consumer = options.verify ? static_cast<DiagnosticConsumer&>(collected) : printer;
  DiagnosticEngine diags(sources, consumer, options.diagnostics.options(options.verify));

  // Names the phase for crash reports; --debug-internal-error=PHASE fails there on purpose.
  auto enter_phase = [&](const char* phase) {
    g_current_phase = phase;
    if (options.debug_internal_error == phase) internal_error(phase, "failure requested by --debug-internal-error");
    if (options.debug_internal_error == "llvm" && std::string_view(phase) == "codegen")
      codegen::raise_llvm_fatal_error("failure requested by --debug-internal-error=llvm");
  };
  driver::Compilation compilation(sources, diags, enter_phase);
  if (!options.stdlib_dir.empty()) compilation.set_stdlib_directory(options.stdlib_dir);
  std::string error;
  std::vector<driver::Override> overrides;
  for (const std::string& d : options.defines) {
    std::optional<driver::Override> o = driver::parse_override(d);
    if (!o) {
      std::fprintf(stderr, "tesserac: error: -D %s: expected NAME=VALUE\n", d.c_str());
      return kExitUsage;
    }
    overrides.push_back(*o);
  }
  std::optional<FileId> file = compilation.load(options.input, overrides, error);
  if (!file && error.starts_with("-D ")) {
    std::fprintf(stderr, "tesserac: error: %s\n", error.c_str());
    return kExitUserError;
  }
  if (!file) {
    diags.emit_global<diag::DriverCannotOpenInput>(options.input, error);
    diags.flush();
    if (options.verify) std::fputs(printer.render(collected.diagnostics.back()).c_str(), stderr);
    return kExitUserError;
  }

  Emit emit = options.emit == "tokens"      ? Emit::Tokens
              : options.emit == "ast"       ? Emit::Ast
              : options.emit == "typed-ast" ? Emit::TypedAst
              : options.emit == "tuning"    ? Emit::Tuning
              : options.emit == "graph-ir"  ? Emit::GraphIr
              : options.emit == "schedule-ir" ? Emit::ScheduleIr
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

  std::string output;
  std::string header;  // -c
  // What every module gets, lowered from a .tsr or read from IR text.
  auto generate = [&](ir::Operation* module) {
    if (!module) return;
    if (emit == Emit::TileIr || emit == Emit::GraphIr || emit == Emit::ScheduleIr) {
      ir::PrintOptions print{options.print_locations};
      output = ir::print_operation(module, print);
      if (ir::round_trip_checks_enabled()) {
        std::string mismatch = ir::round_trip_mismatch(output, print);
        if (!mismatch.empty()) internal_error("ir printer", mismatch);
      }
    } else if (options.compile_object) {
      enter_phase("codegen");
      driver::AotOptions aot;
      aot.name_space = options.name_space.empty()
                           ? driver::cxx_identifier(options.input == "-" ? "stdin" : std::filesystem::path(options.input).stem().string())
                           : options.name_space;
      aot.source = options.input;
      aot.object_name = std::filesystem::path(object_path(options)).filename().string();
      aot.gpu_code = gpu_code(options);
      if (std::optional<driver::AotOutput> object = driver::aot_object(module, aot, codegen_options(options), diags)) {
        output = std::move(object->object);
        header = std::move(object->header);
      }
    } else if (emit != Emit::None) {
      enter_phase("codegen");
      output = generate_code(module, emit, options, diags);
    }
  };
  const ir::PipelineStage stage = emit == Emit::GraphIr      ? ir::PipelineStage::Graph
                                  : emit == Emit::ScheduleIr ? ir::PipelineStage::Schedule
                                                             : ir::PipelineStage::Tile;
  const bool wants_ir = emit == Emit::TileIr || emit == Emit::GraphIr || emit == Emit::ScheduleIr || emit == Emit::Llvm || emit == Emit::Ptx || emit == Emit::Cubin ||
                        emit == Emit::Fatbin || emit == Emit::Object || options.compile_object;
  // Whether PTX is assembled (what finds the variants that spill).
  const bool assembles_gpu_code =
      options.target != "cpu" && !options.no_ir_passes &&
      (emit == Emit::Cubin || emit == Emit::Fatbin ||
       (options.compile_object && options.gpu_code != "none" && options.gpu_code != "ptx"));
  const TokenizedBuffer* tokens = nullptr;
  // Code for the CPU alone (--target=cpu, -c --gpu-code=none) takes the
  // stdlib's CPU forms.
  compilation.set_cpu_only(options.target == "cpu" || (options.compile_object && options.gpu_code == "none"));
  compilation.set_overlap_collectives(!options.no_overlap_collectives);
  if (is_ir_input(options)) {
    generate(compilation.parse_ir(options.opt_level, stage));
  } else if (stop == StopAfter::Lex) {
    tokens = &compilation.lex();
    output = dump_tokens(*tokens, sources, compilation.values());
  } else {
    tokens = &compilation.lex();
    ValueStores& values = compilation.values();
    const Ast& ast = compilation.parse();
    if (emit == Emit::Ast) output = dump_ast(ast, sources, values);
    // Sema runs on a syntactically valid file only: a recovered parse leaves
    // holes that would produce misleading follow-on errors.
    if (stop == StopAfter::Sema && !diags.has_errors()) {
      compilation.check();
      if (!options.tune_cache.empty() && !diags.has_errors()) {
        // --tune-cache: each autotuned kernel keeps the points the cache chose.
        std::map<std::string, std::set<std::string>> keep;
        for (const driver::AutotunedKernel& kernel : compilation.autotuned()) {
          std::vector<char> choices(1 << 16);
          tessStatus status = tessTuneCacheChoices(options.tune_cache.c_str(), kernel.name.c_str(), choices.data(),
                                                   choices.size());
          if (status != TESS_SUCCESS) {
            diags.emit_global<diag::DriverInvalidTuneCache>(options.tune_cache, std::string(tessGetLastErrorMessage()));
            break;
          }
          std::stringstream lines(choices.data());
          std::string line;
          while (std::getline(lines, line))
            if (!line.empty()) keep[kernel.name].insert(line);
          keep[kernel.name];  // named, even with no entry: its default point alone
        }
        compilation.set_tuned_points(std::move(keep));
      }
      if (emit == Emit::TypedAst) output = sema::dump_typed_ast(*compilation.typed(), ast, sources, values);
      if (wants_ir && !diags.has_errors()) {
        ir::Operation* module = compilation.lower(options.opt_level, !options.no_ir_passes, stage);
        // Variants whose registers spill are pruned when an assembler runs
        // (docs/autotuning.md, "Spills").
        if (module && assembles_gpu_code)
          module = compilation.prune_spilling_points(options.opt_level, stage, codegen_options(options));
        generate(module);
      }
      // The points of each autotuned kernel, after lowering each (which may prune more).
      if (emit == Emit::Tuning) {
        // The whole pipeline: generate-kernels makes the spaces of graph code's kernels.
        if (!diags.has_errors() && compilation.lower(options.opt_level, true) && options.target != "cpu")
          compilation.prune_spilling_points(options.opt_level, ir::PipelineStage::Tile, codegen_options(options));
        output = driver::tuning_report(compilation.autotuned(), compilation.generated_tuning());
      }
    } else if (emit == Emit::TypedAst) {
      output = dump_ast(ast, sources, values);
    }
  }
  g_current_phase = "driver";
  diags.flush();

  if (options.verify) {
    VerifyResult result = verify_diagnostics(sources, *file, tokens->comments(), collected.diagnostics);
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
    if (!write_output(output_path, output, error)) {
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
                 "What to produce: tokens, ast, typed-ast, tuning (autotune points), graph-ir, schedule-ir, tile-ir, llvm, ptx, cubin, fatbin (GPU); llvm, obj (--target=cpu)")
      ->check(CLI::IsMember({"tokens", "ast", "typed-ast", "tuning", "graph-ir", "schedule-ir", "tile-ir", "llvm", "ptx", "cubin", "fatbin", "obj"}));
  app.add_flag("-c", options.compile_object,
               "Compile to a host object (GPU code + CPU code + launch stubs) and a C++ header for linking into "
               "programs (docs/aot.md)");
  app.add_option("--tune-cache", options.tune_cache,
                 "With -c: keep of each autotuned kernel only the variants this tuning cache file chose, and its "
                 "default (docs/autotuning.md)");
  app.add_option("--header", options.header, "With -c: where the C++ header goes (default: the object's path with .h)");
  app.add_option("-D", options.defines, "NAME=VALUE: give a module-level constant (NAME = ... at the top level) this value")
      ->allow_extra_args(false);  // one NAME=VALUE per -D, as a C compiler's: `-D N=2 FILE` leaves FILE alone
  app.add_option("--stdlib-dir", options.stdlib_dir,
                 "Where the stdlib's compiled kernels are (default: TESSERA_STDLIB_DIR, the installed ones)");
  app.add_option("--namespace", options.name_space,
                 "With -c: the header's C++ namespace and the objects' symbol infix (default: the file's stem)");
  app.add_option("--gpu-code", options.gpu_code,
                 "With -c: GPU code to embed: auto (a fatbin when ptxas and fatbinary are found, else PTX), fatbin, "
                 "ptx, none")
      ->check(CLI::IsMember({"auto", "fatbin", "ptx", "none"}));
  app.add_option("--host-cpu", options.host_cpu,
                 "With -c or --target=cpu --emit=obj|llvm: the host CPU to compile for: generic (the default for objects: runs on every "
                 "machine of the architecture), native, or an LLVM CPU name such as x86-64-v3");
  app.add_option("--target", options.target, "gpu (NVPTX, the default) or cpu (the host: --emit=llvm or obj)")
      ->check(CLI::IsMember({"gpu", "cpu"}));
  app.add_flag("--no-overlap-collectives", options.no_overlap_collectives,
               "Issue each collective where it stands instead of overlapping it with the independent kernels after it "
               "(the pass overlap-collectives; docs/distributed.md)");
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
  app.add_flag("--no-ir-passes", options.no_ir_passes,
               "With --emit=tile-ir: the IR as lowering makes it, before the IR pipeline (for tests of the lowering)");
  app.add_flag("--print-locations", options.print_locations,
               "Print the source location of every operation in IR output (loc(\"file\":line:col))");
  app.add_flag("--verify", options.verify,
               "Check diagnostics against '# expected-error {{...}}' comments in the input (-verify)");
  options.diagnostics.add_to(app);
  app.add_flag("--list-diagnostics", options.list_diagnostics, "Print every diagnostic kind and its severity");
  // Hidden: lets the test suite check how internal errors are reported.
  app.add_option("--debug-internal-error", options.debug_internal_error)->group("");

  try {
    std::vector<std::string> args = normalize_arguments(argc, argv, 1, kSingleDashLongOptions);
    app.parse(args);
  } catch (const CLI::Success& e) {
    return app.exit(e) == 0 ? kExitOk : kExitUsage;
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return kExitUsage;
  }
  if (options.list_diagnostics) return list_diagnostics();
  if (options.input.empty()) {
    std::fprintf(stderr, "tesserac: error: no input file (run 'tesserac --help' for usage)\n");
    return kExitUsage;
  }
  if (options.target == "cpu" && !options.emit.empty() && options.emit != "llvm" && options.emit != "obj" &&
      options.emit != "tokens" && options.emit != "ast" && options.emit != "typed-ast" && options.emit != "tuning" && options.emit != "tile-ir" && options.emit != "graph-ir" &&
      options.emit != "schedule-ir") {
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
  if (!options.name_space.empty() && driver::cxx_identifier(options.name_space) != options.name_space) {
    std::fprintf(stderr, "tesserac: error: --namespace '%s' is not a C++ identifier (or is a keyword)\n", options.name_space.c_str());
    return kExitUsage;
  }
  if (is_ir_input(options) && (options.verify || options.parse_only || options.emit == "tokens" ||
                               options.emit == "ast" || options.emit == "typed-ast")) {
    std::fprintf(stderr, "tesserac: error: '%s' is IR text: it compiles (--emit=tile-ir|llvm|ptx|cubin|fatbin, -c, --target=cpu) but has no tokens, syntax tree or -verify comments of a .tsr file (use tesserac-opt -verify)\n", options.input.c_str());
    return kExitUsage;
  }
  if (options.no_ir_passes && options.emit != "tile-ir") {
    std::fprintf(stderr, "tesserac: error: --no-ir-passes only goes with --emit=tile-ir (code generation needs the IR pipeline)\n");
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
  tessera::install_handlers();
  try {
    if (argc > 1 && std::strcmp(argv[1], "run") == 0) return tessera::run_command(argc - 1, argv + 1);
    if (argc > 1 && std::strcmp(argv[1], "tune") == 0) return tessera::tune_command(argc - 1, argv + 1);
    return tessera::run(argc, argv);
  } catch (const tessera::InternalError& e) {
    return tessera::report_internal_error(e.phase(), e.what());
  } catch (const std::exception& e) {
    return tessera::report_internal_error(tessera::g_current_phase, e.what());
  }
}
