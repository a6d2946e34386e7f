// Points of short Weierstrass curves y^2 = x^3 + b (a = 0), written once over
// a group description G (G::field is fp or fp2; G::b() the coefficient) and
// shared by host and device code.
//
//  * affine<G>:   (x, y); the point at infinity is (0, 0), as in snarkjs files
//                 (it is never on the curve because b != 0).
//  * jacobian<G>: x = X/Z^2, y = Y/Z^3; infinity has Z = 0. General arithmetic.
//  * xyzz<G>:     x = X/ZZ, y = Y/ZZZ with ZZ^3 = ZZZ^2; infinity has ZZ = 0.
//                 Cheapest mixed addition, the MSM bucket accumulator.
//
// Formulas are from the Explicit-Formulas Database (EFD),
// https://hyperelliptic.org/EFD/g1p/auto-shortw-jacobian-0.html and
// https://hyperelliptic.org/EFD/g1p/auto-shortw-xyzz.html; costs in M
// (multiplications) and S (squarings) of G::field.
#pragma once

#include "zk/common/hd.hpp"

namespace proofline::zk::ec {

template <class G>
struct affine {
  using group = G;
  using field = typename G::field;
  field x, y;

  PL_HD static affine infinity() { return {field::zero(), field::zero()}; }
  PL_HD bool is_infinity() const { return x.is_zero() && y.is_zero(); }
  PL_HD bool operator==(const affine& o) const { return x == o.x && y == o.y; }
  PL_HD bool operator!=(const affine& o) const { return !(*this == o); }
  PL_HD affine operator-() const { return is_infinity() ? *this : affine{x, -y}; }
  /// y^2 == x^3 + b; infinity counts as on the curve.
  PL_HD bool is_on_curve() const {
    if (is_infinity()) return true;
    return y.sqr() == x.sqr() * x + G::b();
  }
};

template <class G>
struct jacobian {
  using group = G;
  using field = typename G::field;
  using affine_t = affine<G>;
  field X, Y, Z;

  PL_HD static jacobian infinity() { return {field::one(), field::one(), field::zero()}; }
  PL_HD static jacobian from_affine(const affine_t& a) {
    return a.is_infinity() ? infinity() : jacobian{a.x, a.y, field::one()};
  }
  PL_HD bool is_infinity() const { return Z.is_zero(); }
  PL_HD jacobian operator-() const { return {X, -Y, Z}; }

  /// dbl-2009-l: 2M + 5S.
  PL_HD jacobian dbl() const {
    if (is_infinity()) return *this;
    field A = X.sqr();
    field B = Y.sqr();
    field C = B.sqr();
    field D = ((X + B).sqr() - A - C).dbl();
    field E = A.dbl() + A;
    field F = E.sqr();
    field X3 = F - D.dbl();
    field C8 = C.dbl().dbl().dbl();
    field Y3 = E * (D - X3) - C8;
    field Z3 = (Y * Z).dbl();
    return {X3, Y3, Z3};
  }

  /// add-2007-bl: 11M + 5S; falls back to doubling when the inputs are equal.
  PL_HD jacobian operator+(const jacobian& q) const {
    if (is_infinity()) return q;
    if (q.is_infinity()) return *this;
    field Z1Z1 = Z.sqr();
    field Z2Z2 = q.Z.sqr();
    field U1 = X * Z2Z2;
    field U2 = q.X * Z1Z1;
    field S1 = Y * q.Z * Z2Z2;
    field S2 = q.Y * Z * Z1Z1;
    field H = U2 - U1;
    field r = (S2 - S1).dbl();
    if (H.is_zero()) return r.is_zero() ? dbl() : infinity();
    field I = H.dbl().sqr();
    field J = H * I;
    field V = U1 * I;
    field X3 = r.sqr() - J - V.dbl();
    field Y3 = r * (V - X3) - (S1 * J).dbl();
    field Z3 = ((Z + q.Z).sqr() - Z1Z1 - Z2Z2) * H;
    return {X3, Y3, Z3};
  }

  /// madd-2007-bl (q has Z = 1): 7M + 4S.
  PL_HD jacobian add_affine(const affine_t& q) const {
    if (q.is_infinity()) return *this;
    if (is_infinity()) return from_affine(q);
    field Z1Z1 = Z.sqr();
    field U2 = q.x * Z1Z1;
    field S2 = q.y * Z * Z1Z1;
    field H = U2 - X;
    field r = (S2 - Y).dbl();
    if (H.is_zero()) return r.is_zero() ? dbl() : infinity();
    field HH = H.sqr();
    field I = HH.dbl().dbl();
    field J = H * I;
    field V = X * I;
    field X3 = r.sqr() - J - V.dbl();
    field Y3 = r * (V - X3) - (Y * J).dbl();
    field Z3 = (Z + H).sqr() - Z1Z1 - HH;
    return {X3, Y3, Z3};
  }

  PL_HD jacobian operator-(const jacobian& q) const { return *this + (-q); }
  PL_HD jacobian& operator+=(const jacobian& q) { return *this = *this + q; }

  /// One inversion. Infinity maps to (0, 0).
  PL_HD affine_t to_affine() const {
    if (is_infinity()) return affine_t::infinity();
    field zi = Z.inverse();
    field zi2 = zi.sqr();
    return {X * zi2, Y * zi2 * zi};
  }

