// Partition-sized buffers: move-only, RAII, and tagged with the memory source
// they came from, so whoever frees them (the last holder of a partition, often
// a finalizer) returns the bytes to the right place and can tell the memory
// manager which arena to purge.
//
// Only memory/ decides where partition-sized memory comes from. The default
// source is the process heap; jemalloc arenas (memory/arena.hpp) and blocks
// of the pinned pool (memory/pinned_pool.hpp) provide other sources through
// the same interface. A backend reads origin().pinned to know it may DMA
// straight from the buffer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <new>
#include <type_traits>
#include <utility>

namespace proofline::memory {

/// Where a buffer's bytes come from and go back to. Copyable, a few words.
struct source {
  void* (*allocate)(std::size_t bytes, std::size_t align, void* ctx) = nullptr;
  void (*release)(void* p, std::size_t bytes, void* ctx) = nullptr;
  void* ctx = nullptr;
  /// jemalloc arena index the bytes live in, or -1 for the process heap.
  int arena = -1;
  /// Pages are pinned (page-locked) for DMA to the GPU.
  bool pinned = false;
};

/// The process heap (malloc/free, whichever allocator serves them).
inline source heap_source() {
  source s;
  s.allocate = [](std::size_t bytes, std::size_t align, void*) -> void* {
    std::size_t rounded = (bytes + align - 1) / align * align;
    return std::aligned_alloc(align, rounded ? rounded : align);
  };
  s.release = [](void* p, std::size_t, void*) { std::free(p); };
  return s;
}

/// Alignment of every buffer: a page, so buffers can be registered for DMA.
inline constexpr std::size_t buffer_alignment = 4096;

template <class T>
class buffer {
  static_assert(std::is_trivially_copyable_v<T>, "buffers hold plain data");

 public:
  buffer() noexcept = default;
  /// n uninitialised elements from `src`; throws std::bad_alloc on failure.
  explicit buffer(std::size_t n, const source& src = heap_source()) : size_(n), src_(src) {
    if (n == 0) return;
    data_ = static_cast<T*>(src_.allocate(n * sizeof(T), buffer_alignment, src_.ctx));
    if (!data_) throw std::bad_alloc();
  }
  buffer(const buffer&) = delete;
  buffer& operator=(const buffer&) = delete;
  buffer(buffer&& o) noexcept { swap(o); }
  buffer& operator=(buffer&& o) noexcept {
    buffer tmp(std::move(o));
    swap(tmp);
    return *this;
  }
  ~buffer() {
    if (data_) src_.release(data_, size_ * sizeof(T), src_.ctx);
  }

  T* data() noexcept { return data_; }
  const T* data() const noexcept { return data_; }
  std::size_t size() const noexcept { return size_; }
  std::size_t bytes() const noexcept { return size_ * sizeof(T); }
  bool empty() const noexcept { return size_ == 0; }
  T& operator[](std::size_t i) noexcept { return data_[i]; }
  const T& operator[](std::size_t i) const noexcept { return data_[i]; }
  T* begin() noexcept { return data_; }
  T* end() noexcept { return data_ + size_; }
  const T* begin() const noexcept { return data_; }
  const T* end() const noexcept { return data_ + size_; }
  const source& origin() const noexcept { return src_; }

  void swap(buffer& o) noexcept {
    std::swap(data_, o.data_);
    std::swap(size_, o.size_);
    std::swap(src_, o.src_);
  }

 private:
  T* data_ = nullptr;
  std::size_t size_ = 0;
  source src_{};
};

}  // namespace proofline::memory
