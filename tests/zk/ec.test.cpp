// Curve points on G1 and G2 of BN254 and BLS12-381: the Jacobian, XYZZ and
// affine formulas against each other and against scalar identities
// (a*G + b*G = (a+b)*G, r*G = infinity), the generators against the values
// snarkjs dumps, and points read from snarkjs verification keys.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "oracle.hpp"
#include "zk/curves.hpp"
#include "zk/formats/decimal.hpp"
#include "zk/formats/proof_json.hpp"

using namespace proofline::zk;

namespace {

/// One group of one curve, with the names the tests print.
template <class Curve, int Which>
struct group;

template <class Curve>
struct group<Curve, 1> {
  using C = Curve;
  using affine = typename C::g1_affine;
  using jacobian = typename C::g1_jacobian;
  using xyzz = typename C::g1_xyzz;
  using field = typename affine::field;
  static affine generator() { return C::g1_generator(); }
  static constexpr const char* name = "G1";
};

template <class Curve>
struct group<Curve, 2> {
  using C = Curve;
  using affine = typename C::g2_affine;
  using jacobian = typename C::g2_jacobian;
  using xyzz = typename C::g2_xyzz;
  using field = typename affine::field;
  static affine generator() { return C::g2_generator(); }
  static constexpr const char* name = "G2";
};

using bn254_g1 = group<bn254, 1>;
using bn254_g2 = group<bn254, 2>;
using bls12_381_g1 = group<bls12_381, 1>;
using bls12_381_g2 = group<bls12_381, 2>;

/// Small-scalar cases and random-point trials per group.
constexpr unsigned max_small_k = 40;
constexpr int random_trials = 12;

template <class P>
ff::fp<P> random_nonzero(std::mt19937_64& rng) {
  using F = ff::fp<P>;
  for (;;) {
    F x = F::from_standard(test::random_below(rng, F::modulus()));
    if (!x.is_zero()) return x;
  }
}
/// A nonzero field element of the group's coordinate field.
template <class G>
typename G::field random_scale(std::mt19937_64& rng) {
  using fq = typename G::C::fq;
  if constexpr (std::is_same_v<typename G::field, fq>) {
    return random_nonzero<typename fq::params>(rng);
  } else {
    return typename G::field{random_nonzero<typename fq::params>(rng),
                             random_nonzero<typename fq::params>(rng)};
  }
}

/// The same point in Jacobian form with Z = l: (x l^2, y l^3, l).
template <class G>
typename G::jacobian scaled_jacobian(const typename G::affine& p, const typename G::field& l) {
  auto l2 = l.sqr();
  return {p.x * l2, p.y * l2 * l, l};
}

/// The same point in XYZZ form with ZZ = l^2, ZZZ = l^3.
template <class G>
typename G::xyzz scaled_xyzz(const typename G::affine& p, const typename G::field& l) {
  auto l2 = l.sqr(), l3 = l2 * l;
  return {p.x * l2, p.y * l3, l2, l3};
}

template <class G>
typename G::C::scalar random_scalar(std::mt19937_64& rng) {
  return test::random_below(rng, G::C::fr::modulus());
}

/// (a + b) mod r and 2a mod r for plain scalars, through GMP.
template <class S>
S add_mod_r(const S& a, const S& b, const S& r) {
  test::mpz x(a), y(b), m(r), s;
  mpz_add(s.get(), x.get(), y.get());
  mpz_mod(s.get(), s.get(), m.get());
  return s.template limbs<S::limbs>();
}

template <class G>
std::string label() {
  return std::string(G::C::name) + " " + G::name;
}

}  // namespace

#define PL_GROUPS bn254_g1, bn254_g2, bls12_381_g1, bls12_381_g2

TEST_CASE_TEMPLATE("the generator is on the curve and has order r", G, PL_GROUPS) {
  INFO(label<G>());
  using J = typename G::jacobian;
  const auto g = G::generator();
  CHECK(g.is_on_curve());
  CHECK_FALSE(g.is_infinity());
  auto r = G::C::fr::modulus();
  CHECK(J::from_affine(g).mul(r).is_infinity());
  auto r_minus_1 = r;
  r_minus_1.l[0] -= 1;  // r is odd, so no borrow
  CHECK(J::from_affine(g).mul(r_minus_1).to_affine() == -g);
  auto r_plus_1 = r;
  r_plus_1.l[0] += 1;  // r is odd and below 2^(64 N) - 1: no carry
  CHECK(J::from_affine(g).mul(r_plus_1).to_affine() == g);
}

