// What a compilation is asked to do, as typed options: the command-line tools
// map their flags onto these, and so will the stdlib build and the tuner
// (docs/driver.md).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tessera::driver {

enum class Target : uint8_t { Gpu, Cpu };

// How a tile.mma reaches the tensor cores (docs/codegen.md, "Tensor cores").
enum class Mma : uint8_t {
  Auto,   // mma.sync (wgmma has not run on a GPU yet); the SIMT path on the CPU
  Sync,   // mma.sync; on the CPU emulated by warp exchanges
  Wgmma,  // wgmma on sm_90a where the operands allow it; on the CPU emulated
};

// PTX -> cubin.
enum class Assembler : uint8_t {
  Auto,       // the ptxas process when it is found (or --ptxas names one), else libnvJitLink
  NvJitLink,  // libnvJitLink in-process
  Ptxas,      // the ptxas process
};

// The GPU code an AOT object embeds.
enum class GpuCode : uint8_t {
  Auto,    // a fatbin when an assembler and fatbinary are found, else PTX
  Fatbin,
  Ptx,
  None,    // CPU code only
};

enum class DebugLevel : uint8_t { None, LineTables, Full };

// Where the CUDA Toolkit's pieces are; empty: the defaults
// (<cuda_path>/bin, /usr/local/cuda, PATH).
struct Toolkit {
  std::string cuda_path;
  std::string ptxas;
  std::string nvjitlink;
  std::string fatbinary;
  Assembler assembler = Assembler::Auto;
  std::vector<std::string> ptxas_options;
};

struct CodegenOptions {
  Target target = Target::Gpu;
  // GPU architectures by name ("sm_80", "sm_90a"); empty means sm_80.
  std::vector<std::string> archs;
  std::string arch_list = "sm_80";  // as the user wrote it, for messages
  int opt_level = 3;
  bool bounds_check = false;
  Mma mma = Mma::Auto;
  bool cpu_fibers = false;  // the CPU target runs every kernel's lanes as fibers (tests)
  DebugLevel debug = DebugLevel::None;  // -g implies -O0 for the GPU code
  std::string host_cpu = "generic";     // CPU code: an LLVM CPU name of the host architecture, or "native"
  Toolkit toolkit;
};

}  // namespace tessera::driver
