// Executors: the few parallel primitives the NTT and MSM pipelines are written
// against, so one pipeline (gpu/cuda/msm_pipeline.hpp, ntt_pipeline.hpp) runs
// on the GPU (device_exec in device_exec.cuh: one kernel launch per step, CUB
// for sorting and scanning) and on the host (host_exec below: plain loops),
// where the tests check the kernels' logic on a machine without a GPU.
//
//   for_each(n, f[, t])  f(i) for every i < n, in any order; f is a PL_HD functor
//                        (t: threads a block on the device, 0 = the default)
//   for_each_block(b, t, bytes, f)
//                        f(block, ctx) for b blocks of t threads sharing
//                        `bytes` of scratch (shared memory); f's per-thread
//                        work goes through ctx.threads(count, g) (g(i) for
//                        i < count, spread over the threads) separated by
//                        ctx.sync() barriers, so the host can run one phase
//                        for every thread before the next
//   sort_pairs(...)      stable sort of (key, value) by the low `bits` key bits
//   exclusive_sum(...)   out[i] = in[0] + ... + in[i-1]
//   zero(p, bytes)       memset 0
//
// Scratch memory follows CUB's pattern: the pipeline asks how many bytes a
// step needs (with null pointers), the caller provides them (carver).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <vector>

namespace proofline::gpu::cuda {

/// Hands out aligned pieces of one scratch allocation. With a null base it
/// only counts, so the same code sizes the scratch and then carves it.
class carver {
 public:
  static constexpr std::size_t alignment = 256;  // CUB's and cudaMalloc's alignment

  explicit carver(void* base = nullptr, std::size_t capacity = ~std::size_t(0))
      : base_(static_cast<char*>(base)), capacity_(capacity) {}

  template <class T>
  T* take(std::size_t count) {
    offset_ = (offset_ + alignment - 1) / alignment * alignment;
    T* p = base_ ? reinterpret_cast<T*>(base_ + offset_) : nullptr;
    offset_ += count * sizeof(T);
    overflow_ |= offset_ > capacity_;
    return p;
  }
  void* take_bytes(std::size_t bytes) { return take<char>(bytes); }
  /// Bytes handed out so far (the size to allocate after a counting pass).
  std::size_t used() const { return offset_; }
  /// True when more was taken than the capacity given.
  bool overflowed() const { return overflow_; }
  bool counting() const { return base_ == nullptr; }

 private:
  char* base_;
  std::size_t capacity_;
  std::size_t offset_ = 0;
  bool overflow_ = false;
};

/// A block's view on the host: every phase runs for all threads in turn.
struct host_block {
  void* scratch;
  template <class T>
  T* shared() const {
    return static_cast<T*>(scratch);
  }
  template <class G>
  void threads(unsigned count, const G& g) const {
    for (unsigned i = 0; i < count; ++i) g(i);
  }
  void sync() const {}
};

/// Runs the pipelines on the calling thread, over host memory.
struct host_exec {
  template <class F>
  void for_each(std::size_t n, const F& f, unsigned = 0) const {
    for (std::size_t i = 0; i < n; ++i) f(i);
  }

  template <class F>
  void for_each_block(std::size_t blocks, unsigned, std::size_t scratch_bytes, const F& f) const {
    std::vector<unsigned char> scratch(scratch_bytes + 64);
    host_block ctx{scratch.data()};
    for (std::size_t b = 0; b < blocks; ++b) f(b, ctx);
  }

  std::size_t sort_temp_bytes(std::size_t, unsigned) const { return 0; }
  void sort_pairs(void*, std::size_t, const uint32_t* keys_in, uint32_t* keys_out,
                  const uint32_t* vals_in, uint32_t* vals_out, std::size_t n, unsigned bits) const {
    const uint32_t mask = bits >= 32 ? ~0u : (1u << bits) - 1;
    std::vector<std::size_t> order(n);
    std::iota(order.begin(), order.end(), std::size_t(0));
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
      return (keys_in[a] & mask) < (keys_in[b] & mask);
    });
    for (std::size_t i = 0; i < n; ++i) {
      keys_out[i] = keys_in[order[i]];
      vals_out[i] = vals_in[order[i]];
    }
  }

  std::size_t scan_temp_bytes(std::size_t) const { return 0; }
  void exclusive_sum(void*, std::size_t, const uint32_t* in, uint32_t* out, std::size_t n) const {
    uint32_t acc = 0;
    for (std::size_t i = 0; i < n; ++i) {
      uint32_t v = in[i];
      out[i] = acc;
      acc += v;
    }
  }

  void zero(void* p, std::size_t bytes) const {
    if (bytes) std::memset(p, 0, bytes);
  }
};

}  // namespace proofline::gpu::cuda
