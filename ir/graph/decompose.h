// graph-decompose's rewrites, for passes that need primitive operations
// first (autodiff differentiates the decomposed form of a function).
#pragma once

#include "ir/core/context.h"
#include "ir/core/ir.h"

namespace tessera::ir {

struct DecomposeOptions {
  // Keep graph.attention / graph.attention_grad whole where they have the
  // stdlib flash kernels' form (flash_attention_form).
  bool keep_flash_attention = false;
  bool keep_flash_attention_grad = false;
};

// Whether an attention or attention_grad has the form of stdlib/attention.tsr's
// kernels: f32, f16 or bf16; q, k and v of one rank with head size 64 or
// 128 and the same batch dimensions, all known at compile time.
bool flash_attention_form(const Operation* op);

// Rewrites every graph.attention(_grad), graph.softmax, graph.norm and
// graph.matmul under `root` as graph-decompose does (decompose.cpp), except
// the attention forms `options` keeps.
void decompose_graph_operations(Operation* root, Context& context, DecomposeOptions options = {});

}  // namespace tessera::ir
