// A compiled module loaded on a runtime device, for running it in this
// process (`tesserac run`, later the tuner): on the CPU device the CPU
// target's code through the in-process JIT, on a GPU the PTX for the newest
// architecture the GPU runs, loaded by the driver (no ptxas needed).
#pragma once

#include <memory>
#include <string>

#include "driver/options.h"
#include "ir/core/ir.h"
#include "support/diagnostics/diagnostics.h"
#include "tessera/tessera_runtime.h"

namespace tessera::codegen {
class HostJit;
}

namespace tessera::driver {

class LoadedModule {
 public:
  LoadedModule();
  ~LoadedModule();
  LoadedModule(LoadedModule&&) noexcept;
  LoadedModule& operator=(LoadedModule&&) noexcept;

  tessModule handle() const { return module_; }
  explicit operator bool() const { return module_ != nullptr; }
  // The compiled host function of @jit function or program `name`
  // (tessera_host.h), or null. On a GPU the host functions are compiled for
  // the CPU beside the kernels' PTX.
  tessHostFunction host_function(const std::string& name) const;

 private:
  friend LoadedModule load_module(ir::Operation*, tessDevice, const CodegenOptions&, DiagnosticEngine&, std::string&);
  tessModule module_ = nullptr;
  std::unique_ptr<codegen::HostJit> jit_;  // the CPU code lives as long as the module
  std::unique_ptr<codegen::HostJit> host_jit_;  // a GPU module's host functions
  const tessHostFunctionEntry* host_table_ = nullptr;
};

// Compiles `module` for `device` and loads it. On failure the result is
// empty and either `error` says why (a sentence for the tool to print) or a
// diagnostic was reported (`error` empty).
LoadedModule load_module(ir::Operation* module, tessDevice device, const CodegenOptions& options,
                         DiagnosticEngine& diags, std::string& error);

}  // namespace tessera::driver
