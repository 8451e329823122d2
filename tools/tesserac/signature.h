// Kernel signatures read from sema's typed module: what `tesserac run`
// checks its arguments against and what AOT objects and headers describe
// (codegen/aot.h, docs/aot.md).
#pragma once

#include <string>
#include <vector>

#include "codegen/aot.h"
#include "frontend/ast/ast.h"
#include "sema/sema.h"

namespace tessera {

// Every @kernel of the module, in source order.
std::vector<codegen::AotKernel> kernel_signatures(const sema::TypedModule& typed, const Ast& ast, const ValueStores& values);

// "x: mut f32[n]": a parameter as the signature spells it.
std::string describe_parameter(const codegen::AotKernel& kernel, const codegen::AotParameter& parameter);

}  // namespace tessera
