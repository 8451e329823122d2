// Writing outputs. A regular file (or a path where nothing is yet) is written
// atomically, so that a failed or interrupted run never leaves a
// half-written file: the data goes to a temporary file beside the target,
// which is renamed over it only when complete. A character device
// (/dev/null, a terminal) or a FIFO is written directly, as clang and the
// GNU tools do: renaming over it would replace the device node with a
// regular file. Standard output is "-". Shared by tesserac and tesserac-opt
// (docs/driver.md, "Outputs").
#pragma once

#include <string>
#include <string_view>

namespace tessera {

// Writes `contents` to `path`. Returns false and fills `error` on failure
// (the system's reason, or "Is a directory" and the like for a path that
// cannot be an output), leaving any previous regular file at `path` untouched.
bool write_output(const std::string& path, std::string_view contents, std::string& error);

// Whether `path` can receive an output, checked before a long run (tesserac
// run checks every --out before the kernel runs): "-", an existing regular
// file, character device or FIFO, or a new name in an existing directory.
// False with the reason in `error` otherwise. Permissions are left to the
// write itself.
bool output_path_usable(const std::string& path, std::string& error);

// Whether `path` is written directly rather than replaced: "-", a
// character device or a FIFO (following symbolic links).
bool output_is_stream(const std::string& path);

// Removes the regular file at `path` (or a symbolic link there), if there is
// one, after a failed run. Anything else at that path (a directory, a
// device, a FIFO) is left alone, and so are errors: the run already failed.
void remove_output_file(const std::string& path);

}  // namespace tessera
