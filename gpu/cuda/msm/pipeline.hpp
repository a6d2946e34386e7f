// Pippenger MSM as a pipeline of data-parallel steps over an executor
// (gpu/cuda/exec.hpp): on the GPU every step is a kernel launch or a CUB
// call; on the host the same functors run in loops, which is how the tests
// check this logic without a GPU. The steps, their scratch and the chunked
// form; the plan is in plan.hpp, the tuning in tuning.hpp, the kernels in
// bucket_kernels.hpp, reduce_kernels.hpp and precompute_kernel.hpp. The
// design: docs/GPU.md, "MSM pipeline".
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <stdexcept>

#include "gpu/cuda/exec.hpp"
#include "gpu/cuda/msm/affine_kernels.hpp"
#include "gpu/cuda/msm/bucket_kernels.hpp"
#include "gpu/cuda/msm/plan.hpp"
#include "gpu/cuda/msm/precompute_kernel.hpp"
#include "gpu/cuda/msm/reduce_kernels.hpp"
#include "gpu/cuda/msm/tuning.hpp"

namespace proofline::gpu::cuda::msm {

// ---- steps 3-5: the level-1 kernel's entry

/// Step 3 with kernel k: the level-1 functor over the points (when k.lazy,
/// lazy products for Fq2 groups, coordinates in [0, 2p) for Fq ones).
template <class A, class X, class Exec>
void level1(const Exec& ex, const level1_kernel& k, std::size_t m, const uint32_t* keys, const uint32_t* count,
            const uint32_t* base, unsigned L, uint32_t* out_keys, X* out, const uint32_t* vals, const A* points) {
  using G = typename A::group;
  const unsigned threads = k.threads ? k.threads : level1_threads<A>();
  if (k.lazy) {
    using F = level_runs_fn<X, signed_points<A, lazy_group<G>>>;
    ex.for_each(m, F{keys, count, base, L, out_keys, out, {vals, points}}, threads);
    return;
  }
  using F = level_runs_fn<X, signed_points<A>>;
  ex.for_each(m, F{keys, count, base, L, out_keys, out, {vals, points}}, threads);
}

// ---- the steps over an executor

/// Sorted digits of one scalar vector: reused by every MSM over those scalars.
struct digits {
  uint32_t* keys = nullptr;
  uint32_t* vals = nullptr;
  uint32_t* count = nullptr;  ///< non-zero digits (device)
};

/// Carves the persistent digit arrays for shape s.
inline digits carve_digits(carver& mem, const shape& s) {
  digits d;
  d.keys = mem.take<uint32_t>(s.entries);
  d.vals = mem.take<uint32_t>(s.entries);
  d.count = mem.take<uint32_t>(1);
  return d;
}

/// Steps 1-2: digits of `scalars` sorted into `out`; scratch from `temp`
/// (a counting carver only measures the scratch and enqueues nothing).
template <class Exec, class Scalar>
void prepare(const Exec& ex, const shape& s, const Scalar* scalars, const digits& out, carver& temp) {
  uint32_t* keys0 = temp.take<uint32_t>(s.entries);
  uint32_t* vals0 = temp.take<uint32_t>(s.entries);
  std::size_t sort_bytes = ex.sort_temp_bytes(s.entries, s.key_bits);
  void* sort_temp = temp.take_bytes(sort_bytes);
  if (temp.counting()) return;
  ex.zero(out.count, sizeof(uint32_t));
  if (s.n == 0) return;
  ex.for_each(s.n, digits_fn<Scalar>{scalars, keys0, vals0, s.n, s.c, s.windows, s.half, s.sentinel,
                                     s.fixed_base, s.offset, s.table_n});
  ex.sort_pairs(sort_temp, sort_bytes, keys0, out.keys, vals0, out.vals, s.entries, s.key_bits);
  ex.for_each(s.entries, count_fn{out.keys, s.entries, s.sentinel, out.count});
}


/// Steps 3-5: the buckets of the digits d (shape s) into buckets[0 ..
/// s.buckets), stored, or added to what they hold when `add` (buckets that
/// no digit of d reaches are left as they are); with affine_rounds_on(s),
/// the batched-affine rounds (step 3a) before level 1, which then sums what
/// they leave; scratch from `temp` as for prepare().
template <class Exec, class A, class X>
void bucket_pass(const Exec& ex, const shape& s, const digits& d, const A* points, X* buckets, bool add,
                 carver& temp) {
  const bool affine = affine_rounds_on(s);
  affine_left<A> left;
  if (affine) left = affine_rounds_pass(ex, s, d.keys, d.vals, d.count, points, temp);
  std::size_t chunks = 1;
  for (unsigned lv = 0; lv < s.levels; ++lv) chunks = std::max(chunks, s.chunks_max[lv]);
  uint32_t* runs = temp.take<uint32_t>(chunks);
  uint32_t* base = temp.take<uint32_t>(chunks);
  std::size_t scan_bytes = ex.scan_temp_bytes(chunks);
  void* scan_temp = temp.take_bytes(scan_bytes);
  uint32_t* counts = temp.take<uint32_t>(max_levels);
  uint32_t* pkeys[2] = {temp.take<uint32_t>(s.partials_max[0]),
                        temp.take<uint32_t>(s.levels > 1 ? s.partials_max[1] : 1)};
  X* parts[2] = {temp.take<X>(s.partials_max[0]), temp.take<X>(s.levels > 1 ? s.partials_max[1] : 1)};
  if (temp.counting() || s.n == 0) return;

  const uint32_t* in_count = affine ? left.count : d.count;
  const uint32_t* in_keys = affine ? left.keys : d.keys;
  const X* in_parts = nullptr;
  for (unsigned lv = 0; lv < s.levels; ++lv) {
    unsigned L = lv == 0 ? s.chunk1 : s.chunk;
    std::size_t m = s.chunks_max[lv];
    uint32_t* out_keys = pkeys[lv % 2];
    X* out = parts[lv % 2];
    ex.for_each(m, chunk_runs_fn{in_keys, in_count, L, runs});
    ex.exclusive_sum(scan_temp, scan_bytes, runs, base, m);
    ex.for_each(1, total_fn{base, runs, m, counts + lv});
    if (lv == 0 && affine)
      ex.for_each(m, level_runs_fn<X, affine_terms<A>>{in_keys, in_count, base, L, out_keys, out, left.terms});
    else if (lv == 0)
      level1<A>(ex, s.level1, m, in_keys, in_count, base, L, out_keys, out, d.vals, points);
    else
      ex.for_each(m, level_runs_fn<X, partial_sums<X>>{in_keys, in_count, base, L, out_keys, out,
                                                       {in_parts}});
    in_count = counts + lv;
    in_keys = out_keys;
    in_parts = out;
  }
  ex.for_each(s.partials_max[s.levels - 1], runsum_fn<X>{in_keys, in_parts, in_count, buckets, add});
}

/// The tree sums of step 6: in[w][0 .. m) summed into out[w] by fan-in
/// reduce_fan_in launches, ping-ponging between part[0] and part[1].
template <class Exec, class X>
void sum_levels(const Exec& ex, std::size_t W, const X* in, std::size_t m, X* const part[2], X* out) {
  unsigned flip = 0;
  do {
    const std::size_t out_m = (m + reduce_fan_in - 1) / reduce_fan_in;
    X* dst = out_m == 1 ? out : part[flip];
    ex.for_each(W * out_m, sum_fn<X>{in, m, out_m, dst});
    in = dst;
    m = out_m;
    flip ^= 1;
  } while (m > 1);
}

/// Step 6: the s.sums window sums of the buckets of shape s into windows[0
/// .. s.sums), by s.reduce (segment_block_fn level after level, the sums of
/// each level's tot, horner_fn); scratch from `temp` as for prepare().
template <class Exec, class X>
void reduce(const Exec& ex, const shape& s, const X* buckets, X* windows, carver& temp) {
  const std::size_t W = s.sums;
  const reduce_levels lv = plan_reduce<X>(s.half, s.reduce);
  horner_fn<X> h{nullptr, lv.count, unsigned(W), {}, windows};
  for (unsigned i = 0; i < lv.count; ++i) h.lgs[i] = static_cast<unsigned char>(lv.tl[i] + lv.rl[i]);
  const std::size_t seg0 = std::max<std::size_t>(s.half >> h.lgs[0], 1);
  X* tot = temp.take<X>(W * seg0);
  X* ys[2] = {temp.take<X>(W * seg0), temp.take<X>(W * seg0)};
  const std::size_t sum0 = (seg0 + reduce_fan_in - 1) / reduce_fan_in;
  X* part_sums[2] = {temp.take<X>(W * sum0), temp.take<X>(W * sum0)};
  X* level_sums = temp.take<X>(W * lv.count);
  if (temp.counting()) return;

  const X* x = buckets;
  std::size_t m = s.half;
  for (unsigned i = 0; i < lv.count; ++i) {
    const std::size_t T = m >> h.lgs[i];
    X* y = ys[i % 2];
    ex.for_each_block(W * T, 1u << lv.tl[i], segment_block_bytes<X>(lv.tl[i]),
                      segment_block_fn<X>{x, m, T, lv.tl[i], lv.rl[i], tot, y});
    sum_levels(ex, W, tot, T, part_sums, level_sums + std::size_t(i) * W);
    x = y;
    m = T;
  }
  h.sums = level_sums;
  ex.for_each(W, h);
}

/// Steps 3-6: the s.sums window sums of sum_i s_i P_i into windows[0 ..
/// s.sums) (points: the n points, or the n*W precomputed ones with a fixed
/// base); scratch from `temp` as for prepare(). The buckets stay carved;
/// the scratch of steps 3-5 and of step 6 overlap (they run one after the
/// other).
template <class Exec, class A, class X>
void accumulate(const Exec& ex, const shape& s, const digits& d, const A* points, X* windows,
                carver& temp) {
  X* buckets = temp.take<X>(s.buckets);
  carver pass_temp = temp, reduce_temp = temp;
  if (!temp.counting()) ex.zero(buckets, sizeof(X) * s.buckets);
  bucket_pass(ex, s, d, points, buckets, false, pass_temp);
  reduce(ex, s, buckets, windows, reduce_temp);
  temp = pass_temp.used() > reduce_temp.used() ? pass_temp : reduce_temp;
}

/// Scratch bytes prepare() needs for shape s.
template <class Exec, class Scalar>
std::size_t prepare_bytes(const Exec& ex, const shape& s) {
  carver c;
  prepare<Exec, Scalar>(ex, s, nullptr, digits{}, c);
  return c.used();
}

/// Scratch bytes accumulate() needs for shape s and points of type A.
template <class Exec, class A, class X>
std::size_t accumulate_bytes(const Exec& ex, const shape& s) {
  carver c;
  accumulate<Exec, A, X>(ex, s, digits{}, nullptr, nullptr, c);
  return c.used();
}

/// Scratch bytes bucket_pass() needs for shape s and points of type A.
template <class Exec, class A, class X>
std::size_t bucket_pass_bytes(const Exec& ex, const shape& s) {
  carver c;
  bucket_pass<Exec, A, X>(ex, s, digits{}, nullptr, nullptr, false, c);
  return c.used();
}

/// Scratch bytes reduce() needs for shape s.
template <class Exec, class X>
std::size_t reduce_bytes(const Exec& ex, const shape& s) {
  carver c;
  reduce<Exec, X>(ex, s, nullptr, nullptr, c);
  return c.used();
}

/// Bytes of the persistent digit arrays for shape s.
inline std::size_t digits_bytes(const shape& s) {
  carver c;
  carve_digits(c, s);
  return c.used();
}

// ---- chunked scalars

/// Steps 1-6 over the scalars in the chunks of ch: chunk k's digits are
/// made and sorted and its buckets added (bucket_pass) before chunk k+1's,
/// into one bucket array of shape s, then one reduction into windows[0 ..
/// s.sums). `st` runs the steps (exec_steps below on any executor; the
/// device's own in ops_impl.cuh), and st.wait(k) comes before chunk k's
/// scalars are read (the GPU waits for their upload there). Memory from
/// `mem`: digits of the largest chunk, the buckets and one scratch area
/// that the steps share (a counting carver only measures it).
template <class Steps, class Scalar, class A, class X>
void chunked(const Steps& st, const shape& s, const chunking& ch, const Scalar* scalars, const A* points,
             X* windows, carver& mem) {
  shape parts[max_chunks];
  unsigned largest = 0;
  std::size_t temp_bytes = st.reduce_bytes(s);
  for (unsigned k = 0; k < ch.count; ++k) {
    parts[k] = chunk_shape(s, ch, k);
    temp_bytes = std::max({temp_bytes, st.prepare_bytes(parts[k]), st.bucket_bytes(parts[k])});
    if (parts[k].entries > parts[largest].entries) largest = k;
  }
  const digits d = carve_digits(mem, parts[largest]);
  X* buckets = mem.take<X>(s.buckets);
  void* temp = mem.take_bytes(temp_bytes);
  if (mem.counting()) return;
  st.zero(buckets, sizeof(X) * s.buckets);
  for (unsigned k = 0; k < ch.count; ++k) {
    st.wait(k);
    st.prepare(parts[k], scalars + ch.begin[k], d, temp, temp_bytes);
    st.buckets(parts[k], d, points, buckets, k > 0, temp, temp_bytes);
  }
  st.reduce(s, buckets, windows, temp, temp_bytes);
}

/// The steps of chunked() on an executor, scratch carved from `temp`.
template <class Exec, class Scalar, class A, class X>
struct exec_steps {
  Exec ex;

