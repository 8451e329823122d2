// libFuzzer target: lexing, parsing and (for syntactically valid inputs) sema
// of arbitrary bytes. Any crash, sanitizer report, leak or hang is a bug:
// bad input must only ever produce diagnostics.
#include <cstddef>
#include <cstdint>
#include <string>

#include "frontend/parse/parse.h"
#include "sema/sema.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  tessera::SourceManager sources;
  tessera::FileId file = sources.add_file("fuzz.tsr", std::string(reinterpret_cast<const char*>(data), size));
  tessera::CollectingDiagnosticConsumer consumer;
  tessera::DiagnosticEngine diags(sources, consumer, tessera::DiagnosticOptions{false, false, 0});
  tessera::ValueStores values;
  tessera::ParsedFile parsed = tessera::lex_and_parse(file, sources, values, diags);
  if (!diags.has_errors()) tessera::sema::check_module(parsed.ast, values, diags);
  // Rendering every diagnostic exercises the location and caret code too.
  diags.flush();
  tessera::TextDiagnosticPrinter printer(sources, stderr);
  for (const tessera::Diagnostic& d : consumer.diagnostics) (void)printer.render(d);
  (void)tessera::dump_ast(parsed.ast, sources, values);
  return 0;
}
