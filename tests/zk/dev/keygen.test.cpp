// Development keys (zk/dev/keygen.hpp): every point of a small key equals its
// definition evaluated naively (product-form Lagrange polynomials, double-and-
// add), the prover's synthesis reproduces C w row by row, and snarkjs agrees:
// same exported verification key, and its proofs verify, unless an H point
// is tampered with.
#include "zk/dev/keygen.hpp"

#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "helpers.hpp"
#include "zk/dev/fixed_base.hpp"
#include "zk/dev/r1cs.hpp"
#include "zk/dev/toxic_waste.hpp"
#include "zk/formats/decimal.hpp"
#include "zk/formats/proof_json.hpp"
#include "zk/formats/wtns.hpp"
#include "zk/formats/zkey.hpp"
#include "zk/groth16/domain.hpp"
#include "zk/groth16/prover.hpp"

using namespace proofline;
using namespace proofline::zk::dev;
using proofline::test::temp_dir;

namespace {

/// L_k(x) of the 2^log_m domain by its definition: prod_{j != k} (x - w^j) / (w^k - w^j).
template <class F>
F lagrange_naive(const F& x, unsigned log_m, uint64_t k) {
  const F w = zk::groth16::roots<F>::root(log_m);
  const uint64_t m = uint64_t(1) << log_m;
  const F wk = w.pow(k);
  F num = F::one(), den = F::one(), wj = F::one();
  for (uint64_t j = 0; j < m; ++j, wj = wj * w) {
    if (j == k) continue;
    num = num * (x - wj);
    den = den * (wk - wj);
  }
  return num * den.inverse();
}

/// k * P by double-and-add (zk/ec/point.hpp), independent of the window tables.
template <class A, class F>
A times(const A& p, const F& k) {
  using J = zk::ec::jacobian<typename A::group>;
  return J::from_affine(p).mul(k.to_standard()).to_affine();
}

template <class C>
toxic_waste<C> read_toxic_waste(const std::string& path) {
  const auto j = nlohmann::json::parse(test::read_text(path));
  auto get = [&](const char* key) {
    typename C::scalar v;
    REQUIRE(zk::formats::parse_decimal(j.at(key).get<std::string>(), v));
    return C::fr::from_standard(v);
  };
  return {get("tau"), get("alpha"), get("beta"), get("gamma"), get("delta")};
}

template <class C>
void check_points_against_definitions() {
  using fr = typename C::fr;
  constexpr uint32_t n_constraints = 20, n_public = 2;
  constexpr uint64_t seed = 99;
  CAPTURE(C::name);
  temp_dir dir;
  const auto res = test::small_setup(dir.path.string(), C::id, n_constraints, 1, n_public, seed);
  const auto cs = random_r1cs<C>(n_constraints, n_public, seed);
  const auto tw = read_toxic_waste<C>(dir / "toxic_waste.json");
  const auto expected_tw = toxic_waste<C>::from_seed(seed);
  CHECK(tw.tau == expected_tw.tau);
  CHECK(tw.delta == expected_tw.delta);

  const auto handle = zk::formats::load_zkey(dir / "circuit.zkey", 1);
  const auto& key = zk::groth16::typed<C>(*handle);
  const auto& info = key.info;
  REQUIRE(info.curve == C::id);
  CHECK(info.n_vars == 1 + n_public + n_constraints);
  CHECK(info.n_public == n_public);
  CHECK(info.domain_size == 32);  // 20 + 2 + 1 = 23 rows
  CHECK(info.domain_size == res.domain_size);
  CHECK(info.n_coefs == res.n_coefs);
  CHECK(key.coefs_a.size() + key.coefs_b.size() == res.n_coefs);

  const auto g1 = C::g1_generator();
  const auto g2 = C::g2_generator();
  CHECK(key.alpha1 == times(g1, tw.alpha));
  CHECK(key.beta1 == times(g1, tw.beta));
  CHECK(key.beta2 == times(g2, tw.beta));
  CHECK(key.gamma2 == times(g2, tw.gamma));
  CHECK(key.delta1 == times(g1, tw.delta));
  CHECK(key.delta2 == times(g2, tw.delta));

  // Variable polynomials at tau, from the definitions.
  const unsigned log_n = info.log_domain;
  std::vector<fr> a(info.n_vars, fr::zero()), b = a, c = a;
  std::vector<fr>* m[3] = {&a, &b, &c};
  for (uint32_t r = 0; r < n_constraints; ++r) {
    const fr l = lagrange_naive(tw.tau, log_n, r);
    for (unsigned k = 0; k < 3; ++k)
      for (auto t = cs.begin(r, k); t != cs.end(r, k); ++t) (*m[k])[t->signal] += t->coef * l;
  }
  for (uint32_t s = 0; s <= n_public; ++s) a[s] += lagrange_naive(tw.tau, log_n, n_constraints + s);

  for (uint32_t s = 0; s < info.n_vars; ++s) {
    CAPTURE(s);
    CHECK(key.points_a[s] == times(g1, a[s]));
    CHECK(key.points_b1[s] == times(g1, b[s]));
    CHECK(key.points_b2[s] == times(g2, b[s]));
    const fr k = tw.beta * a[s] + tw.alpha * b[s] + c[s];
    if (s <= n_public)
      CHECK(key.ic[s] == times(g1, k * tw.gamma.inverse()));
    else
      CHECK(key.points_c[s - n_public - 1] == times(g1, k * tw.delta.inverse()));
  }
  // H_j = L'_{2j+1}(tau) / delta, L' on the 2n-domain.
  for (uint32_t j = 0; j < info.domain_size; ++j) {
    CAPTURE(j);
    const fr h = lagrange_naive(tw.tau, log_n + 1, 2 * j + 1) * tw.delta.inverse();
    CHECK(key.points_h[j] == times(g1, h));
  }
}

template <class C>
void check_synthesis_matches_r1cs() {
  using fr = typename C::fr;
  constexpr uint32_t n_constraints = 300, n_public = 3;
  constexpr uint64_t seed = 5;
  CAPTURE(C::name);
  temp_dir dir;
  test::small_setup(dir.path.string(), C::id, n_constraints, 2, n_public, seed);
  const auto cs = random_r1cs<C>(n_constraints, n_public, seed);
  const auto handle = zk::formats::load_zkey(dir / "circuit.zkey", 1);
  const auto& key = zk::groth16::typed<C>(*handle);
  const uint32_t n = key.info.domain_size;
  for (uint32_t i = 0; i < 2; ++i) {
    CAPTURE(i);
    std::vector<typename C::scalar> w(key.info.n_vars);
    zk::formats::read_witness<C>(dir / ("witness_" + std::to_string(i) + ".wtns"), *handle,
                                 w.data());
    CHECK(w == random_witness<C>(cs, seed, i));
    std::vector<fr> a(n), b(n), c(n);
    zk::groth16::synthesize_abc<C>(key, w.data(), a.data(), b.data(), c.data());
    uint32_t bad = n;
    for (uint32_t r = 0; r < n && bad == n; ++r) {
      fr ea = fr::zero(), eb = fr::zero(), ec = fr::zero();
      if (r < n_constraints) {
        ea = evaluate_row(cs, r, 0, w.data());
        eb = evaluate_row(cs, r, 1, w.data());
        ec = evaluate_row(cs, r, 2, w.data());  // the naive C w the key does not carry
      } else if (r <= n_constraints + n_public) {
        ea = fr::from_standard(w[r - n_constraints]);  // public-input row: A = w_s
      }
      if (a[r] != ea || b[r] != eb || c[r] != ec) bad = r;
    }
    CHECK(bad == n);
  }
}

template <class C>
void check_snarkjs_agrees() {
  CAPTURE(C::name);
  temp_dir dir;
  test::small_setup(dir.path.string(), C::id, 250, 2, 2, 31);
  // 1. The verification key snarkjs exports from our zkey is ours.
  auto r = test::snarkjs("zkey export verificationkey '" + (dir / "circuit.zkey") + "' '" +
                             (dir / "exported.json") + "'",
                         dir / "export.log");
  REQUIRE_MESSAGE(r.status == 0, r.output);
  const auto mine = nlohmann::json::parse(test::read_text(dir / "verification_key.json"));
  const auto theirs = nlohmann::json::parse(test::read_text(dir / "exported.json"));
  CHECK(mine == theirs);
  CHECK(mine.contains("vk_alphabeta_12"));
  const auto vk = zk::formats::read_verification_key<C>(dir / "verification_key.json");
  CHECK(vk.n_public == 2);

  // 2. snarkjs proves with our key and witness; its verifier accepts.
  const std::string vk_path = dir / "verification_key.json";
  auto prove_and_verify = [&](const std::string& zkey, const std::string& tag) {
    auto p = test::snarkjs("groth16 prove '" + zkey + "' '" + (dir / "witness_1.wtns") + "' '" +
                               (dir / ("proof_" + tag + ".json")) + "' '" +
                               (dir / ("public_" + tag + ".json")) + "'",
                           dir / ("prove_" + tag + ".log"));
    REQUIRE_MESSAGE(p.status == 0, p.output);
    return test::snarkjs("groth16 verify '" + vk_path + "' '" +
                             (dir / ("public_" + tag + ".json")) + "' '" +
                             (dir / ("proof_" + tag + ".json")) + "'",
                         dir / ("verify_" + tag + ".log"));
  };
  auto ok = prove_and_verify(dir / "circuit.zkey", "good");
  CHECK_MESSAGE(test::snarkjs_ok(ok), ok.output);

  // 3. One H point replaced by its neighbour (still a valid point, so the
  // key loads): the proof no longer verifies.
  std::string bytes = test::read_text(dir / "circuit.zkey");
  const auto [h_offset, h_size] = test::find_section(bytes, 9);
  const std::size_t point = 2 * C::fq_bytes;
  REQUIRE(h_size >= 2 * point);
  bytes.replace(h_offset, point, bytes.substr(h_offset + point, point));
  test::write_bytes(dir / "tampered.zkey", bytes);
  CHECK_NOTHROW(zk::formats::load_zkey(dir / "tampered.zkey", 1));
  auto bad = prove_and_verify(dir / "tampered.zkey", "tampered");
  CHECK_FALSE(test::snarkjs_ok(bad));
}

}  // namespace

