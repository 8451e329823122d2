#include "sema/decorators.h"

namespace tessera::sema {

std::optional<Decorator> lookup_decorator(std::string_view path) {
#define TESSERA_DECORATOR(Name, Path) \
  if (path == Path) return Decorator::Name;
#define TESSERA_DECORATOR_ALIAS(Path, Name) \
  if (path == Path) return Decorator::Name;
#include "sema/decorators.def"
  return std::nullopt;
}

}  // namespace tessera::sema
