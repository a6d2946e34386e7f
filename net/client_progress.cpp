#include "net/client_progress.hpp"

#include "base/text.hpp"

namespace proofline::net {

std::string client_progress_line(const std::vector<job_count>& jobs, std::optional<double> eta_ms,
                                 std::size_t width) {
  uint64_t done = 0, total = 0;
  std::string detail;
  for (const auto& j : jobs) {
    done += j.done;
    total += j.total;
    if (!j.complete)
      detail += " " + base::escape_controls(j.id) + " " + std::to_string(j.done) + "/" +
                std::to_string(j.total);
  }
  std::string line = "[" + std::to_string(done) + "/" + std::to_string(total) + " proofs, ETA " +
                     (eta_ms ? base::duration_text(*eta_ms) : "-") + "]" + detail;
  if (width > 3 && line.size() > width) line = line.substr(0, width - 3) + "...";
  return line;
}

}  // namespace proofline::net
