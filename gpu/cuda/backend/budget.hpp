// The CUDA backend's device-memory budget: every byte it holds (resident
// keys, tables being built, NTT tables, lane scratch) counted against one
// limit, and the least recently used keys that no call holds evicted to
// make room. Memory comes from the stream-ordered pool where the device
// has one, so that freeing it never waits for the device.
//
// Not thread-safe on its own: every call but alloc() is made with the
// backend's lock held, the lock that also guards the entries' fields.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "gpu/cuda/backend/resident.hpp"
#include "gpu/cuda/resources.cuh"

namespace proofline::gpu::cuda::detail {

class device_budget {
 public:
  /// limit: bytes it may count; pools: the device has a stream-ordered pool.
  device_budget(std::size_t limit, bool pools);

  std::size_t limit() const { return limit_; }
  /// Bytes under the limit not counted yet (0 when over it).
  std::size_t free_bytes() const { return limit_ > used_ ? limit_ - used_ : 0; }
  void charge(std::size_t bytes) { used_ += bytes; }
  void release(std::size_t bytes) { used_ -= bytes; }
  /// The next use's stamp for resident_base::last_use (larger: more recent).
  uint64_t tick() { return ++tick_; }

  /// Device memory for keys, tables and scratch: from the stream-ordered
  /// pool where the device has one, so that freeing it never waits for the
  /// device (a table build may be running). Needs no lock.
  template <class T>
  device_buffer<T> alloc(std::size_t count) const {
    return pools_ ? device_buffer<T>(count, alloc_stream_->get()) : device_buffer<T>(count);
  }

  /// The entry of `key`, or null when the budget holds none.
  std::shared_ptr<resident_base>* find(const proving_key_base* key);
  /// Holds rk for `key`, its bytes (rk->bytes) counted.
  void admit(const proving_key_base* key, std::shared_ptr<resident_base> rk);
  /// Lets go of `key`'s entry, if any. Its bytes leave the count at once,
  /// or, while a table build still writes into its memory, when that build
  /// is done and no call holds the key (sweep()).
  void drop(const proving_key_base* key);
  /// Plain points replaced by tables: their bytes stay counted until no
  /// partition reads them (sweep()).
  void retire(retired_points points);
  /// Frees what was retired and is no longer read: plain points replaced by
  /// tables, keys dropped during their table build.
  void sweep();
  /// Evicts least recently used keys that no call holds until `need` more
  /// bytes fit the limit; throws backend_error naming `what` when they
  /// cannot.
  void make_room(std::size_t need, const std::string& what);

  /// A table build of rk is enqueued and not finished.
  static bool build_pending(const resident_base& rk);

 private:
  using key_map = std::map<const proving_key_base*, std::shared_ptr<resident_base>>;
  void drop(key_map::iterator it);

  std::unique_ptr<stream> alloc_stream_;  ///< orders pool allocations (idle otherwise)
  bool pools_ = false;
  std::size_t limit_ = 0;
  std::size_t used_ = 0;  ///< resident keys (tables being built included) + NTT tables + lane scratch
  uint64_t tick_ = 0;
  key_map keys_;
  std::vector<std::shared_ptr<resident_base>> retired_keys_;  ///< dropped while their tables built
  std::vector<retired_points> retired_points_;               ///< plain points replaced by tables
};

}  // namespace proofline::gpu::cuda::detail
