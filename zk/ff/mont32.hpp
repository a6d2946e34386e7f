// Device fast path of fp<P>'s multiplication, addition and subtraction: the
// same Montgomery arithmetic over the same uint64_t storage, computed on 32-bit
// words with the GPU's carry-chain instructions (mad.lo.cc / madc.hi.cc /
// addc.cc ...), which the hardware executes natively, instead of emulating
// 64x64->128-bit products. The results are bit-identical to the generic code:
// a Montgomery product a*b*R^-1 mod p with R = 2^(64N) = 2^(32*2N) is one
// fully reduced value whatever the word size, and so are sums and differences.
//
// The algorithms are written once over a "carry chain" policy:
//   ptx_chain  (device): each step is one PTX instruction; the carry flag is
//              the hardware's condition code, so the steps of a chain must be
//              issued back to back (asm volatile keeps their order);
//   host_chain (host):   the same steps with the flag in a variable, so the
//              algorithm is tested on the host against the generic code
//              (tests/cuda/cuda_host.test.cpp). As on the device, there is
//              one flag a thread, shared by every chain object: steps of
//              two chains interleaved corrupt each other's carries on the
//              host too, so the host tests catch that ordering bug.
//
// Cost on sm_90, 2N = 8 words (BN254): 4 * 8^2 + 8 = 264 PTX multiply-adds
// per product (CIOS, Koc et al. 1996, on 32-bit words), no carry emulation;
// mul_pairs (the default, PROOFLINE_FF_DEVICE_MUL) orders them so that each
// pair of them is one 64-bit multiply-add with carry in SASS.
#pragma once

#include <cstdint>

#include "zk/common/hd.hpp"

#ifndef PROOFLINE_FF_PTX
#define PROOFLINE_FF_PTX 1  ///< 0 compiles the generic 64-bit code on the device too
#endif
#ifndef PROOFLINE_FF_DEVICE_MUL
/// The device's Montgomery product: 1 = carry chains (mul<ptx_chain>),
/// 2 = 64-bit accumulators (mul_wide), 3 = paired carry chains
/// (mul_pairs<ptx_chain>), 0 = the generic 64-bit-word code. 3 is the
/// fastest on sm_90 (docs/BENCHMARKS.md, "The device field product"): it
/// compiles to 64-bit multiply-adds with carry (IMAD.WIDE.U32.X), 1 to
/// separate low and high multiplies.
#define PROOFLINE_FF_DEVICE_MUL 3
#endif

namespace proofline::zk::ff::mont32 {

/// Carry-chain steps on the host. The carry (or borrow) flag is one per
/// thread, like the device's condition code, not one per chain object.
struct host_chain {
  uint32_t add_cc(uint32_t a, uint32_t b) { return put(uint64_t(a) + b); }
  uint32_t addc_cc(uint32_t a, uint32_t b) { return put(uint64_t(a) + b + cf); }
  uint32_t addc(uint32_t a, uint32_t b) { return a + b + cf; }
  uint32_t sub_cc(uint32_t a, uint32_t b) { return put_borrow(uint64_t(a) - b); }
  uint32_t subc_cc(uint32_t a, uint32_t b) { return put_borrow(uint64_t(a) - b - cf); }
  uint32_t subc(uint32_t a, uint32_t b) { return a - b - cf; }
  uint32_t mad_lo_cc(uint32_t a, uint32_t b, uint32_t c) { return put(uint64_t(a * b) + c); }
  uint32_t madc_lo_cc(uint32_t a, uint32_t b, uint32_t c) { return put(uint64_t(a * b) + c + cf); }
  uint32_t mad_hi_cc(uint32_t a, uint32_t b, uint32_t c) { return put(hi(a, b) + c); }
  uint32_t madc_hi_cc(uint32_t a, uint32_t b, uint32_t c) { return put(hi(a, b) + c + cf); }
  uint32_t madc_hi(uint32_t a, uint32_t b, uint32_t c) { return uint32_t(hi(a, b) + c + cf); }

