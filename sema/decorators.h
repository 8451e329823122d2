// The decorators of functions and classes (decorators.def).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace tessera::sema {

enum class Decorator : uint8_t {
#define TESSERA_DECORATOR(Name, Path) Name,
#define TESSERA_DECORATOR_ALIAS(Path, Name)
#include "sema/decorators.def"
};

// Looks a decorator up by its dotted path (canonical or alias).
std::optional<Decorator> lookup_decorator(std::string_view path);

}  // namespace tessera::sema
