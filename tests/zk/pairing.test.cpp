// The pairing on BN254 and BLS12-381: the Fq12 tower against GMP
// (schoolbook products of polynomials in u and w reduced by u^2 = -1 and
// w^6 = xi), the fast final exponentiation against the plain power
// k (p^12 - 1) / r computed by GMP (k as snarkjs has it), e(alpha1, beta2) against snarkjs's
// vk_alphabeta_12 in every fixture key, bilinearity, non-degeneracy and the
// subgroup checks.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <vector>

#include "oracle.hpp"
#include "zk/formats/decimal.hpp"
#include "zk/formats/proof_json.hpp"
#include "zk/pairing/pairing.hpp"

using namespace proofline::zk;

namespace {

template <class C>
using f12 = pairing::fq12<C>;

template <class C>
typename C::fq random_fq(std::mt19937_64& rng) {
  return C::fq::from_standard(test::random_below(rng, C::fq::modulus()));
}
template <class C>
typename C::fq2 random_fq2(std::mt19937_64& rng) {
  return {random_fq<C>(rng), random_fq<C>(rng)};
}
template <class C>
f12<C> random_fq12(std::mt19937_64& rng) {
  f12<C> a;
  for (auto* c : {&a.c0.c0, &a.c0.c1, &a.c0.c2, &a.c1.c0, &a.c1.c1, &a.c1.c2}) *c = random_fq2<C>(rng);
  return a;
}
template <class C>
typename C::scalar random_scalar(std::mt19937_64& rng) {
  return test::random_below(rng, C::fr::modulus());
}

/// The Fq2 coefficient of w^k (c0 holds w^0, w^2, w^4; c1 holds w^1, w^3, w^5).
template <class C>
typename C::fq2& coef(f12<C>& a, unsigned k) {
  auto& half = k % 2 ? a.c1 : a.c0;
  return k / 2 == 0 ? half.c0 : k / 2 == 1 ? half.c1 : half.c2;
}

/// An Fq12 element as 12 GMP integers: index 2k + j holds the coefficient of u^j w^k.
struct poly12 {
  test::mpz c[12];
};

template <class C>
poly12 to_poly(f12<C> a) {
  poly12 p;
  for (unsigned k = 0; k < 6; ++k) {
    p.c[2 * k] = test::mpz(coef<C>(a, k).c0.to_standard());
    p.c[2 * k + 1] = test::mpz(coef<C>(a, k).c1.to_standard());
  }
  return p;
}

/// Schoolbook product in Fq[u, w] / (u^2 + 1, w^6 - xi), xi = xi_c0 + u.
template <class C>
poly12 mul_oracle(const poly12& a, const poly12& b) {
  const test::mpz p(C::fq::modulus());
  test::mpz acc[11][2], t;  // w^0..w^10, u^0..u^1
  for (unsigned i = 0; i < 12; ++i)
    for (unsigned j = 0; j < 12; ++j) {
      unsigned k = i / 2 + j / 2, u = i % 2 + j % 2;
      mpz_mul(t.get(), a.c[i].get(), b.c[j].get());
      if (u == 2)  // u^2 = -1
        mpz_sub(acc[k][0].get(), acc[k][0].get(), t.get());
      else
        mpz_add(acc[k][u].get(), acc[k][u].get(), t.get());
    }
  const unsigned long x0 = pairing::params<C>::xi_c0;
  for (unsigned k = 10; k >= 6; --k) {  // w^k = xi w^(k-6)
    test::mpz r0, r1;
    mpz_mul_ui(r0.get(), acc[k][0].get(), x0);
    mpz_sub(r0.get(), r0.get(), acc[k][1].get());
    mpz_mul_ui(r1.get(), acc[k][1].get(), x0);
    mpz_add(r1.get(), r1.get(), acc[k][0].get());
    mpz_add(acc[k - 6][0].get(), acc[k - 6][0].get(), r0.get());
    mpz_add(acc[k - 6][1].get(), acc[k - 6][1].get(), r1.get());
  }
  poly12 out;
  for (unsigned k = 0; k < 6; ++k)
    for (unsigned u = 0; u < 2; ++u) mpz_mod(out.c[2 * k + u].get(), acc[k][u].get(), p.get());
  return out;
}

bool operator==(const poly12& a, const poly12& b) {
  for (unsigned i = 0; i < 12; ++i)
    if (!(a.c[i] == b.c[i])) return false;
  return true;
}

/// A bigint of enough limbs for k (p^12 - 1) / r.
using big_exp = ff::bigint<84>;

/// The exponent the final exponentiation should compute: k (p^12 - 1) / r with
/// snarkjs's k, 2x (6x^2 + 3x + 1) for BN254 and 3 for BLS12-381.
template <class C>
big_exp full_final_exponent() {
  test::mpz p(C::fq::modulus()), r(C::fr::modulus()), e, k;
  mpz_pow_ui(e.get(), p.get(), 12);
  mpz_sub_ui(e.get(), e.get(), 1);
  REQUIRE(mpz_divisible_p(e.get(), r.get()));
  mpz_divexact(e.get(), e.get(), r.get());
  if (pairing::params<C>::fam == pairing::family::bn) {
    test::mpz x(ff::bigint<1>{{pairing::params<C>::x_abs}}), t;
    mpz_mul(k.get(), x.get(), x.get());  // 6x^2 + 3x + 1
    mpz_mul_ui(k.get(), k.get(), 6);
    mpz_mul_ui(t.get(), x.get(), 3);
    mpz_add(k.get(), k.get(), t.get());
    mpz_add_ui(k.get(), k.get(), 1);
    mpz_mul(k.get(), k.get(), x.get());
    mpz_mul_ui(k.get(), k.get(), 2);
  } else {
    mpz_set_ui(k.get(), 3);
  }
  mpz_mul(e.get(), e.get(), k.get());
  return e.limbs<84>();
}

/// vk_alphabeta_12 of a snarkjs verification key: [[[c00, c01], [..], [..]], [[..], [..], [..]]].
template <class C>
f12<C> read_gt(const nlohmann::json& j) {
  f12<C> a;
  auto fq = [](const nlohmann::json& s) {
    typename C::fq::repr v;
    REQUIRE(formats::parse_decimal(s.get<std::string>(), v));
    return C::fq::from_standard(v);
  };
  typename pairing::fq6<C>* halves[2] = {&a.c0, &a.c1};
  for (unsigned h = 0; h < 2; ++h) {
    typename C::fq2* cs[3] = {&halves[h]->c0, &halves[h]->c1, &halves[h]->c2};
    for (unsigned i = 0; i < 3; ++i) *cs[i] = {fq(j[h][i][0]), fq(j[h][i][1])};
  }
  return a;
}

template <class C>
std::vector<std::string> fixture_dirs() {
  std::vector<std::string> out;
  const auto root = std::filesystem::path(test::fixtures_dir()) / C::name;
  for (const auto& d : std::filesystem::directory_iterator(root))
    if (std::filesystem::exists(d.path() / "verification_key.json")) out.push_back(d.path().string());
  return out;
}

/// (p + d) / div for the base field's p, computed by GMP.
template <class C>
typename C::fq::repr p_plus_over(long d, unsigned long div) {
  test::mpz e(C::fq::modulus());
  if (d >= 0)
    mpz_add_ui(e.get(), e.get(), (unsigned long)d);
  else
    mpz_sub_ui(e.get(), e.get(), (unsigned long)-d);
  mpz_fdiv_q_ui(e.get(), e.get(), div);
  return e.limbs<C::fq::N>();
}

/// A point on the curve y^2 = x^3 + b over Fq (p = 3 mod 4: sqrt(a) = a^((p+1)/4)),
/// almost surely outside the prime-order subgroup when the cofactor is large.
template <class C>
typename C::g1_affine random_curve_point_g1(std::mt19937_64& rng) {
  const auto e = p_plus_over<C>(1, 4);
  for (;;) {
    auto x = random_fq<C>(rng);
    auto rhs = x.sqr() * x + C::g1_group::b();
    auto y = rhs.pow(e);
    if (y.sqr() == rhs) return {x, y};
  }
}

/// A point on the twist over Fq2, by the complex method for p = 3 mod 4
/// (Adj, Rodriguez-Henriquez 2012, algorithm 9).
template <class C>
typename C::g2_affine random_curve_point_g2(std::mt19937_64& rng) {
  using fq2 = typename C::fq2;
  const auto e34 = p_plus_over<C>(-3, 4), e12 = p_plus_over<C>(-1, 2);
  for (;;) {
    fq2 x = random_fq2<C>(rng);
    fq2 a = x.sqr() * x + C::g2_group::b();
    fq2 a1 = pairing::pow(a, e34);
    fq2 alpha = a1.sqr() * a;
    fq2 x0 = a1 * a;
    fq2 y;
    if (alpha == -fq2::one())
      y = {-x0.c1, x0.c0};  // i * x0
    else
      y = pairing::pow(alpha + fq2::one(), e12) * x0;
    if (y.sqr() == a) return {x, y};
  }
}

}  // namespace

