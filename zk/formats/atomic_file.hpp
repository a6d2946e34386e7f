// Writing output files atomically: the bytes go to a temporary file in the
// same directory, are flushed, and the file is renamed over the target, so a
// reader sees either the old file or the whole new one, never half of it.
#pragma once

#include <string>
#include <string_view>

namespace proofline::zk::formats {

/// Writes `contents` to `path` atomically, creating parent directories.
/// Throws std::runtime_error("<path>: <strerror>") on failure and leaves no
/// temporary file behind.
void write_file_atomic(const std::string& path, std::string_view contents);

/// Why files cannot be written into directory `dir` ("out/a: Permission
/// denied", "/proc/x: No such file or directory"), creating it (and its
/// parents) as write_file_atomic would; empty when a file could be created
/// there. Checked before work whose results would go there, so an unwritable
/// output fails at once instead of after the work. Leaves no file behind
/// (directories it created stay).
std::string writable_dir_problem(const std::string& dir);

}  // namespace proofline::zk::formats