TEST_CASE("every point of a dev key is its definition evaluated at tau") {
  check_points_against_definitions<zk::bn254>();
  check_points_against_definitions<zk::bls12_381>();
}

TEST_CASE("synthesis from a dev key reproduces A w, B w and the naive C w row by row") {
  check_synthesis_matches_r1cs<zk::bn254>();
  check_synthesis_matches_r1cs<zk::bls12_381>();
}

TEST_CASE("snarkjs exports the same verification key, and its proofs verify unless H is tampered") {
  check_snarkjs_agrees<zk::bn254>();
  check_snarkjs_agrees<zk::bls12_381>();
}

TEST_CASE("snarkjs verifies a proof for a dev key without public inputs") {
  temp_dir dir;
  test::small_setup(dir.path.string(), zk::curve_id::bn254, 40, 1, 0, 3);
  auto p =
      test::snarkjs("groth16 prove '" + (dir / "circuit.zkey") + "' '" + (dir / "witness_0.wtns") +
                        "' '" + (dir / "proof.json") + "' '" + (dir / "public.json") + "'",
                    dir / "prove.log");
  REQUIRE_MESSAGE(p.status == 0, p.output);
  CHECK(nlohmann::json::parse(test::read_text(dir / "public.json")) == nlohmann::json::array());
  auto v = test::snarkjs("groth16 verify '" + (dir / "verification_key.json") + "' '" +
                             (dir / "public.json") + "' '" + (dir / "proof.json") + "'",
                         dir / "verify.log");
  CHECK_MESSAGE(test::snarkjs_ok(v), v.output);
}

