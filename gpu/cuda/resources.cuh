// RAII owners of CUDA handles: streams, events, device memory, pinned host
// memory and the current-device setting. Constructors throw backend_error
// (CUDA_OK); destructors never throw (a failure there has nowhere to go, and
// a sticky error will surface at the next checked call).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <utility>

#include "gpu/cuda/check.cuh"

namespace proofline::gpu::cuda {

/// Makes `device` current for the calling thread and restores the previous one.
class device_guard {
 public:
  explicit device_guard(int device) {
    CUDA_OK(cudaGetDevice(&previous_));
    if (previous_ != device) CUDA_OK(cudaSetDevice(device));
  }
  ~device_guard() { cudaSetDevice(previous_); }
  device_guard(const device_guard&) = delete;
  device_guard& operator=(const device_guard&) = delete;

 private:
  int previous_ = 0;
};

/// A non-blocking stream (does not synchronise with the legacy default stream).
class stream {
 public:
  /// Scheduling priorities: the device runs ready blocks of a higher
  /// stream first. `highest` is the device's greatest priority, `high` one
  /// step below it where the device has more than one (numerically, greater
  /// priorities are smaller numbers), `low` and `normal` its least.
  enum priority { normal, high, low, highest };
  stream() { CUDA_OK(cudaStreamCreateWithFlags(&s_, cudaStreamNonBlocking)); }
  explicit stream(priority p) {
    int least = 0, greatest = 0;
    CUDA_OK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
    const int below_greatest = greatest < least ? greatest + 1 : greatest;
    const int value = p == highest ? greatest : p == high ? below_greatest : p == low ? least : 0;
    CUDA_OK(cudaStreamCreateWithPriority(&s_, cudaStreamNonBlocking, value));
  }
  ~stream() {
    if (s_) cudaStreamDestroy(s_);
  }
  stream(const stream&) = delete;
  stream& operator=(const stream&) = delete;
  cudaStream_t get() const { return s_; }
  void synchronize() const { CUDA_OK(cudaStreamSynchronize(s_)); }

 private:
  cudaStream_t s_ = nullptr;
};

/// A timing event; waiting on it blocks the thread instead of spinning.
class event {
 public:
  event() { CUDA_OK(cudaEventCreateWithFlags(&e_, cudaEventBlockingSync)); }
  ~event() {
    if (e_) cudaEventDestroy(e_);
  }
  event(const event&) = delete;
  event& operator=(const event&) = delete;
  cudaEvent_t get() const { return e_; }
  void record(cudaStream_t s) const { CUDA_OK(cudaEventRecord(e_, s)); }
  void synchronize() const { CUDA_OK(cudaEventSynchronize(e_)); }
  /// Milliseconds from `earlier` to this event (both completed).
  float since(const event& earlier) const {
    float ms = 0;
    CUDA_OK(cudaEventElapsedTime(&ms, earlier.e_, e_));
    return ms;
  }

 private:
  cudaEvent_t e_ = nullptr;
};

/// count elements of T in device memory (cudaMalloc: 256-byte aligned, uninitialised).
template <class T>
class device_buffer {
 public:
  device_buffer() = default;
  explicit device_buffer(std::size_t count) : count_(count) {
    if (count) CUDA_OK(cudaMalloc(reinterpret_cast<void**>(&p_), count * sizeof(T)));
  }
  /// From the device's stream-ordered pool (cudaMallocAsync on `s`, which is
  /// then synchronised, so any stream may use the memory). Freeing such
  /// memory does not synchronise the device as cudaFree of cudaMalloc'ed
  /// memory does, so the owner must know that no work still reads it.
  device_buffer(std::size_t count, cudaStream_t s) : count_(count) {
    if (!count) return;
    CUDA_OK(cudaMallocAsync(reinterpret_cast<void**>(&p_), count * sizeof(T), s));
    CUDA_OK(cudaStreamSynchronize(s));
  }
  ~device_buffer() { reset(); }
  device_buffer(device_buffer&& o) noexcept { swap(o); }
  device_buffer& operator=(device_buffer&& o) noexcept {
    device_buffer t(std::move(o));
    swap(t);
    return *this;
  }
  device_buffer(const device_buffer&) = delete;
  device_buffer& operator=(const device_buffer&) = delete;

  void reset() {
    if (p_) cudaFree(p_);
    p_ = nullptr;
    count_ = 0;
  }
  void swap(device_buffer& o) noexcept {
    std::swap(p_, o.p_);
    std::swap(count_, o.count_);
  }
  T* get() const { return p_; }
  std::size_t size() const { return count_; }
  std::size_t bytes() const { return count_ * sizeof(T); }

 private:
  T* p_ = nullptr;
  std::size_t count_ = 0;
};

/// count elements of T in pinned (page-locked) host memory, for DMA.
/// cudaHostAlloc is slow for large sizes (docs/BENCHMARKS.md, "Memory"):
/// allocate once and reuse.
template <class T>
class pinned_buffer {
 public:
  pinned_buffer() = default;
  explicit pinned_buffer(std::size_t count) : count_(count) {
    if (count) CUDA_OK(cudaHostAlloc(reinterpret_cast<void**>(&p_), count * sizeof(T), cudaHostAllocDefault));
  }
  ~pinned_buffer() {
    if (p_) cudaFreeHost(p_);
  }
  pinned_buffer(pinned_buffer&& o) noexcept {
    std::swap(p_, o.p_);
    std::swap(count_, o.count_);
  }
  pinned_buffer& operator=(pinned_buffer&& o) noexcept {
    std::swap(p_, o.p_);
    std::swap(count_, o.count_);
    return *this;
  }
  pinned_buffer(const pinned_buffer&) = delete;
  pinned_buffer& operator=(const pinned_buffer&) = delete;
  T* get() const { return p_; }
  std::size_t size() const { return count_; }
  T& operator[](std::size_t i) const { return p_[i]; }

 private:
  T* p_ = nullptr;
  std::size_t count_ = 0;
};

}  // namespace proofline::gpu::cuda
