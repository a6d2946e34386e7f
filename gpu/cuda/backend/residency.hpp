// Key residency: a proving key's points (and its A and B, when they fit)
// uploaded to the device once, on first use or prepare(), and found again
// by every later call; a call that finds another call uploading the same
// key waits for that key only. What the runtime announces of a key's
// partitions (expect()) is kept for the table builds' decision.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <utility>

#include "gpu/cuda/backend/budget.hpp"
#include "gpu/cuda/backend/resident.hpp"
#include "gpu/cuda/backend/table_builds.hpp"
#include "gpu/cuda/cuda_backend.hpp"

namespace proofline::gpu::cuda::detail {

class key_residency {
 public:
  /// mu: the backend's lock, which guards the budget, the entries' fields
  /// and the announcements held here.
  key_residency(std::mutex& mu, device_budget& budget, table_builds& tables, const backend_options& opt)
      : mu_(mu), budget_(budget), tables_(tables), opt_(opt) {}

  /// The key's resident entry with its points on the device: found, waited
  /// for (another call is uploading this key: only calls needing this key
  /// wait), or uploaded here on stream s without holding the lock. Takes
  /// the backend's lock.
  template <class C>
  std::shared_ptr<resident_key<C>> acquire(const key_ptr& kp, const proving_key<C>& key, cudaStream_t s);

  /// The runtime queued `partitions` more of a key, resident or not yet.
  /// Caller holds the backend's lock.
  void expect(const key_ptr& key, std::size_t partitions);

 private:
  /// The runtime queued `partitions` more of a resident key.
  static void hint(resident_base& rk, std::size_t partitions);

  /// The key's points on stream s (synchronised before returning), with
  /// their window tables when `fixed`.
  template <class C>
  std::shared_ptr<key_points<C>> upload_points(const proving_key<C>& key, bool fixed, cudaStream_t s) const;

  /// The key's A and B laid out by row (built here, on the host) on stream
  /// s, synchronised before returning.
  template <class C>
  std::shared_ptr<key_matrices<C>> upload_matrices(const proving_key<C>& key, cudaStream_t s) const;

  /// Uploads points (pageable: the call returns once they are staged) and,
  /// for a fixed-base shape, precomputes their window multiples in place.
  template <class A>
  void put(device_buffer<A>& d, const zk::groth16::key_vector<A>& h, const msm::shape& sh, cudaStream_t s) const;

  std::mutex& mu_;
  device_budget& budget_;
  table_builds& tables_;
  const backend_options& opt_;
  std::condition_variable key_ready_;  ///< a key's upload finished or failed
  /// Partitions announced for keys not resident yet, taken when they are uploaded.
  std::map<const proving_key_base*, std::pair<std::weak_ptr<const proving_key_base>, std::size_t>> hints_;
};

}  // namespace proofline::gpu::cuda::detail
