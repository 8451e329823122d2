#include "tools/tesserac/diagnostic_flags.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <string_view>

namespace tessera {

const std::set<std::string, std::less<>> kDiagnosticSingleDashOptions = {"Werror", "ferror-limit", "fcolor-diagnostics",
                                                                         "fno-color-diagnostics"};

void DiagnosticFlags::add_to(CLI::App& app) {
  app.add_flag("--Werror", warnings_as_errors, "Turn warnings into errors (-Werror)");
  app.add_flag("-w", no_warnings, "Suppress all warnings");
  app.add_option("--ferror-limit", error_limit, "Stop after N errors; 0 for no limit (-ferror-limit=N)");
  app.add_option("--color", color, "Colour diagnostics: auto, always, never")
      ->check(CLI::IsMember({"auto", "always", "never"}));
  app.add_flag("--fcolor-diagnostics", color_on, "Same as --color=always (-fcolor-diagnostics)");
  app.add_flag("--fno-color-diagnostics", color_off, "Same as --color=never (-fno-color-diagnostics)");
}

DiagnosticOptions DiagnosticFlags::options(bool verify) const {
  return DiagnosticOptions{warnings_as_errors, no_warnings, verify ? 0u : error_limit};
}

TextPrinterOptions DiagnosticFlags::printer() const {
  std::string mode = color_on ? "always" : color_off ? "never" : color;
  if (mode == "always") return TextPrinterOptions{true};
  if (mode == "never") return TextPrinterOptions{false};
  const char* term = std::getenv("TERM");
  return TextPrinterOptions{::isatty(STDERR_FILENO) && std::getenv("NO_COLOR") == nullptr && term != nullptr &&
                            std::string_view(term) != "dumb"};
}

std::vector<std::string> normalize_arguments(int argc, char** argv, int first,
                                             const std::set<std::string, std::less<>>& single_dash) {
  std::vector<std::string> args;
  for (int i = first; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg.size() > 2 && arg[0] == '-' && arg[1] != '-') {
      std::string_view name(arg);
      name.remove_prefix(1);
      name = name.substr(0, name.find('='));
      if (single_dash.count(name) || kDiagnosticSingleDashOptions.count(name)) arg.insert(0, "-");
      // -O0 .. -O3, as in every compiler.
      if (arg.size() == 3 && arg[1] == 'O' && arg[2] >= '0' && arg[2] <= '3') arg = "--opt-level=" + arg.substr(2);
    }
    args.push_back(std::move(arg));
  }
  std::reverse(args.begin(), args.end());  // CLI11 takes them in reverse order
  return args;
}

}  // namespace tessera
