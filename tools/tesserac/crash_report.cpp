#include "tools/tesserac/crash_report.h"

#include <unistd.h>

#include <csignal>
#include <cstring>
#include <iterator>

namespace tessera {
namespace {

constexpr int kExitUserError = 1;
constexpr int kExitInternalError = 3;
constexpr int kSignals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};

// The kernel's crash message, in two parts around the signal's description;
// null outside a kernel. Built before the kernel runs: the handler only
// writes them (async-signal-safe).
std::string g_during_prefix, g_during_suffix, g_after_prefix, g_after_suffix;
bool g_bounds_checked = true;
const char* volatile g_kernel_crash_prefix = nullptr;
const char* volatile g_kernel_crash_suffix = nullptr;
struct sigaction g_previous[sizeof kSignals / sizeof kSignals[0]];
bool g_kernel_handlers_installed = false;

void write_text(const char* text) {
  (void)!::write(STDERR_FILENO, text, std::strlen(text));
}

const char* describe(int signal_number) {
  switch (signal_number) {
    case SIGSEGV:
      return "SIGSEGV, an invalid memory access";
    case SIGBUS:
      return "SIGBUS, an invalid memory access";
    case SIGFPE:
      return "SIGFPE, an arithmetic fault";
    case SIGILL:
      return "SIGILL, an illegal instruction";
    case SIGABRT:
      return "SIGABRT, an abort, such as the C library finding a corrupted heap";
    default:
      return "an unexpected signal";
  }
}

void write_signal_number(int signal_number) {
  char digits[3] = {static_cast<char>('0' + (signal_number / 10) % 10), static_cast<char>('0' + signal_number % 10),
                    '\0'};
  write_text(signal_number >= 10 ? digits : digits + 1);
}

extern "C" void handle_crash(int signal_number) {
  // Only async-signal-safe calls here.
  if (const char* prefix = g_kernel_crash_prefix) {
    write_text(prefix);
    write_text(": signal ");
    write_signal_number(signal_number);
    write_text(" (");
    write_text(describe(signal_number));
    write_text(")");
    write_text(g_kernel_crash_suffix);
    ::_exit(kExitUserError);
  }
  write_text("tesserac: error: internal compiler error: crashed in phase '");
  write_text(g_current_phase);
  write_text("' (signal ");
  write_signal_number(signal_number);
  write_text(")\nplease report this bug with the input file that caused it [internal.compiler-error]\n");
  ::_exit(kExitInternalError);
}

void set_handlers(struct sigaction* previous) {
  struct sigaction action {};
  action.sa_handler = handle_crash;
  sigemptyset(&action.sa_mask);
  // A kernel's lanes run on stacks of their own (fibers); SA_ONSTACK is
  // harmless without an alternate stack.
  action.sa_flags = SA_ONSTACK;
  for (size_t i = 0; i < std::size(kSignals); ++i) ::sigaction(kSignals[i], &action, previous ? &previous[i] : nullptr);
}

#if defined(__SANITIZE_ADDRESS__)
constexpr bool kSanitized = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif
#else
constexpr bool kSanitized = false;
#endif

}  // namespace

void install_crash_handlers() {
  if (kSanitized) return;  // the sanitizers' own reports are more useful than ours
  set_handlers(nullptr);
}

void kernel_crash_begin(const std::string& kernel, const std::string& device, bool bounds_checked) {
  g_kernel_crash_prefix = nullptr;
  g_during_prefix = "tesserac run: error: kernel '" + kernel + "' crashed on " + device;
  g_during_suffix = bounds_checked
                        ? "; a fault in the kernel's code although it was compiled with bounds checks (an integer "
                          "division by zero, a stack overflow, or a bug in tesserac: please report it with the input "
                          "file)\n"
                        : "; it was compiled with --no-bounds-check: run without it to have an out-of-bounds access "
                          "reported with its .tsr line\n";
  g_after_prefix = "tesserac run: error: crashed after kernel '" + kernel + "' ran on " + device;
  g_after_suffix =
      "; the kernel was compiled with --no-bounds-check and probably wrote out of bounds; run without "
      "--no-bounds-check to have the access reported with its .tsr line\n";
  g_bounds_checked = bounds_checked;
  g_kernel_crash_suffix = g_during_suffix.c_str();
  g_kernel_crash_prefix = g_during_prefix.c_str();
  g_current_phase = "running kernel";
  // Under a sanitizer too: the kernel's code is not instrumented, and its
  // crash is not the compiler's.
  if (kSanitized && !g_kernel_handlers_installed) {
    set_handlers(g_previous);
    g_kernel_handlers_installed = true;
  }
}

void kernel_crash_end() {
  g_current_phase = "driver";
  if (g_kernel_crash_prefix == nullptr) return;
  if (!g_bounds_checked) {
    g_kernel_crash_suffix = g_after_suffix.c_str();
    g_kernel_crash_prefix = g_after_prefix.c_str();
    return;
  }
  g_kernel_crash_prefix = nullptr;
  if (g_kernel_handlers_installed) {
    for (size_t i = 0; i < std::size(kSignals); ++i) ::sigaction(kSignals[i], &g_previous[i], nullptr);
    g_kernel_handlers_installed = false;
  }
}

}  // namespace tessera
