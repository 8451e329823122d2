// The host operations of @jit functions and programs (docs/ir/host.md): calls
// of the runtime's host-program interface.
#include "codegen/emitter/emitter.h"

namespace tessera::codegen::emitter {

void Emitter::emit_host_alloc(Operation* op) { emit_unsupported(op); }
void Emitter::emit_host_free(Operation* op) { emit_unsupported(op); }
void Emitter::emit_host_view(Operation* op) { emit_unsupported(op); }
void Emitter::emit_host_stride(Operation* op) { emit_unsupported(op); }
void Emitter::emit_host_launch(Operation* op) { emit_unsupported(op); }
void Emitter::emit_host_print(Operation* op) { emit_unsupported(op); }
void Emitter::emit_host_save(Operation* op) { emit_unsupported(op); }
void Emitter::emit_host_load(Operation* op) { emit_unsupported(op); }
void Emitter::emit_host_check(Operation* op) { emit_unsupported(op); }

}  // namespace tessera::codegen::emitter
