// The Groth16 verifier on every fixture: snarkjs's proofs verify against the
// key from verification_key.json and against the key inside the .zkey;
// tampered proofs, public signals and keys are rejected with a reason.
#include <doctest/doctest.h>

#include <filesystem>
#include <vector>

#include "oracle.hpp"
#include "zk/formats/proof_json.hpp"
#include "zk/formats/zkey.hpp"
#include "zk/groth16/verifier.hpp"

using namespace proofline::zk;

namespace {

template <class C>
std::vector<std::string> fixture_dirs() {
  std::vector<std::string> out;
  const auto root = std::filesystem::path(test::fixtures_dir()) / C::name;
  for (const auto& d : std::filesystem::directory_iterator(root))
    if (std::filesystem::exists(d.path() / "snarkjs_proof_0.json")) out.push_back(d.path().string());
  REQUIRE(!out.empty());
  return out;
}

template <class C>
struct fixture {
  groth16::verifying_key<C> vk;
  groth16::proof<C> proof;
  std::vector<typename C::scalar> pub;

  explicit fixture(const std::string& dir)
      : vk(formats::read_verification_key<C>(dir + "/verification_key.json")),
        proof(formats::read_proof<C>(dir + "/snarkjs_proof_0.json")),
        pub(formats::read_public<C>(dir + "/public_0.json")) {}
};

template <class C>
groth16::verdict check(const groth16::prepared_key<C>& k, const groth16::proof<C>& p,
                       const std::vector<typename C::scalar>& pub) {
  return groth16::verify<C>(k, p, pub.data(), pub.size());
}

template <class C, class A>
A times(const A& p, uint64_t k) {
  using J = std::conditional_t<std::is_same_v<A, typename C::g1_affine>, typename C::g1_jacobian,
                               typename C::g2_jacobian>;
  return J::from_affine(p).mul(ff::bigint<1>{{k}}).to_affine();
}

}  // namespace

#define PL_CURVES bn254, bls12_381

TEST_CASE_TEMPLATE("snarkjs's proofs verify against verification_key.json and the zkey", C,
                   PL_CURVES) {
  for (const auto& dir : fixture_dirs<C>()) {
    INFO(dir);
    fixture<C> f(dir);
    const auto key = groth16::prepare<C>(f.vk);
    REQUIRE(key.problem.empty());
    const auto v = check<C>(key, f.proof, f.pub);
    CHECK_MESSAGE(v.ok, v.reason);

    const auto pk = formats::load_zkey(dir + "/circuit.zkey", 1);
    const auto from_zkey = groth16::verifying_key_of(groth16::typed<C>(*pk));
    CHECK(from_zkey.alpha1 == f.vk.alpha1);
    CHECK(from_zkey.beta2 == f.vk.beta2);
    CHECK(from_zkey.gamma2 == f.vk.gamma2);
    CHECK(from_zkey.delta2 == f.vk.delta2);
    CHECK(from_zkey.ic == f.vk.ic);
    CHECK(check<C>(groth16::prepare<C>(from_zkey), f.proof, f.pub).ok);

    // A re-randomised proof (rho A, B / rho, C) is another valid proof.
    const uint64_t rho = 7;
    auto inv = C::fr::from_u64(rho).inverse().to_standard();
    groth16::proof<C> q{times<C>(f.proof.a, rho),
                        C::g2_jacobian::from_affine(f.proof.b).mul(inv).to_affine(), f.proof.c};
    CHECK(check<C>(key, q, f.pub).ok);
  }
}

