// Pippenger multi-scalar multiplication as a pipeline of data-parallel steps,
// written once over an executor (gpu/cuda/exec.hpp): on the GPU every step is
// a kernel launch or a CUB call; on the host the same functors run in loops,
// which is how the tests check this logic without a GPU.
//
// Problem: sum_i s_i * P_i for n affine points P_i (G1 or G2) and standard-form
// scalars s_i < 2^bits. Real witnesses are skewed (most values are 0 or 1), so
// buckets can hold anything from zero to all n points of a window: no step may
// give one thread work proportional to a bucket's size.
//
// Design:
//  1. digits   every scalar is cut into W windows of c bits, recoded to signed
//              digits d in [-2^(c-1), 2^(c-1)] (a carry passes up), so a window
//              needs H = 2^(c-1) buckets; digit d != 0 becomes the pair
//              key = window*H + |d|-1, value = i | sign<<31; d = 0 gets a
//              sentinel key that sorts last. W*c >= bits + 1 keeps the top
//              window free of carries.
//  2. sort     CUB radix sort of the n*W pairs on the key's low bits, so the
//              entries of a bucket are adjacent. Points are untouched, so one
//              sorted digit set serves A, B1 and B2 (same scalars w).
//  3. level 1  the sorted entries are cut into chunks of L1; a thread sums the
//              runs of equal keys inside its chunk with mixed XYZZ additions
//              (8M+2S) and writes one partial sum per (chunk, key); a prefix
//              sum over per-chunk run counts gives every partial its slot, so
//              the partials stay sorted by key. The next entry's key and
//              point index are loaded before the current point is added, so
//              only the point's own load is waited for. Nearly every
//              addition of an MSM is here, and its kernel needs many
//              registers (an XYZZ accumulator and an affine point live, plus
//              the products' temporaries): at 256 threads a block and up to
//              255 registers, the G2 and BLS12-381 G1 kernels fit one block
//              on an SM. Register caps (more resident threads, some
//              spills) were measured on the H200 and none paid
//              (docs/BENCHMARKS.md), so the kernel runs the plain launch.
//              For G2 it may also sum with lazy Fq2 products (one Montgomery
//              reduction less per product, zk::ff::fp2_lazy), and G1 with
//              coordinates in [0, 2p) (no final subtraction in a product,
//              zk::ff::fp_redundant): the partials are the same values
//              either way.
//  4. levels   the same over the partials (full additions, chunks of L) until
//              no key can have more than run_limit partials left
//              (max bucket size n shrinks to ceil(n/L) + 1 per level).
//  5. runsum   one thread per key adds its last few partials into the dense
//              bucket array (empty buckets stay at infinity).
//  6. reduce   window sum R(X) = sum_b (b+1) X_b over the H buckets X_b.
//              A segment j of L buckets gives its plain sum run_j and
//              tot_j = sum (b - jL + 1) X_b; then
//                R(X) = sum_j tot_j + L * R(Y),  Y_k = run_(k+1),
//              the same problem on H/L points, level after level; the tot_j
//              are summed by 4-way additions and Horner's rule (log2 L
//              doublings a level) puts the levels together. The reduction
//              is latency-bound (a chain of dependent additions on few
//              threads), so a block of K = 2^6 threads takes a segment of
//              L = 8K buckets, each thread a run of 8 by running sums from
//              the top (2 additions a bucket), and a suffix scan and a tree
//              in shared memory put the runs together (segment_block_fn,
//              reduce_kernel, PROOFLINE_MSM_REDUCE). About 3.6 full
//              additions a bucket, and a G1 reduction of 2^15 buckets waits
//              for about 85 in a row (two levels). A thread a segment of 8
//              (2.3 additions a bucket, about 180 in a row) was 1-13% slower
//              on the H200 (docs/BENCHMARKS.md).
//  7. combine  (host) the W window sums by Horner's rule: c doublings each.
//
// Chunked scalars (chunked()): steps 1-5 run once per chunk of the scalars,
// every chunk adding into the same buckets, then one step 6. The GPU driver
// uploads chunk k+1 on a copy stream while chunk k computes, so only the
// first (smallest) chunk's upload is exposed. Each extra chunk pays its
// levels and runsum again (about H partials each), so the planner weighs
// buckets by the number of passes.
//
// Fixed base (shape::fixed_base): when the points are known ahead, as a
// proving key's are, precompute(P) stores 2^(c w) P_i for every window w, so
// window w's digit of s_i selects point w*n + i and every window shares one
// set of H buckets. Work per MSM drops to n*W additions plus one window's
// reduction and no doublings, so larger windows pay: W = 12 instead of 15 at
// 2^24 (20% fewer additions) for n*W points of memory.
//
// Cost: about n*W mixed additions plus 2.3*W*H full ones; c minimises that
// (plan), with a bucket weighted as 10 mixed additions, fitted to a window
// sweep on the GPU (the reduction is latency-bound at these sizes); the
// sweep and the MSM times are in docs/BENCHMARKS.md.
//
// Counts that depend on the data (non-zero digits, partials per level) stay
// on the device; kernels are sized by their upper bounds and read the
// counts, so a whole MSM is enqueued without a host round trip.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "gpu/cuda/env_setting.hpp"
#include "gpu/cuda/exec.hpp"
#include "zk/common/hd.hpp"
#include "zk/ec/point.hpp"
#include "zk/ff/fp.hpp"
#include "zk/ff/fp2.hpp"
#include "zk/ff/fp_redundant.hpp"

