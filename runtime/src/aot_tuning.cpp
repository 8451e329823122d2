// tessAotLaunchTuned (tessera_aot.h): an AOT-compiled autotuned kernel
// launched through the tuner (tessera_tuner.h, docs/autotuning.md, "AOT").
// Only public runtime functions are used: the variants are the module's
// kernels whose autotune_of names the same kernel, launched with
// tessAotLaunch, which checks the arguments every time.
#include <fmt/format.h>

#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

#include "runtime_internal.h"
#include "tessera/tessera_aot.h"
#include "tessera/tessera_tuner.h"

namespace {

using tessera::rt::fail;

// "BM=64, BN=128" -> its knobs (names point into `names`).
std::vector<tessAotKnob> parse_point(const char* point, std::vector<std::string>& names) {
  std::vector<std::pair<std::string, int64_t>> parsed;
  std::string text = point ? point : "";
  size_t at = 0;
  while (at < text.size()) {
    size_t end = text.find(", ", at);
    if (end == std::string::npos) end = text.size();
    std::string item = text.substr(at, end - at);
    size_t eq = item.find('=');
    if (eq != std::string::npos) parsed.emplace_back(item.substr(0, eq), std::stoll(item.substr(eq + 1)));
    at = end + 2;
  }
  names.clear();
  for (auto& [name, value] : parsed) names.push_back(name);
  std::vector<tessAotKnob> knobs;
  for (size_t i = 0; i < parsed.size(); ++i) knobs.push_back({names[i].c_str(), parsed[i].second});
  return knobs;
}

struct Variant {
  uint32_t index = 0;
  uint32_t grid[3] = {1, 1, 1};
};

struct Launches {
  const tessAotModule* module;
  std::vector<Variant>* variants;
  tessDevice device;
  tessStream stream;
  size_t dynamic_shared_bytes;
  const void* const* args;
};

tessStatus run_variant(void* user, size_t v) {
  auto* l = static_cast<Launches*>(user);
  const Variant& variant = (*l->variants)[v];
  if (tessStatus s =
          tessAotLaunch(l->module, variant.index, l->device, l->stream, variant.grid, l->dynamic_shared_bytes, l->args))
    return s;
  return l->stream ? tessStreamSynchronize(l->stream) : tessDeviceSynchronize(l->device);
}

// The choices made in this process: (module, kernel, device, key) -> variant.
std::mutex& memo_mutex() {
  static std::mutex m;
  return m;
}
std::map<std::tuple<const tessAotModule*, uint32_t, std::string, std::string>, size_t>& memo() {
  static std::map<std::tuple<const tessAotModule*, uint32_t, std::string, std::string>, size_t> m;
  return m;
}

}  // namespace

