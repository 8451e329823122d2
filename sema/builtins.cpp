#include "sema/builtins.h"

#include <string>
#include <unordered_map>
#include <unordered_set>

namespace tessera::sema {

namespace {

const std::vector<BuiltinInfo>& table() {
  static const std::vector<BuiltinInfo> builtins = {
#define TESSERA_BUILTIN(Name, Path, Context, Effect_, Signature_) \
  {BuiltinId::Name, Path, CallContext::Context, Effect::Effect_, Signature::Signature_},
#define TESSERA_BUILTIN_ALIAS(Path, Name)
#include "sema/builtins.def"
  };
  return builtins;
}

struct Index {
  std::unordered_map<std::string_view, BuiltinId> by_path;
  std::unordered_set<std::string> namespaces;
  std::vector<std::string_view> paths;
};

const Index& index() {
  static const Index built = [] {
    Index idx;
    auto add = [&](std::string_view path, BuiltinId id) {
      idx.by_path.emplace(path, id);
      idx.paths.push_back(path);
      for (size_t dot = path.find('.'); dot != std::string_view::npos; dot = path.find('.', dot + 1)) {
        idx.namespaces.emplace(path.substr(0, dot));
      }
    };
#define TESSERA_BUILTIN(Name, Path, Context, Effect_, Signature_) add(Path, BuiltinId::Name);
#define TESSERA_BUILTIN_ALIAS(Path, Name) add(Path, BuiltinId::Name);
#include "sema/builtins.def"
    // `op` and `schedule` are namespaces of the seeds even where empty today.
    idx.namespaces.emplace("op");
    idx.namespaces.emplace("schedule");
    return idx;
  }();
  return built;
}

}  // namespace

std::string_view effect_name(Effect effect) {
  switch (effect) {
    case Effect::Pure:
      return "pure";
    case Effect::Random:
      return "random";
    case Effect::Movement:
      return "movement";
    case Effect::State:
      return "state";
    case Effect::Collective:
      return "collective";
    case Effect::Memory:
      return "memory";
    case Effect::Io:
      return "io";
  }
  return "pure";
}

const BuiltinInfo& builtin_info(BuiltinId id) {
  return table()[static_cast<size_t>(id)];
}

std::optional<BuiltinId> lookup_builtin(std::string_view path) {
  const auto& by_path = index().by_path;
  auto it = by_path.find(path);
  if (it == by_path.end()) return std::nullopt;
  return it->second;
}

bool is_builtin_namespace(std::string_view prefix) {
  return index().namespaces.count(std::string(prefix)) > 0;
}

const std::vector<std::string_view>& all_builtin_paths() {
  return index().paths;
}

}  // namespace tessera::sema
