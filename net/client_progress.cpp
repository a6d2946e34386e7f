#include "net/client_progress.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "base/text.hpp"

namespace proofline::net {

void finish_rate::observe(double now_ms, uint64_t finished) {
  if (finished == 0) return;
  if (!first_ms_) {
    first_ms_ = now_ms;
    first_ = last_ = finished;
    last_ms_ = now_ms;
    return;
  }
  if (finished > last_) {
    last_ = finished;
    last_ms_ = now_ms;
  }
}

std::optional<double> finish_rate::eta_ms(double now_ms, uint64_t total) const {
  if (first_ms_ && last_ >= total) return 0.0;
  if (!first_ms_ || last_ <= first_ || last_ms_ <= *first_ms_) return std::nullopt;
  const double per_partition = (last_ms_ - *first_ms_) / static_cast<double>(last_ - first_);
  const double left = per_partition * static_cast<double>(total - last_) - (now_ms - last_ms_);
  return std::max(0.0, left);
}

std::string format_duration(double ms) {
  if (ms < 1000) return base::fixed(ms, 0) + " ms";
  const double s = ms / 1000.0;
  if (s < 60) return base::fixed(s, 1) + " s";
  const auto whole = static_cast<long>(std::llround(s));
  if (whole < 3600) return fmt::format("{} min {:02} s", whole / 60, whole % 60);
  return fmt::format("{} h {:02} min", whole / 3600, (whole % 3600) / 60);
}

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
                     (eta_ms ? format_duration(*eta_ms) : "-") + "]" + detail;
  if (width > 3 && line.size() > width) line = line.substr(0, width - 3) + "...";
  return line;
}

}  // namespace proofline::net
