#include "zk/pairing/pairing.hpp"

#include <type_traits>
#include <vector>

namespace proofline::zk::pairing {

namespace {

/// Digits in {-1, 0, 1} of a non-negative integer (non-adjacent form),
/// least significant first: the fewest additions for the Miller loop.
std::vector<int> naf(unsigned __int128 k) {
  std::vector<int> d;
  while (k) {
    int digit = 0;
    if (k & 1) {
      digit = 2 - (int)(k & 3);  // 1 when k = 1 mod 4, -1 when k = 3 mod 4
      if (digit > 0)
        k -= 1;
      else
        k += 1;
    }
    d.push_back(digit);
    k >>= 1;
  }
  return d;
}

/// The Miller loop's scalar: 6x + 2 for BN curves, |x| for BLS12.
template <class C>
unsigned __int128 loop_scalar() {
  constexpr auto x = params<C>::x_abs;
  if constexpr (params<C>::fam == family::bn) {
    static_assert(!params<C>::x_negative, "BN loop written for x > 0");
    return (unsigned __int128)x * 6 + 2;
  } else {
    return x;
  }
}

/// The state of one pair in the multi-Miller loop: T runs through multiples
/// of Q on the twist (Jacobian), P's coordinates scale the lines.
template <class C>
struct loop_pair {
  using fq = typename C::fq;
  using fq2 = typename C::fq2;
  typename C::g2_jacobian t;
  typename C::g2_affine q, neg_q;
  fq xp, yp;
};

/// Multiplies f by a line given by its three nonzero coefficients:
/// c_yp (the coefficient that carries y_P), c_xp (carries x_P) and c_0.
/// On a D-type twist the line is c_yp + c_xp w + c_0 w^3; on an M-type twist
/// it is multiplied by w^3 (a factor the final exponentiation removes):
/// c_0 + c_xp w^2 + c_yp w^3.
template <class C>
gt<C> mul_line(const gt<C>& f, const typename C::fq2& c_yp, const typename C::fq2& c_xp,
               const typename C::fq2& c_0) {
  const auto z = C::fq2::zero();
  if constexpr (params<C>::tw == twist::d)
    return f.mul_by_line(c_yp, z, c_xp, c_0);
  else
    return f.mul_by_line(c_0, c_xp, z, c_yp);
}

/// The tangent at T evaluated at P, times f, and T doubled.
///
/// With T = (X, Y, Z) in Jacobian coordinates on the twist (x' = X/Z^2,
/// y' = Y/Z^3), the tangent's slope on the twist is 3X^2 / (2YZ); scaled by
/// 2YZ^3 (in Fq2, removed by the final exponentiation) the line
/// y_P - slope x_P + (slope x' - y') untwists to
///   c_yp = 2YZ * Z^2 * y_P,  c_xp = -3X^2 Z^2 * x_P,  c_0 = 3X^3 - 2Y^2.
template <class C>
gt<C> double_step(const gt<C>& f, loop_pair<C>& s) {
  const auto& T = s.t;
  auto xx3 = T.X.sqr();
  xx3 = xx3.dbl() + xx3;
  const auto yy = T.Y.sqr();
  const auto zz = T.Z.sqr();
  const auto c_yp = ((T.Y * T.Z).dbl() * zz).mul_base(s.yp);
  const auto c_xp = -(xx3 * zz).mul_base(s.xp);
  const auto c_0 = xx3 * T.X - yy.dbl();
  s.t = T.dbl();
  return mul_line<C>(f, c_yp, c_xp, c_0);
}

/// The chord through T and Q evaluated at P, times f, and T + Q.
///
/// The slope is N / D with N = y_Q Z^3 - Y, H = x_Q Z^2 - X, D = Z H; scaled
/// by D the line y_P - slope x_P + (slope x_Q - y_Q) untwists to
///   c_yp = D y_P,  c_xp = -N x_P,  c_0 = N x_Q - D y_Q.
/// T never equals +-Q here: T = kQ with 1 < k < r for a Q of order r.
template <class C>
gt<C> add_step(const gt<C>& f, loop_pair<C>& s, const typename C::g2_affine& q) {
  const auto& T = s.t;
  const auto zz = T.Z.sqr();
  const auto n = q.y * zz * T.Z - T.Y;
  const auto d = T.Z * (q.x * zz - T.X);
  const auto c_yp = d.mul_base(s.yp);
  const auto c_xp = -n.mul_base(s.xp);
  const auto c_0 = n * q.x - d * q.y;
  s.t = T.add_affine(q);
  return mul_line<C>(f, c_yp, c_xp, c_0);
}

/// The p-power Frobenius endomorphism on the twist (D-type):
/// (x, y) -> (conj(x) xi^((p-1)/3), conj(y) xi^((p-1)/2)).
template <class C>
typename C::g2_affine twist_frobenius(const typename C::g2_affine& q) {
  static_assert(params<C>::tw == twist::d, "written for the D-type twist of BN curves");
  const auto& g = frobenius_constants<C>::get().gamma;
  using fq2 = typename C::fq2;
  return {fq2{q.x.c0, -q.x.c1} * g[2], fq2{q.y.c0, -q.y.c1} * g[3]};
}

/// f^x for x of either sign; f is in the cyclotomic subgroup (after the
/// easy part), where the conjugate is the inverse.
template <class C>
gt<C> pow_x(const gt<C>& f) {
  constexpr uint64_t x = params<C>::x_abs;
  gt<C> r = f;
  for (int i = 62 - __builtin_clzll(x) ; i >= 0; --i) {
    r = r.cyclotomic_sqr();
    if ((x >> i) & 1) r = r * f;
  }
  return params<C>::x_negative ? r.conjugate() : r;
}

template <class C>
gt<C> hard_part(const gt<C>& f) {
  if constexpr (params<C>::fam == family::bn) {
    // f^(l0 + l1 p + l2 p^2 + l3 p^3) with l0 = 12x^3 + 12x^2 + 6x + 1,
    // l1 = 12x^3 + 6x^2 + 4x, l2 = 12x^3 + 6x^2 + 6x, l3 = 12x^3 + 6x^2 + 4x - 1.
    const auto fx = pow_x<C>(f);
    const auto f2x = fx.sqr();
    const auto f6x = f2x * f2x.sqr();
    const auto f6x2 = pow_x<C>(f6x);
    const auto f12x3 = pow_x<C>(f6x2.sqr());
    const auto a = f12x3 * f6x2 * f6x;  // 12x^3 + 6x^2 + 6x
    const auto b = a * f2x.conjugate();  // 12x^3 + 6x^2 + 4x
    return a * f6x2 * f * b.frobenius() * a.frobenius(2) * (b * f.conjugate()).frobenius(3);
  } else {
    // f^((x - 1)^2 (x + p) (x^2 + p^2 - 1) + 3).
    const auto fx1 = [](const gt<C>& g) { return pow_x<C>(g) * g.conjugate(); };  // g^(x - 1)
    const auto a = fx1(fx1(f));
    const auto b = pow_x<C>(a) * a.frobenius();
    const auto c = pow_x<C>(pow_x<C>(b)) * b.frobenius(2) * b.conjugate();
    return c * f.sqr() * f;
  }
}

}  // namespace

template <class C>
gt<C> miller_loop(const pair<C>* pairs, std::size_t count) {
  std::vector<loop_pair<C>> s;
  s.reserve(count);
  for (std::size_t i = 0; i < count; ++i) {
    const auto& p = pairs[i];
    if (p.p.is_infinity() || p.q.is_infinity()) continue;
    s.push_back({C::g2_jacobian::from_affine(p.q), p.q, -p.q, p.p.x, p.p.y});
  }
  auto f = gt<C>::one();
  if (s.empty()) return f;

  static const std::vector<int> digits = naf(loop_scalar<C>());
  for (std::size_t i = digits.size() - 1; i-- > 0;) {
    f = f.sqr();
    for (auto& ps : s) f = double_step<C>(f, ps);
    if (digits[i] == 1)
      for (auto& ps : s) f = add_step<C>(f, ps, ps.q);
    else if (digits[i] == -1)
      for (auto& ps : s) f = add_step<C>(f, ps, ps.neg_q);
  }

  if constexpr (params<C>::fam == family::bn) {
    // Two more lines: through T and pi(Q), then through T + pi(Q) and -pi^2(Q).
    for (auto& ps : s) {
      const auto q1 = twist_frobenius<C>(ps.q);
      const auto q2 = -twist_frobenius<C>(q1);
      f = add_step<C>(f, ps, q1);
      f = add_step<C>(f, ps, q2);
    }
  } else if constexpr (params<C>::x_negative) {
    f = f.conjugate();  // f_{x} = 1 / f_{|x|} up to factors the final exponentiation removes
  }
  return f;
}

template <class C>
gt<C> final_exponentiation(const gt<C>& f) {
  // Easy part: f^(p^6 - 1) = conj(f) / f, then ^(p^2 + 1).
  auto t = f.conjugate() * f.inverse();
  t = t.frobenius(2) * t;
  return hard_part<C>(t);
}

template <class C>
gt<C> pairing_product(const pair<C>* pairs, std::size_t count) {
  return final_exponentiation<C>(miller_loop<C>(pairs, count));
}

template <class C>
gt<C> pairing(const typename C::g1_affine& p, const typename C::g2_affine& q) {
  const pair<C> one_pair{p, q};
  return pairing_product<C>(&one_pair, 1);
}

template <class C>
bool in_subgroup(const typename C::g1_affine& p) {
  if (!p.is_on_curve()) return false;
  if constexpr (std::is_same_v<C, bn254>) return true;  // cofactor 1
  return C::g1_jacobian::from_affine(p).mul(C::fr::modulus()).is_infinity();
}

template <class C>
bool in_subgroup(const typename C::g2_affine& q) {
  if (!q.is_on_curve()) return false;
  return C::g2_jacobian::from_affine(q).mul(C::fr::modulus()).is_infinity();
}

#define PL_INSTANTIATE(C)                                                               \
  template gt<C> miller_loop<C>(const pair<C>*, std::size_t);                          \
  template gt<C> final_exponentiation<C>(const gt<C>&);                                \
  template gt<C> pairing_product<C>(const pair<C>*, std::size_t);                      \
  template gt<C> pairing<C>(const C::g1_affine&, const C::g2_affine&);                 \
  template bool in_subgroup<C>(const C::g1_affine&);                                   \
  template bool in_subgroup<C>(const C::g2_affine&);
PL_INSTANTIATE(bn254)
PL_INSTANTIATE(bls12_381)
#undef PL_INSTANTIATE

}  // namespace proofline::zk::pairing