TEST_CASE_TEMPLATE("k*G by double-and-add equals k repeated additions", G, PL_GROUPS) {
  INFO(label<G>());
  using J = typename G::jacobian;
  using X = typename G::xyzz;
  using A = typename G::affine;
  const A g = G::generator();
  J sum_jac = J::infinity(), sum_mixed = J::infinity();
  X sum_xyzz = X::infinity(), sum_xyzz_full = X::infinity();
  for (unsigned k = 0; k <= max_small_k; ++k) {
    INFO("k = ", k);
    const A expected = J::from_affine(g).mul(ff::bigint<1>::from_u64(k)).to_affine();
    CHECK(sum_jac.to_affine() == expected);
    CHECK(sum_mixed.to_affine() == expected);
    CHECK(sum_xyzz.to_affine() == expected);
    CHECK(sum_xyzz_full.to_affine() == expected);
    CHECK(expected.is_on_curve());
    CHECK(expected.is_infinity() == (k == 0));
    sum_jac = sum_jac + J::from_affine(g);
    sum_mixed = sum_mixed.add_affine(g);
    sum_xyzz = sum_xyzz.add_affine(g);
    sum_xyzz_full = sum_xyzz_full + X::from_affine(g);
  }
  // Distinct small multiples are distinct points (the additions moved).
  auto two = J::from_affine(g).mul(ff::bigint<1>::from_u64(2)).to_affine();
  CHECK(two != g);
  CHECK(two == J::from_affine(g).dbl().to_affine());
}

TEST_CASE_TEMPLATE("Jacobian, XYZZ and affine forms agree on random points", G, PL_GROUPS) {
  using J = typename G::jacobian;
  using X = typename G::xyzz;
  using A = typename G::affine;
  const uint64_t seed = test::test_seed();
  INFO(label<G>(), ", seed ", seed, " (set PROOFLINE_TEST_SEED to replay)");
  std::mt19937_64 rng(seed + 7);
  const A g = G::generator();
  const auto r = G::C::fr::modulus();

  for (int trial = 0; trial < random_trials; ++trial) {
    INFO("trial ", trial);
    const auto a = random_scalar<G>(rng), b = random_scalar<G>(rng);
    const A P = J::from_affine(g).mul(a).to_affine();
    const A Q = J::from_affine(g).mul(b).to_affine();
    REQUIRE(P.is_on_curve());
    REQUIRE(Q.is_on_curve());
    const A sum = J::from_affine(g).mul(add_mod_r(a, b, r)).to_affine();
    const A twice = J::from_affine(g).mul(add_mod_r(a, a, r)).to_affine();
    CHECK(sum.is_on_curve());

    const J jp = scaled_jacobian<G>(P, random_scale<G>(rng));
    const J jp2 = scaled_jacobian<G>(P, random_scale<G>(rng));  // same point, other Z
    const J jq = scaled_jacobian<G>(Q, random_scale<G>(rng));
    const X xp = scaled_xyzz<G>(P, random_scale<G>(rng));
    const X xp2 = scaled_xyzz<G>(P, random_scale<G>(rng));
    const X xq = scaled_xyzz<G>(Q, random_scale<G>(rng));
    REQUIRE(jp.to_affine() == P);
    REQUIRE(xp.to_affine() == P);

    // addition, every form: a*G + b*G = (a+b)*G
    CHECK((jp + jq).to_affine() == sum);
    CHECK(jp.add_affine(Q).to_affine() == sum);
    CHECK((xp + xq).to_affine() == sum);
    CHECK(xp.add_affine(Q).to_affine() == sum);
    CHECK((xp + xq).to_jacobian().to_affine() == sum);
    CHECK((jq + jp) == (jp + jq));

    // doubling: 2*(a*G) = (2a)*G, and P + P through add equals dbl
    CHECK(jp.dbl().to_affine() == twice);
    CHECK(xp.dbl().to_affine() == twice);
    CHECK(X::dbl_affine(P).to_affine() == twice);
    CHECK((jp + jp2).to_affine() == twice);
    CHECK(jp.add_affine(P).to_affine() == twice);
    CHECK((xp + xp2).to_affine() == twice);
    CHECK(xp.add_affine(P).to_affine() == twice);

    // P + (-P) = infinity
    CHECK((jp + (-jp2)).is_infinity());
    CHECK((jp - jp2).is_infinity());
    CHECK(jp.add_affine(-P).is_infinity());
    CHECK(xp.add_affine(-P).is_infinity());
    CHECK(xp.sub_affine(P).is_infinity());
    CHECK((xp + X::from_affine(-P)).is_infinity());
    CHECK((-P).is_on_curve());
    CHECK((-P) != P);

    // infinity as either operand
    const J jinf = J::infinity();
    const X xinf = X::infinity();
    CHECK((jinf + jp).to_affine() == P);
    CHECK((jp + jinf).to_affine() == P);
    CHECK(jinf.add_affine(P).to_affine() == P);
    CHECK(jp.add_affine(A::infinity()).to_affine() == P);
    CHECK((xinf + xp).to_affine() == P);
    CHECK((xp + xinf).to_affine() == P);
    CHECK(xinf.add_affine(P).to_affine() == P);
    CHECK(xp.add_affine(A::infinity()).to_affine() == P);

    // conversions
    CHECK(xp.to_jacobian() == jp);
    CHECK(xp.to_jacobian().to_affine() == P);
    CHECK(J::from_affine(P) == jp);
    CHECK(X::from_affine(P).to_affine() == P);
    CHECK(jp != jq);
  }

  // infinity through every form
  CHECK(J::infinity().dbl().is_infinity());
  CHECK(X::infinity().dbl().is_infinity());
  CHECK(X::dbl_affine(A::infinity()).is_infinity());
  CHECK(J::infinity().to_affine().is_infinity());
  CHECK(X::infinity().to_affine().is_infinity());
  CHECK(X::infinity().to_jacobian().is_infinity());
  CHECK(J::from_affine(A::infinity()).is_infinity());
  CHECK(X::from_affine(A::infinity()).is_infinity());
  CHECK(A::infinity().is_on_curve());
  CHECK((-A::infinity()).is_infinity());
  CHECK(J::infinity() == J::infinity());
  CHECK(J::infinity() != J::from_affine(g));
}

