// Where one partition's data lives in its lane's scratch, and how much
// scratch a key's MSM shapes take: the prove pipeline carves it
// (pipeline.cu), the table builds weigh its growth (table_builds.cu).
#pragma once

#include <algorithm>
#include <cstddef>

#include "gpu/cuda/backend/resident.hpp"
#include "gpu/cuda/ops.cuh"

namespace proofline::gpu::cuda::detail {

/// Where one partition's data lives in its lane's scratch.
template <class C>
struct layout {
  using fr = typename C::fr;
  using scalar = typename C::scalar;
  using x1 = typename C::g1_xyzz;
  using x2 = typename C::g2_xyzz;
  scalar* w = nullptr;
  fr *a = nullptr, *b = nullptr, *c = nullptr;
  msm::digits digits;
  void* temp = nullptr;  ///< scalar digests and bucket passes, on the lane's stream s
  std::size_t temp_bytes = 0;
  void* reduce_temp = nullptr;  ///< window reductions, one after another on stream r
  std::size_t reduce_bytes = 0;
  /// Two bucket arrays, taken in turn by the MSMs: MSM k's reduction on r
  /// reads one while MSM k+1's bucket pass fills the other on s.
  void* buckets[2] = {nullptr, nullptr};
  x1 *win_a = nullptr, *win_b1 = nullptr, *win_c = nullptr, *win_h = nullptr;
  x2* win_b2 = nullptr;

  void carve(carver& cv, const msm::shape& sw, const msm::shape& sc, const msm::shape& sh,
             std::size_t temp_need, std::size_t reduce_need) {
    w = cv.take<scalar>(sw.n);
    a = cv.take<fr>(sh.n);
    b = cv.take<fr>(sh.n);
    c = cv.take<fr>(sh.n);
    const msm::shape* big = &sw;
    if (sc.entries > big->entries) big = &sc;
    if (sh.entries > big->entries) big = &sh;
    digits = msm::carve_digits(cv, *big);
    temp = cv.take_bytes(temp_need);
    temp_bytes = temp_need;
    reduce_temp = cv.take_bytes(reduce_need);
    reduce_bytes = reduce_need;
    const std::size_t bucket_bytes = std::max(
        {sizeof(x1) * sw.buckets, sizeof(x2) * sw.buckets, sizeof(x1) * sc.buckets, sizeof(x1) * sh.buckets});
    for (auto& b : buckets) b = cv.take_bytes(bucket_bytes);
    win_a = cv.take<x1>(sw.sums);
    win_b1 = cv.take<x1>(sw.sums);
    win_c = cv.take<x1>(sc.sums);
    win_h = cv.take<x1>(sh.sums);
    win_b2 = cv.take<x2>(sw.sums);
    win_end = win_b2 + sw.sums;
  }
  x2* win_end = nullptr;
  /// Bytes of the window sums (carved one after another, win_a first, win_b2 last).
  std::size_t window_bytes() const {
    return std::size_t(reinterpret_cast<const char*>(win_end) - reinterpret_cast<const char*>(win_a));
  }
  /// Where a window array lands in the host copy of that region.
  template <class X>
  const X* in_copy(const unsigned char* copy, const X* dev) const {
    return reinterpret_cast<const X*>(copy + (reinterpret_cast<const char*>(dev) -
                                              reinterpret_cast<const char*>(win_a)));
  }
};

/// The MSM steps' temporary space of a key's shapes: `temp` for the digests
/// and bucket passes, `reduce` for the window reductions.
struct scratch_needs {
  std::size_t temp = 0, reduce = 0;
};

template <class C>
scratch_needs scratch_needs_of(const key_shapes& ks) {
  using g1 = typename C::g1_group;
  using g2 = typename C::g2_group;
  using scalar = typename C::scalar;
  scratch_needs n;
  n.temp = std::max({msm_prepare_bytes<scalar>(ks.w), msm_prepare_bytes<scalar>(ks.c),
                     msm_prepare_bytes<scalar>(ks.h), msm_buckets_bytes<g1>(ks.w), msm_buckets_bytes<g2>(ks.w),
                     msm_buckets_bytes<g1>(ks.c), msm_buckets_bytes<g1>(ks.h)});
  n.reduce = std::max({msm_reduce_bytes<g1>(ks.w), msm_reduce_bytes<g2>(ks.w), msm_reduce_bytes<g1>(ks.c),
                       msm_reduce_bytes<g1>(ks.h)});
  return n;
}

/// Scratch of one partition in a lane for a key's shapes: the layout, the
/// MSMs' buckets and their steps' temporary space n.
template <class C>
std::size_t scratch_bytes(const key_shapes& ks, const scratch_needs& n) {
  layout<C> lay;
  carver count;
  lay.carve(count, ks.w, ks.c, ks.h, n.temp, n.reduce);
  return count.used();
}

}  // namespace proofline::gpu::cuda::detail
