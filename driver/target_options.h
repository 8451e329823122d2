// The driver's typed options as code generation's parameters (internal to
// driver/).
#pragma once

#include "codegen/llvm_emitter.h"
#include "driver/options.h"

namespace tessera::driver {

// The CPU's emulation of the tensor-core paths: Sync and Wgmma take them,
// Auto the SIMT path.
inline codegen::HostTarget::EmulatedMma emulated_mma(Mma mma) {
  switch (mma) {
    case Mma::Auto: return codegen::HostTarget::EmulatedMma::None;
    case Mma::Sync: return codegen::HostTarget::EmulatedMma::Sync;
    case Mma::Wgmma: return codegen::HostTarget::EmulatedMma::Wgmma;
  }
  return codegen::HostTarget::EmulatedMma::None;
}

}  // namespace tessera::driver
