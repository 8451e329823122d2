// Kernels that generated code launches but does not generate: the stdlib's
// GEMM (stdlib/gemm.tsr) and what else graph operations lower to. tesserac
// compiles each stdlib kernel at build time, once per instance (dtype
// aliases set with -D), to Tile IR files; a KernelLibrary finds an instance
// and copies it into the module being compiled (docs/stdlib.md, "How graph
// operations use the stdlib").
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "ir/core/ir.h"

namespace tessera::ir {

// One instance: the kernel `kernel` of stdlib file `file` with the
// module-level names in `params` set (T=f16, ACC=f32, ...).
struct KernelInstance {
  std::string file;
  std::string kernel;
  std::vector<std::pair<std::string, std::string>> params;
  // For an autotuned kernel: the point wanted, the first values of its knobs
  // in the order the space names them (a schedule directive's tile); empty
  // for the kernel's default point. The point's unnamed knobs are the
  // default's where that matches, else the last matching point's.
  std::vector<int64_t> knobs;
  // `file.NAME=VALUE...`: the IR file's stem, and the instance's identity.
  std::string key() const;
  // The kernel's name in the module it is copied into, for the point whose
  // knob values are `point` (none: the default).
  std::string symbol(const std::vector<int64_t>& point = {}) const;
};

class KernelLibrary {
 public:
  virtual ~KernelLibrary() = default;
  // The instance's kernel in `module` (copied there on first use), or null
  // with `error` saying why it is not available.
  virtual Operation* instantiate(Context& context, Operation* module, const KernelInstance& instance,
                                 std::string& error) = 0;
  // The points of an autotuned kernel, in the order of its space (each its
  // knob values), the knobs' names and the default point's index; empty
  // when the kernel has one form or is not available.
  virtual std::vector<std::vector<int64_t>> autotune_points(Context& context, const KernelInstance& instance,
                                                            std::vector<std::string>& knobs, size_t& default_point) {
    (void)context, (void)instance, (void)knobs, (void)default_point;
    return {};
  }
};

// Where the stdlib's instances are: TESSERA_STDLIB_DIR when set; else
// share/tessera/stdlib beside the running executable's bin/ (an installed
// tesserac); else the build tree's (stdlib/CMakeLists.txt writes them).
std::string default_stdlib_directory();

// The library of Tile IR files `<directory>/<key>.ir`.
class DirectoryKernelLibrary : public KernelLibrary {
 public:
  explicit DirectoryKernelLibrary(std::string directory) : directory_(std::move(directory)) {}
  Operation* instantiate(Context& context, Operation* module, const KernelInstance& instance,
                         std::string& error) override;
  std::vector<std::vector<int64_t>> autotune_points(Context& context, const KernelInstance& instance,
                                                    std::vector<std::string>& knobs, size_t& default_point) override;
  const std::string& directory() const { return directory_; }

 private:
  std::string directory_;
};

}  // namespace tessera::ir
