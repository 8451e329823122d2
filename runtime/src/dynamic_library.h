// Libraries the runtime loads at run time with dlopen (the CUDA driver, NCCL,
// the MPI plugin) and their tables of entry points. Each library lists its
// functions once, in a .def X-macro table (name, signature), from which the
// struct of function pointers and its resolution are generated:
//
//   struct NcclFunctions {
//   #define TESS_NCCL_FUNCTION(name, required, signature) std::add_pointer_t<signature> name = nullptr;
//   #include "collectives/nccl_functions.def"
//   };
//   ...
//   #define TESS_NCCL_FUNCTION(name, required, signature) resolve_function(library, f.name, #name, ...);
//
// so adding an entry point is one line.
#pragma once

#include <dlfcn.h>

#include <string>

namespace tessera::rt {

// dlopen's message for the last failure, or `fallback`.
inline std::string dl_error(const char* fallback = "dlopen failed") {
  const char* error = dlerror();
  return error ? error : fallback;
}

// Resolves `name` in `library` into `function` (the versioned symbol first
// when given, e.g. cuMemAlloc_v2). A missing symbol leaves `function` null
// and, when `missing` is given, appends the name to it (comma-separated).
template <class Function>
void resolve_function(void* library, Function*& function, const char* name, const char* versioned = nullptr,
                      std::string* missing = nullptr) {
  void* symbol = versioned ? dlsym(library, versioned) : nullptr;
  if (!symbol) symbol = dlsym(library, name);
  if (!symbol && missing) *missing += (missing->empty() ? "" : ", ") + std::string(name);
  function = reinterpret_cast<Function*>(symbol);
}

}  // namespace tessera::rt