namespace proofline::gpu::cuda::msm {

/// Levels of chunked reduction at most (enough for n up to 2^31 with L >= 16).
constexpr unsigned max_levels = 8;
/// Sign bit of a sorted value; the low 31 bits are the point index.
constexpr uint32_t sign_bit = 0x80000000u;

/// How step 3 (level 1, nearly all of an MSM's additions) sums its runs.
/// Spelled "xyzz" or "xyzz:lazy", optionally followed by ":bN" (parse_level1).
struct level1_kernel {
  /// Fq2 groups: products with one reduction less (zk::ff::fp2_lazy); Fq
  /// groups: coordinates anywhere in [0, 2p), inline products without their
  /// final subtraction (zk::ff::fp_redundant). The same sums either way.
  bool lazy = false;
  /// Threads a block of the launch (32, 64, 128 or 256; 0: level1_threads()
  /// for the points). The kernel is the same either way.
  unsigned threads = 0;
};

/// "xyzz" (plain products) or "xyzz:lazy", then optionally ":b32", ":b64",
/// ":b128" or ":b256"; throws std::invalid_argument naming the problem.
inline level1_kernel parse_level1(const std::string& spec) {
  level1_kernel k;
  std::string head = spec;
  const std::size_t b = spec.rfind(":b");
  if (b != std::string::npos) {
    const std::string n = spec.substr(b + 2);
    for (unsigned t : {32u, 64u, 128u, 256u})
      if (n == std::to_string(t)) k.threads = t;
    if (k.threads == 0)
      throw std::invalid_argument("msm kernel '" + spec + "': threads a block must be 32, 64, 128 or 256");
    head = spec.substr(0, b);
  }
  if (head == "xyzz:lazy")
    k.lazy = true;
  else if (head != "xyzz")
    throw std::invalid_argument("msm kernel '" + spec + "': unknown kernel (expected xyzz or xyzz:lazy, then :bN)");
  return k;
}

/// The spelling parse_level1 reads back.
inline std::string describe(const level1_kernel& k) {
  return std::string(k.lazy ? "xyzz:lazy" : "xyzz") + (k.threads ? ":b" + std::to_string(k.threads) : "");
}

/// The level-1 kernel MSMs use unless told otherwise: PROOFLINE_MSM_KERNEL
/// when set (parse_level1's spelling), else xyzz:lazy (lazy Fq2 products
/// for G2, coordinates in [0, 2p) for G1: the fastest measured,
/// docs/BENCHMARKS.md). Read once; a
/// bad value throws std::invalid_argument at every use, naming the variable.
inline level1_kernel default_level1() {
  static const env_setting<level1_kernel> choice("PROOFLINE_MSM_KERNEL", level1_kernel{true}, parse_level1);
  return choice.get();
}

/// How step 6 reduces the buckets to window sums: a block of
/// 2^threads_log threads a segment, each thread a run of 2^run_log buckets
/// by running sums, the runs put together by a scan and a tree in shared
/// memory. Spelled "block" (threads_log 6, run_log 3) or "block:tT:rR"
/// (parse_reduce).
struct reduce_kernel {
  unsigned char threads_log = 6;  ///< 2^threads_log threads a segment (0-8)
  unsigned char run_log = 3;      ///< 2^run_log buckets a thread (0-6)

