// graph-decompose's rewrites, for passes that need primitive operations
// first (autodiff differentiates the decomposed form of a function).
#pragma once

#include "ir/core/context.h"
#include "ir/core/ir.h"

namespace tessera::ir {

// Rewrites every graph.attention, graph.softmax, graph.norm and graph.matmul
// under `root` as graph-decompose does (decompose.cpp).
void decompose_graph_operations(Operation* root, Context& context);

}  // namespace tessera::ir
