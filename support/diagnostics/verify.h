// `tesserac -verify`: checks the diagnostics of a run against directives
// written in the file's comments, as clang -verify does.
//
//   x = $             # expected-error {{invalid character}}
//   # expected-warning@+1 {{unknown escape}}
//   s = "\q"
//   # expected-note@-3 2 {{...}}      (a count: exactly two such notes)
//   # expected-error@* {{...}}        (any line, or no location at all)
//   # expected-no-diagnostics
//
// Matching: same severity, same line, and the text between {{ and }} occurs
// in the message. Every diagnostic must be expected and every directive seen.
#pragma once

#include <cstdio>
#include <vector>

#include "support/diagnostics/diagnostics.h"

namespace tessera {

struct VerifyResult {
  bool ok = true;
  std::string report;  // clang-style lists of mismatches; empty when ok
};

VerifyResult verify_diagnostics(const SourceManager& sources, FileId file, const std::vector<SourceRange>& comments,
                                const std::vector<Diagnostic>& emitted);

}  // namespace tessera