  bool operator==(const reduce_kernel& o) const { return threads_log == o.threads_log && run_log == o.run_log; }
  bool operator!=(const reduce_kernel& o) const { return !(*this == o); }
};

/// "block" or "block:tT:rR" (T in 0-8, R in 0-6, not both 0); throws
/// std::invalid_argument naming the problem.
inline reduce_kernel parse_reduce(const std::string& spec) {
  const auto bad = [&] {
    return std::invalid_argument("msm reduction '" + spec + "': expected block or block:tT:rR (T 0-8, R 0-6)");
  };
  if (spec == "block") return reduce_kernel{};
  if (spec.size() != 11 || spec.compare(0, 7, "block:t") != 0 || spec.compare(8, 2, ":r") != 0) throw bad();
  const auto digit = [&](std::size_t i) { return spec[i] >= '0' && spec[i] <= '9' ? unsigned(spec[i] - '0') : 99u; };
  const unsigned t = digit(7), r = digit(10);
  if (t > 8 || r > 6 || t + r == 0) throw bad();
  return reduce_kernel{static_cast<unsigned char>(t), static_cast<unsigned char>(r)};
}

/// The spelling parse_reduce reads back.
inline std::string describe(const reduce_kernel& k) {
  return "block:t" + std::to_string(k.threads_log) + ":r" + std::to_string(k.run_log);
}

/// The reduction MSMs use unless told otherwise: PROOFLINE_MSM_REDUCE when
/// set, else t6:r3 (within 3% of the fastest shape measured on every group
/// at 2^20-2^24, and the fewest additions among those; docs/BENCHMARKS.md).
/// Read once; a bad value throws std::invalid_argument at every use, naming
/// the variable.
inline reduce_kernel default_reduce() {
  static const env_setting<reduce_kernel> choice("PROOFLINE_MSM_REDUCE", reduce_kernel{}, parse_reduce);
  return choice.get();
}

/// The shape of one MSM: window, buckets, chunking and reduction sizes.
struct shape {
  std::size_t n = 0;          ///< points and scalars
  bool fixed_base = false;    ///< points are precomputed per window (precompute())
  unsigned bits = 0;          ///< scalar bits (254 for BN254 Fr, 255 for BLS12-381 Fr)
  unsigned c = 0;             ///< window bits
  unsigned windows = 0;       ///< W = ceil((bits + 1) / c)
  uint32_t half = 0;          ///< H = 2^(c-1) buckets per window
  uint32_t buckets = 0;       ///< W * H, or H with a fixed base
  unsigned sums = 0;          ///< window sums accumulate() writes: W, or 1 with a fixed base
  unsigned key_bits = 0;      ///< bits the sort looks at
  uint32_t sentinel = 0;      ///< key of a zero digit: 2^key_bits - 1 > every bucket key
  std::size_t entries = 0;    ///< n * W sorted pairs
  unsigned chunk1 = 0;        ///< L1: sorted entries per level-1 thread
  unsigned chunk = 0;         ///< L: partials per thread on later levels
  unsigned levels = 0;        ///< chunked levels, level 1 included
  std::size_t partials_max[max_levels] = {};  ///< upper bound of the partials each level writes
  std::size_t chunks_max[max_levels] = {};    ///< threads (chunks) of each level
  /// A chunk of a larger MSM (chunk_shape()): scalar i here is scalar
  /// offset + i of the whole, and a fixed base's window w of it is point
  /// w * table_n + offset + i. Otherwise offset = 0 and table_n = n.
  std::size_t offset = 0;
  std::size_t table_n = 0;
  level1_kernel level1;  ///< how step 3 runs on the device (default_level1() by plan())
  reduce_kernel reduce;  ///< how step 6 runs (default_reduce() by plan())
};

/// Points added by one thread when the segment sums are summed.
constexpr uint32_t reduce_fan_in = 4;

/// Work estimate in mixed additions: n*W bucket additions plus a bucket's
/// share of everything per bucket, weighted as 10 mixed additions for one
/// pass (fitted on the GPU: docs/BENCHMARKS.md, "Constants tuned on the GPU"). That share is taken as half per pass
/// (partials, runsum: paid again by every chunk of a chunked MSM) and half
/// once (reduction); the split is an estimate, not a measurement.
inline double shape_cost(std::size_t n, unsigned bits, unsigned c, bool fixed_base, unsigned passes = 1) {
  unsigned w = (bits + 1 + c - 1) / c;
  return double(n) * w + (5.0 + 5.0 * passes) * double(fixed_base ? 1 : w) * double(1u << (c - 1));
}

/// The shape for n scalars of `bits` bits; c = 0 picks the cheapest window
/// for `passes` bucket passes (chunks of a chunked MSM; 1 otherwise).
/// Throws std::length_error for sizes the 32-bit indices cannot address.
inline shape plan(std::size_t n, unsigned bits, unsigned c = 0, bool fixed_base = false, unsigned passes = 1) {
  if (n >= (std::size_t(1) << 31)) throw std::length_error("msm: more than 2^31 - 1 points");
  shape s;
  s.n = n;
  s.table_n = n;
  s.level1 = default_level1();
  s.reduce = default_reduce();
  s.bits = bits;
  s.fixed_base = fixed_base;
  if (c == 0) {
    c = 2;
    for (unsigned t = 3; t <= 23; ++t)
      if (shape_cost(n, bits, t, fixed_base, passes) < shape_cost(n, bits, c, fixed_base, passes)) c = t;
  }
  if (c < 2 || c > 24) throw std::invalid_argument("msm: window of " + std::to_string(c) + " bits");
  s.c = c;
  s.windows = (bits + 1 + c - 1) / c;
  s.half = uint32_t(1) << (c - 1);
  s.buckets = fixed_base ? s.half : s.windows * s.half;
  s.sums = fixed_base ? 1 : s.windows;
  s.key_bits = 1;
  while ((uint64_t(1) << s.key_bits) <= s.buckets) ++s.key_bits;
  s.sentinel = uint32_t((uint64_t(1) << s.key_bits) - 1);
  s.entries = n * s.windows;
  if (s.entries >= (std::size_t(1) << 32) - 1)
    throw std::length_error("msm: " + std::to_string(s.entries) + " digits exceed 32-bit positions");
  if (fixed_base && s.entries >= (std::size_t(1) << 31))
    throw std::length_error("msm: " + std::to_string(s.entries) + " precomputed points exceed 31-bit indices");

  // Level 1 wants about 2^18 threads (132 SMs x 512 resident, a few waves)
  // and at most 64 entries per thread: longer chunks leave fewer partials
  // (entries / L1 + buckets) for the levels after it.
  constexpr std::size_t target_threads = std::size_t(1) << 18;
  s.chunk1 = unsigned(std::clamp<std::size_t>(s.entries / target_threads, 2, 64));
  s.chunk = 16;
  constexpr std::size_t run_limit = 16;  // partials of one key the runsum step adds serially
  std::size_t in = std::max<std::size_t>(s.entries, 1);
  std::size_t run = std::max<std::size_t>(fixed_base ? s.entries : n, 1);  // entries one key can have
  unsigned L = s.chunk1;
  s.levels = 0;
  do {
    if (s.levels == max_levels) throw std::length_error("msm: too many reduction levels");
    std::size_t chunks = (in + L - 1) / L;
    std::size_t out = std::min(in, chunks + std::min<std::size_t>(s.buckets, in));
    s.chunks_max[s.levels] = chunks;
    s.partials_max[s.levels] = out;
    ++s.levels;
    run = (run + L - 1) / L + 1;
    in = out;
    L = s.chunk;
  } while (run > run_limit);

  return s;
}

// ---- helpers ---------------------------------------------------------------

/// Loads a point with 16-byte loads on the device (read-only path); a plain
/// copy on the host. Every point type here is a multiple of 16 bytes and
/// arrays come from cudaMalloc (256-byte aligned).
template <class T>
PL_HD T load(const T* p) {
#if defined(__CUDA_ARCH__)
  static_assert(sizeof(T) % 16 == 0, "points load as 16-byte vectors");
  T r;
  const uint4* s = reinterpret_cast<const uint4*>(p);
  uint4* d = reinterpret_cast<uint4*>(&r);
  PL_UNROLL for (unsigned i = 0; i < sizeof(T) / 16; ++i) d[i] = __ldg(s + i);
  return r;
#else
  return *p;
#endif
}

/// The signed digit of window w (c bits) with the carry from below updated.
template <class Scalar>
PL_HD uint32_t signed_digit(const Scalar& s, unsigned w, unsigned c, uint32_t& carry, bool& negative) {
  uint32_t raw = s.bits(w * c, c) + carry;  // 0 .. 2^c
  uint32_t half = uint32_t(1) << (c - 1);
  if (raw > half) {
    carry = 1;
    negative = true;
    return (uint32_t(1) << c) - raw;  // 0 when raw == 2^c
  }
  carry = 0;
  negative = false;
  return raw;
}

// ---- step 1: digits ----------------------------------------------------------

/// Window w's digit of scalar i: key (window w's bucket set, or the one set
/// with a fixed base) and value (point i, or precomputed point w*n + i).
template <class Scalar>
struct digits_fn {
  const Scalar* scalars;
  uint32_t* keys;  ///< [window][i]
  uint32_t* vals;
  std::size_t n;
  unsigned c, windows;
  uint32_t half, sentinel;
  bool fixed_base;
  std::size_t offset, table_n;  ///< see shape

