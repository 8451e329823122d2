#include "codegen/llvm_errors.h"

#include <llvm/Support/ErrorHandling.h>

#include <cstdlib>

namespace tessera::codegen {
namespace {

void (*g_report)(const char*) = nullptr;
int g_exit_code = 1;

void handle_fatal_error(void*, const char* reason, bool) {
  if (g_report) g_report(reason);
  std::_Exit(g_exit_code);
}

}  // namespace

void on_llvm_fatal_error(void (*report)(const char* message), int exit_code) {
  g_report = report;
  g_exit_code = exit_code;
  llvm::remove_fatal_error_handler();
  llvm::install_fatal_error_handler(handle_fatal_error);
}

void raise_llvm_fatal_error(const char* message) { llvm::report_fatal_error(message); }

}  // namespace tessera::codegen