namespace {

/// constants/<curve>.json, which scripts/make-fixtures.sh dumps from snarkjs.
nlohmann::json read_constants(const std::string& curve) {
  const std::string path = test::fixtures_dir() + "/constants/" + curve + ".json";
  if (!std::filesystem::exists(path))
    FAIL("missing ", path, ": run scripts/make-fixtures.sh to dump snarkjs's constants");
  std::ifstream in(path);
  return nlohmann::json::parse(in);
}

template <class F>
F field_from_decimal(const nlohmann::json& v) {
  typename F::repr x;
  REQUIRE(v.is_string());
  REQUIRE(formats::parse_decimal(v.get<std::string>(), x));
  REQUIRE(x < F::modulus());
  return F::from_standard(x);
}

}  // namespace

TEST_CASE_TEMPLATE("generators and primes match the values snarkjs dumps", C, bn254, bls12_381) {
  INFO(C::name);
  const nlohmann::json k = read_constants(C::name);
  using fq = typename C::fq;
  CHECK(k.at("snarkjs_name") == C::snarkjs_name);
  CHECK(k.at("Fr").at("modulus") == formats::to_decimal(C::fr::modulus()));
  CHECK(k.at("Fq").at("modulus") == formats::to_decimal(fq::modulus()));
  CHECK(k.at("Fr").at("s") == C::fr::params::two_adicity);
  CHECK(k.at("Fr").at("nqr") == std::to_string(C::fr::params::nqr));

  const auto& g1 = k.at("G1").at("generator");
  typename C::g1_affine expect1{field_from_decimal<fq>(g1.at("x")),
                                field_from_decimal<fq>(g1.at("y"))};
  CHECK(C::g1_generator() == expect1);

  const auto& g2 = k.at("G2").at("generator");
  typename C::g2_affine expect2{
      {field_from_decimal<fq>(g2.at("x")[0]), field_from_decimal<fq>(g2.at("x")[1])},
      {field_from_decimal<fq>(g2.at("y")[0]), field_from_decimal<fq>(g2.at("y")[1])}};
  CHECK(C::g2_generator() == expect2);
}

namespace {

/// r*P = infinity: P lies in the prime-order subgroup snarkjs keys live in.
template <class J, class A, class S>
bool in_subgroup(const A& p, const S& r) {
  return J::from_affine(p).mul(r).is_infinity();
}

template <class C, class A, class J>
void check_vk_point(const A& p, const char* what) {
  INFO(what);
  CHECK_FALSE(p.is_infinity());
  CHECK(p.is_on_curve());
  CHECK((-p).is_on_curve());
  CHECK(J::from_affine(p).dbl().to_affine().is_on_curve());
  CHECK(J::from_affine(p).dbl().to_affine() != p);
  CHECK(in_subgroup<J>(p, C::fr::modulus()));
}

}  // namespace

TEST_CASE_TEMPLATE("points of a snarkjs verification key are on the curve", C, bn254, bls12_381) {
  const std::string path = test::fixtures_dir() + "/" + C::name + "/small/verification_key.json";
  INFO(path);
  const auto vk = formats::read_verification_key<C>(path);
  using g1a = typename C::g1_affine;
  using g1j = typename C::g1_jacobian;
  using g2a = typename C::g2_affine;
  using g2j = typename C::g2_jacobian;
  check_vk_point<C, g1a, g1j>(vk.alpha1, "vk_alpha_1");
  check_vk_point<C, g2a, g2j>(vk.beta2, "vk_beta_2");
  check_vk_point<C, g2a, g2j>(vk.gamma2, "vk_gamma_2");
  check_vk_point<C, g2a, g2j>(vk.delta2, "vk_delta_2");
  REQUIRE(vk.ic.size() == vk.n_public + 1);
  for (std::size_t i = 0; i < vk.ic.size(); ++i) {
    INFO("IC[", i, "]");
    check_vk_point<C, g1a, g1j>(vk.ic[i], "IC");
  }
  // snarkjs's setup fixes gamma = 1, so vk_gamma_2 is the G2 generator: an
  // independent check of decimal parsing and Montgomery conversion.
  CHECK(vk.gamma2 == C::g2_generator());
}