  PL_HD void operator()(std::size_t i) const {
    const Scalar s = scalars[i];
    uint32_t carry = 0;
    for (unsigned w = 0; w < windows; ++w) {
      bool neg = false;
      uint32_t mag = signed_digit(s, w, c, carry, neg);
      std::size_t at = std::size_t(w) * n + i;
      keys[at] = mag ? (fixed_base ? 0u : w * half) + (mag - 1) : sentinel;
      const std::size_t point = (fixed_base ? std::size_t(w) * table_n : 0) + offset + i;
      vals[at] = uint32_t(point) | (neg ? sign_bit : 0u);
    }
  }
};

/// count = number of keys below the sentinel (they are sorted; count starts at 0).
struct count_fn {
  const uint32_t* keys;
  std::size_t entries;
  uint32_t sentinel;
  uint32_t* count;

  PL_HD void operator()(std::size_t i) const {
    if (keys[i] != sentinel && (i + 1 == entries || keys[i + 1] == sentinel)) *count = uint32_t(i + 1);
  }
};

// ---- steps 3 and 4: chunked levels -----------------------------------------

/// Runs (groups of equal keys) in chunk t of the first *count keys.
struct chunk_runs_fn {
  const uint32_t* keys;
  const uint32_t* count;
  unsigned chunk;
  uint32_t* runs;

