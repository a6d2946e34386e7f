// The executor of gpu/cuda/exec.hpp on the GPU: for_each is one kernel launch
// (one thread per index, 256 threads a block), sorting and scanning are CUB
// calls, all on one stream and all checked. Nothing here synchronises with
// the host.
#pragma once

#include <cuda_runtime_api.h>

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>

#include "gpu/cuda/check.cuh"
#include "gpu/cuda/exec.hpp"

namespace proofline::gpu::cuda {

/// Threads per block of every for_each launch. The heaviest functors (point
/// additions) use up to ~200 registers, so 256 threads fit any of them.
constexpr unsigned exec_block = 256;

template <class F>
__global__ void __launch_bounds__(exec_block) for_each_kernel(F f, std::size_t n) {
  std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) f(i);
}

/// A block's view on the device: each thread runs its share of a phase.
struct device_block {
  template <class T>
  __device__ T* shared() const {
    extern __shared__ uint4 block_scratch[];  // 16-byte aligned
    return reinterpret_cast<T*>(block_scratch);
  }
  template <class G>
  __device__ void threads(unsigned count, const G& g) const {
    for (unsigned i = threadIdx.x; i < count; i += blockDim.x) g(i);
  }
  __device__ void sync() const { __syncthreads(); }
};

template <class F>
__global__ void block_kernel(F f) {
  f(std::size_t(blockIdx.x), device_block{});
}

/// Shared memory a block may use without opting in to more.
constexpr std::size_t exec_block_scratch_default = 48 << 10;
/// The most a block may opt in to on sm_90 (227 KiB).
constexpr std::size_t exec_block_scratch_max = 227 << 10;

struct device_exec {
  cudaStream_t stream = nullptr;

  /// threads: a block's threads, a multiple of 32 up to exec_block (0: exec_block).
  template <class F>
  void for_each(std::size_t n, const F& f, unsigned threads = 0) const {
    if (n == 0) return;
    const unsigned tpb = threads ? threads : exec_block;
    if (tpb > exec_block || tpb % 32 != 0)
      throw backend_error("for_each: " + std::to_string(tpb) + " threads a block (a multiple of 32 up to " +
                          std::to_string(exec_block) + ")");
    std::size_t grid = (n + tpb - 1) / tpb;
    if (grid > std::size_t(std::numeric_limits<int>::max()))
      throw backend_error("for_each: " + std::to_string(n) + " threads exceed one launch");
    for_each_kernel<F><<<unsigned(grid), tpb, 0, stream>>>(f, n);
    CUDA_OK(cudaGetLastError());
  }

  template <class F>
  void for_each_block(std::size_t blocks, unsigned threads, std::size_t scratch_bytes, const F& f) const {
    if (blocks == 0) return;
    if (blocks > std::size_t(std::numeric_limits<int>::max()) || scratch_bytes > exec_block_scratch_max)
      throw backend_error("for_each_block: " + std::to_string(blocks) + " blocks of " +
                          std::to_string(scratch_bytes) + " bytes");
    if (scratch_bytes > exec_block_scratch_default)  // opt in (a per-kernel attribute; cheap to set again)
      CUDA_OK(cudaFuncSetAttribute(block_kernel<F>, cudaFuncAttributeMaxDynamicSharedMemorySize, int(scratch_bytes)));
    block_kernel<F><<<unsigned(blocks), threads, scratch_bytes, stream>>>(f);
    CUDA_OK(cudaGetLastError());
  }

  std::size_t sort_temp_bytes(std::size_t n, unsigned bits) const {
    std::size_t bytes = 0;
    CUDA_OK(cub::DeviceRadixSort::SortPairs(nullptr, bytes, static_cast<const uint32_t*>(nullptr),
                                            static_cast<uint32_t*>(nullptr),
                                            static_cast<const uint32_t*>(nullptr),
                                            static_cast<uint32_t*>(nullptr), items(n), 0, int(bits),
                                            stream));
    return bytes;
  }
  void sort_pairs(void* temp, std::size_t temp_bytes, const uint32_t* keys_in, uint32_t* keys_out,
                  const uint32_t* vals_in, uint32_t* vals_out, std::size_t n, unsigned bits) const {
    if (n == 0) return;
    CUDA_OK(cub::DeviceRadixSort::SortPairs(temp, temp_bytes, keys_in, keys_out, vals_in, vals_out,
                                            items(n), 0, int(bits), stream));
  }

  std::size_t scan_temp_bytes(std::size_t n) const {
    std::size_t bytes = 0;
    CUDA_OK(cub::DeviceScan::ExclusiveSum(nullptr, bytes, static_cast<const uint32_t*>(nullptr),
                                          static_cast<uint32_t*>(nullptr), items(n), stream));
    return bytes;
  }
  void exclusive_sum(void* temp, std::size_t temp_bytes, const uint32_t* in, uint32_t* out,
                     std::size_t n) const {
    if (n == 0) return;
    CUDA_OK(cub::DeviceScan::ExclusiveSum(temp, temp_bytes, in, out, items(n), stream));
  }

  void zero(void* p, std::size_t bytes) const {
    if (bytes) CUDA_OK(cudaMemsetAsync(p, 0, bytes, stream));
  }

 private:
  /// CUB's item counts are ints here (32-bit offsets sort faster).
  static int items(std::size_t n) {
    if (n > std::size_t(std::numeric_limits<int>::max()))
      throw backend_error("CUB call over " + std::to_string(n) + " items exceeds 2^31 - 1");
    return int(n);
  }
};

}  // namespace proofline::gpu::cuda
