#include "codegen/gpu_arch.h"

#include <charconv>

namespace tessera::codegen {

std::string GpuArch::name() const { return "sm_" + std::to_string(sm) + (arch_specific ? "a" : ""); }

int GpuArch::ptx_version() const {
  // The first PTX ISA version that knows each target (PTX ISA, "Release notes";
  // LLVM refuses older ones with a fatal error).
  if (sm == 110) return 90;
  if (sm == 103 || sm == 121) return 88;
  if (sm >= 120) return 87;
  if (sm >= 100) return 86;
  if (sm >= 90) return 80;
  if (sm >= 89) return 78;
  return 75;  // sm_80..87; 7.5 is also the first with the DWARF sections of -g
}

std::optional<GpuArch> parse_gpu_arch(std::string_view text) {
  for (std::string_view prefix : {"sm_", "compute_"})
    if (text.substr(0, prefix.size()) == prefix) text.remove_prefix(prefix.size());
  GpuArch arch;
  if (!text.empty() && text.back() == 'a') {
    arch.arch_specific = true;
    text.remove_suffix(1);
  }
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), arch.sm);
  if (error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  static constexpr int kKnown[] = {80, 86, 87, 89, 90, 100, 101, 103, 110, 120, 121};
  for (int known : kKnown)
    if (arch.sm == known) return arch;
  return std::nullopt;
}

}  // namespace tessera::codegen