  PL_HD void operator()(std::size_t t) const {
    std::size_t total = *count, begin = t * chunk;
    if (begin >= total) {
      runs[t] = 0;
      return;
    }
    std::size_t end = begin + chunk < total ? begin + chunk : total;
    uint32_t r = 1;
    for (std::size_t i = begin + 1; i < end; ++i) r += keys[i] != keys[i - 1];
    runs[t] = r;
  }
};

/// *total = base[m-1] + runs[m-1]: the partials a level writes.
struct total_fn {
  const uint32_t* base;
  const uint32_t* runs;
  std::size_t m;
  uint32_t* total;
  PL_HD void operator()(std::size_t) const { *total = base[m - 1] + runs[m - 1]; }
};

/// One level: sums the runs of equal keys inside chunk t of the `count`
/// sorted entries and writes one partial per (chunk, key) at the chunk's
/// slots; `terms.at(i)` fetches what names entry i (an index load at most)
/// and `terms.add(acc, that)` adds the entry to a running sum of type
/// Terms::acc, which Terms::to_out<X> turns into a partial. The key and
/// name of entry i + 1 are loaded before entry i is added, so their loads
/// overlap the addition and only the term's own load waits.
template <class X, class Terms>
struct level_runs_fn {
  const uint32_t* keys;
  const uint32_t* count;
  const uint32_t* base;
  unsigned chunk;
  uint32_t* out_keys;
  X* out;
  Terms terms;

  PL_HD void operator()(std::size_t t) const {
    std::size_t total = *count, begin = t * chunk;
    if (begin >= total) return;
    std::size_t end = begin + chunk < total ? begin + chunk : total;
    uint32_t slot = base[t];
    uint32_t key = keys[begin];
    uint32_t k = key;
    auto name = terms.at(begin);
    using acc_t = typename Terms::acc;
    acc_t acc = acc_t::infinity();
    for (std::size_t i = begin; i < end; ++i) {
      const bool more = i + 1 < end;
      const uint32_t k_next = more ? keys[i + 1] : k;
      const auto name_next = more ? terms.at(i + 1) : name;
      if (k != key) {
        out_keys[slot] = key;
        out[slot] = Terms::template to_out<X>(acc);
        ++slot;
        key = k;
        acc = acc_t::infinity();
      }
      acc = terms.add(acc, name);
      k = k_next;
      name = name_next;
    }
    out_keys[slot] = key;
    out[slot] = Terms::template to_out<X>(acc);
  }
};

/// G's twin for level 1's lazy products (level1_kernel::lazy), whose points
/// hold the same values as G's (recast()): for Fq2 coordinates, products
/// with one reduction less (zk::ff::fp2_lazy); for Fq ones, coordinates
/// anywhere in [0, 2p), products without their final subtraction
/// (zk::ff::fp_redundant).
template <class G, class F = typename G::field>
struct lazy_group;
template <class G, class P>
struct lazy_group<G, zk::ff::fp<P>> {
  using field = zk::ff::fp_redundant<zk::ff::fp<P>>;
};
template <class G, class B>
struct lazy_group<G, zk::ff::fp2<B, false>> {
  using field = zk::ff::fp2<B, true>;
};

/// Whether a field is Fq (fp).
template <class F>
struct is_fp : std::false_type {};
template <class P>
struct is_fp<zk::ff::fp<P>> : std::true_type {};

/// A coordinate as field To holds it: Fq2 with or without lazy products
/// (the same words), Fq into [0, 2p) (as it is) and back (reduced).
template <class To, class From>
PL_HD To coord(const From& x) {
  if constexpr (std::is_same_v<To, From>)
    return x;
  else if constexpr (is_fp<From>::value)
    return To::from(x);
  else if constexpr (is_fp<To>::value)
    return x.exact();
  else
    return To{x.c0, x.c1};
}

/// The same point in group To (G, or its lazy twin).
template <class To, class From>
PL_HD zk::ec::affine<To> recast(const zk::ec::affine<From>& p) {
  using F = typename To::field;
  return {coord<F>(p.x), coord<F>(p.y)};
}
template <class To, class From>
PL_HD zk::ec::xyzz<To> recast(const zk::ec::xyzz<From>& p) {
  using F = typename To::field;
  return {coord<F>(p.X), coord<F>(p.Y), coord<F>(p.ZZ), coord<F>(p.ZZZ)};
}

/// Level 1's terms: affine points through the sorted values (index, sign),
/// summed in XYZZ coordinates of group AccG (A's group, or its lazy twin).
template <class A, class AccG = typename A::group>
struct signed_points {
  using acc = zk::ec::xyzz<AccG>;
  static constexpr bool same = std::is_same_v<AccG, typename A::group>;
  const uint32_t* vals;
  const A* points;
  PL_HD uint32_t at(std::size_t i) const { return vals[i]; }
  PL_HD acc add(const acc& a, uint32_t v) const {
    A p = load(points + (v & ~sign_bit));
    if (v & sign_bit) p = -p;
    if constexpr (same)
      return a.add_affine(p);
    else
      return a.add_affine(recast<AccG>(p));
  }
  template <class X>
  PL_HD static X to_out(const acc& a) {
    if constexpr (same)
      return a;
    else
      return recast<typename X::group>(a);
  }
};

/// Later levels' terms: the previous level's partials.
template <class X>
struct partial_sums {
  using acc = X;
  const X* in;
  PL_HD std::size_t at(std::size_t i) const { return i; }
  PL_HD X add(const X& a, std::size_t i) const { return a + load(in + i); }
  template <class Y>
  PL_HD static Y to_out(const X& a) {
    return a;
  }
};

/// Threads a block of the level-1 launch for affine points A unless the
/// kernel says: 128 for points larger than BN254 G1's (G2, BLS12-381 G1),
/// whose kernels hold one 256-thread block an SM (230-255 registers), so
/// half-size blocks give the SM's scheduler finer pieces to balance: 2-3%
/// faster on the H200 (docs/BENCHMARKS.md); 256 (the executor's) for BN254
/// G1, where smaller blocks were 2-3% slower.
template <class A>
constexpr unsigned level1_threads() {
  return sizeof(A) > 64 ? 128 : 0;
}

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

// ---- step 5: runsum --------------------------------------------------------

/// The first partial of each key adds the key's remaining partials (at most
/// run_limit) and stores the bucket, or adds it to the bucket when `add`
/// (a later chunk: earlier chunks filled the buckets; one full addition).
template <class X>
struct runsum_fn {
  const uint32_t* keys;
  const X* in;
  const uint32_t* count;
  X* buckets;
  bool add;

