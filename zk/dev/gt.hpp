// The pairing target group GT, just enough of it to write vk_alphabeta_12 =
// e(alpha1, beta2) into a development verification key.
//
// No pairing is computed: with known toxic waste, e(alpha G1, beta G2) =
// e(G1, G2)^(alpha beta), so the key needs only e(G1, G2) (a constant, taken
// from snarkjs: `curve.pairing(curve.G1.g, curve.G2.g)` in ffjavascript
// 0.3 / snarkjs 0.7.6) and exponentiation in Fq12. The constant is checked by
// tests/zk/dev, which compares a whole exported verification key with snarkjs's.
//
// Fq12 is built as snarkjs (wasmcurves) builds it, so its elements print in
// the same coordinates: Fq6 = Fq2[v] / (v^3 - xi), Fq12 = Fq6[w] / (w^2 - v),
// xi = 9 + u for BN254 and 1 + u for BLS12-381.
#pragma once

#include "zk/curves.hpp"

namespace proofline::zk::dev {

/// An element of Fq12 as six Fq2 coefficients in snarkjs's order:
/// c[0..2] = the Fq6 coefficient of w^0 (v^0, v^1, v^2), c[3..5] = that of w^1.
template <class C>
struct gt {
  typename C::fq2 c[6];
};

/// e(G1, G2)^k for the curve's generators and a standard-form exponent k:
/// about 2 * 256 Fq12 multiplications (a millisecond).
template <class C>
gt<C> pairing_generator_power(const typename C::scalar& k);

}  // namespace proofline::zk::dev
