#include "driver/autotune.h"

#include <algorithm>
#include <map>

#include "lower/lower.h"

namespace tessera::driver {

namespace {

// The first error of a point's check or lowering: its prune reason.
std::string first_error(const CollectingDiagnosticConsumer& collected) {
  for (const Diagnostic& d : collected.diagnostics)
    if (d.severity == Severity::Error) return d.message + " [" + std::string(diagnostic_info(d.kind).id) + "]";
  return "it does not compile";
}

size_t kept_count(const AutotunedKernel& kernel) {
  return static_cast<size_t>(std::count_if(kernel.points.begin(), kernel.points.end(),
                                           [](const sema::AutotunePoint& p) { return p.pruned.empty(); }));
}

void report_all_pruned(const AutotunedKernel& kernel, DiagnosticEngine& diags) {
  auto builder = diags.emit<diag::SemaAutotuneAllPruned>(kernel.name_range, kernel.name,
                                                         static_cast<uint64_t>(kernel.points.size()));
  for (size_t p = 0; p < kernel.points.size(); ++p)
    builder.note<diag::NoteAutotunePruned>(kernel.name_range, point_text(kernel, p), kernel.points[p].pruned);
}

// Renames the callee of every call in `op` through `renamed`.
void rename_callees(ir::Context& context, ir::Operation* op, const std::map<std::string, std::string>& renamed) {
  op->walk([&](ir::Operation* inner) {
    if (inner->kind() != ir::OpKind::Call || !inner->has_attr("callee")) return;
    auto it = renamed.find(std::string(inner->attr("callee").string_value()));
    if (it != renamed.end()) inner->set_attr("callee", context.symbol_attr(it->second));
  });
}

}  // namespace

std::string point_text(const AutotunedKernel& kernel, size_t point) {
  std::string text;
  for (size_t k = 0; k < kernel.knobs.size(); ++k)
    text += (k ? ", " : "") + kernel.knobs[k] + "=" + std::to_string(kernel.points[point].values[k]);
  return text;
}

std::string variant_symbol(const AutotunedKernel& kernel, size_t point) {
  if (kernel.default_point == point) return kernel.name;
  return kernel.name + "$v" + std::to_string(point);
}

std::optional<size_t> default_point(const AutotunedKernel& kernel) {
  std::optional<size_t> best;
  for (size_t p = 0; p < kernel.points.size(); ++p) {
    if (!kernel.points[p].pruned.empty()) continue;
    if (!best || kernel.points[*best].values < kernel.points[p].values) best = p;
  }
  return best;
}

std::vector<AutotunedKernel> check_autotune_points(const Ast& ast, ValueStores& values, const sema::TypedModule& typed,
                                                   DiagnosticEngine& diags) {
  std::vector<AutotunedKernel> kernels;
  for (const sema::FunctionInfo& f : typed.functions) {
    if (f.kind != sema::FunctionKind::Kernel || f.autotune_points.empty()) continue;
    AutotunedKernel kernel;
    kernel.name = std::string(values.identifiers.name(f.name));
    for (const sema::AutotuneParameter& knob : f.autotune)
      kernel.knobs.emplace_back(values.identifiers.name(knob.name));
    kernel.points = f.autotune_points;
    kernel.key = f.autotune_key;
    kernel.name_range = f.name_range;
    kernel.typed.resize(kernel.points.size());
    for (size_t p = 0; p < kernel.points.size(); ++p) {
      if (!kernel.points[p].pruned.empty()) continue;
      sema::AutotunePin pin{kernel.name, kernel.points[p].values};
      CollectingDiagnosticConsumer collected;
      DiagnosticEngine point_diags(diags.sources(), collected, DiagnosticOptions{false, true, 1});
      std::unique_ptr<sema::TypedModule> checked = sema::check_module(ast, values, point_diags, &pin);
      point_diags.flush();
      if (point_diags.has_errors())
        kernel.points[p].pruned = first_error(collected);
      else
        kernel.typed[p] = std::move(checked);
    }
    kernel.default_point = default_point(kernel);
    if (kept_count(kernel) == 0) report_all_pruned(kernel, diags);
    kernels.push_back(std::move(kernel));
  }
  return kernels;
}

bool lower_autotune_points(AutotunedKernel& kernel, ir::Context& context, ir::Operation* module, const Ast& ast,
                           const ValueStores& values, DiagnosticEngine& diags,
                           const std::map<std::string, std::set<std::string>>* keep) {
  std::vector<ir::OwningModule> lowered(kernel.points.size());
  const std::set<std::string>* kept_by_cache = nullptr;
  if (keep)
    if (auto it = keep->find(kernel.name); it != keep->end()) kept_by_cache = &it->second;
  for (size_t p = 0; p < kernel.points.size(); ++p) {
    if (!kernel.points[p].pruned.empty() || !kernel.typed[p]) continue;
    if (kept_by_cache && kernel.default_point != p && !kept_by_cache->count(point_text(kernel, p))) {
      kernel.points[p].pruned = "not chosen in the tuning cache (--tune-cache)";
      continue;
    }
    CollectingDiagnosticConsumer collected;
    DiagnosticEngine point_diags(diags.sources(), collected, DiagnosticOptions{false, true, 1});
    lowered[p] = ir::lower_to_tile_ir(context, ast, values, *kernel.typed[p], point_diags, kernel.name);
    point_diags.flush();
    if (!lowered[p] || point_diags.has_errors()) {
      kernel.points[p].pruned = first_error(collected);
      lowered[p].reset();
    }
  }
  kernel.default_point = default_point(kernel);
  if (kept_count(kernel) == 0) {
    report_all_pruned(kernel, diags);
    return false;
  }
  std::vector<std::string> knob_names(kernel.knobs.begin(), kernel.knobs.end());
  std::vector<ir::Attribute> knob_attrs;
  for (const std::string& k : knob_names) knob_attrs.push_back(context.string_attr(k));
  std::vector<ir::Attribute> key_attrs;
  for (const std::string& k : kernel.key) key_attrs.push_back(context.string_attr(k));
  ir::Block& body = module->region(0).front();
  // A @jit launch of the kernel may have lowered it at the knobs' largest
  // values; the default variant takes its name.
  if (ir::Operation* stale = ir::lookup_function(module, kernel.name)) stale->erase();
  for (size_t p = 0; p < kernel.points.size(); ++p) {
    if (!lowered[p]) continue;
    std::string variant = variant_symbol(kernel, p);
    // The kernel becomes the variant; its helpers VARIANT.HELPER (another
    // point's helper of the same name may differ: its arguments' shapes
    // may depend on the knobs).
    std::map<std::string, std::string> renamed;
    std::vector<ir::Operation*> functions = ir::module_functions(lowered[p].get());
    for (ir::Operation* f : functions) {
      std::string name(f->symbol_name());
      renamed[name] = name == kernel.name ? variant : kernel.name + "$v" + std::to_string(p) + "." + name;
    }
    for (ir::Operation* f : functions) {
      std::string name(f->symbol_name());
      f->remove_from_block();
      f->set_attr("sym_name", context.string_attr(renamed[name]));
      rename_callees(context, f, renamed);
      if (name == kernel.name) {
        f->set_attr("autotune_of", context.string_attr(kernel.name));
        f->set_attr("autotune_knobs", context.array_attr(knob_attrs));
        f->set_attr("autotune_values", context.int_array_attr(kernel.points[p].values));
        f->set_attr("autotune_index", context.int_attr(static_cast<int64_t>(p)));
        if (!key_attrs.empty()) f->set_attr("autotune_key", context.array_attr(key_attrs));
        if (kernel.default_point == p) f->set_attr("autotune_default", context.unit_attr());
      }
      body.push_back(f);
    }
  }
  return true;
}

std::string tuning_report(const std::vector<AutotunedKernel>& kernels,
                          const std::vector<ir::GeneratedTuning>& generated) {
  std::string text;
  for (const AutotunedKernel& kernel : kernels) {
    text += "kernel " + kernel.name + ": " + std::to_string(kernel.points.size()) + " points, " +
            std::to_string(kept_count(kernel)) + " kept; key: ";
    if (kernel.key.empty()) {
      text += "every tensor extent, rounded up to a power of two";
    } else {
      for (size_t i = 0; i < kernel.key.size(); ++i) text += (i ? ", " : "") + kernel.key[i];
    }
    text += "\n";
    for (size_t p = 0; p < kernel.points.size(); ++p) {
      text += "  point " + std::to_string(p) + " (" + point_text(kernel, p) + "): ";
      if (!kernel.points[p].pruned.empty())
        text += "pruned: " + kernel.points[p].pruned;
      else
        text += "kept as " + variant_symbol(kernel, p) + (kernel.default_point == p ? " (default)" : "");
      text += "\n";
    }
  }
  for (const ir::GeneratedTuning& g : generated) {
    size_t kept = 0;
    for (const std::string& reason : g.pruned) kept += reason.empty() ? 1 : 0;
    text += "generated " + g.strategy + " kernel " + g.kernel + ": " + std::to_string(g.points.size()) + " points, " +
            std::to_string(kept) + " kept; key: every tensor extent, rounded up to a power of two";
    if (!g.fixed.empty()) text += "; fixed: " + g.fixed;
    text += "\n";
    for (size_t p = 0; p < g.points.size(); ++p) {
      text += "  point " + std::to_string(p) + " (";
      for (size_t i = 0; i < g.knobs.size(); ++i)
        text += (i ? ", " : "") + g.knobs[i] + "=" + std::to_string(g.points[p][i]);
      text += "): ";
      if (!g.pruned[p].empty())
        text += "pruned: " + g.pruned[p];
      else
        text += "kept as " + g.variants[p] + (g.default_point == p ? " (default)" : "");
      text += "\n";
    }
  }
  return text;
}

void bind_tuned_launches(ir::Operation* module, ir::Context& context, const std::vector<AutotunedKernel>& kernels) {
  std::vector<ir::Operation*> launches;
  module->walk([&](ir::Operation* op) {
    if (op->is(ir::OpKind::GraphLaunch) && op->has_attr("autotune_points")) launches.push_back(op);
  });
  for (ir::Operation* op : launches) {
    std::string of(op->string_attr("tune_of"));
    auto kernel = std::find_if(kernels.begin(), kernels.end(), [&](const AutotunedKernel& k) { return k.name == of; });
    std::vector<int64_t> points = op->attr("autotune_points").int_array();
    std::vector<ir::Value*> operands = op->operands();
    std::vector<ir::Value*> kept;
    std::vector<ir::Attribute> variants, texts;
    int64_t fallback = 0;
    for (size_t i = 0; i < points.size(); ++i) {
      auto p = static_cast<size_t>(points[i]);
      bool compiled = kernel != kernels.end() && p < kernel->points.size() && kernel->points[p].pruned.empty() &&
                      kernel->typed[p];
      if (!compiled) continue;
      if (kernel->default_point == p) fallback = static_cast<int64_t>(variants.size());
      variants.push_back(context.symbol_attr(variant_symbol(*kernel, p)));
      texts.push_back(context.string_attr(point_text(*kernel, p)));
      kept.insert(kept.end(), operands.begin() + static_cast<std::ptrdiff_t>(3 * i),
                  operands.begin() + static_cast<std::ptrdiff_t>(3 * i + 3));
    }
    if (variants.empty()) {  // the kernel was not compiled here: its first grid, untuned
      kept.assign(operands.begin(), operands.begin() + 3);
    }
    auto removed = static_cast<int64_t>(3 * points.size() - kept.size());
    kept.insert(kept.end(), operands.begin() + static_cast<std::ptrdiff_t>(3 * points.size()), operands.end());
    std::vector<int64_t> mut = op->attr("mut_operands").int_array();
    for (int64_t& m : mut) m -= removed;
    op->set_operands(kept);
    op->set_attr("mut_operands", context.int_array_attr(mut));
    op->remove_attr("autotune_points");
    if (variants.empty()) {
      for (std::string_view name : {"tune_of"}) op->remove_attr(name);
      continue;
    }
    op->set_attr("variants", context.array_attr(variants));
    op->set_attr("points", context.array_attr(texts));
    op->set_attr("tune_default", context.int_attr(fallback));
  }
}

}  // namespace tessera::driver