 private:
  static uint64_t hi(uint32_t a, uint32_t b) { return (uint64_t(a) * b) >> 32; }
  static inline thread_local uint32_t cf = 0;
  uint32_t put(uint64_t s) {
    cf = uint32_t(s >> 32);
    return uint32_t(s);
  }
  uint32_t put_borrow(uint64_t d) {
    cf = uint32_t(d >> 63);  // the 64-bit difference wrapped: a borrow
    return uint32_t(d);
  }
};

#if defined(__CUDACC__)
/// Carry-chain steps as single PTX instructions (PTX ISA "Extended-Precision
/// Integer Arithmetic Instructions"); the flag is CC.CF.
struct ptx_chain {
  __device__ __forceinline__ uint32_t add_cc(uint32_t a, uint32_t b) {
    uint32_t r;
    asm volatile("add.cc.u32 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b));
    return r;
  }
  __device__ __forceinline__ uint32_t addc_cc(uint32_t a, uint32_t b) {
    uint32_t r;
    asm volatile("addc.cc.u32 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b));
    return r;
  }
  __device__ __forceinline__ uint32_t addc(uint32_t a, uint32_t b) {
    uint32_t r;
    asm volatile("addc.u32 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b));
    return r;
  }
  __device__ __forceinline__ uint32_t sub_cc(uint32_t a, uint32_t b) {
    uint32_t r;
    asm volatile("sub.cc.u32 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b));
    return r;
  }
  __device__ __forceinline__ uint32_t subc_cc(uint32_t a, uint32_t b) {
    uint32_t r;
    asm volatile("subc.cc.u32 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b));
    return r;
  }
  __device__ __forceinline__ uint32_t subc(uint32_t a, uint32_t b) {
    uint32_t r;
    asm volatile("subc.u32 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b));
    return r;
  }
  __device__ __forceinline__ uint32_t mad_lo_cc(uint32_t a, uint32_t b, uint32_t c) {
    uint32_t r;
    asm volatile("mad.lo.cc.u32 %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(b), "r"(c));
    return r;
  }
  __device__ __forceinline__ uint32_t madc_lo_cc(uint32_t a, uint32_t b, uint32_t c) {
    uint32_t r;
    asm volatile("madc.lo.cc.u32 %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(b), "r"(c));
    return r;
  }
  __device__ __forceinline__ uint32_t mad_hi_cc(uint32_t a, uint32_t b, uint32_t c) {
    uint32_t r;
    asm volatile("mad.hi.cc.u32 %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(b), "r"(c));
    return r;
  }
  __device__ __forceinline__ uint32_t madc_hi_cc(uint32_t a, uint32_t b, uint32_t c) {
    uint32_t r;
    asm volatile("madc.hi.cc.u32 %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(b), "r"(c));
    return r;
  }
  __device__ __forceinline__ uint32_t madc_hi(uint32_t a, uint32_t b, uint32_t c) {
    uint32_t r;
    asm volatile("madc.hi.u32 %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(b), "r"(c));
    return r;
  }
};
#endif

/// The chains this compilation pass runs: PTX on the device, the emulated
/// flag on the host (where the tests run the same steps).
#if defined(__CUDA_ARCH__)
using native_chain = ptx_chain;
#else
using native_chain = host_chain;
#endif

/// Word w (32 bits) of the N-limb modulus of P, a compile-time constant once unrolled.
template <class P>
PL_HD constexpr uint32_t mod_word(unsigned w) {
  return uint32_t(P::modulus(w / 2) >> (32 * (w % 2)));
}

/// Word w of a little-endian 64-bit limb array.
PL_HD uint32_t word(const uint64_t* x, unsigned w) { return uint32_t(x[w / 2] >> (32 * (w % 2))); }

/// Word w (32 bits) of 2p.
template <class P>
PL_HD constexpr uint32_t mod2_word(unsigned w) {
  return w == 0 ? mod_word<P>(0) << 1 : (mod_word<P>(w) << 1) | (mod_word<P>(w - 1) >> 31);
}

/// The W = 2N words t into N 64-bit limbs r.
template <unsigned N>
PL_HD void put(uint64_t* r, const uint32_t* t) {
  PL_UNROLL for (unsigned j = 0; j < N; ++j) r[j] = (uint64_t(t[2 * j + 1]) << 32) | t[2 * j];
}

/// r = t - m when t >= m, else t: the one conditional subtraction that ends
/// every product and sum here. m is p, or 2p with Twice (the NTT's lazy
/// butterflies); t < 2m < 2^(32W), so the result is below m. One chain.
template <class Chain, class P, bool Twice = false>
PL_HD void put_reduced(uint64_t* r, const uint32_t* t) {
  constexpr unsigned W = 2 * P::limbs;
  uint32_t d[W];
  Chain c;
  d[0] = c.sub_cc(t[0], Twice ? mod2_word<P>(0) : mod_word<P>(0));
  PL_UNROLL for (unsigned j = 1; j < W; ++j) d[j] = c.subc_cc(t[j], Twice ? mod2_word<P>(j) : mod_word<P>(j));
  const uint32_t keep = c.subc(0, 0);  // all ones when t < m
  PL_UNROLL for (unsigned j = 0; j < W; ++j) d[j] = (t[j] & keep) | (d[j] & ~keep);
  put<P::limbs>(r, d);
}

/// r = a * b * R^-1 mod p (a, b < p; r < p), CIOS over W = 2N words. The
/// running value t < 2p needs W + 2 words while a row a*b[i] and m*p are added.
template <class Chain, class P>
PL_HD void mul(uint64_t* r, const uint64_t* a, const uint64_t* b) {
  constexpr unsigned W = 2 * P::limbs;
  const uint32_t inv = uint32_t(P::inv);  // -p^-1 mod 2^32 (low word of -p^-1 mod 2^64)
  uint32_t x[W], t[W + 2];
  PL_UNROLL for (unsigned j = 0; j < W; ++j) x[j] = word(a, j);
  PL_UNROLL for (unsigned j = 0; j < W + 2; ++j) t[j] = 0;
  PL_UNROLL for (unsigned i = 0; i < W; ++i) {
    const uint32_t bi = word(b, i);
    Chain c;
    // t += a * b[i]: low halves into t[0..W), then high halves into t[1..W]
    t[0] = c.mad_lo_cc(x[0], bi, t[0]);
    PL_UNROLL for (unsigned j = 1; j < W; ++j) t[j] = c.madc_lo_cc(x[j], bi, t[j]);
    t[W] = c.addc_cc(t[W], 0);
    t[W + 1] = c.addc(t[W + 1], 0);
    t[1] = c.mad_hi_cc(x[0], bi, t[1]);
    PL_UNROLL for (unsigned j = 1; j < W; ++j) t[j + 1] = c.madc_hi_cc(x[j], bi, t[j + 1]);
    t[W + 1] = c.addc(t[W + 1], 0);
    // t += m * p with m chosen so that the low word becomes zero
    const uint32_t m = t[0] * inv;
    t[0] = c.mad_lo_cc(m, mod_word<P>(0), t[0]);
    PL_UNROLL for (unsigned j = 1; j < W; ++j) t[j] = c.madc_lo_cc(m, mod_word<P>(j), t[j]);
    t[W] = c.addc_cc(t[W], 0);
    t[W + 1] = c.addc(t[W + 1], 0);
    t[1] = c.mad_hi_cc(m, mod_word<P>(0), t[1]);
    PL_UNROLL for (unsigned j = 1; j < W; ++j) t[j + 1] = c.madc_hi_cc(m, mod_word<P>(j), t[j + 1]);
    t[W + 1] = c.addc(t[W + 1], 0);
    // t /= 2^32
    PL_UNROLL for (unsigned j = 0; j <= W; ++j) t[j] = t[j + 1];
    t[W + 1] = 0;
  }
  put_reduced<Chain, P>(r, t);  // t < 2p
}

/// r = a + b mod m (a, b < m), m = p, or 2p with Twice (the NTT's lazy
/// butterflies, where 4p < 2^(32W)). The sum is below 2m < 2^(32W): no
/// carry out of the top word.
template <class Chain, class P, bool Twice = false>
PL_HD void add(uint64_t* r, const uint64_t* a, const uint64_t* b) {
  constexpr unsigned W = 2 * P::limbs;
  uint32_t s[W];
  Chain c;
  s[0] = c.add_cc(word(a, 0), word(b, 0));
  PL_UNROLL for (unsigned j = 1; j < W; ++j) s[j] = c.addc_cc(word(a, j), word(b, j));
  put_reduced<Chain, P, Twice>(r, s);
}

/// When sub() adds m back to a - b.
enum class add_back {
  on_borrow,  ///< only when a - b < 0: r = a - b mod m, r < m
  always,     ///< r = a - b + m in (0, 2m), no selection
};

/// r = a - b, plus m as When says (a, b < m; m = p, or 2p with Twice).
/// Computed modulo 2^(32W): the difference may wrap (its borrow is
/// dropped) and adding m wraps it back; 2m < 2^(32W).
template <class Chain, class P, bool Twice = false, add_back When = add_back::on_borrow>
PL_HD void sub(uint64_t* r, const uint64_t* a, const uint64_t* b) {
  constexpr unsigned W = 2 * P::limbs;
  uint32_t d[W];
  Chain c;
  d[0] = c.sub_cc(word(a, 0), word(b, 0));
  PL_UNROLL for (unsigned j = 1; j < W; ++j) d[j] = c.subc_cc(word(a, j), word(b, j));
  uint32_t mask = ~0u;
  if constexpr (When == add_back::on_borrow) mask = c.subc(0, 0);  // all ones on borrow
  Chain e;
  d[0] = e.add_cc(d[0], (Twice ? mod2_word<P>(0) : mod_word<P>(0)) & mask);
  PL_UNROLL for (unsigned j = 1; j < W; ++j)
    d[j] = e.addc_cc(d[j], (Twice ? mod2_word<P>(j) : mod_word<P>(j)) & mask);
  put<P::limbs>(r, d);
}

/// Operand bound of a product that may be any value below 2^(32W) (a
/// standard-form value on its way to Montgomery form, fp::from_standard).
constexpr unsigned any_operand = ~0u;

/// Whether the paired-chain product of a < k p and any b keeps its running
/// value within W + 1 words, so that the accumulators need no (W + 2)-th
/// word and their chains end one step sooner. Each row keeps the value
/// below (k + 1) p (it adds at most (2^32 - 1)(k p + p) to a value below
/// (k + 1) p and divides by 2^32), so before a row's division it is below
/// (k + 1) p 2^32, which fits W + 1 words when (k + 1) p < 2^(32W). That
/// holds when (k + 1)(top + 1) <= 2^32 for p's top 32-bit word `top`:
/// k = 1 for BN254 and BLS12-381 Fq and Fr, k = 2 (zk::ff::fp_redundant)
/// for both Fq, k = 4 (the NTT's lazy butterflies) for BN254 Fr.
template <class P>
PL_HD constexpr bool spare_word(unsigned k) {
  constexpr unsigned W = 2 * P::limbs;
  return k != any_operand && (uint64_t(k) + 1) * (uint64_t(mod_word<P>(W - 1)) + 1) <= (uint64_t(1) << 32);
}

/// Adds v * bi at word position i to the accumulators X, holding the
/// 64-bit pairs of words that start at i's parity (i, i + 1; i + 2, i + 3;
/// ...), and Y, the other parity: the products of v's even words land on
/// X's pairs, those of its odd words on Y's (v(k) is word k of the W-word
/// operand). CarryIn: X's chain starts with the carry of lo0 + lo1 (the
/// two words that cancelled at position i - 1, their sum 0 or 2^32).
/// Spare: the accumulated value fits below position i + W + 1, so the
/// chains end there; else they carry into position i + W + 1.
template <class Chain, bool CarryIn, bool Spare, unsigned W, unsigned S, class Words>
PL_HD void pairs_row(uint32_t (&X)[S], uint32_t (&Y)[S], Words v, uint32_t bi, unsigned i, uint32_t lo0,
                     uint32_t lo1) {
  static_assert(W % 2 == 0 && W >= 4 && S >= 2 * W + 2, "an even number of 32-bit words, at least 4");
  {
    Chain c;  // even words of v
    if constexpr (CarryIn) {
      c.add_cc(lo0, lo1);
      X[i] = c.madc_lo_cc(v(0), bi, X[i]);
    } else {
      X[i] = c.mad_lo_cc(v(0), bi, X[i]);
    }
    X[i + 1] = c.madc_hi_cc(v(0), bi, X[i + 1]);
    PL_UNROLL for (unsigned k = 2; k < W; k += 2) {
      X[i + k] = c.madc_lo_cc(v(k), bi, X[i + k]);
      X[i + k + 1] = c.madc_hi_cc(v(k), bi, X[i + k + 1]);
    }
    if constexpr (Spare) {
      X[i + W] = c.addc(X[i + W], 0);
    } else {
      X[i + W] = c.addc_cc(X[i + W], 0);
      X[i + W + 1] = c.addc(X[i + W + 1], 0);
    }
  }
  {
    Chain c;  // odd words of v
    Y[i + 1] = c.mad_lo_cc(v(1), bi, Y[i + 1]);
    Y[i + 2] = c.madc_hi_cc(v(1), bi, Y[i + 2]);
    PL_UNROLL for (unsigned k = 3; k + 2 < W; k += 2) {
      Y[i + k] = c.madc_lo_cc(v(k), bi, Y[i + k]);
      Y[i + k + 1] = c.madc_hi_cc(v(k), bi, Y[i + k + 1]);
    }
    Y[i + W - 1] = c.madc_lo_cc(v(W - 1), bi, Y[i + W - 1]);
    if constexpr (Spare) {
      Y[i + W] = c.madc_hi(v(W - 1), bi, Y[i + W]);
    } else {
      Y[i + W] = c.madc_hi_cc(v(W - 1), bi, Y[i + W]);
      Y[i + W + 1] = c.addc(Y[i + W + 1], 0);
    }
  }
}

/// Word k of p, as pairs_row reads an operand.
template <class P>
struct modulus_words {
  PL_HD constexpr uint32_t operator()(unsigned k) const { return mod_word<P>(k); }
};

/// Word k of an array of 32-bit words, as pairs_row reads an operand.
struct array_words {
  const uint32_t* w;
  PL_HD uint32_t operator()(unsigned k) const { return w[k]; }
};

/// Montgomery row i: m chosen so that position i of X + Y (plus the carry
/// of the words cancelled at i - 1 when CarryIn) becomes 0 mod 2^32, then
/// X, Y += m p at position i; lo0, lo1 become position i's words.
template <class Chain, class P, bool CarryIn, bool Spare, unsigned W, unsigned S>
PL_HD void reduce_at(uint32_t (&X)[S], uint32_t (&Y)[S], unsigned i, uint32_t& lo0, uint32_t& lo1) {
  const uint32_t carry = CarryIn ? uint32_t((lo0 | lo1) != 0) : 0u;  // cancelled words: 0 + 0 or a + (2^32 - a)
  const uint32_t m = (X[i] + Y[i] + carry) * uint32_t(P::inv);
  pairs_row<Chain, CarryIn, Spare, W>(X, Y, modulus_words<P>{}, m, i, lo0, lo1);
  lo0 = X[i];
  lo1 = Y[i];
}

/// The Montgomery product (CIOS, Koc et al. 1996) on 32-bit words as
/// 64-bit multiply-adds with carry (IMAD.WIDE.U32.X on sm_90): each carry
/// chain adds the (low, high) halves of one word product to two adjacent
/// words, so a row's word products are split by the parity of the position
/// their pair starts at, into accumulators E (pairs at 0, 2, ...) and O
/// (1, 3, ...); row i adds at word position i instead of shifting the value
/// down a word, so every pair stays in one aligned register pair for the
/// whole product (shifting the value re-pairs them every row: a BN254
/// product in a kernel of its own compiled to 336 sm_90 instructions, 98
/// of them register moves, against 240 this way). The value is
/// E + O; after row i its words at position i cancel (their sum is 0 mod
/// 2^32) and their carry enters row i + 1's first chain.
/// For a < K p (K = any_operand: any a < 2^(32W)) and any b < 2^(32W)
/// this writes the 2N words of (a b + M p) / R < a b / R + p, before the
/// final subtraction: below 2p for a, b < p, and when 4p < R for a < 4p,
/// b < p (the NTT's lazy butterflies, gpu/cuda/ntt_lazy.hpp) and for a,
/// b < 2p (zk::ff::fp_redundant). When spare_word<P>(K), the live value
/// needs one word less and every chain ends one step sooner.
template <class Chain, class P, unsigned K = 1>
PL_HD void mul_pairs_unreduced(uint32_t* t, const uint64_t* a, const uint64_t* b) {
  constexpr unsigned W = 2 * P::limbs;
  constexpr bool spare = spare_word<P>(K);
  constexpr unsigned S = 2 * W + 2;
  uint32_t x[W], E[S], O[S];
  PL_UNROLL for (unsigned j = 0; j < W; ++j) x[j] = word(a, j);
  PL_UNROLL for (unsigned j = 0; j < S; ++j) E[j] = O[j] = 0;
  uint32_t lo0 = 0, lo1 = 0;
  // row i: x b_i (with the carry of the words cancelled at i - 1), then m p
  PL_UNROLL for (unsigned i = 0; i < W; i += 2) {
    pairs_row<Chain, true, spare, W>(E, O, array_words{x}, word(b, i), i, lo0, lo1);
    reduce_at<Chain, P, false, spare, W>(E, O, i, lo0, lo1);
    pairs_row<Chain, true, spare, W>(O, E, array_words{x}, word(b, i + 1), i + 1, lo0, lo1);
    reduce_at<Chain, P, false, spare, W>(O, E, i + 1, lo0, lo1);
  }
  Chain c;  // t = the value at positions W .. 2W - 1 (< 2p < 2^(32W))
  c.add_cc(lo0, lo1);
  PL_UNROLL for (unsigned j = 0; j < W; ++j) t[j] = c.addc_cc(E[W + j], O[W + j]);
}

/// mul_pairs_unreduced into N limbs, then (Reduce) one conditional
/// subtraction of p: r < p for a < K p, b < p. Without Reduce, r < 2p
/// where mul_pairs_unreduced says so (values kept in [0, 2p): the NTT's
/// lazy butterflies, zk::ff::fp_redundant).
template <class Chain, class P, unsigned K = 1, bool Reduce = true>
PL_HD void mul_pairs(uint64_t* r, const uint64_t* a, const uint64_t* b) {
  uint32_t t[2 * P::limbs];
  mul_pairs_unreduced<Chain, P, K>(t, a, b);
  if constexpr (Reduce)
    put_reduced<Chain, P>(r, t);
  else
    put<P::limbs>(r, t);
}

/// Whether 4p < R = 2^(32W) (spare_word's bound for k = 3): values may
/// then be kept anywhere in [0, 2p), as sums below 4p and products of them
/// below 2p (mul_pairs without Reduce).
template <class P>
PL_HD constexpr bool two_spare_bits() {
  return spare_word<P>(3);
}

/// r = a, minus p when a >= p: a < 2p, r < p.
template <class Chain, class P>
PL_HD void reduce_once(uint64_t* r, const uint64_t* a) {
  uint32_t t[2 * P::limbs];
  PL_UNROLL for (unsigned j = 0; j < 2 * P::limbs; ++j) t[j] = word(a, j);
  put_reduced<Chain, P>(r, t);
}

/// The same product with 64-bit accumulators instead of carry flags: each
/// step is one 32x32 + 32 + 32 -> 64-bit multiply-add (IMAD.WIDE.U32 and a
/// carry add on the GPU), no condition codes. Plain C++, host and device.
template <class P>
PL_HD void mul_wide(uint64_t* r, const uint64_t* a, const uint64_t* b) {
  constexpr unsigned W = 2 * P::limbs;
  const uint32_t inv = uint32_t(P::inv);
  uint32_t x[W], t[W + 2];
  PL_UNROLL for (unsigned j = 0; j < W; ++j) x[j] = word(a, j);
  PL_UNROLL for (unsigned j = 0; j < W + 2; ++j) t[j] = 0;
  PL_UNROLL for (unsigned i = 0; i < W; ++i) {
    const uint32_t bi = word(b, i);
    uint64_t s, c = 0;
    PL_UNROLL for (unsigned j = 0; j < W; ++j) {
      s = uint64_t(x[j]) * bi + t[j] + c;  // <= (2^32-1)^2 + 2(2^32-1) = 2^64 - 1
      t[j] = uint32_t(s);
      c = s >> 32;
    }
    s = uint64_t(t[W]) + c;
    t[W] = uint32_t(s);
    t[W + 1] = uint32_t(s >> 32);
    const uint32_t m = t[0] * inv;
    s = uint64_t(m) * mod_word<P>(0) + t[0];  // low word becomes zero
    c = s >> 32;
    PL_UNROLL for (unsigned j = 1; j < W; ++j) {
      s = uint64_t(m) * mod_word<P>(j) + t[j] + c;
      t[j - 1] = uint32_t(s);
      c = s >> 32;
    }
    s = uint64_t(t[W]) + c;
    t[W - 1] = uint32_t(s);
    t[W] = t[W + 1] + uint32_t(s >> 32);
  }
  uint32_t d[W];
  uint64_t borrow = 0;
  PL_UNROLL for (unsigned j = 0; j < W; ++j) {
    uint64_t v = uint64_t(t[j]) - mod_word<P>(j) - borrow;
    d[j] = uint32_t(v);
    borrow = v >> 63;
  }
  const uint32_t keep = 0u - uint32_t(borrow);  // all ones when t < p
  PL_UNROLL for (unsigned j = 0; j < P::limbs; ++j) {
    uint32_t lo = (t[2 * j] & keep) | (d[2 * j] & ~keep);
    uint32_t hi = (t[2 * j + 1] & keep) | (d[2 * j + 1] & ~keep);
    r[j] = (uint64_t(hi) << 32) | lo;
  }
}

#if defined(__CUDACC__)
/// The device product PROOFLINE_FF_DEVICE_MUL selects (1, 2 or 3).
template <class P>
__device__ __forceinline__ void mul_device(uint64_t* r, const uint64_t* a, const uint64_t* b) {
#if PROOFLINE_FF_DEVICE_MUL == 2
  mul_wide<P>(r, a, b);
#elif PROOFLINE_FF_DEVICE_MUL == 3
  mul_pairs<ptx_chain, P>(r, a, b);
#else
  mul<ptx_chain, P>(r, a, b);
#endif
}

/// A field element by value, so a product can be an out-of-line call whose
/// operands and result travel in registers.
template <unsigned N>
struct limbs {
  uint64_t l[N];
};

/// mul<ptx_chain, P> as one out-of-line function: used for wide fields
/// (N >= 6), where inlining every product of Fq2 point arithmetic makes a
/// kernel take minutes to compile for a few percent of speed.
template <class P>
__device__ __noinline__ limbs<P::limbs> mul_call(limbs<P::limbs> a, limbs<P::limbs> b) {
  limbs<P::limbs> r;
  mul_device<P>(r.l, a.l, b.l);
  return r;
}
#endif

}  // namespace proofline::zk::ff::mont32
