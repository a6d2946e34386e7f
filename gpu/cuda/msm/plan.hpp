// The plan of one MSM (gpu/cuda/msm/): its window, buckets, chunked
// levels and reduction levels (shape, plan, plan_reduce), and how chunked
// scalars are split (chunking, split, chunk_shape). Host code only; the
// kernels read the shape. The design: docs/GPU.md, "MSM pipeline".
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "gpu/cuda/msm/tuning.hpp"

namespace proofline::gpu::cuda::msm {

/// Levels of chunked reduction at most (enough for n up to 2^31 with L >= 16).
constexpr unsigned max_levels = 8;
/// Sign bit of a sorted value; the low 31 bits are the point index.
constexpr uint32_t sign_bit = 0x80000000u;

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
  level1_kernel level1;  ///< how step 3 runs on the device (level1_for(n) by plan())
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
  s.level1 = level1_for(n);
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

// ---- step 3a: batched-affine rounds

/// Whether shape s takes the batched-affine rounds: its kernel asks, and
/// the entries leave bit 31 of an entry's name free (affine_kernels.hpp);
/// otherwise level 1 sums in XYZZ alone.
inline bool affine_rounds_on(const shape& s) {
  return s.level1.affine && s.entries < (std::size_t(1) << 31);
}

/// Pairwise rounds for shape s: the kernel's when spelled, else about log2
/// of the mean entries a bucket (each round about halves a long run), 1 to
/// 8; what is left, level 1 sums in XYZZ.
inline unsigned affine_rounds(const shape& s) {
  if (s.level1.rounds) return s.level1.rounds;
  const std::size_t mean = s.entries / std::max<std::size_t>(s.buckets, 1);
  unsigned r = 1;
  while (r < 8 && (std::size_t(2) << r) <= mean) ++r;
  return r;
}

// ---- step 6: the reduction's levels

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

// ---- chunked scalars

/// Chunks at most.
constexpr unsigned max_chunks = 8;
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

}  // namespace proofline::gpu::cuda::msm