#define PL_CURVES bn254, bls12_381

TEST_CASE_TEMPLATE("Fq12 products, squares and inverses match GMP", C, PL_CURVES) {
  std::mt19937_64 rng(test::test_seed());
  INFO("seed ", test::test_seed(), ", curve ", C::name);
  for (int trial = 0; trial < 8; ++trial) {
    const auto a = random_fq12<C>(rng), b = random_fq12<C>(rng);
    CHECK(to_poly<C>(a * b) == mul_oracle<C>(to_poly<C>(a), to_poly<C>(b)));
    CHECK(to_poly<C>(a.sqr()) == mul_oracle<C>(to_poly<C>(a), to_poly<C>(a)));
    CHECK((a * a.inverse()).is_one());
    // A sparse line value against the dense product.
    f12<C> line = f12<C>::zero();
    line.c0.c0 = random_fq2<C>(rng);
    line.c0.c1 = random_fq2<C>(rng);
    line.c1.c0 = random_fq2<C>(rng);
    line.c1.c1 = random_fq2<C>(rng);
    CHECK(a.mul_by_line(line.c0.c0, line.c0.c1, line.c1.c0, line.c1.c1) == a * line);
  }
}

TEST_CASE_TEMPLATE("Frobenius and conjugation are the powers p and p^6", C, PL_CURVES) {
  std::mt19937_64 rng(test::test_seed() + 1);
  const auto p = C::fq::modulus();
  for (int trial = 0; trial < 2; ++trial) {
    const auto a = random_fq12<C>(rng);
    const auto ap = pairing::pow(a, p);
    CHECK(a.frobenius() == ap);
    CHECK(a.frobenius(2) == pairing::pow(ap, p));
    CHECK(a.frobenius(6) == a.conjugate());
  }
}

