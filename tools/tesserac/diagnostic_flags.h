// The diagnostic flags tesserac and `tesserac run` share: -w, -Werror,
// -ferror-limit=N, --color=auto|always|never (-fcolor-diagnostics,
// -fno-color-diagnostics), and the clang-style single-dash spellings of
// long options that CLI11 only knows with two dashes.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "support/diagnostics/diagnostics.h"

namespace tessera {

struct DiagnosticFlags {
  bool warnings_as_errors = false;
  bool no_warnings = false;
  uint32_t error_limit = 20;
  std::string color = "auto";
  bool color_on = false;
  bool color_off = false;

  // Registers the flags on `app`.
  void add_to(CLI::App& app);
  // After parsing.
  DiagnosticOptions options(bool verify = false) const;
  TextPrinterOptions printer() const;
};

// argv[first..argc) with the single-dash long options of `single_dash`
// (and -O0..-O3) given their second dash, reversed as CLI11's parse wants them.
std::vector<std::string> normalize_arguments(int argc, char** argv, int first,
                                             const std::set<std::string, std::less<>>& single_dash);

// The single-dash long options of the diagnostic flags.
extern const std::set<std::string, std::less<>> kDiagnosticSingleDashOptions;

}  // namespace tessera
