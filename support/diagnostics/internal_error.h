// Compiler bugs, kept apart from user errors (Halide's internal_assert).
//
// A user error is a diagnostic (see diagnostics.h) and a non-zero exit of 1.
// An internal error means tesserac itself is wrong: it is thrown as an
// `InternalError` naming the phase, caught once by the driver, printed as
// "internal compiler error" and turned into exit code 3.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

namespace tessera {

class InternalError : public std::runtime_error {
 public:
  InternalError(std::string_view phase, const std::string& message) : std::runtime_error(message), phase_(phase) {}
  const std::string& phase() const { return phase_; }

 private:
  std::string phase_;
};

[[noreturn]] inline void internal_error(std::string_view phase, const std::string& message) {
  throw InternalError(phase, message);
}

inline void internal_check(bool condition, std::string_view phase, const char* message) {
  if (!condition) internal_error(phase, message);
}

}  // namespace tessera