TEST_CASE_TEMPLATE("the G2 coefficient is b / xi or b xi as the twist type says", C, PL_CURVES) {
  using fq2 = typename C::fq2;
  const fq2 b{C::fq::from_u64(pairing::params<C>::g1_b), C::fq::zero()};
  const fq2 xi = pairing::mul_by_xi<C>(fq2::one());
  CHECK(C::g1_group::b() == b.c0);
  if (pairing::params<C>::tw == pairing::twist::d)
    CHECK(C::g2_group::b() * xi == b);
  else
    CHECK(C::g2_group::b() == b * xi);
}

TEST_CASE_TEMPLATE("the final exponentiation is the power k (p^12 - 1) / r", C, PL_CURVES) {
  std::mt19937_64 rng(test::test_seed() + 2);
  const auto e = full_final_exponent<C>();
  const auto f = random_fq12<C>(rng);
  CHECK(pairing::final_exponentiation<C>(f) == pairing::pow(f, e));
  const auto m = pairing::miller_loop<C>(
      std::vector<pairing::pair<C>>{{C::g1_generator(), C::g2_generator()}}.data(), 1);
  CHECK(pairing::final_exponentiation<C>(m) == pairing::pow(m, e));
}

TEST_CASE_TEMPLATE("e(alpha1, beta2) equals snarkjs's vk_alphabeta_12", C, PL_CURVES) {
  const auto dirs = fixture_dirs<C>();
  REQUIRE(!dirs.empty());
  for (const auto& dir : dirs) {
    INFO(dir);
    const auto path = dir + "/verification_key.json";
    const auto vk = formats::read_verification_key<C>(path);
    std::ifstream in(path);
    const auto j = nlohmann::json::parse(in);
    const auto expected = read_gt<C>(j.at("vk_alphabeta_12"));
    CHECK(pairing::pairing<C>(vk.alpha1, vk.beta2) == expected);
  }
}

