// Autotuned kernels at compile time (docs/autotuning.md): every point of a
// kernel's `@kernel.autotune(space=...)` is checked and lowered on its own,
// with its knobs as exact constants. A point that does not compile is pruned
// with its reason (the first error it gets) instead of failing the kernel;
// only a kernel whose every point is pruned is an error
// (sema.autotune-all-pruned, a note per point). Each surviving point becomes
// its own func.func, a variant, with its knob values in its signature
// (attributes autotune_of, autotune_knobs, autotune_values, autotune_index,
// autotune_default; docs/ir/tile.md). The default variant keeps the kernel's
// name; the others are NAME$vI, I the point's index in the space.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "frontend/ast/ast.h"
#include "ir/core/ir.h"
#include "ir/passes/pass_manager.h"
#include "sema/sema.h"
#include "support/diagnostics/diagnostics.h"

namespace tessera::driver {

struct AutotunedKernel {
  std::string name;
  std::vector<std::string> knobs;
  std::vector<sema::AutotunePoint> points;                // pruned: sema's and the driver's reasons
  std::vector<std::unique_ptr<sema::TypedModule>> typed;  // by point: its own check; null when pruned
  std::vector<std::string> key;                           // key=(...), empty: every tensor extent
  SourceRange name_range;
  std::optional<size_t> default_point;  // set once the kept points are known
};

// "BM=64, BN=128"
std::string point_text(const AutotunedKernel& kernel, size_t point);
// The variant's func.func name: the kernel's for the default point, NAME$vI otherwise.
std::string variant_symbol(const AutotunedKernel& kernel, size_t point);
// The default point among the kept ones (docs/autotuning.md, "The default
// point"): the one whose values are largest, compared knob by knob in the
// order the space names them. nullopt when every point is pruned.
std::optional<size_t> default_point(const AutotunedKernel& kernel);

// Sema of every point of every autotuned kernel of a checked module (each
// point in a module check of its own, its diagnostics collected). Reports
// sema.autotune-all-pruned to `diags` for a kernel with no point left.
std::vector<AutotunedKernel> check_autotune_points(const Ast& ast, ValueStores& values, const sema::TypedModule& typed,
                                                   DiagnosticEngine& diags);

// Lowers every kept point of `kernel` and adds its variants (and the
// helpers each calls, renamed VARIANT.HELPER) to `module`. A point whose
// lowering fails is pruned with the reason; false after reporting
// sema.autotune-all-pruned to `diags` when none is left.
// `keep` (tesserac -c --tune-cache): when it names the kernel, only its
// points in the set (and the default point) are lowered; the others are
// pruned as not chosen by the cache.
bool lower_autotune_points(AutotunedKernel& kernel, ir::Context& context, ir::Operation* module, const Ast& ast,
                           const ValueStores& values, DiagnosticEngine& diags,
                           const std::map<std::string, std::set<std::string>>* keep = nullptr);

// The launches of autotuned kernels in graph code (graph.launch with
// `autotune_points`: a grid per point sema kept) become tuned launches of
// the variants that compiled: `variants`, `points`, `tune_default`, the grids
// of pruned points dropped (docs/ir/host.md, "Tuned launches"). After
// lower_autotune_points for every kernel.
void bind_tuned_launches(ir::Operation* module, ir::Context& context, const std::vector<AutotunedKernel>& kernels);

// `--emit=tuning`: each kernel's space and every point, kept (as which
// variant) or pruned with the reason. Deterministic text.
// Then the spaces of the kernels generate-kernels made (`generated`).
std::string tuning_report(const std::vector<AutotunedKernel>& kernels,
                          const std::vector<ir::GeneratedTuning>& generated = {});

}  // namespace tessera::driver
