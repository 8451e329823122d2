// The one ordered list of IR passes every tool runs after lowering, QBE style:
// a plain list you can read top to bottom (docs/ir/passes.md, "The
// pipeline"). tesserac, `tesserac run` and tesserac-opt's --default-pipeline
// take it from here; nothing else assembles pass lists.
#pragma once

#include <span>
#include <string_view>

#include "ir/passes/pass_manager.h"

namespace tessera::ir {

// The passes tesserac runs on the IR from lowering before code generation,
// at optimisation level `opt_level` (0-3), in order: at -O0 the passes that
// check the language's rules and give register tiles their layouts; at -O1
// and above the whole default pipeline (docs/ir/passes.md, "The pipeline").
std::span<const std::string_view> compile_pipeline(int opt_level);

// Where a pipeline may stop for --emit: Graph IR (inlined and simplified),
// Schedule IR (after fusion), Tile IR (everything).
enum class PipelineStage : uint8_t { Graph, Schedule, Tile };

// The prefix of compile_pipeline(opt_level) that ends at `stage`.
std::span<const std::string_view> compile_pipeline(int opt_level, PipelineStage stage);

// The whole Tile IR pipeline (tesserac-opt --default-pipeline): the
// simplifications, the analyses that check the language's rules, the layouts.
std::span<const std::string_view> default_tile_pipeline();

// Runs `passes` in order with the manager's options. False when a pass
// reported a user error.
bool run_pipeline(Operation* module, PassContext& context, std::span<const std::string_view> passes,
                  PassManagerOptions options = {});

}  // namespace tessera::ir