TEST_CASE("fixed-base products equal double-and-add, carries and zero included") {
  auto check = [](auto curve) {
    using C = decltype(curve);
    using fr = typename C::fr;
    using scalar = typename C::scalar;
    const unsigned bits = fr::params::bits;
    const fixed_base<typename C::g1_group> t1(C::g1_generator(), bits);
    const fixed_base<typename C::g2_group> t2(C::g2_generator(), bits);
    std::vector<scalar> ks = {scalar::zero(),         scalar::from_u64(1),
                              scalar::from_u64(511),  scalar::from_u64(512),
                              scalar::from_u64(513),  scalar::from_u64(1023),
                              scalar::from_u64(1024), (-fr::one()).to_standard()};
    // Every window at 2^(w-1), 2^(w-1) + 1 and 2^w - 1: the digit and carry edges.
    for (uint64_t pattern : {512ull, 513ull, 1023ull}) {
      scalar k = scalar::zero();
      for (unsigned pos = 0; pos + fixed_base_window_bits <= bits; pos += fixed_base_window_bits)
        for (unsigned b = 0; b < fixed_base_window_bits; ++b)
          if ((pattern >> b) & 1) k.l[(pos + b) / 64] |= uint64_t(1) << ((pos + b) % 64);
      ks.push_back(k);
    }
    rng g(17);
    for (int i = 0; i < 8; ++i) ks.push_back(uniform<fr>(g).to_standard());
    for (const auto& k : ks) {
      using J1 = typename C::g1_jacobian;
      using J2 = typename C::g2_jacobian;
      CHECK(t1.mul(k) == J1::from_affine(C::g1_generator()).mul(k));
      CHECK(t2.mul(k) == J2::from_affine(C::g2_generator()).mul(k));
    }
    // batch_mul's affine outputs, zero scalars giving the point at infinity.
    std::vector<fr> scalars(1500);
    for (std::size_t i = 0; i < scalars.size(); ++i)
      scalars[i] = i % 7 == 0 ? fr::zero() : uniform<fr>(g);
    std::vector<typename C::g1_affine> out(scalars.size());
    base::thread_pool pool(2);
    batch_mul(t1, scalars.data(), scalars.size(), out.data(), pool);
    for (std::size_t i = 0; i < scalars.size(); i += 37) {
      CAPTURE(i);
      CHECK(out[i] == times(C::g1_generator(), scalars[i]));
    }
    CHECK(out[0].is_infinity());
  };
  check(zk::bn254{});
  check(zk::bls12_381{});
}

