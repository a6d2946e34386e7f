// The extension tower of the pairing's target group, over any curve that
// zk/pairing/params.hpp describes:
//
//   Fq2  = Fq[u]  / (u^2 + 1)      (zk/ff/fp2.hpp)
//   Fq6  = Fq2[v] / (v^3 - xi)
//   Fq12 = Fq6[w] / (w^2 - v)      so w^6 = xi and Fq12 = Fq2[w] / (w^6 - xi)
//
// the construction snarkjs uses, so values compare coordinate for coordinate
// with snarkjs's (vk_alphabeta_12). Host code only; costs are counted in Fq2
// products (one Fq2 product is 3 Fq products).
#pragma once

#include "zk/curves.hpp"
#include "zk/pairing/params.hpp"

namespace proofline::zk::pairing {

/// x^e by square-and-multiply, most significant bit first, for any type with
/// one(), sqr() and *.
template <class T, unsigned M>
T pow(const T& x, const ff::bigint<M>& e) {
  T r = T::one();
  for (unsigned i = e.bit_length(); i-- > 0;) {
    r = r.sqr();
    if (e.bit(i)) r = r * x;
  }
  return r;
}

/// k * a for a small constant k, by additions (no products).
template <class F>
F mul_small(const F& a, uint64_t k) {
  F r = F::zero(), d = a;
  for (; k; k >>= 1, d = d.dbl())
    if (k & 1) r = r + d;
  return r;
}

/// a * xi with xi = c0 + u: (a0 + a1 u)(c0 + u) = (c0 a0 - a1) + (a0 + c0 a1) u,
/// additions only.
template <class C>
typename C::fq2 mul_by_xi(const typename C::fq2& a) {
  constexpr uint64_t k = params<C>::xi_c0;
  return {mul_small(a.c0, k) - a.c1, a.c0 + mul_small(a.c1, k)};
}

template <class C>
struct fq6 {
  using fq2 = typename C::fq2;
  fq2 c0, c1, c2;  ///< c0 + c1 v + c2 v^2

  static fq6 zero() { return {fq2::zero(), fq2::zero(), fq2::zero()}; }
  static fq6 one() { return {fq2::one(), fq2::zero(), fq2::zero()}; }
  bool is_zero() const { return c0.is_zero() && c1.is_zero() && c2.is_zero(); }
  bool operator==(const fq6& o) const { return c0 == o.c0 && c1 == o.c1 && c2 == o.c2; }
  bool operator!=(const fq6& o) const { return !(*this == o); }

  fq6 operator+(const fq6& b) const { return {c0 + b.c0, c1 + b.c1, c2 + b.c2}; }
  fq6 operator-(const fq6& b) const { return {c0 - b.c0, c1 - b.c1, c2 - b.c2}; }
  fq6 operator-() const { return {-c0, -c1, -c2}; }
  fq6 dbl() const { return {c0.dbl(), c1.dbl(), c2.dbl()}; }

  /// Karatsuba over the three coefficients: 6 products.
  fq6 operator*(const fq6& b) const {
    fq2 t0 = c0 * b.c0, t1 = c1 * b.c1, t2 = c2 * b.c2;
    return {mul_by_xi<C>((c1 + c2) * (b.c1 + b.c2) - t1 - t2) + t0,
            (c0 + c1) * (b.c0 + b.c1) - t0 - t1 + mul_by_xi<C>(t2),
            (c0 + c2) * (b.c0 + b.c2) - t0 - t2 + t1};
  }
  fq6 sqr() const { return *this * *this; }

  /// Product with b0 + b1 v (no v^2 term), as line functions have: 5 products.
  fq6 mul_by_01(const fq2& b0, const fq2& b1) const {
    fq2 t0 = c0 * b0, t1 = c1 * b1;
    return {mul_by_xi<C>(c2 * b1) + t0, (c0 + c1) * (b0 + b1) - t0 - t1, c2 * b0 + t1};
  }
  /// v * a = xi a2 + a0 v + a1 v^2.
  fq6 mul_by_v() const { return {mul_by_xi<C>(c2), c0, c1}; }

  /// Through the norm to Fq2: one Fq2 inversion and 9 products. Zero maps to zero.
  fq6 inverse() const {
    fq2 a = c0.sqr() - mul_by_xi<C>(c1 * c2);
    fq2 b = mul_by_xi<C>(c2.sqr()) - c0 * c1;
    fq2 c = c1.sqr() - c0 * c2;
    fq2 n = c0 * a + mul_by_xi<C>(c2 * b + c1 * c);
    fq2 ni = n.inverse();
    return {a * ni, b * ni, c * ni};
  }
};

/// The constants of the p-power Frobenius map on Fq12 = Fq2[w] / (w^6 - xi):
/// (sum g_k w^k)^p = sum conj(g_k) gamma_k w^k with gamma_k = xi^(k (p - 1) / 6)
/// (p = 1 mod 6 on both curves). Computed once from p and xi, not tabulated.
template <class C>
struct frobenius_constants {
  typename C::fq2 gamma[6];

  static const frobenius_constants& get() {
    static const frobenius_constants k = make();
    return k;
  }

 private:
  static frobenius_constants make() {
    using fq = typename C::fq;
    auto e = fq::modulus();  // p - 1, then / 6
    e.l[0] -= 1;             // p is odd: no borrow
    unsigned __int128 rem = 0;
    for (unsigned i = fq::N; i-- > 0;) {
      unsigned __int128 cur = (rem << 64) | e.l[i];
      e.l[i] = (uint64_t)(cur / 6);
      rem = cur % 6;
    }
    frobenius_constants k;
    const typename C::fq2 xi = mul_by_xi<C>(C::fq2::one());
    const auto g1 = pow(xi, e);
    k.gamma[0] = C::fq2::one();
    for (unsigned i = 1; i < 6; ++i) k.gamma[i] = k.gamma[i - 1] * g1;
    return k;
  }
};

template <class C>
struct fq12 {
  using fq2 = typename C::fq2;
  using fq6_t = fq6<C>;
  fq6_t c0, c1;  ///< c0 + c1 w

