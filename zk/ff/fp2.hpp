// Quadratic extension Fp2 = Fp[u] / (u^2 + 1), the field of G2 coordinates for
// both BN254 and BLS12-381 (p = 3 mod 4 on both, so -1 is a non-residue).
// Same interface as fp<P>, so point formulas are written once over either.
#pragma once

#include "zk/ff/fp.hpp"

namespace proofline::zk::ff {

template <class F, bool Lazy = false>
struct fp2;

#if defined(__CUDA_ARCH__) && PROOFLINE_FF_PTX
/// Device only: Fq2 products as out-of-line calls (operands and result in
/// registers). G2 point formulas inline dozens of them per kernel; calling
/// instead cut the BN254 G2 kernels' compile time from 9 minutes to 23 s,
/// for one call per product (3 base-field products inside).
template <class F>
__device__ __noinline__ fp2<F> fp2_mul_call(fp2<F> a, fp2<F> b);
template <class F>
__device__ __noinline__ fp2<F> fp2_sqr_call(fp2<F> a);
template <class F>
__device__ __noinline__ fp2<F> fp2_mul_lazy_call(fp2<F> a, fp2<F> b);
#endif

/// Karatsuba with one Montgomery reduction less (lazy reduction): the
/// three products a0 b0, a1 b1, (a0 + a1)(b0 + b1) are kept double-width,
/// c1 = a0 b1 + a1 b0 and c0 = a0 b0 - a1 b1 (+ p 2^(32W) when negative)
/// are formed there, and only those two are reduced: 3 W^2 + 2 W^2 word
/// products instead of 3 (W^2 + W^2), W = 2N 32-bit words. Both reduced
/// values are below p R (R = 2^(32W)) because 2p < R for BN254 and
/// BLS12-381, so one subtraction of p completes each reduction; the
/// result equals mul_inline's (a field element has one reduced form).
/// Written over the carry-chain policies of zk/ff/mont32.hpp, so the host
/// tests run the same steps (host_chain) as the device (ptx_chain).
namespace fp2_lazy {

/// t[0 .. 2W) = x y (any x, y < 2^(32W)): rows of paired chains at fixed
/// word positions (mont32::pairs_row, as mont32::mul_pairs_unreduced adds
/// them), then E + O. After row i the value is below 2^(32(W + i + 1)), so
/// no chain carries past position i + W.
template <class Chain, unsigned W>
PL_HD void wide(uint32_t* t, const uint32_t* x, const uint32_t* y) {
  constexpr unsigned S = 2 * W + 2;
  uint32_t E[S], O[S];
  PL_UNROLL for (unsigned j = 0; j < S; ++j) E[j] = O[j] = 0;
  PL_UNROLL for (unsigned i = 0; i < W; i += 2) {
    mont32::pairs_row<Chain, false, true, W>(E, O, mont32::array_words{x}, y[i], i, 0, 0);
    mont32::pairs_row<Chain, false, true, W>(O, E, mont32::array_words{x}, y[i + 1], i + 1, 0, 0);
  }
  Chain c;
  t[0] = c.add_cc(E[0], O[0]);
  PL_UNROLL for (unsigned j = 1; j < 2 * W; ++j) t[j] = c.addc_cc(E[j], O[j]);
}

/// r = T R^-1 mod p for T < p R (2W words): (T_lo + M p) / R by Montgomery
/// rows at fixed word positions (mont32::reduce_at; M makes the low W
/// words vanish, the quotient is at most p), plus T_hi (< p), minus p
/// unless that borrows. The live value stays below R + 2^32 p, within
/// W + 1 words when 2p < R (mont32::spare_word<P>(1)).
template <class Chain, class P>
PL_HD void redc(uint64_t* r, const uint32_t* T) {
  constexpr unsigned W = 2 * P::limbs;
  constexpr unsigned S = 2 * W + 2;
  constexpr bool spare = mont32::spare_word<P>(1);
  uint32_t E[S], O[S];
  PL_UNROLL for (unsigned j = 0; j < S; ++j) {
    E[j] = j < W ? T[j] : 0;
    O[j] = 0;
  }
  uint32_t lo0 = 0, lo1 = 0;  // the words that cancelled at the previous position
  PL_UNROLL for (unsigned i = 0; i < W; i += 2) {
    mont32::reduce_at<Chain, P, true, spare, W>(E, O, i, lo0, lo1);
    mont32::reduce_at<Chain, P, true, spare, W>(O, E, i + 1, lo0, lo1);
  }
  uint32_t t[W];
  {
    Chain c;  // (T_lo + M p) / R + T_hi < 2p < 2^(32W)
    c.add_cc(lo0, lo1);
    PL_UNROLL for (unsigned j = 0; j < W; ++j) t[j] = c.addc_cc(E[W + j], O[W + j]);
  }
  {
    Chain c;
    t[0] = c.add_cc(t[0], T[W]);
    PL_UNROLL for (unsigned j = 1; j < W; ++j) t[j] = c.addc_cc(t[j], T[W + j]);
  }
  mont32::put_reduced<Chain, P>(r, t);
}

/// (r0, r1) = (a0 b0 - a1 b1, a0 b1 + a1 b0) in Montgomery form (inputs < p).
template <class Chain, class P>
PL_HD void mul(uint64_t* r0, uint64_t* r1, const uint64_t* a0, const uint64_t* a1, const uint64_t* b0,
               const uint64_t* b1) {
  constexpr unsigned W = 2 * P::limbs;
  uint32_t x0[W], x1[W], y0[W], y1[W], sx[W], sy[W];
  PL_UNROLL for (unsigned j = 0; j < W; ++j) {
    x0[j] = mont32::word(a0, j);
    x1[j] = mont32::word(a1, j);
    y0[j] = mont32::word(b0, j);
    y1[j] = mont32::word(b1, j);
  }
  // a0 + a1 and b0 + b1 unreduced: below 2p < 2^(32W). One chain after
  // the other: the device has one carry flag, so two chains may not
  // interleave.
  {
    Chain c;
    sx[0] = c.add_cc(x0[0], x1[0]);
    PL_UNROLL for (unsigned j = 1; j < W; ++j) sx[j] = c.addc_cc(x0[j], x1[j]);
  }
  {
    Chain e;
    sy[0] = e.add_cc(y0[0], y1[0]);
    PL_UNROLL for (unsigned j = 1; j < W; ++j) sy[j] = e.addc_cc(y0[j], y1[j]);
  }
  uint32_t v0[2 * W], v1[2 * W], s[2 * W];
  wide<Chain, W>(v0, x0, y0);
  wide<Chain, W>(v1, x1, y1);
  wide<Chain, W>(s, sx, sy);
  {
    Chain c;  // s = a0 b1 + a1 b0 = s - v0 - v1 >= 0, below 2p^2 < p R
    s[0] = c.sub_cc(s[0], v0[0]);
    PL_UNROLL for (unsigned j = 1; j < 2 * W; ++j) s[j] = c.subc_cc(s[j], v0[j]);
    Chain e;
    s[0] = e.sub_cc(s[0], v1[0]);
    PL_UNROLL for (unsigned j = 1; j < 2 * W; ++j) s[j] = e.subc_cc(s[j], v1[j]);
  }
  {
    Chain c;  // v0 = v0 - v1, plus p R when that borrows: in [0, p R)
    v0[0] = c.sub_cc(v0[0], v1[0]);
    PL_UNROLL for (unsigned j = 1; j < 2 * W; ++j) v0[j] = c.subc_cc(v0[j], v1[j]);
    const uint32_t mask = c.subc(0, 0);
    Chain e;
    v0[W] = e.add_cc(v0[W], mont32::mod_word<P>(0) & mask);
    PL_UNROLL for (unsigned j = 1; j < W; ++j) v0[W + j] = e.addc_cc(v0[W + j], mont32::mod_word<P>(j) & mask);
  }
  redc<Chain, P>(r0, v0);
  redc<Chain, P>(r1, s);
}

}  // namespace fp2_lazy

template <class F, bool Lazy>
struct fp2 {
  using base = F;
  /// Products by fp2_lazy (one reduction less); the same values either way.
  static constexpr bool lazy = Lazy;
  F c0, c1;  ///< c0 + c1 * u

