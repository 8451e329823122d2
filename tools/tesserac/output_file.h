// Writing outputs so that a failed or interrupted run never leaves a
// half-written file: data goes to a temporary file beside the target, which
// is renamed over it only when complete.
#pragma once

#include <string>
#include <string_view>

namespace tessera {

// Writes `contents` to `path` ("-" is standard output). Returns false and
// fills `error` on failure, leaving any previous file at `path` untouched.
bool write_output_atomically(const std::string& path, std::string_view contents, std::string& error);

// Removes the regular file at `path`, if there is one, after a failed run.
// Anything else at that path (a directory, a device) is left alone, and so
// are errors: the run already failed.
void remove_output_file(const std::string& path);

}  // namespace tessera
