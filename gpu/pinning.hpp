// Page-locking host memory for the GPU, from plain C++ (no CUDA headers), so
// the app can hand the memory manager's pinned pool a pinner without memory/
// or actors/ knowing about CUDA.
//
//   cuda_pinner()          cudaHostRegister / cudaHostUnregister as a
//                          memory::pinner; pinning is slow (docs/BENCHMARKS.md,
//                          "Memory"), so the pool pins once
//   h2d_gbps(...)          measured host-to-device copy rate from a given
//                          host range (pool block or pageable buffer)
//   h2d_gbps_host_alloc()  the same from cudaHostAlloc memory: the pinned
//                          reference the pool's uploads are compared with
//   upload_channel         a device buffer that host ranges are copied into,
//                          for benchmarks that upload partitions for real
//
// Without CUDA in the build, cuda_pinner() is empty (the pool keeps ordinary
// pages) and the measurements return nullopt with "built without CUDA".
// Without a driver or device, cudaHostRegister fails and the pool reports why.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>

#include "memory/pinned_pool.hpp"

namespace proofline::gpu {

/// Pins with cudaHostRegister(cudaHostRegisterPortable: pinned for every
/// device, as one pool serves all GPU workers) and unpins with
/// cudaHostUnregister; empty when built without CUDA.
memory::pinner cuda_pinner();

/// Median rate, in GB/s (10^9 bytes per second), of `repeats` synchronous
/// copies of `bytes` from `host` to a fresh device buffer on `device`, timed
/// with CUDA events. nullopt with the reason in *why when CUDA is unavailable.
std::optional<double> h2d_gbps(const void* host, std::size_t bytes, int repeats, int device,
                               std::string* why);

/// h2d_gbps from a cudaHostAlloc buffer of `bytes` (allocated, touched,
/// measured, freed).
std::optional<double> h2d_gbps_host_alloc(std::size_t bytes, int repeats, int device,
                                          std::string* why);

/// A device buffer of `capacity` bytes on `device` that host ranges are
/// copied into (synchronously), for benchmarks. RAII: freed with the object.
class upload_channel {
 public:
  /// nullptr with the reason in *why when CUDA or the device is unavailable.
  static std::unique_ptr<upload_channel> open(std::size_t capacity, int device, std::string* why);
  ~upload_channel();
  upload_channel(const upload_channel&) = delete;
  upload_channel& operator=(const upload_channel&) = delete;

  /// Copies `bytes` (<= capacity) from `host`; returns false on a CUDA error.
  bool copy(const void* host, std::size_t bytes);
  std::size_t capacity() const { return capacity_; }

 private:
  upload_channel(void* d_buffer, std::size_t capacity, int device)
      : d_buffer_(d_buffer), capacity_(capacity), device_(device) {}
  void* d_buffer_;
  std::size_t capacity_;
  int device_;
};

}  // namespace proofline::gpu