TEST_CASE("lagrange_at equals the product formula on strided subsets") {
  using fr = zk::bn254::fr;
  rng g(3);
  const fr x = uniform<fr>(g);
  base::thread_pool pool(2);
  for (unsigned log_m : {1u, 3u, 6u}) {
    const uint64_t m = uint64_t(1) << log_m;
    std::vector<fr> all(m);
    lagrange_at(x, log_m, 0, 1, m, all.data(), pool);
    fr sum = fr::zero();
    for (uint64_t k = 0; k < m; ++k) {
      CHECK(all[k] == lagrange_naive(x, log_m, k));
      sum += all[k];
    }
    CHECK(sum == fr::one());  // the basis sums to the constant 1
    std::vector<fr> odd_points(m / 2);
    lagrange_at(x, log_m, 1, 2, m / 2, odd_points.data(), pool);
    for (uint64_t j = 0; j < m / 2; ++j) CHECK(odd_points[j] == all[2 * j + 1]);
  }
  // A domain of many chunks (the pool splits at 4096 values): sampled values
  // against the closed form with one plain inversion each.
  constexpr unsigned log_big = 15;
  constexpr uint64_t big = uint64_t(1) << log_big;
  std::vector<fr> odd(big / 2);
  lagrange_at(x, log_big + 1, 1, 2, big / 2, odd.data(), pool);
  const fr w = zk::groth16::roots<fr>::root(log_big + 1);
  const fr scale = (x.pow(2 * big) - fr::one()) * fr::from_u64(2 * big).inverse();
  for (uint64_t j = 0; j < big / 2; j += 997) {
    CAPTURE(j);
    const fr wk = w.pow(2 * j + 1);
    CHECK(odd[j] == wk * scale * (x - wk).inverse());
  }
  CHECK(odd.back() == w.pow(big - 1) * scale * (x - w.pow(big - 1)).inverse());

  const fr root = zk::groth16::roots<fr>::root(4).pow(uint64_t(5));
  std::vector<fr> out(16);
  CHECK_THROWS_AS(lagrange_at(root, 4, 0, 1, 16, out.data(), pool), std::domain_error);
}
