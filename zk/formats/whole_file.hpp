// Reading a small input file (a job file, a witness sent inline, a proof
// read back) whole, with the checks every untrusted path needs: it must be a
// regular file (a FIFO or a device is refused at once, never waited on or
// read forever), and no larger than the caller's limit.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace proofline::zk::formats {

/// The bytes of the regular file `path`, at most `max_bytes` of them.
/// Throws format_error(path, problem): cannot open, not a regular file,
/// larger than the limit, read error.
std::string read_whole_file(const std::string& path, uint64_t max_bytes);

/// The same, as bytes (witnesses sent inline), read straight into the vector.
std::vector<uint8_t> read_whole_file_bytes(const std::string& path, uint64_t max_bytes);

}  // namespace proofline::zk::formats
