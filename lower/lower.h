// Lowering from the typed AST to Tile IR.
//
// `lower_to_tile_ir` turns every `@kernel` function of a checked module, and
// every helper function a kernel calls (directly or not), into a `func.func`
// of Tile IR: structured control flow (`scf.if/for/while`), SSA values for
// mutable locals (loop-carried values and branch results, no memory slots),
// tensors as memrefs, `tile.*` builtins as `tile.*` operations, and a source
// location on every operation. `@jit` functions are graph-level and are not
// lowered here. docs/ir/lowering.md describes each construct's translation.
#pragma once

#include "frontend/ast/ast.h"
#include "support/diagnostics/diagnostics.h"
#include "ir/core/ir.h"
#include "sema/sema.h"

namespace tessera::ir {

// Returns null when a construct cannot be lowered (diagnosed as lower.*
// errors). The result is verified: a verifier failure is a bug in tesserac,
// thrown as an InternalError (phase "lower"; the driver exits with code 3).
// With `only_kernel`, only the kernel of that name (if there is one) and the
// helpers it calls. With `skip_autotuned`, autotuned kernels (not checked
// at one point of their space) are left out: the driver lowers each point
// of their space on its own (driver/autotune.h); without it they are
// lowered with each knob at its largest value.
OwningModule lower_to_tile_ir(Context& context, const Ast& ast, const ValueStores& values,
                              const sema::TypedModule& typed, DiagnosticEngine& diags,
                              const std::string& only_kernel = {}, bool skip_autotuned = false);

}  // namespace tessera::ir
