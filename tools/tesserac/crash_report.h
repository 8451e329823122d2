// Crashes of the tesserac process: the signal handlers, and whose fault a
// crash is. In a compiler phase it is an internal compiler error naming the
// phase (exit 3). While `tesserac run` runs a kernel in-process (the CPU
// target), it is the kernel's: a run-time error naming the kernel (exit 1).
#pragma once

#include <string>

namespace tessera {

// The compiler phase running now ("lex", "parse", ..., "driver"), named by
// an internal-error report. Read by the signal handler.
inline const char* volatile g_current_phase = "driver";

// Installs the handlers of SIGSEGV, SIGBUS, SIGFPE, SIGILL and SIGABRT.
// Under AddressSanitizer they are left to the sanitizer (its reports say
// more), except while a kernel runs (kernel_crash_begin).
void install_crash_handlers();

// A kernel of `tesserac run` starts running in this process: until
// kernel_crash_end, a crash is reported as the kernel's (`kernel` on
// `device`; `bounds_checked`: whether it was compiled with bounds checks,
// which the message's advice depends on).
void kernel_crash_begin(const std::string& kernel, const std::string& device, bool bounds_checked);
// The launch returned. With bounds checks a later crash is the compiler's
// again; without, it is still blamed on the kernel (an out-of-bounds write
// that corrupted the heap is found by a later free).
void kernel_crash_end();

}  // namespace tessera
