// libFuzzer target: the IR text parser, verifier and printer on arbitrary
// bytes. Bad IR must only ever produce diagnostics; IR that parses must
// verify without crashing, and what prints must parse back to the same text.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "ir/core/ir_text.h"
#include "ir/core/verifier.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  tessera::SourceManager sources;
  tessera::FileId file = sources.add_file("fuzz.ir", std::string(reinterpret_cast<const char*>(data), size));
  tessera::CollectingDiagnosticConsumer consumer;
  tessera::DiagnosticEngine diags(sources, consumer, tessera::DiagnosticOptions{false, false, 0});
  tessera::ir::Context context;
  tessera::ir::OwningModule module = tessera::ir::parse_module(context, sources, file, diags);
  if (module) {
    bool valid = tessera::ir::verify_and_report(module.get(), diags);
    for (bool locations : {false, true}) {
      tessera::ir::PrintOptions options{locations};
      std::string printed = tessera::ir::print_operation(module.get(), options);
      // Only valid IR is promised to round-trip (invalid IR may print values
      // that are out of scope as `%<undefined>`).
      if (valid && !tessera::ir::round_trip_mismatch(printed, options).empty()) std::abort();
    }
  }
  diags.flush();
  tessera::TextDiagnosticPrinter printer(sources, stderr);
  for (const tessera::Diagnostic& d : consumer.diagnostics) (void)printer.render(d);
  return 0;
}
