// What the pairing needs to know about a curve beyond its fields and groups:
// the Fq6 non-residue xi, the curve parameter x the loop runs over, the
// family (which fixes the Miller loop and the final exponentiation) and the
// twist type (which fixes where the line coefficients land in Fq12).
//
// The tower is built as snarkjs builds it, so GT elements print in the same
// coordinates: Fq6 = Fq2[v] / (v^3 - xi), Fq12 = Fq6[w] / (w^2 - v).
#pragma once

#include <cstdint>

#include "zk/curves.hpp"

namespace proofline::zk::pairing {

enum class family : uint8_t {
  bn,     ///< p = 36x^4 + 36x^3 + 24x^2 + 6x + 1; loop over 6x + 2, two Frobenius lines
  bls12,  ///< p = (x - 1)^2 (x^4 - x^2 + 1) / 3 + x; loop over |x|
};

enum class twist : uint8_t {
  d,  ///< G2 on y^2 = x^3 + b / xi, mapped by (x, y) -> (x w^2, y w^3)
  m,  ///< G2 on y^2 = x^3 + b xi, mapped by (x, y) -> (x / w^2, y / w^3)
};

template <class C>
struct params;

/// BN254: x = 4965661367192848881, xi = 9 + u, D-type twist (b' = 3 / (9 + u)).
template <>
struct params<bn254> {
  static constexpr family fam = family::bn;
  static constexpr twist tw = twist::d;
  static constexpr uint64_t xi_c0 = 9;  ///< xi = xi_c0 + u
  static constexpr uint64_t x_abs = 4965661367192848881ull;
  static constexpr bool x_negative = false;
  static constexpr uint64_t g1_b = 3;  ///< G1: y^2 = x^3 + g1_b
};

/// BLS12-381: x = -0xd201000000010000, xi = 1 + u, M-type twist (b' = 4 (1 + u)).
template <>
struct params<bls12_381> {
  static constexpr family fam = family::bls12;
  static constexpr twist tw = twist::m;
  static constexpr uint64_t xi_c0 = 1;
  static constexpr uint64_t x_abs = 0xd201000000010000ull;
  static constexpr bool x_negative = true;
  static constexpr uint64_t g1_b = 4;
};

}  // namespace proofline::zk::pairing
