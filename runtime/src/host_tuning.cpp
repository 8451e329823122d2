// tessHostLaunchTuned (tessera_host.h): a launch of an autotuned kernel from
// compiled @jit code, through the tuner (tessera_tuner.h, docs/autotuning.md,
// "Launches from @jit code"). The compiler passes every variant's name,
// point, grid and group, and the tensor arguments as tessTensors (the key,
// and the copies of `mut` tensors while the variants are timed).
#include <fmt/format.h>

#include <map>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

#include "host_context.h"
#include "runtime_internal.h"
#include "tessera/tessera_host.h"
#include "tessera/tessera_tuner.h"

namespace {

using tessera::rt::fail;

struct Variant {
  std::string name, point;
};

struct KeyDimension {
  std::string name;
  size_t tensor = 0, axis = 0;
};

struct Tuning {
  std::string kernel;
  size_t default_variant = 0;
  std::vector<Variant> variants;
  std::vector<std::pair<std::string, bool>> tensors;  // name, mut
  std::vector<KeyDimension> key;
};

// The compiler's text (tessera_host.h); false when it is malformed.
bool parse_tuning(const char* text, Tuning& t) {
  std::vector<std::string> lines;
  std::string line;
  for (const char* c = text; *c; ++c) {
    if (*c == '\n') {
      lines.push_back(line);
      line.clear();
    } else {
      line += *c;
    }
  }
  if (lines.size() < 3) return false;
  t.kernel = lines[0];
  try {
    t.default_variant = std::stoul(lines[1]);
    for (size_t i = 2; i < lines.size(); ++i) {
      const std::string& l = lines[i];
      if (l.size() < 2 || l[1] != ' ') return false;
      std::vector<std::string> fields;
      size_t at = 2;
      while (true) {
        size_t tab = l.find('\t', at);
        fields.push_back(l.substr(at, tab == std::string::npos ? std::string::npos : tab - at));
        if (tab == std::string::npos) break;
        at = tab + 1;
      }
      if (l[0] == 'v' && fields.size() == 2) {
        t.variants.push_back({fields[0], fields[1]});
      } else if (l[0] == 't' && fields.size() == 2) {
        t.tensors.emplace_back(fields[0], fields[1] == "1");
      } else if (l[0] == 'k' && fields.size() == 3) {
        t.key.push_back({fields[0], std::stoul(fields[1]), std::stoul(fields[2])});
      } else {
        return false;
      }
    }
  } catch (const std::exception&) {
    return false;
  }
  if (t.variants.empty() || t.default_variant >= t.variants.size()) return false;
  for (const KeyDimension& k : t.key)
    if (k.tensor >= t.tensors.size()) return false;
  return true;
}

struct Launches {
  tessHostContext context;
  const Tuning* tuning;
  const uint32_t* grids;
  const uint32_t* groups;
  void** args;
};

tessStatus launch(const Launches& l, size_t v) {
  return tessHostLaunch(l.context, l.tuning->variants[v].name.c_str(), l.grids + 3 * v, l.groups + 3 * v, l.args);
}

tessStatus run_variant(void* user, size_t v) {
  auto* l = static_cast<Launches*>(user);
  if (tessStatus s = launch(*l, v)) return s;
  return l->context->stream ? tessStreamSynchronize(l->context->stream) : tessDeviceSynchronize(l->context->device);
}

// The choices made in this process: (module, kernel, device, key) -> variant name.
std::mutex& memo_mutex() {
  static std::mutex m;
  return m;
}
std::map<std::tuple<tessModule, std::string, std::string, std::string>, std::string>& memo() {
  static std::map<std::tuple<tessModule, std::string, std::string, std::string>, std::string> m;
  return m;
}

}  // namespace

extern "C" tessStatus tessHostLaunchTuned(tessHostContext context, const char* tuning, const uint32_t* grids,
                                          const uint32_t* groups, void** args, const tessTensor* const* tensors) {
  if (!context || !tuning || !grids || !groups)
    return fail(TESS_ERROR_INVALID_VALUE, "tessHostLaunchTuned: a null context, tuning text, grids or groups");
  Tuning t;
  if (!parse_tuning(tuning, t))
    return fail(TESS_ERROR_INVALID_VALUE, "tessHostLaunchTuned: the tuning text is malformed");
  if (!t.tensors.empty() && !tensors)
    return fail(TESS_ERROR_INVALID_VALUE, fmt::format("launching '{}' tuned: `tensors` is null", t.kernel));
  Launches launches{context, &t, grids, groups, args};
  // Without elements every variant's grid is empty (tessHostLaunch skips
  // it): nothing to time or to remember for this key.
  if (grids[0] == 0 || grids[1] == 0 || grids[2] == 0) return launch(launches, t.default_variant);
  if (t.variants.size() == 1) return launch(launches, 0);
  // The key: as tesserac run's and tessAotLaunchTuned's.
  std::vector<tessTuneTensor> key_tensors;
  for (size_t i = 0; i < t.tensors.size(); ++i)
    key_tensors.push_back({t.tensors[i].first.c_str(), tensors[i]->dtype, tensors[i]->rank, tensors[i]->shape});
  std::vector<tessTuneDimension> dimensions;
  for (const KeyDimension& k : t.key) {
    if (static_cast<int32_t>(k.axis) >= tensors[k.tensor]->rank)
      return fail(TESS_ERROR_INVALID_VALUE, "tessHostLaunchTuned: a key dimension's axis is out of range");
    dimensions.push_back({k.name.c_str(), tensors[k.tensor]->shape[k.axis]});
  }
  char key[4096];
  if (tessStatus s = tessTuneMakeKey(key_tensors.data(), key_tensors.size(), t.key.empty() ? nullptr : dimensions.data(),
                                     dimensions.size(), "tesserac " TESSERA_VERSION, key, sizeof key))
    return s;
  char device_name[256];
  if (tessStatus s = tessDeviceGetName(context->device, device_name, sizeof device_name)) return s;
  auto memo_key = std::make_tuple(context->module, t.kernel, std::string(device_name), std::string(key));
  {
    std::lock_guard<std::mutex> lock(memo_mutex());
    if (auto it = memo().find(memo_key); it != memo().end())
      for (size_t v = 0; v < t.variants.size(); ++v)
        if (t.variants[v].point == it->second) return launch(launches, v);
  }
  // The timing runs write the mut tensors: keep copies and put them back.
  tessera::rt::TensorSnapshots saved(context->device);
  for (size_t i = 0; i < t.tensors.size(); ++i)
    if (t.tensors[i].second)
      if (tessStatus s = saved.save(tensors[i])) return saved.restore(false), s;
  std::vector<const char*> points;
  for (const Variant& v : t.variants) points.push_back(v.point.c_str());
  tessTuneRequest request{};
  request.kernel = t.kernel.c_str();
  request.key = key;
  request.device = device_name;
  request.variants = points.data();
  request.variant_count = points.size();
  request.default_variant = t.default_variant;
  request.run = run_variant;
  request.user = &launches;
  request.timing_device = context->device;
  request.timing_stream = context->stream;
  tessTuneResult result{};
  tessStatus tuned = tessTune(&request, &result);
  if (tessStatus s = saved.restore(true); s) return s;
  if (tuned) return tuned;
  {
    std::lock_guard<std::mutex> lock(memo_mutex());
    memo()[memo_key] = t.variants[result.chosen].point;
  }
  return launch(launches, result.chosen);
}