  static fq12 zero() { return {fq6_t::zero(), fq6_t::zero()}; }
  static fq12 one() { return {fq6_t::one(), fq6_t::zero()}; }
  bool is_one() const { return *this == one(); }
  bool operator==(const fq12& o) const { return c0 == o.c0 && c1 == o.c1; }
  bool operator!=(const fq12& o) const { return !(*this == o); }

  fq12 operator+(const fq12& b) const { return {c0 + b.c0, c1 + b.c1}; }
  fq12 operator-(const fq12& b) const { return {c0 - b.c0, c1 - b.c1}; }

  /// Karatsuba with w^2 = v: 3 Fq6 products, 18 Fq2 products.
  fq12 operator*(const fq12& b) const {
    fq6_t t0 = c0 * b.c0, t1 = c1 * b.c1;
    return {t0 + t1.mul_by_v(), (c0 + c1) * (b.c0 + b.c1) - t0 - t1};
  }
  fq12& operator*=(const fq12& b) { return *this = *this * b; }

  /// Complex squaring: (a0 + a1 w)^2 = (a0 + a1)(a0 + v a1) - a0 a1 - v a0 a1
  /// + 2 a0 a1 w: 2 Fq6 products, 12 Fq2 products.
  fq12 sqr() const {
    fq6_t ab = c0 * c1;
    fq6_t s = (c0 + c1) * (c0 + c1.mul_by_v()) - ab - ab.mul_by_v();
    return {s, ab.dbl()};
  }

  /// The square of an element of the cyclotomic subgroup (a^(p^6 + 1) = 1,
  /// as after the easy part of the final exponentiation): Granger, Scott,
  /// "Faster squaring in the cyclotomic subgroup of sixth degree extensions"
  /// (PKC 2010), over the three Fq4 = Fq2[y] / (y^2 - xi) pairs (c0.c0, c1.c1),
  /// (c1.c0, c0.c2), (c0.c1, c1.c2): 6 Fq2 products instead of 12.
  fq12 cyclotomic_sqr() const {
    // (a + b y)^2 = (a^2 + xi b^2) + 2ab y, with a^2 + xi b^2 = (a + b)(a + xi b) - ab - xi ab.
    auto fq4_sqr = [](const fq2& a, const fq2& b, fq2& r0, fq2& r1) {
      fq2 ab = a * b;
      r0 = (a + b) * (a + mul_by_xi<C>(b)) - ab - mul_by_xi<C>(ab);
      r1 = ab.dbl();
    };
    fq2 t0, t1, t2, t3, t4, t5;
    fq4_sqr(c0.c0, c1.c1, t0, t1);
    fq4_sqr(c1.c0, c0.c2, t2, t3);
    fq4_sqr(c0.c1, c1.c2, t4, t5);
    const fq2 t5xi = mul_by_xi<C>(t5);
    fq12 r;
    r.c0.c0 = (t0 - c0.c0).dbl() + t0;  // 3 t0 - 2 z0
    r.c1.c1 = (t1 + c1.c1).dbl() + t1;  // 3 t1 + 2 z1
    r.c1.c0 = (t5xi + c1.c0).dbl() + t5xi;
    r.c0.c2 = (t4 - c0.c2).dbl() + t4;
    r.c0.c1 = (t2 - c0.c1).dbl() + t2;
    r.c1.c2 = (t3 + c1.c2).dbl() + t3;
    return r;
  }

  /// a^(p^6): negates the w part. The inverse on the cyclotomic subgroup,
  /// where every final exponentiation's result lies.
  fq12 conjugate() const { return {c0, -c1}; }

  /// (a0 - a1 w) / (a0^2 - v a1^2): one Fq6 inversion. Zero maps to zero.
  fq12 inverse() const {
    fq6_t t = (c0.sqr() - c1.sqr().mul_by_v()).inverse();
    return {c0 * t, -(c1 * t)};
  }

  /// a^p: conjugate each Fq2 coefficient of w^k and scale it by gamma_k
  /// (c0 holds w^0, w^2, w^4; c1 holds w^1, w^3, w^5): 5 Fq2 products.
  fq12 frobenius() const {
    const auto& g = frobenius_constants<C>::get().gamma;
    auto cj = [](const fq2& a) { return fq2{a.c0, -a.c1}; };
    return {{cj(c0.c0), cj(c0.c1) * g[2], cj(c0.c2) * g[4]},
            {cj(c1.c0) * g[1], cj(c1.c1) * g[3], cj(c1.c2) * g[5]}};
  }
  /// a^(p^k).
  fq12 frobenius(unsigned k) const {
    fq12 r = *this;
    while (k--) r = r.frobenius();
    return r;
  }

  /// Product with a line value l0 + l1 w whose Fq6 parts have no v^2 term
  /// (l0 = a0 + a1 v, l1 = b0 + b1 v; one of the four is zero, which one
  /// depends on the twist): 15 Fq2 products instead of 18.
  fq12 mul_by_line(const fq2& a0, const fq2& a1, const fq2& b0, const fq2& b1) const {
    fq6_t t0 = c0.mul_by_01(a0, a1), t1 = c1.mul_by_01(b0, b1);
    fq6_t s = (c0 + c1).mul_by_01(a0 + b0, a1 + b1);
    return {t0 + t1.mul_by_v(), s - t0 - t1};
  }
};

}  // namespace proofline::zk::pairing
