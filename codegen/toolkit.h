// The CUDA Toolkit's command-line tools (ptxas, fatbinary), run as
// processes. Nothing here is needed for PTX output. The in-process
// alternative to ptxas is nvjitlink.h.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "codegen/gpu_arch.h"

namespace tessera::codegen {

// `explicit_path` when given, else <cuda_root>/bin/<name>, else <name> on
// PATH; empty when none exists.
std::string find_tool(const std::string& name, const std::string& explicit_path, const std::string& cuda_root);

struct ToolRun {
  bool started = false;  // false: the program could not be executed
  int exit_code = -1;
  std::string output;    // stdout and stderr together
};
ToolRun run_tool(const std::string& program, const std::vector<std::string>& arguments);

// PTX -> cubin with ptxas. On failure returns ptxas's message; on success
// `messages` holds what it printed (-v, warnings).
std::optional<std::string> assemble_cubin(const std::string& ptxas, const std::string& ptx, const GpuArch& arch,
                                          int opt_level, const std::vector<std::string>& extra_options,
                                          std::string& cubin, std::string& messages);

struct FatbinImage {
  bool is_ptx = false;
  GpuArch arch;
  std::string contents;
};
// Images -> one fatbin with `fatbinary`. On failure returns its message.
std::optional<std::string> make_fatbin(const std::string& fatbinary, const std::vector<FatbinImage>& images,
                                       std::string& fatbin);

}  // namespace tessera::codegen
