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

}  // namespace proofline::zk::formats