  PL_HD void operator()(std::size_t i) const {
    std::size_t total = *count;
    if (i >= total) return;
    uint32_t key = keys[i];
    if (i > 0 && keys[i - 1] == key) return;
    X acc = load(in + i);
    for (std::size_t j = i + 1; j < total && keys[j] == key; ++j) acc = acc + load(in + j);
    buckets[key] = add ? buckets[key] + acc : acc;  // plain load: written in this kernel
  }
};

// ---- step 6: window sums ---------------------------------------------------

/// out[w][j] = sum_{k<F} in[w][jF+k] (indices past m read as infinity).
template <class X>
struct sum_fn {
  const X* in;
  std::size_t m, out_m;
  X* out;

  PL_HD void operator()(std::size_t t) const {
    const std::size_t w = t / out_m, j = t % out_m;
    X acc = X::infinity();
    for (uint32_t k = 0; k < reduce_fan_in; ++k) {
      std::size_t i = j * reduce_fan_in + k;
      if (i < m) acc = acc + load(in + w * m + i);
    }
    out[t] = acc;
  }
};

/// Levels of the block reduction at most (2^31 buckets, 2 a segment).
constexpr unsigned reduce_block_levels = 31;

/// Shared memory segment_block_fn needs: 3K + 1 points for K = 2^threads_log threads.
template <class X>
constexpr std::size_t segment_block_bytes(unsigned threads_log) {
  return (3 * (std::size_t(1) << threads_log) + 1) * sizeof(X);
}

/// The most shared memory a block of the block reduction takes (a block may
/// opt in to more than this on every GPU since sm_80).
constexpr std::size_t reduce_block_bytes_max = std::size_t(96) << 10;

/// threads_log as asked, lowered until a block's points fit
/// reduce_block_bytes_max: at most 2^7 threads for G1 points, 2^6 for G2 ones.
template <class X>
constexpr unsigned block_threads_log(unsigned asked) {
  while (asked > 0 && segment_block_bytes<X>(asked) > reduce_block_bytes_max) --asked;
  return asked;
}

/// Block t = (window w, segment j) of a level with m points a window, in
/// segments of L = K R points (K = 2^tl threads, runs of R = 2^rl points):
/// tot[t] = sum_{k<L} (k+1) x[w][jL+k] and y[w][j-1] = sum_{k<L} x[w][jL+k]
/// (y[w][T-1] = infinity), T = m / L.
/// Thread i sums its run x[w][jL+iR ..] from the top by running sums:
/// p_i = sum_k x_(iR+k), t_i = sum_k (k+1) x_(iR+k) (2R additions in a row).
/// The point at iR+k counts iR+k+1 = (k+1) + iR times, so
///   tot = sum_i t_i + R sum_i i p_i,   sum_i i p_i = sum_i v_i,
/// v_i = sum_(i'>i) p_i' the suffix sums of q_i = p_(i+1) (q_(K-1) = inf):
/// a scan in shared memory (tl steps, two copies in turn), then one tree
/// (tl steps) over the v_i and the t_i together, and rl doublings. The
/// segment's plain sum is p_0 + v_0. About 2R + 2tl + rl + 2 additions in a
/// row, 2 + (2 tl + 1) / R a point.
template <class X>
struct segment_block_fn {
  const X* x;
  std::size_t m, T;
  unsigned tl, rl;
  X* tot;
  X* y;

