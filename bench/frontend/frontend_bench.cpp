// bench/frontend: lexer, parser and sema throughput on a generated Tessera program.
//
//   frontend_bench [--lines N] [--repeat R] [FILE.tsr]
//
// Reports lines/s and MiB/s for lexing alone, lexing + parsing, and lexing +
// parsing + sema, the best of R runs. With FILE, measures that file instead of generated code.
// Targets, on one core: lex + parse at least 1,000,000 lines/s; lex + parse +
// sema at least 500,000 lines/s. The default input is a generated file of
// about 100,000 lines.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "frontend/lex/lexer.h"
#include "frontend/parse/parse.h"
#include "sema/sema.h"

namespace {

std::string generate(int functions) {
  std::string out = "import tessera as ts\n\n";
  for (int k = 0; k < functions; ++k) {
    out += "@kernel tile[(128,)] shared(16_KiB)\n";
    out += "def kernel_" + std::to_string(k) +
           "(x: f32[n], y: mut f32[n], alpha: f32, w: ts.Tensor[\"N\", ts.bf16 @accum(ts.f32)]):\n";
    out += "    \"\"\"A generated kernel.\"\"\"\n";
    out += "    i = tile.linear_id()\n";
    out += "    smem = tile.alloc_shared((128,), f32, swizzle=\"xor\")\n";
    out += "    acc = 0.0\n";
    out += "    for j in range(i, n, tile.group_size()):\n";
    out += "        acc += x[j] * alpha - (y[j] // 2) ** 2\n";
    out += "    smem[tile.local_id()] = acc\n";
    out += "    tile.barrier()\n";
    out += "    if i < n and acc > 0.0:\n";
    out += "        y[i] = alpha * x[i] + y[i] if i % 2 == 0 else smem[0]\n";
    out += "\n";
  }
  return out;
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

int main(int argc, char** argv) {
  int lines_wanted = 100000;
  int repeat = 5;
  std::string file;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--lines" && i + 1 < argc) {
      lines_wanted = std::atoi(argv[++i]);
    } else if (arg == "--repeat" && i + 1 < argc) {
      repeat = std::atoi(argv[++i]);
    } else {
      file = arg;
    }
  }
  std::string source;
  if (file.empty()) {
    source = generate(lines_wanted / 13 + 1);  // 13 lines per generated kernel
  } else {
    std::ifstream in(file, std::ios::binary);
    std::ostringstream buffer;
    buffer << in.rdbuf();
    source = buffer.str();
  }
  size_t lines = 0;
  for (char c : source) lines += c == '\n';

  double best_lex = 1e9;
  double best_parse = 1e9;
  double best_total = 1e9;
  for (int r = 0; r < repeat; ++r) {
    tessera::SourceManager sources;
    tessera::FileId id = sources.add_file("bench.tsr", source);
    tessera::CollectingDiagnosticConsumer consumer;
    tessera::DiagnosticEngine diags(sources, consumer);
    tessera::ValueStores values;
    auto start = std::chrono::steady_clock::now();
    tessera::TokenizedBuffer tokens = tessera::lex_file(id, sources, values, diags);
    double lex = seconds_since(start);
    tessera::Ast ast;
    tessera::parse_file(tokens, ast, values, diags);
    double parse = seconds_since(start);
    auto typed = tessera::sema::check_module(ast, values, diags);
    double total = seconds_since(start);
    diags.flush();
    if (!consumer.diagnostics.empty()) {
      std::fprintf(stderr, "frontend_bench: input has %zu diagnostics\n", consumer.diagnostics.size());
      return 1;
    }
    best_lex = std::min(best_lex, lex);
    best_parse = std::min(best_parse, parse);
    best_total = std::min(best_total, total);
  }
  double mib = static_cast<double>(source.size()) / (1 << 20);
  std::printf("input: %zu lines, %.1f MiB\n", lines, mib);
  std::printf("lex:          %10.0f lines/s  %7.1f MiB/s\n", lines / best_lex, mib / best_lex);
  std::printf("lex + parse:  %10.0f lines/s  %7.1f MiB/s   (target 1,000,000: %s)\n", lines / best_parse,
              mib / best_parse, lines / best_parse >= 1000000 ? "met" : "NOT met");
  std::printf("+ sema:       %10.0f lines/s  %7.1f MiB/s   (target   500,000: %s)\n", lines / best_total,
              mib / best_total, lines / best_total >= 500000 ? "met" : "NOT met");
  return 0;
}
