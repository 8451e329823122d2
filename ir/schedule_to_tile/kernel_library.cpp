#include "ir/schedule_to_tile/kernel_library.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <system_error>

#include "ir/core/ir_text.h"

// Set by ir/CMakeLists.txt; builds that compile this file alone (the
// fuzzers) have no build tree's stdlib.
#ifndef TESSERA_BUILD_STDLIB_DIR
#define TESSERA_BUILD_STDLIB_DIR ""
#endif

namespace tessera::ir {

std::string KernelInstance::key() const {
  std::string text = file;
  for (const auto& [name, value] : params) text += "." + name + "=" + value;
  return text;
}

std::string KernelInstance::symbol(const std::vector<int64_t>& point) const {
  std::string text = "__stdlib_" + kernel;
  for (const auto& param : params) text += "_" + param.second;
  for (size_t i = 0; i < point.size(); ++i) text += (i ? "x" : "_") + std::to_string(point[i]);
  return text;
}

namespace {

// The function of `library` that is the point of autotuned kernel `kernel`
// whose first knob values are `wanted` (the default point among several),
// or null with `error` listing the points.
Operation* autotune_point(Operation* library, const std::string& kernel, const std::vector<int64_t>& wanted,
                          std::string& error) {
  Operation* found = nullptr;
  std::string points;
  Attribute knob_names;
  for (Operation* f : library->region(0).front()) {
    if (!f->is(OpKind::Func) || f->string_attr("autotune_of") != kernel) continue;
    std::vector<int64_t> values = f->attr("autotune_values").int_array();
    knob_names = f->attr("autotune_knobs");
    std::string point;
    for (size_t i = 0; i < values.size(); ++i) point += (i ? "x" : "") + std::to_string(values[i]);
    points += (points.empty() ? "" : ", ") + point;
    if (values.size() < wanted.size() || !std::equal(wanted.begin(), wanted.end(), values.begin())) continue;
    if (!found || !found->has_attr("autotune_default")) found = f;
  }
  if (found) return found;
  std::string names;
  if (knob_names)
    for (size_t i = 0; i < knob_names.size(); ++i) names += (i ? " x " : "") + std::string(knob_names[i].string_value());
  error = points.empty() ? "the stdlib kernel '" + kernel + "' is not autotuned: it has one form"
                         : "the stdlib kernel '" + kernel + "' has the points (" + names + ") " + points;
  return nullptr;
}

}  // namespace

std::string default_stdlib_directory() {
  if (const char* env = std::getenv("TESSERA_STDLIB_DIR"); env && *env) return env;
  std::error_code error;
  std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", error);
  if (!error) {
    std::filesystem::path installed = exe.parent_path().parent_path() / "share" / "tessera" / "stdlib";
    if (std::filesystem::is_directory(installed, error)) return installed.string();
  }
  return TESSERA_BUILD_STDLIB_DIR;
}

Operation* DirectoryKernelLibrary::instantiate(Context& context, Operation* module, const KernelInstance& instance,
                                               std::string& error) {
  std::string symbol = instance.symbol();
  if (instance.knobs.empty())
    if (Operation* existing = lookup_function(module, symbol)) return existing;
  std::string path = directory_ + "/" + instance.key() + ".ir";
  SourceManager sources;
  std::string why;
  std::optional<FileId> file = sources.load_file(path, why);
  if (!file) {
    error = "the stdlib kernel '" + instance.key() + "' is not available (" + why +
            "); the stdlib directory is set by TESSERA_STDLIB_DIR or --stdlib-dir and installed in share/tessera/stdlib";
    return nullptr;
  }
  CollectingDiagnosticConsumer collected;
  DiagnosticEngine diags(sources, collected);
  OwningModule library = parse_module(context, sources, *file, diags);
  if (!library || diags.has_errors()) {
    error = "the stdlib file '" + path + "' does not parse (rebuild tesserac)";
    return nullptr;
  }
  Operation* kernel = lookup_function(library.get(), instance.kernel);
  if (!kernel || !kernel->has_attr("kernel")) {
    error = "the stdlib file '" + path + "' has no kernel '" + instance.kernel + "'";
    return nullptr;
  }
  if (!instance.knobs.empty()) {
    kernel = autotune_point(library.get(), instance.kernel, instance.knobs, error);
    if (!kernel) return nullptr;
    symbol = instance.symbol(kernel->attr("autotune_values").int_array());
    if (Operation* existing = lookup_function(module, symbol)) return existing;
  }
  // The kernel and the helpers it calls (inlined by the pipeline that made
  // the file, so usually none).
  Operation* copy = kernel->clone();
  copy->set_attr("sym_name", context.string_attr(symbol));
  copy->set_attr("stdlib", context.string_attr(instance.key()));
  // The point a schedule directive asked for, for the launch's grid.
  if (!instance.knobs.empty()) copy->set_attr("stdlib_point", kernel->attr("autotune_values"));
  // One point of an autotuned stdlib kernel: a kernel of its own here.
  for (const char* name : {"autotune_of", "autotune_knobs", "autotune_values", "autotune_index", "autotune_default",
                           "autotune_key"})
    copy->remove_attr(name);
  module->region(0).front().push_back(copy);
  return copy;
}

std::vector<std::vector<int64_t>> DirectoryKernelLibrary::autotune_points(Context& context,
                                                                          const KernelInstance& instance,
                                                                          std::vector<std::string>& knobs,
                                                                          size_t& default_point) {
  std::vector<std::vector<int64_t>> points;
  SourceManager sources;
  std::string why;
  std::optional<FileId> file = sources.load_file(directory_ + "/" + instance.key() + ".ir", why);
  if (!file) return points;
  CollectingDiagnosticConsumer collected;
  DiagnosticEngine diags(sources, collected);
  OwningModule library = parse_module(context, sources, *file, diags);
  if (!library || diags.has_errors()) return points;
  std::vector<std::pair<int64_t, Operation*>> variants;  // by index in the space
  for (Operation* f : library->region(0).front())
    if (f->is(OpKind::Func) && f->string_attr("autotune_of") == instance.kernel && f->attr("autotune_values"))
      variants.emplace_back(f->attr("autotune_index") ? f->attr("autotune_index").int_value() : 0, f);
  std::stable_sort(variants.begin(), variants.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  knobs.clear();
  default_point = 0;
  for (auto& [index, f] : variants) {
    if (knobs.empty())
      if (Attribute names = f->attr("autotune_knobs"))
        for (size_t i = 0; i < names.size(); ++i) knobs.emplace_back(names[i].string_value());
    if (f->has_attr("autotune_default")) default_point = points.size();
    points.push_back(f->attr("autotune_values").int_array());
  }
  return points;
}

}  // namespace tessera::ir
