// A granted share of the memory budget, as a ref-counted RAII handle that
// travels with its partition through the pipeline.
//
// Lifecycle: the memory manager creates it when it grants a partition; the
// holders give bytes back in steps as the partition advances (the bulk once
// the backend has consumed the inputs, the rest after finalize), or all at
// once on failure; whatever is still held goes back when the last handle drops.
// Each step calls the release function the memory manager installed, which
// forwards the bytes to the ledger (as a message, so this class knows nothing
// of actors). Releases may come from any thread: the held count is atomic and
// the final release happens exactly once.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>

namespace proofline::memory {

class reservation {
 public:
  /// Returns `bytes` of reservation `id` to the ledger; `final` ends it.
  using release_fn = std::function<void(uint64_t id, uint64_t bytes, bool final)>;

  reservation(uint64_t id, uint64_t bytes, release_fn release);
  reservation(const reservation&) = delete;
  reservation& operator=(const reservation&) = delete;
  /// Releases what is still held (final).
  ~reservation();

  uint64_t id() const noexcept { return id_; }
  /// Bytes granted at the start.
  uint64_t granted() const noexcept { return granted_; }
  /// Bytes still held.
  uint64_t held() const noexcept { return held_.load(std::memory_order_acquire); }

  /// Gives back up to `bytes` now (not final); returns the bytes given back.
  /// Thread-safe. A no-op after release_all().
  uint64_t release(uint64_t bytes);

  /// Gives back everything still held and ends the reservation. Thread-safe;
  /// only the first call has an effect.
  void release_all();

 private:
  uint64_t id_;
  uint64_t granted_;
  std::atomic<uint64_t> held_;
  std::atomic<bool> ended_{false};
  release_fn release_;
};

using reservation_ptr = std::shared_ptr<reservation>;

}  // namespace proofline::memory
