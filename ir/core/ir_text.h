// The textual form of the IR: printing and parsing back.
//
// Printing then parsing then printing gives the same text (the round trip the
// test suite checks for every IR it prints). The grammar, in brief:
//
//   module     ::= `module` (`attributes` attr-dict)? `{` function* `}`
//   function   ::= `func.func` `@`name `(` (%arg `:` type),* `)` (`->` types)?
//                  (`attributes` attr-dict)? (`{` block+ `}`)? loc?
//   operation  ::= (value-list `=`)? op-name operand-list? attr-dict?
//                  (`:` type-list)? (`(` region (`,` region)* `)`)? loc?
//   region     ::= `{` block* `}`        block ::= (`^`name (`(` args `)`)? `:`)? operation*
//   attr-dict  ::= `{` (name (`=` attribute)?),* `}`
//   loc        ::= `loc(` `"file"` `:` line `:` col `)` | `loc(fused[` ... `])`
//
// The types after `:` are the result types; operand types come from their
// definitions. `#` starts a comment to the end of the line (so -verify
// directives can sit next to the line they are about).
#pragma once

#include <string>

#include "support/diagnostics/diagnostics.h"
#include "support/source/source_manager.h"
#include "ir/core/ir.h"

namespace tessera::ir {

struct PrintOptions {
  bool locations = false;  // print `loc(...)` after each operation
};

std::string print_operation(Operation* op, const PrintOptions& options = {});

// Parses a module from `file`. Operations without a written `loc(...)` get
// the position of their text in `file` as their location. Errors are
// reported to `diags`; on error the result is null.
OwningModule parse_module(Context& context, const SourceManager& sources, FileId file, DiagnosticEngine& diags);

// Parses `printed` (text this printer produced) and prints it again with the
// same options; returns "" when the text comes back identical, else a
// description of the first difference. Tools run it on every IR they print
// when TESSERA_CHECK_ROUND_TRIP is set (the test suite sets it).
std::string round_trip_mismatch(const std::string& printed, const PrintOptions& options);
bool round_trip_checks_enabled();

// The source range a location points at, when its file is loaded in `sources`
// (an empty range at the start of the position; an invalid range otherwise).
SourceRange location_range(const SourceManager& sources, Location loc);

}  // namespace tessera::ir
