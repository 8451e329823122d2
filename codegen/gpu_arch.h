// NVIDIA GPU architectures tesserac targets (sm_80 through sm_120).
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace tessera::codegen {

struct GpuArch {
  int sm = 80;                  // compute capability * 10: 80, 86, 89, 90, 100, 120
  bool arch_specific = false;   // sm_90a: wgmma and other features without forward compatibility
  // --mma=wgmma: tile.mma as wgmma where the target is sm_90a and the operands'
  // shared layouts allow it (docs/codegen.md, "Tensor cores"); mma.sync otherwise.
  bool wgmma = false;
  std::string name() const;     // "sm_90a"
  int ptx_version() const;      // the PTX ISA version the arch needs (e.g. 80 for PTX 8.0)
};

// Accepts "sm_80", "sm_90a", "compute_90", "80", "90a". Null when unknown.
std::optional<GpuArch> parse_gpu_arch(std::string_view text);

}  // namespace tessera::codegen
