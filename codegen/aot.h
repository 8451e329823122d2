// Ahead-of-time host objects (docs/aot.md): `tesserac model.tsr -c` makes one
// ELF object holding
//   - the CPU code of every kernel (the CPU target, docs/cpu-target.md), all
//     of it internal to the object so that objects of several .tsr files link
//     into one program without clashes;
//   - the GPU image (a fatbin, or PTX when no ptxas was found), as constant data;
//   - one tessAotModule describing them and every kernel's signature
//     (runtime/include/tessera/tessera_aot.h), exported as
//     `tessera_aot_<N><namespace>_module`;
//   - a launch stub per kernel, `tessera_aot_<N><namespace>_k_<kernel>`, which
//     passes the module, the kernel's index and its arguments to
//     tessAotLaunch. (<N> is the namespace's length, so names never collide.)
//   - the host code of every @jit function with annotated parameters
//     (internal), and an entry per function, `tessera_aot_<N><namespace>_f_<name>`,
//     which passes the module, the function's signature and its code to
//     tessAotCall.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "codegen/kernel_signature.h"
#include "codegen/llvm_emitter.h"

namespace tessera::codegen {

enum class AotImageKind : uint32_t { None = 0, Fatbin = 1, Ptx = 2 };  // tessAotImageKind

struct AotObjectOptions {
  std::string name_space;  // a C identifier: the header's namespace and the symbols' infix
  std::string source;      // the .tsr path, for messages
  AotImageKind image_kind = AotImageKind::None;
  std::string image;       // the fatbin or the PTX text
  int opt_level = 3;
  std::string host_cpu = "generic";
  bool bounds_check = false;
};

// The exported symbols' names.
std::string aot_symbol_prefix(const std::string& name_space);  // "tessera_aot_5saxpy_"
std::string aot_stub_name(const std::string& name_space, const std::string& kernel);
std::string aot_module_name(const std::string& name_space);
std::string aot_function_name(const std::string& name_space, const std::string& function);

// Tile IR + signatures -> the object file's bytes. `kernels` are the
// module's kernels in source order, `functions` its @jit functions'
// signatures (jit_function_signatures). Null after reporting a diagnostic (an
// operation the CPU target cannot emit); an error string for a failure of
// LLVM's (an internal error).
std::optional<std::string> emit_aot_object(ir::Operation* module, const std::vector<AotKernel>& kernels,
                                           const std::vector<AotKernel>& functions, const AotObjectOptions& options,
                                           DiagnosticEngine& diags, std::string& object, bool& reported);

}  // namespace tessera::codegen
