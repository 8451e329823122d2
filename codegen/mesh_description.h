// The text form of a mesh attribute (`mesh = [[shape], [axes], [devices]]`
// of graph and host operations) that compiled host code passes to the
// runtime: "2,2;dp,tp;cpu:0,cpu:1,cpu:2,cpu:3" (shape; axes; devices).
// runtime/src/host_collectives.cpp reads it back; the AOT entry of a @jit
// function on a mesh passes it with the caller's mesh (docs/aot.md).
#pragma once

#include <string>

#include "ir/core/ir.h"

namespace tessera::codegen {

std::string mesh_description(ir::Attribute mesh);

// The mesh a function's host code runs its collectives on (the first
// host.mesh or host.collective it holds), or "" when it has none.
std::string function_mesh_description(ir::Operation* function);

}  // namespace tessera::codegen
