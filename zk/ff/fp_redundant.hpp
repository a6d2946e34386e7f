// Elements of fp<P> held anywhere in [0, 2p) instead of [0, p): products
// skip their final conditional subtraction, sums and differences reduce
// modulo 2p. For the MSM's bucket additions on the GPU, where every product
// ends in a conditional subtraction that is only needed when a value leaves
// the sum (gpu/cuda/msm_pipeline.hpp, level 1 of G1). Products are inline,
// also for 6-limb fields (BLS12-381), where fp's own are out-of-line calls:
// one G1 point addition's dozen inline products compile in reasonable
// time, and level 1 was 2-4% faster than with fp's calls.
//
// Bounds, for 4p < R = 2^(32W) (BN254 and BLS12-381 Fq):
//  * a * b for a, b < 2p: the Montgomery value (a b + M p) / R < 4p^2 / R + p
//    < 2p, and the running value of the product stays below 3p 2^32, within
//    W + 1 words (mont32::spare_word<P>(2));
//  * a + b < 4p < R, then minus 2p when at least 2p;
//  * a - b in (-2p, 2p), plus 2p when it borrows.
// An element is zero when its limbs are 0 or p; exact() gives the reduced
// value, the one fp<P> holds. The words are zk/ff/mont32.hpp's (the NTT's
// lazy butterflies, gpu/cuda/ntt_lazy.hpp, use the same): PTX chains on the
// device, the same steps on host_chain on the host (the tests' executor).
#pragma once

#include <cstdint>

#include "zk/common/hd.hpp"
#include "zk/ff/fp.hpp"
#include "zk/ff/mont32.hpp"

namespace proofline::zk::ff {

template <class F>
struct fp_redundant {
  using params = typename F::params;
  using chain = mont32::native_chain;
  static constexpr unsigned N = F::N;
  static_assert(mont32::two_spare_bits<params>(), "needs 4p < R");
  static_assert(mont32::spare_word<params>(2), "needs 3p < R for the product's running value");
  uint64_t l[N];

  /// x's limbs as they are: an fp holds a value below p, so in [0, 2p).
  PL_HD static fp_redundant from(const F& x) {
    fp_redundant r;
    const auto m = x.montgomery_limbs();
    PL_UNROLL for (unsigned i = 0; i < N; ++i) r.l[i] = m.l[i];
    return r;
  }
  /// The reduced value (minus p when at least p).
  PL_HD F exact() const {
    typename F::repr r;
    mont32::reduce_once<chain, params>(r.l, l);
    return F::from_montgomery_limbs(r);
  }

  PL_HD static fp_redundant zero() { return from(F::zero()); }
  PL_HD static fp_redundant one() { return from(F::one()); }

  /// 0 or p.
  PL_HD bool is_zero() const {
    uint64_t z = 0, p = 0;
    PL_UNROLL for (unsigned i = 0; i < N; ++i) {
      z |= l[i];
      p |= l[i] ^ params::modulus(i);
    }
    return z == 0 || p == 0;
  }
  PL_HD bool operator==(const fp_redundant& o) const { return exact() == o.exact(); }
  PL_HD bool operator!=(const fp_redundant& o) const { return !(*this == o); }

  PL_HD fp_redundant operator+(const fp_redundant& b) const {
    fp_redundant r;
    mont32::add<chain, params, true>(r.l, l, b.l);
    return r;
  }
  PL_HD fp_redundant operator-(const fp_redundant& b) const {
    fp_redundant r;
    mont32::sub<chain, params, true>(r.l, l, b.l);
    return r;
  }
  PL_HD fp_redundant operator-() const { return zero() - *this; }
  PL_HD fp_redundant dbl() const { return *this + *this; }

  PL_HD fp_redundant operator*(const fp_redundant& b) const {
    fp_redundant r;
    mont32::mul_pairs<chain, params, 2, false>(r.l, l, b.l);
    return r;
  }
  PL_HD fp_redundant sqr() const { return *this * *this; }
};

}  // namespace proofline::zk::ff
