// tesserac-opt: parses IR text, runs named passes, prints the result.
//
// Every pass is tested alone with it, MLIR style:
//   tesserac-opt input.ir --passes=cse,dce | FileCheck input.ir
// The input is verified after parsing (errors there are the input's fault:
// exit 1); a pass that breaks the IR is a compiler bug (exit 3).
#include <CLI/CLI.hpp>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "support/diagnostics/diagnostics.h"
#include "support/diagnostics/internal_error.h"
#include "support/diagnostics/verify.h"
#include "ir/core/ir_text.h"
#include "ir/core/verifier.h"
#include "ir/pipeline.h"
#include "ir/schedule_to_tile/kernel_library.h"
#include "tools/tesserac/output_file.h"

namespace tessera {
namespace {

constexpr int kExitOk = 0;
constexpr int kExitUserError = 1;
constexpr int kExitUsage = 2;
constexpr int kExitInternalError = 3;

// `#` comments of an IR file (outside strings), for -verify directives.
std::vector<SourceRange> ir_comments(const SourceManager& sources, FileId file) {
  std::vector<SourceRange> comments;
  std::string_view text = sources.contents(file);
  SourceOffset base = sources.file_begin(file);
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (in_string) {
      if (c == '\\')
        ++i;
      else if (c == '"' || c == '\n')
        in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '#') {
      size_t end = text.find('\n', i);
      if (end == std::string_view::npos) end = text.size();
      comments.push_back({base + static_cast<SourceOffset>(i), base + static_cast<SourceOffset>(end)});
      i = end;
    }
  }
  return comments;
}

struct Options {
  std::string input;
  std::string output = "-";
  std::string stdlib_dir;  // --stdlib-dir
  bool cpu_only = false;   // --cpu-only
  bool default_pipeline = false;
  std::vector<std::string> passes;
  bool print_after_all = false;
  std::vector<std::string> print_after;
  bool time_passes = false;
  bool print_locations = false;
  bool no_verify_each = false;
  bool verify = false;
  bool list_passes = false;
};

int run_opt(const Options& options) {
  SourceManager sources;
  CollectingDiagnosticConsumer collected;
  TextDiagnosticPrinter printer(sources, stderr);
  DiagnosticConsumer& consumer = options.verify ? static_cast<DiagnosticConsumer&>(collected) : printer;
  DiagnosticEngine diags(sources, consumer, DiagnosticOptions{false, false, options.verify ? 0u : 20u});

  std::string error;
  std::optional<FileId> file = sources.load_file(options.input, error);
  if (!file) {
    std::fprintf(stderr, "tesserac-opt: error: cannot open input file '%s'\n", options.input.c_str());
    return kExitUserError;
  }

  ir::PassManagerOptions pm_options;
  pm_options.print_after_all = options.print_after_all;
  pm_options.print_after = options.print_after;
  pm_options.time_passes = options.time_passes;
  pm_options.verify_each = !options.no_verify_each;
  pm_options.print.locations = options.print_locations;
  ir::PassManager pm(pm_options);
  std::vector<std::string> pipeline;
  if (options.default_pipeline)
    for (std::string_view name : ir::default_tile_pipeline()) pipeline.emplace_back(name);
  pipeline.insert(pipeline.end(), options.passes.begin(), options.passes.end());
  for (const std::string& name : pipeline) {
    if (!pm.add(name)) {
      diags.emit_global<diag::IrUnknownPass>(name);
      diags.flush();
      return kExitUsage;
    }
  }

  ir::Context context;
  ir::OwningModule module = ir::parse_module(context, sources, *file, diags);
  if (module) ir::verify_and_report(module.get(), diags);
  std::string output;
  if (module && !diags.has_errors()) {
    ir::DirectoryKernelLibrary library(options.stdlib_dir.empty() ? ir::default_stdlib_directory()
                                                                   : options.stdlib_dir);
    ir::PassContext pass_context{context, diags, &library, options.cpu_only};
    pm.run(module.get(), pass_context);
    output = ir::print_operation(module.get(), pm_options.print);
    if (ir::round_trip_checks_enabled()) {
      std::string mismatch = ir::round_trip_mismatch(output, pm_options.print);
      if (!mismatch.empty()) internal_error("ir printer", mismatch);
    }
  }
  diags.flush();

  if (options.verify) {
    VerifyResult result = verify_diagnostics(sources, *file, ir_comments(sources, *file), collected.diagnostics);
    std::fputs(result.report.c_str(), stderr);
    return result.ok ? kExitOk : kExitUserError;
  }
  if (diags.has_errors()) return kExitUserError;
  if (!write_output(options.output, output, error)) {
    std::fprintf(stderr, "tesserac-opt: error: cannot write output file '%s': %s\n", options.output.c_str(),
                 error.c_str());
    return kExitUserError;
  }
  return kExitOk;
}

int run(int argc, char** argv) {
  CLI::App app{"tesserac-opt: run Tessera IR passes on IR text", "tesserac-opt"};
  Options options;
  app.add_option("input", options.input, "Input IR file ('-' reads standard input)")->required(false);
  app.add_option("-o,--output", options.output, "Output file (default: standard output)");
  app.add_option("-p,--passes", options.passes, "Passes to run, in order (comma-separated or repeated)")
      ->delimiter(',');
  app.add_flag("--default-pipeline", options.default_pipeline,
               "Run the standard Tile IR pipeline (as after lowering) before any --passes");
  app.add_flag("--print-after-all", options.print_after_all, "Print the IR after every pass (to standard error)");
  app.add_option("--print-after", options.print_after, "Print the IR after the named pass")->delimiter(',');
  app.add_option("--stdlib-dir", options.stdlib_dir,
                 "Where generate-kernels finds the stdlib's kernels (default: TESSERA_STDLIB_DIR, the installed ones)");
  app.add_flag("--cpu-only", options.cpu_only,
               "The module runs on the CPU target alone: generate-kernels launches the stdlib's CPU forms (gemm_cpu)");
  app.add_flag("--time-passes", options.time_passes, "Report the time each pass took");
  app.add_flag("--print-locations", options.print_locations, "Print the source location of every operation");
  app.add_flag("--no-verify-each", options.no_verify_each, "Do not verify the IR after every pass");
  app.add_flag("-v,--verify", options.verify,
               "Check diagnostics against '# expected-error {{...}}' comments in the input");
  app.add_flag("--list-passes", options.list_passes, "Print every pass with its description");
  // clang-style single-dash spellings.
  std::vector<std::string> args;
  for (int i = argc - 1; i >= 1; --i) {
    std::string arg = argv[i];
    if (arg == "-verify") arg = "--verify";
    args.push_back(arg);
  }
  try {
    app.parse(args);
  } catch (const CLI::Success& e) {
    return app.exit(e) == 0 ? kExitOk : kExitUsage;
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return kExitUsage;
  }
  if (options.list_passes) {
    for (const ir::PassInfo& p : ir::all_passes())
      std::printf("%-24s %s\n", std::string(p.name).c_str(), std::string(p.description).c_str());
    return kExitOk;
  }
  if (options.input.empty()) options.input = "-";
  return run_opt(options);
}

}  // namespace
}  // namespace tessera

int main(int argc, char** argv) {
  try {
    return tessera::run(argc, argv);
  } catch (const tessera::InternalError& e) {
    std::fprintf(stderr, "tesserac-opt: error: internal compiler error in phase '%s': %s [internal.compiler-error]\n",
                 e.phase().c_str(), e.what());
    return tessera::kExitInternalError;
  }
}
