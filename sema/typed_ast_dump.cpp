#include <fmt/format.h>

#include "sema/sema.h"

namespace tessera::sema {

std::string dump_typed_ast(const TypedModule& module, const Ast& ast, const SourceManager& sources,
                           const ValueStores& values) {
  std::vector<const FunctionInfo*> functions(ast.size(), nullptr);
  for (const FunctionInfo& f : module.functions) functions[f.def.index] = &f;
  return dump_ast(ast, sources, values, [&](NodeId id) -> std::string {
    if (const FunctionInfo* f = functions[id.index]) {
      std::string text = fmt::format(" kind={} effect={}", function_kind_name(f->kind), effect_name(f->effect));
      if (f->kind == FunctionKind::Kernel) {
        text += " group=(";
        for (size_t i = 0; i < f->group_shape.size(); ++i) text += (i ? ", " : "") + std::to_string(f->group_shape[i]);
        text += ")";
        if (f->grid_rank != 3) text += fmt::format(" grid_rank={}", f->grid_rank);
        if (f->shared_budget) text += fmt::format(" shared_budget={}", *f->shared_budget);
        text += fmt::format(" shared_bytes={}", f->shared_bytes);
      }
      return text;
    }
    TypeId type = module.node_types[id.index];
    if (!type.valid()) return "";
    return " : " + module.types.to_string(type);
  });
}

}  // namespace tessera::sema
