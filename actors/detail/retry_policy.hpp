// Where a partition is proved again after a retryable failure (a backend
// error, a proof that failed its pairing check), and when to stop:
//
//   1st retry  on the same backend (a transient fault), unless the failure
//              lost that device (gpu::device_lost): then as the 2nd retry;
//   2nd retry  on another primary backend (another GPU) when there is one,
//              else on the fallback backend (the CPU) when there is one;
//   then       the partition fails, naming itself and the last backend.
//
// With one backend and no fallback a partition is retried once. The job
// registry asks; the scheduler places the retry (actors/scheduler.hpp).
//
// A proof that fails its pairing check on two backends for the same witness
// (or twice on the only backend there is) is not a backend's fault: the
// witness does not satisfy the circuit. The registry then fails the
// partition as an input error naming the witness and retries no further.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "messages/catalogue.hpp"

namespace proofline {

/// The backends a runtime proves on: primary indices 0 .. devices-1, and
/// the fallback at index `devices` when there is one.
struct retry_targets {
  int32_t devices = 1;
  bool fallback = false;
  int32_t fallback_index() const { return fallback ? devices : -1; }
};

/// Retries of one partition at most (same backend, then another).
inline constexpr uint32_t max_placed_retries = 2;

/// Where retry number `retries + 1` goes after a failure on backend
/// `failed_on` (-1: unknown), or nothing when the partition should fail.
std::optional<placement> next_placement(const retry_targets& t, uint32_t retries,
                                        int32_t failed_on, bool device_lost);

/// Whether the pairing-check failures of one partition, on the backends
/// `failed_on` (names, in order: "cuda:0", "cpu:fallback", a node's name),
/// show that its witness does not satisfy the circuit: two different
/// backends failed it, or, when `only_backend` (a runtime proving on one
/// backend and no other), that one backend failed it twice.
bool witness_at_fault(const std::vector<std::string>& failed_on, bool only_backend);

/// Failure `f` of a partition of the job of key `zkey` whose proof failed
/// its pairing check: its backend is added to `failed_on` (the backends that
/// failed the check before), and when that shows the witness at fault
/// (witness_at_fault) the failure becomes an input error naming `witness`,
/// not retried; otherwise it is `f`.
partition_failure judge_check_failure(const partition_failure& f,
                                      std::vector<std::string>& failed_on,
                                      const retry_targets& t, const std::string& witness,
                                      const std::string& zkey);

/// Where `again` sends a partition that failed on backend `failed_on`
/// (named `failed_name`), as a log line says it: "any backend", "a backend
/// other than cuda:0", "cuda:0", "the fallback backend".
std::string placement_text(const placement& again, int32_t failed_on,
                           const std::string& failed_name);

}  // namespace proofline