  PL_HD static fp2 zero() { return {F::zero(), F::zero()}; }
  PL_HD static fp2 one() { return {F::one(), F::zero()}; }

  PL_HD bool is_zero() const { return c0.is_zero() && c1.is_zero(); }
  PL_HD bool operator==(const fp2& o) const { return c0 == o.c0 && c1 == o.c1; }
  PL_HD bool operator!=(const fp2& o) const { return !(*this == o); }

  PL_HD fp2 operator+(const fp2& b) const { return {c0 + b.c0, c1 + b.c1}; }
  PL_HD fp2 operator-(const fp2& b) const { return {c0 - b.c0, c1 - b.c1}; }
  PL_HD fp2 operator-() const { return {-c0, -c1}; }
  PL_HD fp2 dbl() const { return {c0.dbl(), c1.dbl()}; }

  /// Karatsuba: 3M + 5A over F.
  PL_HD fp2 operator*(const fp2& b) const {
#if defined(__CUDA_ARCH__) && PROOFLINE_FF_PTX
    if constexpr (Lazy) {
      const fp2<F> r = fp2_mul_lazy_call<F>(fp2<F>{c0, c1}, fp2<F>{b.c0, b.c1});
      return {r.c0, r.c1};
    } else {
      return fp2_mul_call<F>(*this, b);
    }
#else
    if constexpr (Lazy)
      return mul_lazy<zk::ff::mont32::host_chain>(b);
    else
      return mul_inline(b);
#endif
  }
  /// The lazy product on carry-chain policy Chain (fp2_lazy).
  template <class Chain>
  PL_HD fp2 mul_lazy(const fp2& b) const {
    fp2 r;
    fp2_lazy::mul<Chain, typename F::params>(r.c0.l, r.c1.l, c0.l, c1.l, b.c0.l, b.c1.l);
    return r;
  }
  PL_HD fp2 mul_inline(const fp2& b) const {
    F v0 = c0 * b.c0;
    F v1 = c1 * b.c1;
    F s = (c0 + c1) * (b.c0 + b.c1);
    return {v0 - v1, s - v0 - v1};
  }
  /// Complex squaring: (c0 + c1)(c0 - c1) + 2 c0 c1 u, 2M.
  PL_HD fp2 sqr() const {
#if defined(__CUDA_ARCH__) && PROOFLINE_FF_PTX
    if constexpr (Lazy) {
      const fp2<F> r = fp2_sqr_call<F>(fp2<F>{c0, c1});
      return {r.c0, r.c1};
    } else {
      return fp2_sqr_call<F>(*this);
    }
#else
    return sqr_inline();
#endif
  }
  PL_HD fp2 sqr_inline() const {
    F m = c0 * c1;
    return {(c0 + c1) * (c0 - c1), m.dbl()};
  }
  /// Multiplication by an element of the base field: 2M.
  PL_HD fp2 mul_base(const F& k) const { return {c0 * k, c1 * k}; }

  PL_HD fp2& operator+=(const fp2& b) { return *this = *this + b; }
  PL_HD fp2& operator-=(const fp2& b) { return *this = *this - b; }
  PL_HD fp2& operator*=(const fp2& b) { return *this = *this * b; }

  /// (c0 - c1 u) / (c0^2 + c1^2); zero maps to zero.
  PL_HD fp2 inverse() const {
    F t = (c0.sqr() + c1.sqr()).inverse();
    return {c0 * t, -(c1 * t)};
  }
};

#if defined(__CUDA_ARCH__) && PROOFLINE_FF_PTX
template <class F>
__device__ __noinline__ fp2<F> fp2_mul_call(fp2<F> a, fp2<F> b) {
  return a.mul_inline(b);
}
template <class F>
__device__ __noinline__ fp2<F> fp2_sqr_call(fp2<F> a) {
  return a.sqr_inline();
}
template <class F>
__device__ __noinline__ fp2<F> fp2_mul_lazy_call(fp2<F> a, fp2<F> b) {
  return a.template mul_lazy<mont32::ptx_chain>(b);
}
#endif

}  // namespace proofline::zk::ff