  /// Equality of the points represented (cross-multiplied, no inversion).
  PL_HD bool operator==(const jacobian& q) const {
    if (is_infinity() || q.is_infinity()) return is_infinity() == q.is_infinity();
    field Z1Z1 = Z.sqr(), Z2Z2 = q.Z.sqr();
    return X * Z2Z2 == q.X * Z1Z1 && Y * Z2Z2 * q.Z == q.Y * Z1Z1 * Z;
  }
  PL_HD bool operator!=(const jacobian& q) const { return !(*this == q); }

  /// k * P by double-and-add over the bits of a plain integer. Variable
  /// time (its steps follow k's bits): for public scalars and tests; secret
  /// scalars go through ec::mul_secret (zk/ec/ct_mul.hpp).
  template <class Int>
  PL_HD jacobian mul(const Int& k) const {
    jacobian r = infinity();
    for (unsigned i = k.bit_length(); i-- > 0;) {
      r = r.dbl();
      if (k.bit(i)) r = r + *this;
    }
    return r;
  }
};

template <class G>
struct xyzz {
  using group = G;
  using field = typename G::field;
  using affine_t = affine<G>;
  using jacobian_t = jacobian<G>;
  field X, Y, ZZ, ZZZ;

  PL_HD static xyzz infinity() { return {field::one(), field::one(), field::zero(), field::zero()}; }
  PL_HD static xyzz from_affine(const affine_t& a) {
    return a.is_infinity() ? infinity() : xyzz{a.x, a.y, field::one(), field::one()};
  }
  PL_HD bool is_infinity() const { return ZZ.is_zero(); }

  /// dbl-2008-s-1 (a = 0): 6M + 3S.
  PL_HD xyzz dbl() const {
    if (is_infinity()) return *this;
    field U = Y.dbl();
    field V = U.sqr();
    field W = U * V;
    field S = X * V;
    field XX = X.sqr();
    field M = XX.dbl() + XX;
    field X3 = M.sqr() - S.dbl();
    field Y3 = M * (S - X3) - W * Y;
    return {X3, Y3, V * ZZ, W * ZZZ};
  }

  /// mdbl-2008-s-1: doubling an affine point, 2M + 3S (with ZZ = ZZZ = 1).
  PL_HD static xyzz dbl_affine(const affine_t& a) {
    if (a.is_infinity()) return infinity();
    field U = a.y.dbl();
    field V = U.sqr();
    field W = U * V;
    field S = a.x * V;
    field XX = a.x.sqr();
    field M = XX.dbl() + XX;
    field X3 = M.sqr() - S.dbl();
    field Y3 = M * (S - X3) - W * a.y;
    return {X3, Y3, V, W};
  }

  /// madd-2008-s (q affine): 8M + 2S.
  PL_HD xyzz add_affine(const affine_t& q) const {
    if (q.is_infinity()) return *this;
    if (is_infinity()) return from_affine(q);
    field U2 = q.x * ZZ;
    field S2 = q.y * ZZZ;
    field P = U2 - X;
    field R = S2 - Y;
    if (P.is_zero()) return R.is_zero() ? dbl_affine(q) : infinity();
    field PP = P.sqr();
    field PPP = P * PP;
    field Q = X * PP;
    field X3 = R.sqr() - PPP - Q.dbl();
    field Y3 = R * (Q - X3) - Y * PPP;
    return {X3, Y3, ZZ * PP, ZZZ * PPP};
  }
  PL_HD xyzz sub_affine(const affine_t& q) const { return add_affine(-q); }

  /// add-2008-s: 12M + 2S.
  PL_HD xyzz operator+(const xyzz& q) const {
    if (is_infinity()) return q;
    if (q.is_infinity()) return *this;
    field U1 = X * q.ZZ;
    field U2 = q.X * ZZ;
    field S1 = Y * q.ZZZ;
    field S2 = q.Y * ZZZ;
    field P = U2 - U1;
    field R = S2 - S1;
    if (P.is_zero()) return R.is_zero() ? dbl() : infinity();
    field PP = P.sqr();
    field PPP = P * PP;
    field Q = U1 * PP;
    field X3 = R.sqr() - PPP - Q.dbl();
    field Y3 = R * (Q - X3) - S1 * PPP;
    return {X3, Y3, ZZ * q.ZZ * PP, ZZZ * q.ZZZ * PPP};
  }
  PL_HD xyzz& operator+=(const xyzz& q) { return *this = *this + q; }

  /// x = X/ZZ, y = Y/ZZZ with one inversion of ZZ*ZZZ.
  PL_HD affine_t to_affine() const {
    if (is_infinity()) return affine_t::infinity();
    field i = (ZZ * ZZZ).inverse();
    return {X * ZZZ * i, Y * ZZ * i};  // X/ZZ and Y/ZZZ
  }
  /// Same point in Jacobian coordinates without inversion: with Z = ZZZ,
  /// Z^2 = ZZ^3 and Z^3 = ZZ^3 ZZZ, so X' = X ZZ^2 and Y' = Y ZZZ^2.
  PL_HD jacobian_t to_jacobian() const {
    if (is_infinity()) return jacobian_t::infinity();
    return {X * ZZ.sqr(), Y * ZZZ.sqr(), ZZZ};
  }
};

}  // namespace proofline::zk::ec
