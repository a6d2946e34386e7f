// Errors in input files. Every message names the file and the problem, e.g.
// "w3.wtns: 1520 witness values, circuit.zkey expects 1521".
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

namespace proofline::zk::formats {

class format_error : public std::runtime_error {
 public:
  format_error(std::string file, std::string problem)
      : std::runtime_error(file + ": " + problem), file_(std::move(file)), problem_(std::move(problem)) {}
  /// The offending file, as the user named it.
  const std::string& file() const noexcept { return file_; }
  /// What is wrong with it, without the file name.
  const std::string& problem() const noexcept { return problem_; }

 private:
  std::string file_;
  std::string problem_;
};

/// Bytes in memory read as if they were a file called `name` (a witness or
/// key handed over as a buffer): every reader that takes a path also takes
/// one of these, and its messages name `name`. A view: the bytes must stay
/// valid while the reader runs.
struct memory_file {
  std::string name;
  const void* data = nullptr;
  uint64_t size = 0;
};

}  // namespace proofline::zk::formats