TEST_CASE_TEMPLATE("the pairing is bilinear and non-degenerate", C, PL_CURVES) {
  std::mt19937_64 rng(test::test_seed() + 3);
  INFO("seed ", test::test_seed() + 3, ", curve ", C::name);
  const auto g1 = C::g1_generator();
  const auto g2 = C::g2_generator();
  const auto base = pairing::pairing<C>(g1, g2);
  CHECK(!base.is_one());
  CHECK(pairing::pow(base, C::fr::modulus()).is_one());

  const auto a = random_scalar<C>(rng), b = random_scalar<C>(rng);
  const auto ab = (C::fr::from_standard(a) * C::fr::from_standard(b)).to_standard();
  const auto ap = C::g1_jacobian::from_affine(g1).mul(a).to_affine();
  const auto bq = C::g2_jacobian::from_affine(g2).mul(b).to_affine();
  const auto lhs = pairing::pairing<C>(ap, bq);
  CHECK(lhs == pairing::pow(base, ab));
  // e(aP, Q) = e(P, aQ), and a product with e(-aP, bQ) is 1.
  const auto aq = C::g2_jacobian::from_affine(g2).mul(a).to_affine();
  CHECK(pairing::pairing<C>(ap, g2) == pairing::pairing<C>(g1, aq));
  const std::vector<pairing::pair<C>> cancel{{ap, bq}, {-ap, bq}};
  CHECK(pairing::pairing_product<C>(cancel.data(), cancel.size()).is_one());
  const std::vector<pairing::pair<C>> no_cancel{{ap, bq}, {-ap, aq}};
  CHECK(!pairing::pairing_product<C>(no_cancel.data(), no_cancel.size()).is_one());
  // A pair with the point at infinity contributes 1.
  CHECK(pairing::pairing<C>(C::g1_affine::infinity(), g2).is_one());
  CHECK(pairing::pairing<C>(g1, C::g2_affine::infinity()).is_one());
}

TEST_CASE_TEMPLATE("subgroup checks accept multiples of the generators only", C, PL_CURVES) {
  std::mt19937_64 rng(test::test_seed() + 4);
  const auto k = random_scalar<C>(rng);
  CHECK(pairing::in_subgroup<C>(C::g1_jacobian::from_affine(C::g1_generator()).mul(k).to_affine()));
  CHECK(pairing::in_subgroup<C>(C::g2_jacobian::from_affine(C::g2_generator()).mul(k).to_affine()));
  CHECK(pairing::in_subgroup<C>(C::g1_affine::infinity()));
  CHECK(pairing::in_subgroup<C>(C::g2_affine::infinity()));
  // Points on the curves but (G2 always, G1 of BLS12-381) outside the subgroup.
  const auto q = random_curve_point_g2<C>(rng);
  REQUIRE(q.is_on_curve());
  CHECK(!pairing::in_subgroup<C>(q));
  const auto p = random_curve_point_g1<C>(rng);
  REQUIRE(p.is_on_curve());
  CHECK(pairing::in_subgroup<C>(p) == std::is_same_v<C, bn254>);
  // Off the curve.
  auto off = C::g1_generator();
  off.y = off.y + C::fq::one();
  CHECK(!pairing::in_subgroup<C>(off));
}

TEST_CASE_TEMPLATE("cyclotomic squaring equals squaring in the cyclotomic subgroup", C, PL_CURVES) {
  std::mt19937_64 rng(test::test_seed() + 5);
  auto f = random_fq12<C>(rng);
  f = f.conjugate() * f.inverse();  // the easy part: now f^(p^6 + 1) = 1
  f = f.frobenius(2) * f;
  CHECK(f.cyclotomic_sqr() == f.sqr());
  CHECK(f.cyclotomic_sqr().cyclotomic_sqr() == f.sqr().sqr());
}