extern "C" tessStatus tessAotLaunchTuned(const tessAotModule* module, uint32_t kernel_index, tessDevice device,
                                         tessStream stream, tessAotGridFunction grid, void* grid_user,
                                         size_t dynamic_shared_bytes, const void* const* args) {
  if (!module || kernel_index >= module->kernel_count || module->abi_version != TESS_AOT_ABI_VERSION)
    return tessAotLaunch(module, kernel_index, device, stream, nullptr, dynamic_shared_bytes, args);  // its message
  const tessAotKernel& k = module->kernels[kernel_index];
  if (!grid)
    return fail(TESS_ERROR_INVALID_VALUE, fmt::format("launching '{}' tuned: the grid function is null", k.name));
  if (!args && k.parameter_count)
    return fail(TESS_ERROR_INVALID_VALUE, fmt::format("launching '{}' tuned: `args` is null", k.name));
  if (stream) {
    tessDevice owner = nullptr;
    if (tessStatus s = tessStreamGetDevice(stream, &owner)) return s;
    if (!device) device = owner;
  }
  if (!device)
    return fail(TESS_ERROR_INVALID_VALUE, fmt::format("launching '{}' tuned: neither a stream nor a device", k.name));
  // The variants, in module order (the compiler writes them by point), each with its grid.
  std::vector<Variant> variants;
  std::vector<std::string> points;
  size_t default_variant = 0;
  const char* of = k.autotune_of ? k.autotune_of : k.name;
  for (uint32_t i = 0; i < module->kernel_count; ++i) {
    const tessAotKernel& candidate = module->kernels[i];
    if (i != kernel_index && (!candidate.autotune_of || std::strcmp(candidate.autotune_of, of) != 0)) continue;
    Variant v;
    v.index = i;
    std::vector<std::string> names;
    std::vector<tessAotKnob> knobs = parse_point(candidate.autotune_point, names);
    if (tessStatus s = grid(grid_user, knobs.data(), knobs.size(), v.grid))
      return fail(s, fmt::format("launching '{}' tuned: the grid function failed for {}", k.name,
                                 candidate.autotune_point ? candidate.autotune_point : "the kernel"));
    if (i == kernel_index) default_variant = variants.size();
    variants.push_back(v);
    points.push_back(candidate.autotune_point ? candidate.autotune_point : "");
  }
  // The key: every tensor argument's dtype and bucketed extents, or with
  // key=("n", ...) those dimensions' values (read from the first tensor
  // parameter that has each) and the dtypes.
  std::vector<std::string> key_names;
  if (k.autotune_key) {
    std::string names = k.autotune_key;
    for (size_t at = 0; at <= names.size();) {
      size_t comma = names.find(',', at);
      if (comma == std::string::npos) comma = names.size();
      if (comma > at) key_names.push_back(names.substr(at, comma - at));
      at = comma + 1;
    }
  }
  std::vector<tessTuneDimension> dimensions;
  for (const std::string& name : key_names) {
    bool found = false;
    for (uint32_t sym = 0; sym < k.symbol_count && !found; ++sym) {
      if (name != k.symbols[sym]) continue;
      for (uint32_t p = 0; p < k.parameter_count && !found; ++p) {
        const tessAotParameter& parameter = k.parameters[p];
        const auto* t = static_cast<const tessTensor*>(args[p]);
        if (!parameter.is_tensor || !t || !parameter.dims) continue;
        for (int32_t a = 0; a < parameter.rank && a < t->rank && !found; ++a)
          if (parameter.dims[a] == -1 - static_cast<int64_t>(sym)) {
            dimensions.push_back({k.symbols[sym], t->shape[a]});
            found = true;
          }
      }
    }
    if (!found)
      return fail(TESS_ERROR_INVALID_VALUE,
                  fmt::format("launching '{}' tuned: its key dimension '{}' is no tensor parameter's", k.name, name));
  }
  std::vector<tessTuneTensor> tensors;
  for (uint32_t p = 0; p < k.parameter_count; ++p) {
    if (!k.parameters[p].is_tensor) continue;
    const auto* t = static_cast<const tessTensor*>(args[p]);
    if (!t)
      return tessAotLaunch(module, kernel_index, device, stream, variants[default_variant].grid, dynamic_shared_bytes,
                           args);  // its message
    tensors.push_back({k.parameters[p].name, t->dtype, t->rank, t->shape});
  }
  char key[4096];
  // The compiler's version as tesserac run and tesserac tune write it (the
  // runtime is built with the compiler), so that their cache files serve here.
  if (tessStatus s =
          tessTuneMakeKey(tensors.data(), tensors.size(), dimensions.empty() ? nullptr : dimensions.data(),
                          dimensions.size(), "tesserac " TESSERA_VERSION, key, sizeof key))
    return s;
  char device_name[256];
  if (tessStatus s = tessDeviceGetName(device, device_name, sizeof device_name)) return s;
  auto memo_key = std::make_tuple(module, kernel_index, std::string(device_name), std::string(key));
  size_t chosen = default_variant;
  bool known = false;
  {
    std::lock_guard<std::mutex> lock(memo_mutex());
    auto it = memo().find(memo_key);
    if (it != memo().end()) {
      chosen = it->second;
      known = true;
    }
  }
  if (!known && variants.size() > 1) {
    // The timing runs write the mut tensors: keep copies and put them back.
    tessera::rt::TensorSnapshots saved(device);
    for (uint32_t p = 0; p < k.parameter_count; ++p)
      if (k.parameters[p].is_tensor && k.parameters[p].is_mut)
        if (tessStatus s = saved.save(static_cast<const tessTensor*>(args[p]))) return saved.restore(false), s;
    std::vector<const char*> point_texts;
    for (const std::string& p : points) point_texts.push_back(p.c_str());
    Launches launches{module, &variants, device, stream, dynamic_shared_bytes, args};
    tessTuneRequest request{};
    request.kernel = of;
    request.key = key;
    request.device = device_name;
    request.variants = point_texts.data();
    request.variant_count = point_texts.size();
    request.default_variant = default_variant;
    request.run = run_variant;
    request.user = &launches;
    request.timing_device = device;
    request.timing_stream = stream;
    tessTuneResult result{};
    // A variant that fails (bad arguments) fails the call with its message.
    tessStatus tuned = tessTune(&request, &result);
    if (tessStatus s = saved.restore(true); s) return s;
    if (tuned) return tuned;
    chosen = result.chosen;
    std::lock_guard<std::mutex> lock(memo_mutex());
    memo()[memo_key] = chosen;
  }
  return tessAotLaunch(module, variants[chosen].index, device, stream, variants[chosen].grid, dynamic_shared_bytes,
                       args);
}
