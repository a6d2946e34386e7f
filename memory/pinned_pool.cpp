#include "memory/pinned_pool.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <stdexcept>

#include "base/text.hpp"
#include "memory/size.hpp"

namespace proofline::memory {

struct pinned_pool::region {
  unsigned char* base = nullptr;
  std::size_t bytes = 0;
  std::size_t step = 0;  ///< bytes pinned per pin() call (a multiple of the page)
  /// Bytes pinned from the start of the mapping, a step at a time (by the
  /// constructor or a pin task on another thread); read by blocks as they
  /// make buffers.
  std::atomic<std::size_t> pinned_bytes{0};
  /// Claimed by the first pin task that runs.
  std::atomic<bool> pin_started{false};
  pinner pin;  ///< for a pin task and for unpinning

  ~region() {
    if (pin.unpin)
      for (std::size_t off = 0; off < pinned_bytes.load(std::memory_order_acquire); off += step)
        pin.unpin(base + off);
    if (base) munmap(base, bytes);
  }

  /// Pins the mapping with `pin`, step by step from its start (each step is
  /// usable as soon as it is pinned, and page faults of other threads get
  /// their turn between steps), and times it. A failed step ends it: the
  /// steps before it stay pinned.
  pin_outcome pin_now() {
    pin_outcome out;
    auto t0 = std::chrono::steady_clock::now();
    std::string why;
    for (std::size_t off = 0; off < bytes; off += step) {
      if (!pin.pin(base + off, std::min(step, bytes - off), &why)) {
        out.error = (pin.name.empty() ? std::string("pin") : pin.name) + ": " +
                    (why.empty() ? std::string("failed") : why);
        break;
      }
      pinned_bytes.store(std::min(off + step, bytes), std::memory_order_release);
    }
    out.pinned = out.error.empty();
    out.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    return out;
  }
};

std::size_t pinned_pool::block_bytes(std::size_t bytes) noexcept {
  return (bytes + block_alignment - 1) / block_alignment * block_alignment;
}

pinned_pool::pinned_pool(std::size_t capacity, const pinner& pin, bool later, std::size_t pin_step) {
  const std::size_t page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  const std::size_t bytes = std::max<std::size_t>((capacity + page - 1) / page * page, page);
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED)
    throw std::runtime_error("pinned pool: cannot map " + format_bytes(bytes) + ": " +
                             std::strerror(errno));
  region_ = std::make_shared<region>();
  region_->base = static_cast<unsigned char*>(p);
  region_->bytes = bytes;
  region_->pin = pin;
  region_->step = std::max<std::size_t>((std::max<std::size_t>(pin_step, 1) + page - 1) / page * page, page);
  if (pin && !later) {
    region_->pin_started = true;
    pin_finished(region_->pin_now());
  }
  free_.emplace(0, bytes);
}

std::function<pinned_pool::pin_outcome()> pinned_pool::pin_task() const {
  std::shared_ptr<region> r = region_;
  return [r] {
    if (!r->pin || r->pin_started.exchange(true)) {
      pin_outcome none;
      none.error = r->pin ? "already pinned or pinning" : "no pinner";
      return none;
    }
    return r->pin_now();
  };
}

void pinned_pool::pin_finished(const pin_outcome& outcome) {
  pin_ms_ = outcome.ms;
  pin_error_ = outcome.pinned ? std::string() : outcome.error;
}

pinned_pool::~pinned_pool() = default;

std::size_t pinned_pool::capacity() const noexcept { return region_->bytes; }

std::string pinned_pool::describe(const std::string& pinner_name) const {
  if (pinned())
    return "pinned pool " + format_bytes(capacity()) + " (" + pinner_name + " in " +
           base::fixed(pin_ms()) + " ms)";
  return "pool " + format_bytes(capacity()) + " of ordinary pages (" +
         (pin_error().empty() ? std::string("no GPU to pin for") : pin_error()) + ")";
}

bool pinned_pool::pinned() const noexcept {
  return region_->pinned_bytes.load(std::memory_order_acquire) == region_->bytes;
}

std::size_t pinned_pool::pinned_bytes() const noexcept {
  return region_->pinned_bytes.load(std::memory_order_acquire);
}

std::size_t pinned_pool::largest_free() const noexcept {
  std::size_t best = 0;
  for (const auto& [offset, bytes] : free_) best = std::max(best, bytes);
  return best;
}

block_ptr pinned_pool::take(std::size_t bytes, std::function<void(std::size_t)> on_free) {
  if (bytes == 0) return nullptr;
  const std::size_t want = block_bytes(bytes);
  auto it = std::find_if(free_.begin(), free_.end(),
                         [want](const auto& range) { return range.second >= want; });
  if (it == free_.end()) return nullptr;
  const std::size_t offset = it->first;
  const std::size_t rest = it->second - want;
  free_.erase(it);
  if (rest) free_.emplace(offset + want, rest);
  taken_.emplace(offset, want);
  used_ += want;
  auto* block = new pool_block(region_, offset, want, std::move(on_free));
  // The handle holds the block's first reference; buffers add their own.
  return block_ptr(block, [](pool_block* b) { b->unref(); });
}

void pinned_pool::give_back(std::size_t offset) {
  auto it = taken_.find(offset);
  if (it == taken_.end()) return;
  std::size_t start = offset;
  std::size_t bytes = it->second;
  used_ -= bytes;
  taken_.erase(it);
  // Merge with the free range that ends where this one starts, and with the
  // one that starts where it ends.
  auto next = free_.lower_bound(start);
  if (next != free_.begin()) {
    auto prev = std::prev(next);
    if (prev->first + prev->second == start) {
      start = prev->first;
      bytes += prev->second;
      free_.erase(prev);
    }
  }
  next = free_.lower_bound(start);
  if (next != free_.end() && next->first == start + bytes) {
    bytes += next->second;
    free_.erase(next);
  }
  free_.emplace(start, bytes);
}

pool_block::pool_block(std::shared_ptr<pinned_pool::region> region, std::size_t offset,
                       std::size_t bytes, std::function<void(std::size_t)> on_free)
    : region_(std::move(region)),
      base_(region_->base + offset),
      offset_(offset),
      bytes_(bytes),
      on_free_(std::move(on_free)) {}

bool pool_block::pinned() const noexcept {
  return offset_ + bytes_ <= region_->pinned_bytes.load(std::memory_order_acquire);
}

void pool_block::ref() noexcept { refs_.fetch_add(1, std::memory_order_relaxed); }

void pool_block::unref() {
  if (refs_.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
  if (on_free_) on_free_(offset_);
  delete this;
}

void* pool_block::carve(std::size_t bytes, std::size_t align) noexcept {
  if (align == 0) align = 1;
  std::size_t cur = used_.load(std::memory_order_relaxed);
  std::size_t start = 0;
  do {
    start = (cur + align - 1) / align * align;
    if (start > bytes_ || bytes > bytes_ - start) return nullptr;
  } while (!used_.compare_exchange_weak(cur, start + bytes, std::memory_order_acq_rel));
  return base_ + start;
}

source pool_block::buffers() const {
  source s;
  s.ctx = const_cast<pool_block*>(this);
  s.arena = -1;
  s.pinned = pinned();
  s.allocate = [](std::size_t bytes, std::size_t align, void* ctx) -> void* {
    auto* b = static_cast<pool_block*>(ctx);
    void* p = b->carve(bytes ? bytes : 1, align);
    if (p) b->ref();
    return p;
  };
  s.release = [](void*, std::size_t, void* ctx) { static_cast<pool_block*>(ctx)->unref(); };
  return s;
}

}  // namespace proofline::memory