TEST_CASE_TEMPLATE("tampered proofs are rejected", C, PL_CURVES) {
  for (const auto& dir : fixture_dirs<C>()) {
    INFO(dir);
    fixture<C> f(dir);
    const auto key = groth16::prepare<C>(f.vk);
    const auto g1 = C::g1_generator();
    const auto g2 = C::g2_generator();
    auto pairing_fails = [&](groth16::proof<C> p, const char* what) {
      INFO(what);
      const auto v = check<C>(key, p, f.pub);
      CHECK_FALSE(v.ok);
      CHECK(v.reason.find("pairing equation") != std::string::npos);
    };
    auto p = f.proof;
    pairing_fails({times<C>(p.a, 2), p.b, p.c}, "A doubled");
    pairing_fails({(C::g1_jacobian::from_affine(p.a) + C::g1_jacobian::from_affine(g1)).to_affine(),
                   p.b, p.c},
                  "A + G1");
    pairing_fails({p.a, times<C>(p.b, 3), p.c}, "B tripled");
    pairing_fails({p.a, g2, p.c}, "B replaced by the generator");
    pairing_fails({p.a, p.b, times<C>(p.c, 5)}, "C times 5");
    pairing_fails({p.c, p.b, p.a}, "A and C swapped");
    pairing_fails({-p.a, p.b, p.c}, "A negated");
    pairing_fails({p.a, -p.b, p.c}, "B negated");
    pairing_fails({p.a, p.b, -p.c}, "C negated");
    pairing_fails({C::g1_affine::infinity(), p.b, p.c}, "A at infinity");

    // Points off the curve or outside the subgroup are named.
    auto off = p;
    off.a.y = off.a.y + C::fq::one();
    auto v = check<C>(key, off, f.pub);
    CHECK_FALSE(v.ok);
    CHECK(v.reason == "pi_a is not on the G1 curve");
    off = p;
    off.b.x = off.b.x + C::fq2::one();
    v = check<C>(key, off, f.pub);
    CHECK_FALSE(v.ok);
    CHECK(v.reason.find("pi_b is not") == 0);
  }
}

TEST_CASE_TEMPLATE("tampered public signals are rejected", C, PL_CURVES) {
  for (const auto& dir : fixture_dirs<C>()) {
    INFO(dir);
    fixture<C> f(dir);
    const auto key = groth16::prepare<C>(f.vk);
    for (std::size_t i = 0; i < f.pub.size(); ++i) {
      INFO("signal ", i);
      auto pub = f.pub;
      pub[i] = (C::fr::from_standard(pub[i]) + C::fr::one()).to_standard();
      CHECK_FALSE(check<C>(key, f.proof, pub).ok);
    }
    if (f.pub.size() >= 2) {
      auto pub = f.pub;
      std::swap(pub[0], pub[1]);
      if (pub != f.pub) CHECK_FALSE(check<C>(key, f.proof, pub).ok);
    }
    auto shorter = f.pub;
    shorter.pop_back();
    auto v = check<C>(key, f.proof, shorter);
    CHECK_FALSE(v.ok);
    CHECK(v.reason.find("public signals, the verification key expects") != std::string::npos);
    auto big = f.pub;
    big[0] = C::fr::modulus();  // r itself: congruent to 0 but not canonical
    v = check<C>(key, f.proof, big);
    CHECK_FALSE(v.ok);
    CHECK(v.reason == "public signal 0 is not below the scalar field prime");
  }
}

TEST_CASE_TEMPLATE("tampered verification keys are rejected", C, PL_CURVES) {
  for (const auto& dir : fixture_dirs<C>()) {
    INFO(dir);
    fixture<C> f(dir);
    auto rejects = [&](groth16::verifying_key<C> vk, const char* what) {
      INFO(what);
      CHECK_FALSE(check<C>(groth16::prepare<C>(std::move(vk)), f.proof, f.pub).ok);
    };
    auto vk = f.vk;
    vk.alpha1 = times<C>(vk.alpha1, 2);
    rejects(vk, "alpha1 doubled");
    vk = f.vk;
    vk.beta2 = -vk.beta2;
    rejects(vk, "beta2 negated");
    vk = f.vk;
    std::swap(vk.gamma2, vk.delta2);
    rejects(vk, "gamma2 and delta2 swapped");
    vk = f.vk;
    vk.ic[0] = times<C>(vk.ic[0], 3);
    rejects(vk, "IC[0] tripled");
    vk = f.vk;
    vk.ic[1] = -vk.ic[1];
    rejects(vk, "IC[1] negated");
    vk = f.vk;
    vk.ic.pop_back();
    const auto k = groth16::prepare<C>(vk);
    CHECK(k.problem.find("IC points") != std::string::npos);
    vk = f.vk;
    vk.delta2.y = vk.delta2.y + C::fq2::one();
    CHECK(groth16::prepare<C>(vk).problem == "verification key: delta2 is not on the G2 curve");
  }
}
