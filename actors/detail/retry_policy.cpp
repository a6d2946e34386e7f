#include "actors/detail/retry_policy.hpp"

#include <fmt/format.h>

namespace proofline {

std::optional<placement> next_placement(const retry_targets& t, uint32_t retries,
                                        int32_t failed_on, bool device_lost) {
  if (retries >= max_placed_retries) return std::nullopt;
  if (t.fallback && failed_on == t.fallback_index()) return std::nullopt;  // the last resort failed
  // First retry: the same backend, unless that device is gone.
  if (retries == 0 && !device_lost) return placement{failed_on, false};
  // Then another primary backend, or the fallback.
  if (t.devices > 1 && failed_on >= 0) return placement{failed_on, true};
  if (t.fallback) return placement{t.fallback_index(), false};
  // No other backend: a lost device's partition gets its one retry wherever
  // the scheduler still finds a worker; otherwise the partition fails.
  if (retries == 0) return placement{};
  return std::nullopt;
}

bool witness_at_fault(const std::vector<std::string>& failed_on, bool only_backend) {
  for (std::size_t i = 1; i < failed_on.size(); ++i)
    if (failed_on[i] != failed_on[0]) return true;
  return only_backend && failed_on.size() >= 2;
}

std::string placement_text(const placement& again, int32_t failed_on,
                           const std::string& failed_name) {
  if (again.device < 0) return "any backend";
  if (again.avoid) return "a backend other than " + failed_name;
  return again.device == failed_on ? failed_name : "the fallback backend";
}

partition_failure judge_check_failure(const partition_failure& f,
                                      std::vector<std::string>& failed_on,
                                      const retry_targets& t, const std::string& witness,
                                      const std::string& zkey) {
  failed_on.push_back(f.spans.backend.empty() ? "its backend" : f.spans.backend);
  const bool only_backend = f.spans.gpu >= 0 && t.devices == 1 && !t.fallback;
  if (!witness_at_fault(failed_on, only_backend)) return f;
  std::string backends;
  for (std::size_t i = 0; i < failed_on.size(); ++i)
    backends += (i == 0 ? "" : i + 1 == failed_on.size() ? " and " : ", ") + failed_on[i];
  partition_failure w = f;
  w.retryable = false;
  w.device_lost = false;
  w.error = {witness, fmt::format("{}: the witness does not satisfy the circuit of {}: its "
                                  "proofs failed the pairing check on {}, not a backend fault",
                                  witness, zkey, backends)};
  return w;
}

}  // namespace proofline
