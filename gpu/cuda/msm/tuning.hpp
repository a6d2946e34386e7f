// The MSM's tuning (gpu/cuda/msm/): the typed policies of its two hot
// kernels, the level-1 bucket sums (level1_kernel) and the window reduction
// (reduce_kernel), with the spellings PROOFLINE_MSM_KERNEL and
// PROOFLINE_MSM_REDUCE take, and every default the planner starts from.
// Why the defaults are what they are: docs/GPU.md, "MSM tuning".
#pragma once

#include <cstddef>
#include <cstdlib>
#include <stdexcept>
#include <string>

#include "gpu/cuda/env_setting.hpp"

namespace proofline::gpu::cuda::msm {

/// How step 3 (level 1, nearly all of an MSM's additions) sums its runs.
/// Spelled "xyzz" or "xyzz:lazy", optionally followed by ":bN", or
/// "affine" optionally followed by ":rR" and ":kK" (parse_level1).
struct level1_kernel {
  /// Fq2 groups: products with one reduction less (zk::ff::fp2_lazy); Fq
  /// groups: coordinates anywhere in [0, 2p), inline products without their
  /// final subtraction (zk::ff::fp_redundant). The same sums either way.
  bool lazy = false;
  /// Threads a block of the launch (32, 64, 128 or 256; 0: level1_threads()
  /// for the points). The kernel is the same either way.
  unsigned threads = 0;
  /// Batched-affine rounds first (affine_kernels.hpp): adjacent entries of
  /// one bucket are added pairwise in affine coordinates, a batch of
  /// additions sharing one inversion, and the XYZZ sums of level 1 (plain
  /// products) take what is left.
  bool affine = false;
  /// Pairwise rounds (1-16; 0: affine_rounds() for the shape).
  unsigned char rounds = 0;
  /// log2 of the additions a thread batches behind one inversion (0-10;
  /// 0: affine_batch_log).
  unsigned char batch_log = 0;
};

/// Additions a thread shares one inversion across unless spelled: the
/// inversion (a few hundred products) a small share of the batch, yet
/// enough threads for a wave of the GPU at 2^16 pairs.
constexpr unsigned affine_batch_log = 5;

/// "xyzz" (plain products) or "xyzz:lazy", then optionally ":b32", ":b64",
/// ":b128" or ":b256"; or "affine", then optionally ":rR" (R in 1-16) and
/// ":kK" (K in 1-10), in that order; throws std::invalid_argument naming
/// the problem.
inline level1_kernel parse_level1(const std::string& spec) {
  level1_kernel k;
  if (spec.compare(0, 6, "affine") == 0) {
    const auto bad = [&] {
      return std::invalid_argument("msm kernel '" + spec + "': expected affine, then :rR (R 1-16), then :kK (K 1-10)");
    };
    k.affine = true;
    std::size_t at = 6;
    const auto number = [&](char tag, unsigned lo, unsigned hi, unsigned char& out) {
      if (spec.compare(at, 2, std::string(":") + tag) != 0) return;
      std::size_t end = at + 2;
      while (end < spec.size() && spec[end] >= '0' && spec[end] <= '9') ++end;
      const std::string digits = spec.substr(at + 2, end - at - 2);
      if (digits.empty() || digits.size() > 2 || digits[0] == '0') throw bad();
      const unsigned v = unsigned(std::stoul(digits));
      if (v < lo || v > hi) throw bad();
      out = static_cast<unsigned char>(v);
      at = end;
    };
    number('r', 1, 16, k.rounds);
    number('k', 1, 10, k.batch_log);
    if (at != spec.size()) throw bad();
    return k;
  }
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
    throw std::invalid_argument("msm kernel '" + spec +
                                "': unknown kernel (expected xyzz or xyzz:lazy, then :bN; or affine, then :rR, :kK)");
  return k;
}

/// The spelling parse_level1 reads back.
inline std::string describe(const level1_kernel& k) {
  if (k.affine)
    return std::string("affine") + (k.rounds ? ":r" + std::to_string(k.rounds) : "") +
           (k.batch_log ? ":k" + std::to_string(k.batch_log) : "");
  return std::string(k.lazy ? "xyzz:lazy" : "xyzz") + (k.threads ? ":b" + std::to_string(k.threads) : "");
}

/// Points from which MSMs take the batched-affine rounds unless
/// PROOFLINE_MSM_KERNEL says: none for now (the rounds are not yet measured
/// to pay at any size; docs/GPU.md, "MSM pipeline"), so every size sums in
/// XYZZ by default.
constexpr std::size_t affine_min_n = ~std::size_t(0);

/// The level-1 kernel MSMs use unless told otherwise: PROOFLINE_MSM_KERNEL
/// when set (parse_level1's spelling), else xyzz:lazy (lazy Fq2 products
/// for G2, coordinates in [0, 2p) for G1; why: docs/GPU.md, "MSM tuning").
/// Read once; a bad value throws std::invalid_argument at every use, naming
/// the variable.
inline level1_kernel default_level1() {
  static const env_setting<level1_kernel> choice("PROOFLINE_MSM_KERNEL", level1_kernel{true}, parse_level1);
  return choice.get();
}

/// The level-1 kernel of an MSM of n points: PROOFLINE_MSM_KERNEL when set,
/// else batched affine ("affine") from affine_min_n points on and
/// default_level1() below.
inline level1_kernel level1_for(std::size_t n) {
  static const bool spelled = [] {
    const char* v = std::getenv("PROOFLINE_MSM_KERNEL");
    return v && *v;
  }();
  if (!spelled && n >= affine_min_n) {
    level1_kernel k;
    k.affine = true;
    return k;
  }
  return default_level1();
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
/// set, else t6:r3 (why: docs/GPU.md, "MSM tuning").
/// Read once; a bad value throws std::invalid_argument at every use, naming
/// the variable.
inline reduce_kernel default_reduce() {
  static const env_setting<reduce_kernel> choice("PROOFLINE_MSM_REDUCE", reduce_kernel{}, parse_reduce);
  return choice.get();
}

/// Threads a block of the level-1 launch for affine points A unless the
/// kernel says: 128 for points larger than BN254 G1's (G2, BLS12-381 G1),
/// whose kernels hold one 256-thread block an SM, so half-size blocks give
/// the SM's scheduler finer pieces to balance; 256 (the executor's) for
/// BN254 G1 (docs/GPU.md, "MSM tuning").
template <class A>
constexpr unsigned level1_threads() {
  return sizeof(A) > 64 ? 128 : 0;
}

// ---- chunked scalars

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

}  // namespace proofline::gpu::cuda::msm
