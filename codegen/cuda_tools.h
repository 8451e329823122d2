// The CUDA Toolkit's command-line tools (ptxas, fatbinary), run as
// processes. Nothing here is needed for PTX output. The in-process
// alternative to ptxas is nvjitlink.h.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "codegen/gpu_arch.h"

namespace tessera::codegen {

// `explicit_path` when given (empty when it cannot be run:
// tool_path_problem), else <cuda_root>/bin/<name>, else <name> on PATH;
// empty when none exists.
std::string find_tool(const std::string& name, const std::string& explicit_path, const std::string& cuda_root);
// Why an explicitly given tool path cannot be run ("does not exist", "is a
// directory", "is not executable"); empty when it can.
std::string tool_path_problem(const std::string& path);

struct ToolRun {
  bool started = false;  // false: the program could not be executed
  int exit_code = -1;
  std::string output;    // stdout and stderr together
};
ToolRun run_tool(const std::string& program, const std::vector<std::string>& arguments);

class ScratchDirectory;

// One ptxas run: PTX -> cubin for one architecture (`options` come after
// -arch and -O). Made before the PTX exists, it starts ptxas at once, reading
// its input from a pipe (/dev/stdin), so that ptxas's own start-up (about
// half of its time for a small kernel) runs while tesserac makes the PTX;
// the cubin is the same as from a file (tested). With -g or -lineinfo among
// the options, or without /proc, ptxas reads a file, written by feed().
class PtxasRun {
 public:
  PtxasRun(std::string ptxas, const GpuArch& arch, int opt_level, std::vector<std::string> options);
  ~PtxasRun();  // a run that was not finished is killed
  PtxasRun(const PtxasRun&) = delete;
  PtxasRun& operator=(const PtxasRun&) = delete;

  // Hands over the PTX (once); does not wait for ptxas.
  void feed(const std::string& ptx);
  // Waits for ptxas. On failure returns its message; on success `messages`
  // holds what it printed (-v, warnings).
  std::optional<std::string> finish(std::string& cubin, std::string& messages);

 private:
  void start(const std::vector<std::string>& options);  // on starter_
  void join_starter();
  std::vector<std::string> with_files(const std::string& input) const;

  std::string ptxas_;
  std::vector<std::string> arguments_;
  std::unique_ptr<ScratchDirectory> scratch_;
  pid_t pid_ = -1;
  int input_ = -1;  // the pipe's write end while ptxas waits for its PTX
  bool fed_ = false;
  std::optional<std::string> failure_;
  std::thread starter_;  // makes the directory and starts ptxas; joined before anything else
};

struct FatbinImage {
  bool is_ptx = false;
  GpuArch arch;
  std::string contents;
};
// Images -> one fatbin with `fatbinary`. On failure returns its message.
std::optional<std::string> make_fatbin(const std::string& fatbinary, const std::vector<FatbinImage>& images,
                                       std::string& fatbin);

// Each kernel's bytes of spill stores in the verbose report of ptxas -v or
// nvJitLink's info log ("Function properties for NAME" followed by "N bytes
// spill stores"), by kernel name; kernels the report does not name are
// absent. What the tuner prunes a spilling variant by (docs/autotuning.md,
// "Spills").
std::map<std::string, int64_t> parse_spill_stores(std::string_view report);

}  // namespace tessera::codegen
