#include "ir/core/op_kind.h"

#include <algorithm>
#include <array>
#include <string>
#include <unordered_map>

namespace tessera::ir {
namespace {

using namespace trait;

struct OpKindInfo {
  std::string_view name;
  uint32_t traits;
};

constexpr OpKindInfo kOpKinds[] = {
#define TESSERA_IR_OP(Name, Spelling, Traits) {Spelling, Traits},
#include "ir/core/op_kinds.def"
#undef TESSERA_IR_OP
};

}  // namespace

std::string_view op_kind_name(OpKind kind) { return kOpKinds[static_cast<size_t>(kind)].name; }
uint32_t op_kind_traits(OpKind kind) { return kOpKinds[static_cast<size_t>(kind)].traits; }
size_t op_kind_count() { return std::size(kOpKinds); }

std::optional<OpKind> op_kind_by_name(std::string_view name) {
  static const auto* by_name = [] {
    auto* map = new std::unordered_map<std::string_view, OpKind>();
    for (size_t i = 0; i < std::size(kOpKinds); ++i) map->emplace(kOpKinds[i].name, static_cast<OpKind>(i));
    return map;
  }();
  auto it = by_name->find(name);
  if (it == by_name->end()) return std::nullopt;
  return it->second;
}

}  // namespace tessera::ir
