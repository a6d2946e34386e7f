// Scalar multiplication by secret scalars (zk/ec/ct_mul.hpp) on G1 and G2
// of BN254 and BLS12-381: it agrees with the double-and-add of
// jacobian::mul for random and edge-case scalars, and runs the same number
// of field operations whatever the scalar.
#include <doctest/doctest.h>

#include <cstdint>
#include <random>
#include <set>
#include <vector>

#include "oracle.hpp"
#include "zk/curves.hpp"
#include "zk/ec/ct_mul.hpp"

using namespace proofline::zk;

namespace {

template <class C, class G>
struct case_of {
  using curve = C;
  using group = G;
};
using bn254_g1 = case_of<bn254, bn254::g1_group>;
using bn254_g2 = case_of<bn254, bn254::g2_group>;
using bls12_381_g1 = case_of<bls12_381, bls12_381::g1_group>;
using bls12_381_g2 = case_of<bls12_381, bls12_381::g2_group>;

/// The scalars every group is tried with: 0, 1, 2, a window's edge (15,
/// 16), r - 1, r, r + 1, every bit set, and random ones below r.
template <class C>
std::vector<typename C::scalar> scalars(std::mt19937_64& rng, int random_count) {
  using S = typename C::scalar;
  const S r = C::fr::modulus();
  S r_minus_1 = r, r_plus_1 = r, ones;
  r_minus_1.l[0] -= 1;  // r is odd: no borrow
  r_plus_1.l[0] += 1;   // no carry either
  for (auto& l : ones.l) l = ~uint64_t(0);
  std::vector<S> out = {S::zero(), S::from_u64(1), S::from_u64(2), S::from_u64(15),
                        S::from_u64(16), r_minus_1, r, r_plus_1, ones};
  for (int i = 0; i < random_count; ++i) out.push_back(test::random_below(rng, r));
  return out;
}

/// A field that counts its operations, to compare the sequence run for
/// different scalars. Wraps the group's own field, so results stay right.
template <class F>
struct counted {
  F v;
  static inline uint64_t ops = 0;
  static counted zero() { return {F::zero()}; }
  static counted one() { return {F::one()}; }
  bool is_zero() const { return v.is_zero(); }
  counted operator+(const counted& o) const { return ++ops, counted{v + o.v}; }
  counted operator-(const counted& o) const { return ++ops, counted{v - o.v}; }
  counted operator*(const counted& o) const { return ++ops, counted{v * o.v}; }
  counted sqr() const { return ++ops, counted{v.sqr()}; }
  counted dbl() const { return ++ops, counted{v.dbl()}; }
};

template <class G>
struct counted_group {
  using field = counted<typename G::field>;
  static field b() { return {G::b()}; }
};

}  // namespace

#define PL_CT_GROUPS bn254_g1, bn254_g2, bls12_381_g1, bls12_381_g2

TEST_CASE_TEMPLATE("k*P for a secret k agrees with double-and-add", T, PL_CT_GROUPS) {
  using C = typename T::curve;
  using G = typename T::group;
  using J = ec::jacobian<G>;
  std::mt19937_64 rng(20240611);
  const J g = J::from_affine(C::template generator<G>());
  // Prepare: the generator, a random multiple of it, and infinity.
  const std::vector<J> points = {g, g.mul(test::random_below(rng, C::fr::modulus())),
                                 J::infinity()};
  for (const J& p : points)
    for (const auto& k : scalars<C>(rng, 8)) {
      // Run, Verify
      const J got = ec::mul_secret(p, k);
      CHECK(got == p.mul(k));
      CHECK(got.to_affine().is_on_curve());
    }
}

TEST_CASE_TEMPLATE("k*P for a secret k runs the same field operations for every k", T,
                   PL_CT_GROUPS) {
  using C = typename T::curve;
  using G = typename T::group;
  using F = counted<typename G::field>;
  using CJ = ec::jacobian<counted_group<G>>;
  std::mt19937_64 rng(7);
  const auto a = C::template generator<G>();
  const CJ p{F{a.x}, F{a.y}, F::one()};
  std::set<uint64_t> counts;
  for (const auto& k : scalars<C>(rng, 4)) {
    F::ops = 0;
    ec::mul_secret(p, k);
    counts.insert(F::ops);
  }
  CHECK(counts.size() == 1);
  CHECK(*counts.begin() > 0);
  // The double-and-add it replaces does not: its length follows the scalar's.
  std::set<uint64_t> variable;
  for (const auto& k : scalars<C>(rng, 4)) {
    F::ops = 0;
    p.mul(k);
    variable.insert(F::ops);
  }
  CHECK(variable.size() > 1);
}
