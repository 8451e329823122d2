// `tesserac -c`: an AOT host object with the kernels' CPU code, their GPU
// image and launch stubs, and its C++ header (docs/aot.md).
#pragma once

#include <optional>
#include <string>

#include "driver/options.h"
#include "ir/core/ir.h"
#include "support/diagnostics/diagnostics.h"

namespace tessera::driver {

struct AotOptions {
  std::string name_space;   // a C++ identifier: the header's namespace and the symbols' infix
  std::string source;       // the .tsr path, named in the header and in messages
  std::string object_name;  // the object's file name, named in the header's comment
  GpuCode gpu_code = GpuCode::Auto;
};

struct AotOutput {
  std::string object;
  std::string header;
};

// Nullopt after reporting a diagnostic.
std::optional<AotOutput> aot_object(ir::Operation* module, const AotOptions& aot, const CodegenOptions& options,
                                    DiagnosticEngine& diags);

}  // namespace tessera::driver
