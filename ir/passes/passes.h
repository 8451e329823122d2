// The passes of the Tessera IR (the list is passes.def).
#pragma once

#include "ir/passes/pass_manager.h"

namespace tessera::ir {

#define TESSERA_IR_PASS(Function, Name, Description) void Function(Operation* module, PassContext& context);
#include "ir/passes/passes.def"
#undef TESSERA_IR_PASS

}  // namespace tessera::ir
