#include "ir/pipeline.h"

#include "support/diagnostics/internal_error.h"

namespace tessera::ir {

namespace {

// Why this order: docs/ir/passes.md ("The default pipeline").
// The graph level first: @jit functions and programs are inlined, each
// graph.grad replaced by a call of its derived function (autodiff, which
// needs its callees inlined and leaves calls to inline again), each graph.jvp
// likewise (jvp, forward mode), and
// simplified as Graph IR (the end of the Graph stage), decomposed and fused
// (the Schedule stage), then each fused group becomes a generated kernel;
// from there everything is Tile IR and host code.
constexpr std::string_view kDefaultTilePipeline[] = {
    "inline", "autodiff", "jvp", "inline", "canonicalize", "cse", "dce",
    "graph-decompose", "graph-fusion", "overlap-collectives",
    "generate-kernels", "bufferize", "buffer-plan",
    "canonicalize", "cse", "licm", "canonicalize", "dce",
    "uniformity", "address-space-inference", "shared-layout", "tile-layout", "verify"};
constexpr size_t kDefaultGraphEnd = 7, kDefaultScheduleEnd = 10;

// -O0: what the language's rules and code generation need, nothing that
// only makes code faster. `inline` first so that the checks see whole
// kernels (a shuffle in a helper called under a divergent branch); the
// uniformity, address-space and shared-memory checks report user errors
// whatever the optimisation level; tile-layout gives register tiles the
// layouts that decide the tensor-core path of tile.mma.
constexpr std::string_view kCheckPipeline[] = {"inline", "autodiff", "jvp", "inline", "graph-decompose", "graph-fusion", "generate-kernels",
                                               "bufferize", "uniformity", "address-space-inference", "shared-layout",
                                               "tile-layout", "verify"};
constexpr size_t kCheckGraphEnd = 4, kCheckScheduleEnd = 6;

}  // namespace

std::span<const std::string_view> compile_pipeline(int opt_level) {
  if (opt_level == 0) return kCheckPipeline;
  return kDefaultTilePipeline;
}

std::span<const std::string_view> compile_pipeline(int opt_level, PipelineStage stage) {
  std::span<const std::string_view> all = compile_pipeline(opt_level);
  bool check = opt_level == 0;
  switch (stage) {
    case PipelineStage::Graph: return all.first(check ? kCheckGraphEnd : kDefaultGraphEnd);
    case PipelineStage::Schedule: return all.first(check ? kCheckScheduleEnd : kDefaultScheduleEnd);
    case PipelineStage::Tile: return all;
  }
  return all;
}

std::span<const std::string_view> default_tile_pipeline() { return kDefaultTilePipeline; }

bool run_pipeline(Operation* module, PassContext& context, std::span<const std::string_view> passes,
                  PassManagerOptions options) {
  PassManager manager(std::move(options));
  for (std::string_view name : passes)
    if (!manager.add(name)) internal_error("ir passes", "the pipeline names an unknown pass '" + std::string(name) + "'");
  return manager.run(module, context);
}

}  // namespace tessera::ir
