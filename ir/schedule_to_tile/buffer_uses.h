// The uses of a host buffer's memory, shared by bufferize (where to free a
// buffer) and buffer-plan (a buffer's live range).
#pragma once

#include <functional>

#include "ir/core/ir.h"

namespace tessera::ir {

// Calls `visit(value, user, in_block)` for each use of `buffer` or of a view
// of it (host.view, followed), `in_block` the operation of `block` that is
// or holds `user`; stops and returns false when `visit` does or when the
// memory leaves `block`: a yield, return, call or condition carries it out,
// an operand of an operation with regions (a loop's initial value) becomes
// a block argument that may be yielded and live on in its result, and a
// user outside `block` sees it elsewhere.
bool visit_buffer_uses_in_block(Value* buffer, Block& block,
                                const std::function<bool(Value* value, Operation* user, Operation* in_block)>& visit);

}  // namespace tessera::ir
