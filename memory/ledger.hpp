// The memory budget ledger: which partitions hold how many bytes of the
// budget, and which wait for it. Plain C++ (no actors, no threads); the memory
// manager actor owns the only instance and uses it from its own thread only.
//
// Problem: partitions are large (GiBs each); a prover that lets every
// synthesizer allocate when it likes either runs out of memory or, if it grants
// whatever fits, lets a stream of small new partitions starve an old large one.
//
// Design: requests wait in one queue ordered by (priority, highest first; job
// sequence, oldest first; partition index). Only the head of the queue can be
// granted, and only while the sum of reservations plus the head's bytes stays
// within the budget: there is no skipping ahead, so a request is never
// overtaken by a later one of the same or lower priority. A request larger than
// the whole budget could never be granted and is refused at once.
//
// Lifecycle of a request: submit() -> queued -> grant_next() -> reserved ->
// release() (any number of partial releases) -> release_all() -> gone.
// cancel() drops a request that is still queued.
//
// Charges: memory that exists whether or not anyone waits for it (the pinned
// pool, a backend's fixed buffers, a proving key once loaded) is charge()d:
// reserved at once, outside the queue. A permanent charge (the pool, fixed
// buffers) lowers what any request may ask for, so a request that could never
// fit beside it is refused at submit(). A key's charge comes after the key is
// already in memory, so it is taken even if it pushes reserved() over the
// budget for a while; nothing is granted until the sum is back under.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>

namespace proofline::memory {

/// A request's place in the grant order. Lower sorts first: higher priority,
/// then older job (smaller sequence number), then lower partition index.
struct grant_order {
  uint8_t priority = 1;  ///< larger is more urgent (low 0, normal 1, high 2, critical 3)
  uint64_t job_seq = 0;  ///< submission order of the job
  uint32_t index = 0;    ///< partition index within the job

  friend bool operator<(const grant_order& x, const grant_order& y) {
    if (x.priority != y.priority) return x.priority > y.priority;
    if (x.job_seq != y.job_seq) return x.job_seq < y.job_seq;
    return x.index < y.index;
  }
};

class ledger {
 public:
  /// A request as granted: the caller's id, its order and its bytes.
  struct granted {
    uint64_t id;
    grant_order order;
    uint64_t bytes;
  };

  /// A ledger for `budget` bytes (> 0).
  explicit ledger(uint64_t budget);

  /// The head of the queue: the next request grant_next() would consider.
  struct head_request {
    uint64_t id;
    uint64_t bytes;
  };

  /// Queues request `id` (unique among live requests) for `bytes`. Returns
  /// false, queueing nothing, when bytes exceed the budget less the permanent
  /// charges: such a request could never be granted. O(log n).
  bool submit(uint64_t id, grant_order order, uint64_t bytes);

  /// Grants the head of the queue if it fits beside the current reservations;
  /// nothing otherwise (never a later request instead). With `over_budget`,
  /// grants the head even if it does not fit (the caller's last resort when
  /// nothing else would ever be released). O(log n).
  std::optional<granted> grant_next(bool over_budget = false);

  /// Reserves `bytes` for `id` at once, outside the queue (memory that exists
  /// already or must: the pool, fixed backend buffers, a loaded key); may take
  /// reserved() over the budget. `permanent` charges also lower the largest
  /// request submit() accepts. Released like any reservation. O(1).
  void charge(uint64_t id, uint64_t bytes, bool permanent = false);

  /// Returns up to `bytes` of reservation `id` to the budget; the reservation
  /// stays (possibly at 0 bytes) until release_all(). Returns the bytes
  /// actually returned (0 for an unknown id).
  uint64_t release(uint64_t id, uint64_t bytes);

  /// Ends reservation `id`, returning whatever it still holds.
  uint64_t release_all(uint64_t id);

  /// Drops a queued (not yet granted) request; false if `id` is not queued.
  bool cancel(uint64_t id);

  uint64_t budget() const { return budget_; }
  /// Sum of the bytes every live reservation holds; above budget() only
  /// after a charge() that did not fit.
  uint64_t reserved() const { return reserved_; }
  /// Bytes of permanent charges (pool, fixed backend buffers).
  uint64_t permanent() const { return permanent_; }
  /// The largest request submit() accepts: budget less permanent charges.
  uint64_t request_limit() const { return budget_ - permanent_; }
  /// Budget not reserved (0 when over).
  uint64_t available() const { return reserved_ >= budget_ ? 0 : budget_ - reserved_; }
  /// Largest value reserved() has had.
  uint64_t peak_reserved() const { return peak_; }
  std::size_t queued() const { return queue_.size(); }
  std::size_t reservations() const { return held_.size(); }
  /// Bytes the head of the queue asks for, if any request is queued.
  std::optional<uint64_t> head_bytes() const;
  /// The head of the queue, if any request is queued.
  std::optional<head_request> head() const;
  /// The head of the queue fits beside the current reservations.
  bool head_fits() const;

 private:
  struct queue_key {
    grant_order order;
    uint64_t id;
    friend bool operator<(const queue_key& x, const queue_key& y) {
      if (x.order < y.order) return true;
      if (y.order < x.order) return false;
      return x.id < y.id;
    }
  };

  uint64_t budget_;
  uint64_t reserved_ = 0;
  uint64_t peak_ = 0;
  uint64_t permanent_ = 0;
  std::map<queue_key, uint64_t> queue_;                  // waiting: order -> bytes
  std::unordered_map<uint64_t, grant_order> queued_at_;  // waiting: id -> order
  std::unordered_map<uint64_t, uint64_t> held_;          // granted: id -> bytes held
  std::unordered_map<uint64_t, uint64_t> permanent_ids_;  // permanent charges: id -> bytes
};

/// The message for a request that exceeds the budget:
/// "partition needs 9.6 GiB, the memory budget is 8 GiB".
std::string too_large_message(uint64_t bytes, uint64_t budget);

/// The message for a request of `bytes` that can never be granted beside
/// `key_bytes` of its proving key and `permanent` bytes held for good (the
/// pinned pool, the backends' buffers): too_large_message when both are 0,
/// else "partition needs 600 MiB beside its proving key (500 MiB), the memory
/// budget is 1 GiB, of which 256 MiB is held by the pinned pool and the
/// backends' buffers".
std::string refusal_message(uint64_t bytes, uint64_t key_bytes, uint64_t budget,
                            uint64_t permanent);

}  // namespace proofline::memory