  template <class Ctx>
  PL_HD void operator()(std::size_t t, const Ctx& ctx) const {
    const unsigned K = 1u << tl, R = 1u << rl;
    const std::size_t w = t / T, j = t % T;
    const X* b = x + w * m + j * (std::size_t(K) << rl);
    X* q[2] = {ctx.template shared<X>(), ctx.template shared<X>() + K};
    X* ts = ctx.template shared<X>() + 2 * K;
    X* p0 = ts + K;
    ctx.threads(K, [&](unsigned i) {
      X run = X::infinity(), acc = X::infinity();
      for (unsigned k = R; k-- > 0;) {
        run = run + load(b + std::size_t(i) * R + k);
        acc = acc + run;  // point k of the run counted k + 1 times
      }
      ts[i] = acc;
      if (i > 0) {
        q[0][i - 1] = run;
      } else {
        *p0 = run;
        q[0][K - 1] = X::infinity();
      }
    });
    ctx.sync();
    unsigned p = 0;
    for (unsigned d = 1; d < K; d <<= 1, p ^= 1) {
      const X* in = q[p];
      X* out = q[p ^ 1];
      ctx.threads(K, [&](unsigned i) { out[i] = i + d < K ? in[i] + in[i + d] : in[i]; });
      ctx.sync();
    }
    X* v = q[p];
    ctx.threads(1, [&](unsigned) {
      if (j > 0)
        y[t - 1] = *p0 + v[0];
      else
        y[w * T + T - 1] = X::infinity();
    });
    ctx.sync();  // v[0] is read before the tree adds into it
    for (unsigned d = K / 2; d > 0; d >>= 1) {
      // thread e < d sums the v, e >= d the t: reads [i + d], d <= i + d < 2d, not written here
      ctx.threads(2 * d, [&](unsigned e) {
        X* a = e < d ? v : ts;
        const unsigned i = e < d ? e : e - d;
        a[i] = a[i] + a[i + d];
      });
      ctx.sync();
    }
    ctx.threads(1, [&](unsigned) {
      X acc = v[0];
      for (unsigned d = 0; d < rl; ++d) acc = acc.dbl();
      tot[t] = acc + ts[0];
    });
  }
};

/// windows[w] = S_0 + 2^lg_0 (S_1 + 2^lg_1 (... + 2^lg_(n-2) S_(n-1))),
/// S_i = sums[i][w]: the levels of the reduction put together.
template <class X>
struct horner_fn {
  const X* sums;  ///< [levels][W]
  unsigned levels, windows;
  unsigned char lgs[reduce_block_levels];
  X* out;

