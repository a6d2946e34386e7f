// Quadratic extension Fp2 = Fp[u] / (u^2 + 1), the field of G2 coordinates for
// both BN254 and BLS12-381 (p = 3 mod 4 on both, so -1 is a non-residue).
// Same interface as fp<P>, so point formulas are written once over either.
#pragma once

#include "zk/ff/fp.hpp"

namespace proofline::zk::ff {

template <class F>
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
#endif

template <class F>
struct fp2 {
  using base = F;
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
    return fp2_mul_call<F>(*this, b);
#else
    return mul_inline(b);
#endif
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
    return fp2_sqr_call<F>(*this);
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
#endif

}  // namespace proofline::zk::ff
