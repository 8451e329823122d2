// The IR verifier: structural rules (scoping of values, terminators, region
// shapes) and each operation's own rules (verifier.cpp, docs/ir/).
#pragma once

#include <string>
#include <vector>

#include "support/diagnostics/diagnostics.h"
#include "ir/core/ir.h"

namespace tessera::ir {

struct VerifyError {
  Operation* op;
  std::string message;
};

// Checks `root` and everything nested in it; returns every error found.
std::vector<VerifyError> verify(Operation* root);

// Reports the errors as `ir.verify` diagnostics at each operation's location
// (when that location is in a file `diags` knows). Returns true when valid.
bool verify_and_report(Operation* root, DiagnosticEngine& diags);

}  // namespace tessera::ir
