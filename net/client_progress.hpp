// The progress line of `submit` and `await`, and its ETA:
//
//   [3/8 proofs, ETA 4.1 s] batch 2/4 other 1/4
//
// The count and ETA come first, so that cutting the line to the terminal's
// width drops job details before them. The ETA is base::finish_rate's: the
// rate of finished partitions (done or failed) since the first one the
// client saw finish, applied to those left.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace proofline::net {

/// One job of the line.
struct job_count {
  std::string id;  ///< shown with control characters escaped
  uint32_t done = 0;
  uint32_t total = 0;
  bool complete = false;  ///< left out of the details
};

/// The line, without a newline, at most `width` bytes when `width` > 0.
std::string client_progress_line(const std::vector<job_count>& jobs, std::optional<double> eta_ms,
                                 std::size_t width = 0);

}  // namespace proofline::net
