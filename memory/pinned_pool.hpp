// The pinned pool: host memory the GPU reads, pinned once, counted once in
// the budget, reused for every partition and never purged.
//
// Problem: an upload from pageable memory runs at a fraction of the rate from
// pinned memory, but pinning is slow, with cudaHostRegister and with
// cudaHostAlloc alike (docs/BENCHMARKS.md, "Memory"). Pinning per partition
// would cost more than it saves; copying into a pinned staging buffer costs a
// host memcpy of every byte.
//
// Design: one anonymous mapping of `capacity` bytes, pinned in steps from
// its start (the pinner is injected: memory/ knows nothing of CUDA;
// gpu/pinning.hpp provides cudaHostRegister, and without CUDA or a device the
// pool is ordinary pages and says so). Pinned in the background (`later`),
// the pool grows a step at a time while it is in use: a block is pinned when
// every page of it is, take() hands out the lowest free range (pinned first),
// and a block beyond the pinned part is ordinary pages, which the backend
// stages: a partition never waits for pinning. Steps keep each registration
// short, so the page faults of key loading and witness reading, which wait
// for the same address-space lock, get their turn between them. The memory manager is the pool's only
// owner: when it grants a partition it takes a block sized for the
// partition's witness and a, b, c (first fit over a free list, page aligned)
// and hands it out with the grant; the synthesizer writes those buffers
// straight into the block (block->buffers() is a bump allocator), so the
// upload reads them where they were computed, with no extra copy.
// source::pinned tells the backend the bytes are already pinned.
//
// Lifecycle of a block: take() -> the grant and every buffer carved from the
// block hold a reference -> the last one drops (any thread) -> on_free(offset)
// (the memory manager turns it into a message to itself) -> give_back(offset)
// on the owner's thread, coalescing with free neighbours. The mapping itself
// lives until the pool and its last block are gone, so a buffer never outlives
// its memory, whatever order actors stop in; it is unpinned, then unmapped.
//
// Thread safety: take/give_back and the statistics are for the owner's
// thread only; blocks and their buffers may be used and dropped anywhere
// (reference counts are atomic). Nothing here locks.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>

#include "memory/buffer.hpp"

namespace proofline::memory {

/// Page-locks host memory for DMA; empty means "do not pin".
struct pinner {
  std::string name;  ///< for logs: "cudaHostRegister"
  /// Pins [p, p + bytes); false with the reason in *why (may be null).
  std::function<bool(void* p, std::size_t bytes, std::string* why)> pin;
  /// Undoes a successful pin(p, ...) before the range is unmapped.
  std::function<void(void* p)> unpin;

  explicit operator bool() const { return static_cast<bool>(pin); }
};

class pool_block;
/// A block as the grant carries it; the range returns to the pool once this
/// handle and every buffer carved from the block are gone.
using block_ptr = std::shared_ptr<pool_block>;

class pinned_pool {
 public:
  /// Granularity and alignment of blocks: one page (DMA and registration).
  static constexpr std::size_t block_alignment = 4096;

  /// Maps `capacity` bytes (rounded up to a page, > 0) and pins them once
  /// with `pin` if given; a failed pin leaves ordinary pages (pinned() false,
  /// the reason in pin_error()). Throws std::runtime_error if the mapping
  /// fails. Pinning fresh pages is slow: they are faulted in and zeroed as
  /// they are registered.
  ///
  /// With `later`, nothing is pinned here: pin_task() does it on another
  /// thread while blocks are already in use. Buffers made from a block say
  /// pinned = true once all of the block's pages are pinned, false before
  /// (a backend then copies through its own staging).
  ///
  /// The pinner is called once per `pin_step` bytes (rounded up to a page),
  /// in address order.
  explicit pinned_pool(std::size_t capacity, const pinner& pin = {}, bool later = false,
                       std::size_t pin_step = default_pin_step);

  /// Bytes pinned per pinner call by default.
  static constexpr std::size_t default_pin_step = std::size_t(256) << 20;
  pinned_pool(const pinned_pool&) = delete;
  pinned_pool& operator=(const pinned_pool&) = delete;
  ~pinned_pool();