  PL_HD void operator()(std::size_t w) const {
    X acc = load(sums + std::size_t(levels - 1) * windows + w);
    for (unsigned i = levels - 1; i-- > 0;) {
      for (unsigned d = 0; d < lgs[i]; ++d) acc = acc.dbl();
      acc = acc + load(sums + std::size_t(i) * windows + w);
    }
    out[w] = acc;
  }
};

// ---- the pipeline ------------------------------------------------------------

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
/// no digit of d reaches are left as they are); scratch from `temp` as for
/// prepare().
template <class Exec, class A, class X>
void bucket_pass(const Exec& ex, const shape& s, const digits& d, const A* points, X* buckets, bool add,
                 carver& temp) {
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

  const uint32_t* in_count = d.count;
  const uint32_t* in_keys = d.keys;
  const X* in_parts = nullptr;
  for (unsigned lv = 0; lv < s.levels; ++lv) {
    unsigned L = lv == 0 ? s.chunk1 : s.chunk;
    std::size_t m = s.chunks_max[lv];
    uint32_t* out_keys = pkeys[lv % 2];
    X* out = parts[lv % 2];
    ex.for_each(m, chunk_runs_fn{in_keys, in_count, L, runs});
    ex.exclusive_sum(scan_temp, scan_bytes, runs, base, m);
    ex.for_each(1, total_fn{base, runs, m, counts + lv});
    if (lv == 0)
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

/// The levels of step 6 over H buckets of points X: level i takes segments
/// of 2^(tl[i] + rl[i]) points, 2^tl[i] threads a block, until one point
/// is left a window (H a power of 2; one level of one point for H = 1).
struct reduce_levels {
  unsigned count = 0;
  unsigned char tl[reduce_block_levels] = {}, rl[reduce_block_levels] = {};
};

template <class X>
reduce_levels plan_reduce(std::size_t half, const reduce_kernel& k) {
  reduce_levels p;
  for (std::size_t m = half; m > 1;) {
    unsigned lg = 0;
    while ((std::size_t(2) << lg) <= m) ++lg;
    const unsigned rl = std::min<unsigned>(k.run_log, lg);
    const unsigned tl = std::min<unsigned>(block_threads_log<X>(k.threads_log), lg - rl);
    if (tl + rl == 0) throw std::logic_error("msm: window reduction without a segment");
    p.tl[p.count] = static_cast<unsigned char>(tl);
    p.rl[p.count++] = static_cast<unsigned char>(rl);
    m >>= tl + rl;
  }
  if (p.count == 0) p.count = 1;  // one bucket: a segment of one point passes it on
  return p;
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

// ---- chunked scalars ---------------------------------------------------------

/// Chunks at most.
constexpr unsigned max_chunks = 8;
/// Scalars from which an MSM is chunked by default: from 2^22 (128 MiB of
/// scalars) their upload is worth hiding; below, the extra bucket passes
/// would cost about as much as they hide (docs/BENCHMARKS.md, "Constants
/// tuned on the GPU").
constexpr std::size_t chunked_min_n = std::size_t(1) << 22;
/// Chunks by default from chunked_min_n on.
constexpr unsigned chunked_default = 3;
/// Chunk k+1 holds this many times the scalars of chunk k: its upload must
/// hide behind chunk k's compute, and the GPU computes a G1 MSM's scalars
/// several times slower than it uploads them (docs/BENCHMARKS.md), G2's
/// slower still; the first chunk, whose upload nothing hides, is 1/21 of n
/// for 3.
constexpr std::size_t chunk_growth = 4;

/// Where the scalars of each chunk start: chunk k is [begin[k], begin[k+1]).
struct chunking {
  unsigned count = 1;
  std::size_t begin[max_chunks + 1] = {};
};

/// The chunk count for n scalars: `forced` when non-zero (1 = unchunked),
/// else chunked_default from chunked_min_n on and 1 below; at most
/// max_chunks and at most n (every chunk holds a scalar).
inline unsigned chunk_count(std::size_t n, unsigned forced = 0) {
  unsigned k = forced ? forced : (n >= chunked_min_n ? chunked_default : 1u);
  k = std::min(k, max_chunks);
  return unsigned(std::max<std::size_t>(1, std::min<std::size_t>(k, n)));
}

/// n scalars in `count` chunks (clamped as chunk_count() does), each
/// chunk_growth times the one before.
inline chunking split(std::size_t n, unsigned count) {
  chunking ch;
  ch.count = chunk_count(n, std::max(count, 1u));
  std::size_t weight[max_chunks + 1] = {0};  // prefix sums of 1, g, g^2, ...
  std::size_t g = 1;
  for (unsigned k = 0; k < ch.count; ++k, g *= chunk_growth) weight[k + 1] = weight[k] + g;
  const std::size_t total = weight[ch.count];  // <= 4^8: n * total fits 64 bits
  for (unsigned k = 1; k < ch.count; ++k) {
    std::size_t b = n * weight[k] / total;
    b = std::max(b, ch.begin[k - 1] + 1);  // no empty chunk (count <= n)
    ch.begin[k] = std::min(b, n - (ch.count - k));
  }
  ch.begin[ch.count] = n;
  return ch;
}

/// The shape of chunk k of the MSM of shape s: s's window, its scalars
/// offset by begin[k] and, with a fixed base, s's precomputed table.
inline shape chunk_shape(const shape& s, const chunking& ch, unsigned k) {
  shape p = plan(ch.begin[k + 1] - ch.begin[k], s.bits, s.c, s.fixed_base);
  p.offset = s.offset + ch.begin[k];
  p.table_n = s.table_n;
  p.level1 = s.level1;
  return p;
}

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

/// Table multiples a precompute thread converts to affine with one shared
/// inversion (Montgomery's trick: 3 multiplications each instead of an
/// inversion each).
constexpr unsigned precompute_batch = 8;

/// Thread i: out[w*n + i] = 2^(c w) points[i] for every window w (Jacobian
/// doublings; the multiples of a batch of precompute_batch windows share
/// one inversion). Equal to converting each multiple on its own: affine
/// coordinates are unique.
template <class A>
struct precompute_fn {
  const A* points;
  std::size_t n;
  unsigned c, windows;
  A* out;

  PL_HD void operator()(std::size_t i) const {
    using J = zk::ec::jacobian<typename A::group>;
    using F = typename J::field;
    const A p = load(points + i);
    out[i] = p;
    J acc = J::from_affine(p);
    J batch[precompute_batch];
    F before[precompute_batch];  // product of the non-zero Z of the batch's earlier multiples
    for (unsigned w0 = 1; w0 < windows; w0 += precompute_batch) {
      const unsigned m = windows - w0 < precompute_batch ? windows - w0 : precompute_batch;
      F run = F::one();
      for (unsigned k = 0; k < m; ++k) {
        for (unsigned d = 0; d < c; ++d) acc = acc.dbl();
        batch[k] = acc;
        before[k] = run;
        if (!acc.Z.is_zero()) run = run * acc.Z;
      }
      F inv = run.inverse();  // 1 / (product of the batch's non-zero Z)
      for (unsigned k = m; k-- > 0;) {
        A& dst = out[std::size_t(w0 + k) * n + i];
        if (batch[k].Z.is_zero()) {
          dst = A::infinity();
          continue;
        }
        const F zi = inv * before[k];
        inv = inv * batch[k].Z;
        const F zi2 = zi.sqr();
        dst = A{batch[k].X * zi2, batch[k].Y * zi2 * zi};
      }
    }
  }
};

/// The n * s.windows points a fixed-base MSM of shape s reads.
template <class Exec, class A>
void precompute(const Exec& ex, const shape& s, const A* points, A* out) {
  ex.for_each(s.n, precompute_fn<A>{points, s.n, s.c, s.windows, out});
}

}  // namespace proofline::gpu::cuda::msm
