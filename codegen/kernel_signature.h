// A kernel's signature as its callers see it: source names, dtypes, shapes
// with their symbolic dimensions, `mut`, policies. Read from the attributes
// lowering records on each kernel's func.func (docs/ir/tile.md, "Kernel
// signatures"), so IR from tesserac-opt has one too; everything that binds
// arguments to a kernel derives from it: the AOT object's descriptors and
// C++ header (aot.h, docs/aot.md), `tesserac run`'s checks, the runtime's
// launch checks.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "ir/core/ir.h"

namespace tessera::codegen {

// One parameter of a kernel, as tessAotParameter.
struct AotParameter {
  std::string name;
  bool tensor = false;
  bool mut = false;
  std::string dtype;        // the source name: "f32", "fp8_e4m3"
  uint32_t dtype_code = 0;  // its tessDtype (the line of support/scalar_type.def)
  // Tensors: >= 0 a static size, -1 - k symbolic dimension k of the kernel,
  // INT64_MIN for `?` (unknown or derived from other dimensions: not checked).
  std::vector<int64_t> dims;
  // A tensor of a @precision_policy class: the class (its `storage` is
  // `dtype`), and the next parameter is its scale, `NAME.scale`.
  std::string policy;
};

struct AotKernel {
  std::string name;
  std::string signature;  // "saxpy(x: f32[n], y: mut f32[n], alpha: f32)"
  std::array<uint32_t, 3> group = {1, 1, 1};
  uint32_t group_rank = 1;  // the axes the kernel declares (tile=(128,) has 1)
  uint64_t static_shared_bytes = 0;
  std::vector<AotParameter> parameters;
  std::vector<std::string> symbols;  // the symbolic dimensions' names, by number
  bool generated = false;  // generated for a @jit function (attribute `generated`), or an autotuned kernel's
                           // variant other than its default: not part of the API
  // A @jit function's results ("result" or "result.N"; a `?` size is INT64_MIN).
  std::vector<AotParameter> results;
  // A @jit function whose host code runs collectives: the mesh it runs them
  // on (mesh_description.h), which its AOT entry takes from the caller.
  std::string mesh;
  // A variant of an autotuned kernel (docs/autotuning.md): the kernel it is
  // a point of, the knobs and this point's values, its index in the space,
  // whether it is the default point, and the tuner's key (key=(...)).
  std::string autotune_of;
  std::vector<std::string> knobs;
  std::vector<int64_t> knob_values;
  int64_t point_index = -1;
  bool autotune_default = false;
  std::vector<std::string> autotune_key;
};

// The signature of one kernel func.func. Arguments without recorded names
// are "argN"; without recorded dimensions, a memref's static sizes and `?`.
AotKernel kernel_signature(ir::Operation* kernel);

// Every kernel of the module, in module order.
std::vector<AotKernel> kernel_signatures(ir::Operation* module);
// Every entry @jit function of the module (annotated, attribute `entry`:
// its host code's signature), in order.
std::vector<AotKernel> jit_function_signatures(ir::Operation* module);

// "x: mut f32[n]": a parameter as the signature spells it.
std::string describe_parameter(const AotKernel& kernel, const AotParameter& parameter);

}  // namespace tessera::codegen