  std::size_t capacity() const noexcept;
  /// Every page is page-locked for DMA.
  bool pinned() const noexcept;
  /// Bytes page-locked so far, from the start of the mapping.
  std::size_t pinned_bytes() const noexcept;
  /// Why pinning failed ("" when pinned or not asked for).
  const std::string& pin_error() const noexcept { return pin_error_; }
  /// Milliseconds pin() took (0 when not asked for, or not finished).
  double pin_ms() const noexcept { return pin_ms_; }
  /// What became of the pages, for the log: "pinned pool 1 GiB (cuda in
  /// 12.5 ms)", "pool 1 GiB of ordinary pages (<pin_error>)", or "... (no GPU
  /// to pin for)"; `pinner_name` names the pinner that was used.
  std::string describe(const std::string& pinner_name) const;

  /// What pinning did: whether the pages are pinned, in how long, or why not.
  struct pin_outcome {
    bool pinned = false;
    double ms = 0;
    std::string error;  ///< "cudaHostRegister: out of memory"; empty when pinned
  };
  /// For a pool made with `later`: pins the whole mapping, step by step, when called, on
  /// any thread, once (later calls do nothing and say so). The task keeps
  /// the mapping alive while it runs, whatever happens to the pool.
  std::function<pin_outcome()> pin_task() const;
  /// Records the task's outcome (owner's thread), for pin_ms/pin_error.
  void pin_finished(const pin_outcome& outcome);

  /// Bytes in blocks not yet given back.
  std::size_t used() const noexcept { return used_; }
  /// Largest block take() could hand out now.
  std::size_t largest_free() const noexcept;
  /// Blocks not yet given back.
  std::size_t blocks() const noexcept { return taken_.size(); }

  /// Bytes a block for `bytes` occupies: rounded up to block_alignment.
  static std::size_t block_bytes(std::size_t bytes) noexcept;

  /// A block of block_bytes(bytes), first fit; null when no free range is
  /// large enough (or bytes is 0). `on_free(offset)` runs once, on whichever
  /// thread drops the block's last user; the owner then calls give_back.
  /// O(free ranges).
  block_ptr take(std::size_t bytes, std::function<void(std::size_t offset)> on_free);

  /// Returns the block at `offset` to the free list, merging it with free
  /// neighbours. Unknown offsets are ignored. O(log n).
  void give_back(std::size_t offset);

  /// The mapping, shared with every block.
  struct region;

 private:
  std::shared_ptr<region> region_;
  std::string pin_error_;
  double pin_ms_ = 0;
  std::map<std::size_t, std::size_t> free_;   // offset -> bytes, disjoint, never adjacent
  std::map<std::size_t, std::size_t> taken_;  // offset -> bytes
  std::size_t used_ = 0;
};

/// One block of the pool (a partition's witness, a, b and c).
class pool_block {
 public:
  pool_block(const pool_block&) = delete;
  pool_block& operator=(const pool_block&) = delete;

  /// Where buffers come from: consecutive ranges of this block (each aligned
  /// as asked; a bump allocator, thread-safe); allocation returns null, so
  /// the buffer throws std::bad_alloc, once the block is full. Release only
  /// drops the buffer's reference: nothing is reused before the whole block
  /// goes back. `arena` is -1 (never purged); `pinned` is the pool's.
  source buffers() const;

  std::size_t offset() const noexcept { return offset_; }
  std::size_t bytes() const noexcept { return bytes_; }
  /// Bytes carved so far, alignment included.
  std::size_t used() const noexcept { return used_.load(std::memory_order_acquire); }
  void* data() const noexcept { return base_; }
  /// All of this block's pages are pinned now (see pinned_pool's `later`).
  bool pinned() const noexcept;

 private:
  friend class pinned_pool;
  pool_block(std::shared_ptr<pinned_pool::region> region, std::size_t offset, std::size_t bytes,
             std::function<void(std::size_t)> on_free);
  void ref() noexcept;
  void unref();
  void* carve(std::size_t bytes, std::size_t align) noexcept;

  std::shared_ptr<pinned_pool::region> region_;
  unsigned char* base_;
  std::size_t offset_;
  std::size_t bytes_;
  std::function<void(std::size_t)> on_free_;
  mutable std::atomic<std::size_t> used_{0};
  std::atomic<uint64_t> refs_{1};
};

}  // namespace proofline::memory
