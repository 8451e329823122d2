// LLVM's fatal errors (llvm::report_fatal_error: a broken invariant inside
// LLVM, or a request it cannot honour) as tesserac's internal compiler
// errors instead of LLVM's bare "LLVM ERROR: ..." and exit code 1, which a
// user would read as an error in their program.
#pragma once

namespace tessera::codegen {

// From now on an LLVM fatal error calls `report(message)` and then ends the
// process with `exit_code`. LLVM cannot be unwound through, so no exception.
void on_llvm_fatal_error(void (*report)(const char* message), int exit_code);

// Raises an LLVM fatal error (the driver's --debug-internal-error=llvm test hook).
[[noreturn]] void raise_llvm_fatal_error(const char* message);

}  // namespace tessera::codegen
