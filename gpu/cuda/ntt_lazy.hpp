// Butterfly arithmetic of the NTT passes (gpu/cuda/ntt_pipeline.hpp), in two
// policies with the same interface:
//
//   exact_arith  fp<P>'s own +, -, * (every value fully reduced, < p);
//   lazy_arith   values kept in [0, 2p) inside a pass and reduced to [0, p)
//                once, when the pass stores them: no conditional subtraction
//                at the end of a twiddle product, none in the DIF
//                difference. Only for moduli with two spare bits
//                (4p < R = 2^(64N), e.g. BN254's Fr); lazy_supported<F>
//                says which.
//
// Interface (a, b in/out, w a twiddle < p):
//   dif(a, b, w)  (a, b) -> (a + b, (a - b) w)      Gentleman-Sande
//   dif1(a, b)    the same with w = 1 (no product)
//   dit(a, b, w)  (a, b) -> (a + w b, a - w b)      Cooley-Tukey
//   dit1(a, b)    the same with w = 1
//   out(v)        the fully reduced value (< p) of a pass's element
//
// Both policies compute the same residues, and out() makes them the same
// bits, so a transform gives identical results with either.
//
// The lazy words are Montgomery arithmetic on 32-bit words with the carry
// chains of zk/ff/mont32.hpp (PTX on the device, an emulated flag on the
// host, so the host tests run the same steps).
#pragma once

#include <cstdint>

#include "zk/common/hd.hpp"
#include "zk/ff/mont32.hpp"

namespace proofline::gpu::cuda::ntt {

/// fp<P>'s operators: every value < p.
template <class F>
struct exact_arith {
  PL_HD static void dif(F& a, F& b, const F& w) {
    const F s = a + b;
    b = (a - b) * w;
    a = s;
  }
  PL_HD static void dif1(F& a, F& b) {
    const F s = a + b;
    b = a - b;
    a = s;
  }
  PL_HD static void dit(F& a, F& b, const F& w) {
    const F t = b * w;
    b = a - t;
    a = a + t;
  }
  PL_HD static void dit1(F& a, F& b) {
    const F t = b;
    b = a - t;
    a = a + t;
  }
  PL_HD static F out(const F& v) { return v; }
};

namespace lazy {

using zk::ff::mont32::add;  // over 2p here: add<chain, P, true>
using zk::ff::mont32::add_back;
using zk::ff::mont32::sub;  // over 2p here: sub<chain, P, true>
using chain = zk::ff::mont32::native_chain;

/// r = a * b * R^-1 mod p up to one p: a < 4p, b < p, r < 2p (4p < R).
/// zk::ff::mont32::mul_pairs without its final conditional subtraction.
/// Bound: after the W rows the value is (a b + M p) / R with M < R, so
/// r < a b / R + p < (4p / R) p + p < 2p. The running value stays below
/// a + p (each row adds at most (2^32 - 1)(a + p) to t < a + p and divides
/// by 2^32): within W + 1 words when 5p < R (mont32::spare_word<P>(4),
/// BN254 Fr), else W + 2.
template <class P>
PL_HD void mul(uint64_t* r, const uint64_t* a, const uint64_t* b) {
  zk::ff::mont32::mul_pairs<chain, P, 4, false>(r, a, b);
}

}  // namespace lazy

/// Whether lazy_arith<F> may be used: F's modulus has two spare bits.
template <class F>
constexpr bool lazy_supported = zk::ff::mont32::two_spare_bits<typename F::params>();

/// Butterflies on values in [0, 2p) (F's limbs, not necessarily reduced).
/// Each operation takes inputs < 2p and gives outputs < 2p:
///   dif   a + b reduced once by 2p; (a - b + 2p) < 4p times w (< p) gives
///         a product < 2p (lazy::mul);
///   dit   w b < 2p (b < 2p < 4p); a + wb reduced once by 2p; a - wb plus
///         2p on a borrow;
///   dif1 / dit1  the sum as above, the difference plus 2p on a borrow.
/// Twiddles w are fully reduced (< p), as the tables hold them; a pass's
/// inputs are fully reduced values, and out() reduces once by p.
template <class F>
struct lazy_arith {
  using P = typename F::params;
  static_assert(lazy_supported<F>, "lazy butterflies need 4p < 2^(64N)");
  PL_HD static void dif(F& a, F& b, const F& w) {
    F s, d;
    lazy::add<lazy::chain, P, true>(s.l, a.l, b.l);
    lazy::sub<lazy::chain, P, true, lazy::add_back::always>(d.l, a.l, b.l);
    lazy::mul<P>(b.l, d.l, w.l);
    a = s;
  }
  PL_HD static void dif1(F& a, F& b) {
    F s;
    lazy::add<lazy::chain, P, true>(s.l, a.l, b.l);
    lazy::sub<lazy::chain, P, true>(b.l, a.l, b.l);
    a = s;
  }
  PL_HD static void dit(F& a, F& b, const F& w) {
    F t;
    lazy::mul<P>(t.l, b.l, w.l);
    lazy::sub<lazy::chain, P, true>(b.l, a.l, t.l);
    lazy::add<lazy::chain, P, true>(a.l, a.l, t.l);
  }
  PL_HD static void dit1(F& a, F& b) {
    const F t = b;
    lazy::sub<lazy::chain, P, true>(b.l, a.l, t.l);
    lazy::add<lazy::chain, P, true>(a.l, a.l, t.l);
  }
  PL_HD static F out(const F& v) {
    F r;
    zk::ff::mont32::reduce_once<lazy::chain, P>(r.l, v.l);
    return r;
  }
};

}  // namespace proofline::gpu::cuda::ntt
