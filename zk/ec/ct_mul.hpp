// Scalar multiplication by a secret scalar (the Groth16 blinding scalars r
// and s) in a fixed sequence of field operations: the same doublings,
// additions and table reads whatever the scalar's value, so its timing and
// memory accesses say nothing about it.
//
//  * Complete formulas in homogeneous projective coordinates (x = X/Z,
//    y = Y/Z, the identity is (0 : 1 : 0)): one formula for every pair of
//    inputs, identity and equal points included, so there is no branch on
//    a coordinate. Renes, Costello, Batina, "Complete addition formulas for
//    prime order elliptic curves" (EUROCRYPT 2016, ePrint 2015/1060),
//    algorithms 7 (addition, a = 0: 12M + 2m_3b) and 9 (doubling, a = 0:
//    6M + 2S + 1m_3b). They are complete on curves without points of order
//    two, which holds for BN254 and BLS12-381, G1 and G2 (odd group orders).
//  * A fixed 4-bit window over every bit of the scalar's representation:
//    4 doublings and one addition per window, 16 x limbs windows, whatever
//    the scalar's length. The window's multiple is read from a 16-entry table
//    by touching every entry and keeping one through a mask, so the address
//    sequence is the same for every digit.
//  * The field arithmetic underneath is branch-free on the host (carries and
//    the final subtraction are masks; zk/ff/fp.hpp), and so are the
//    conversions in and out of Jacobian coordinates.
//
// Cost: 256 doublings and 64 additions of the complete formulas for a
// 4-limb scalar (384 and 96 for 6 limbs), and 16 table entries read per
// window; a proof needs five of these, next to MSMs of millions of points.
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "zk/ec/point.hpp"
#include "zk/ff/fp.hpp"

namespace proofline::zk::ec {

/// A point in homogeneous projective coordinates, for the complete formulas.
template <class G>
struct projective {
  using field = typename G::field;
  field X, Y, Z;

  static projective identity() { return {field::zero(), field::one(), field::zero()}; }

  /// (X, Y, Z) Jacobian is (X Z : Y : Z^3); infinity (Z = 0) maps to (0 : Y : 0).
  static projective from_jacobian(const jacobian<G>& p) {
    return {p.X * p.Z, p.Y, p.Z.sqr() * p.Z};
  }
  /// (X : Y : Z) is (X Z, Y Z^2, Z) Jacobian; the identity maps to Z = 0.
  jacobian<G> to_jacobian() const { return {X * Z, Y * Z.sqr(), Z}; }

  /// 3b, the constant of the complete formulas.
  static field b3() {
    const field b = G::b();
    return b.dbl() + b;
  }

  /// Algorithm 7 of Renes-Costello-Batina (a = 0): 12M + 2m_3b + 19a.
  projective operator+(const projective& q) const {
    const field b3v = b3();
    field t0 = X * q.X;
    field t1 = Y * q.Y;
    field t2 = Z * q.Z;
    field t3 = (X + Y) * (q.X + q.Y);
    field t4 = t0 + t1;
    t3 = t3 - t4;              // X1 Y2 + X2 Y1
    t4 = (Y + Z) * (q.Y + q.Z);
    field X3 = t1 + t2;
    t4 = t4 - X3;              // Y1 Z2 + Y2 Z1
    X3 = (X + Z) * (q.X + q.Z);
    field Y3 = t0 + t2;
    Y3 = X3 - Y3;              // X1 Z2 + X2 Z1
    X3 = t0 + t0;
    t0 = X3 + t0;              // 3 X1 X2
    t2 = b3v * t2;
    field Z3 = t1 + t2;
    t1 = t1 - t2;
    Y3 = b3v * Y3;
    X3 = t4 * Y3;
    t2 = t3 * t1;
    X3 = t2 - X3;
    Y3 = Y3 * t0;
    t1 = t1 * Z3;
    Y3 = t1 + Y3;
    t0 = t0 * t3;
    Z3 = Z3 * t4;
    Z3 = Z3 + t0;
    return {X3, Y3, Z3};
  }

  /// Algorithm 9 of Renes-Costello-Batina (a = 0): 6M + 2S + 1m_3b + 9a.
  projective dbl() const {
    field t0 = Y.sqr();
    field Z3 = t0 + t0;
    Z3 = Z3 + Z3;
    Z3 = Z3 + Z3;              // 8 Y^2
    field t1 = Y * Z;
    field t2 = Z.sqr();
    t2 = b3() * t2;
    field X3 = t2 * Z3;
    field Y3 = t0 + t2;
    Z3 = t1 * Z3;
    t1 = t2 + t2;
    t2 = t1 + t2;
    t0 = t0 - t2;
    Y3 = t0 * Y3;
    Y3 = X3 + Y3;
    t1 = X * Y;
    X3 = t0 * t1;
    X3 = X3 + X3;
    return {X3, Y3, Z3};
  }
};

namespace detail {

/// All ones when a == b, else zero, without a branch.
inline uint64_t equal_mask(uint64_t a, uint64_t b) {
  const uint64_t d = a ^ b;
  return ((d | (0 - d)) >> 63) - 1;
}

/// table[index] for a secret index: reads every entry, keeps one by mask.
template <class T, unsigned K>
T select(const T (&table)[K], uint64_t index) {
  static_assert(std::is_trivially_copyable_v<T> && sizeof(T) % sizeof(uint64_t) == 0);
  constexpr unsigned words = sizeof(T) / sizeof(uint64_t);
  uint64_t out[words] = {};
  for (unsigned e = 0; e < K; ++e) {
    uint64_t w[words];
    std::memcpy(w, &table[e], sizeof(T));
    const uint64_t mask = equal_mask(e, index);
    for (unsigned i = 0; i < words; ++i) out[i] |= w[i] & mask;
  }
  T r;
  std::memcpy(&r, out, sizeof(T));
  return r;
}

}  // namespace detail

/// k * p for a secret k, in a fixed sequence (see the file comment). Agrees
/// with p.mul(k) for every k, zero and multiples of the group order included.
template <class G, unsigned N>
jacobian<G> mul_secret(const jacobian<G>& p, const ff::bigint<N>& k) {
  using proj = projective<G>;
  constexpr unsigned window = 4;
  constexpr unsigned windows = 64 * N / window;

  proj table[1u << window];
  table[0] = proj::identity();
  table[1] = proj::from_jacobian(p);
  for (unsigned i = 2; i < (1u << window); ++i) table[i] = table[i - 1] + table[1];

  proj acc = proj::identity();
  for (unsigned w = windows; w-- > 0;) {
    for (unsigned d = 0; d < window; ++d) acc = acc.dbl();
    acc = acc + detail::select(table, k.bits(w * window, window));
  }
  return acc.to_jacobian();
}

}  // namespace proofline::zk::ec
