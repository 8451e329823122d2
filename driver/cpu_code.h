// CPU code from a Tile IR module (docs/cpu-target.md): the host's LLVM IR,
// optimised, or an ELF object exporting the kernel table (docs/abi.md).
// Nullopt after reporting a diagnostic.
#pragma once

#include <optional>
#include <string>

#include "driver/options.h"
#include "ir/core/ir.h"
#include "support/diagnostics/diagnostics.h"

namespace tessera::driver {

std::optional<std::string> cpu_llvm_ir(ir::Operation* module, const CodegenOptions& options, DiagnosticEngine& diags);
std::optional<std::string> cpu_object(ir::Operation* module, const CodegenOptions& options, DiagnosticEngine& diags);

// options.host_cpu names a CPU of the host's architecture (objects only);
// false after reporting codegen.unknown-host-cpu.
bool host_cpu_known(const CodegenOptions& options, DiagnosticEngine& diags);

}  // namespace tessera::driver
