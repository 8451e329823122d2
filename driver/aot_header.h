// The C++ header of an AOT object (docs/aot.md): one typed function per
// kernel and per @jit function in a namespace named after the .tsr file.
#pragma once

#include <string>
#include <vector>

#include "codegen/aot.h"

namespace tessera::driver {

// A C++ identifier made from `text` (a file stem, a parameter name): other
// characters become '_', a leading digit gets a '_' in front, and C++
// keywords get a '_' appended.
std::string cxx_identifier(const std::string& text);

// The header's text. `object_name` is only named in its comment.
std::string aot_header(const std::string& name_space, const std::string& source, const std::string& object_name,
                       const std::vector<codegen::AotKernel>& kernels,
                       const std::vector<codegen::AotKernel>& functions, codegen::AotImageKind image,
                       const std::string& archs);

}  // namespace tessera::driver
