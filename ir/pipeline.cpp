#include "ir/pipeline.h"

#include "support/diagnostics/internal_error.h"

namespace tessera::ir {

namespace {

// Why this order: docs/ir/passes.md ("The default pipeline").
constexpr std::string_view kDefaultTilePipeline[] = {
    "inline", "canonicalize", "cse", "licm", "canonicalize", "dce",
    "uniformity", "address-space-inference", "shared-layout", "tile-layout", "verify"};

// What code generation needs: the register tiles' layouts, which decide the
// tensor-core path of tile.mma. LLVM does the simplifications' work.
constexpr std::string_view kCompilePipeline[] = {"tile-layout"};

}  // namespace

std::span<const std::string_view> compile_pipeline(int) { return kCompilePipeline; }

std::span<const std::string_view> default_tile_pipeline() { return kDefaultTilePipeline; }

bool run_pipeline(Operation* module, PassContext& context, std::span<const std::string_view> passes,
                  PassManagerOptions options) {
  PassManager manager(std::move(options));
  for (std::string_view name : passes)
    if (!manager.add(name)) internal_error("ir passes", "the pipeline names an unknown pass '" + std::string(name) + "'");
  return manager.run(module, context);
}

}  // namespace tessera::ir