  std::size_t prepare_bytes(const shape& s) const { return msm::prepare_bytes<Exec, Scalar>(ex, s); }
  std::size_t bucket_bytes(const shape& s) const { return bucket_pass_bytes<Exec, A, X>(ex, s); }
  std::size_t reduce_bytes(const shape& s) const { return msm::reduce_bytes<Exec, X>(ex, s); }
  void zero(void* p, std::size_t bytes) const { ex.zero(p, bytes); }
  void wait(unsigned) const {}
  void prepare(const shape& s, const Scalar* scalars, const digits& d, void* temp, std::size_t bytes) const {
    carver c(temp, bytes);
    msm::prepare(ex, s, scalars, d, c);
  }
  void buckets(const shape& s, const digits& d, const A* points, X* b, bool add, void* temp,
               std::size_t bytes) const {
    carver c(temp, bytes);
    bucket_pass(ex, s, d, points, b, add, c);
  }
  void reduce(const shape& s, const X* b, X* windows, void* temp, std::size_t bytes) const {
    carver c(temp, bytes);
    msm::reduce(ex, s, b, windows, c);
  }
};

/// Bytes chunked() takes from `mem` for shape s and chunks ch.
template <class Steps, class Scalar, class A, class X>
std::size_t chunked_bytes(const Steps& st, const shape& s, const chunking& ch) {
  carver c;
  chunked<Steps, Scalar, A, X>(st, s, ch, nullptr, nullptr, nullptr, c);
  return c.used();
}

/// sum_w 2^(c*w) windows[w] by Horner's rule (host or device, one thread);
/// with a fixed base the one sum is the result.
template <class X>
PL_HD X combine(const X* windows, const shape& s) {
  if (s.fixed_base) return windows[0];
  X acc = X::infinity();
  for (unsigned w = s.windows; w-- > 0;) {
    for (unsigned b = 0; b < s.c; ++b) acc = acc.dbl();
    acc = acc + windows[w];
  }
  return acc;
}

/// The n * s.windows points a fixed-base MSM of shape s reads.
template <class Exec, class A>
void precompute(const Exec& ex, const shape& s, const A* points, A* out) {
  ex.for_each(s.n, precompute_fn<A>{points, s.n, s.c, s.windows, out});
}

}  // namespace proofline::gpu::cuda::msm
