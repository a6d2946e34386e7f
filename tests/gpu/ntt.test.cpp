// gpu/cpu/ntt.hpp against naive O(n^2) transforms and direct polynomial
// evaluation with the same roots, and to_odd_coset against snarkjs's own
// sequence (constants/<curve>.json "coset_fft_example").
#include "gpu/cpu/ntt.hpp"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <vector>

#include "helpers.hpp"
#include "zk/groth16/domain.hpp"

using namespace proofline;
using gpu::cpu::direction;
using base::thread_pool;
using zk::groth16::roots;

namespace {

/// p(x) by Horner's rule.
template <class F>
F evaluate(const std::vector<F>& p, const F& x) {
  F acc = F::zero();
  for (std::size_t i = p.size(); i-- > 0;) acc = acc * x + p[i];
  return acc;
}

/// X_j = sum_i x_i root^(ij), optionally scaled.
template <class F>
std::vector<F> naive_dft(const std::vector<F>& x, const F& root, const F& scale) {
  std::vector<F> out(x.size());
  F wj = F::one();
  for (std::size_t j = 0; j < x.size(); ++j) {
    out[j] = evaluate(x, wj) * scale;
    wj = wj * root;
  }
  return out;
}

template <class F>
std::vector<F> random_vector(std::size_t n, std::mt19937_64& rng) {
  std::vector<F> v(n);
  for (auto& x : v) x = test::random_fe<F>(rng);
  return v;
}

template <class F>
void check_against_naive_dft(thread_pool& pool) {
  std::mt19937_64 rng(11);
  for (unsigned log_n = 0; log_n <= 6; ++log_n) {
    CAPTURE(log_n);
    const std::size_t n = std::size_t(1) << log_n;
    const auto x = random_vector<F>(n, rng);

    auto fwd = x;
    gpu::cpu::ntt(fwd.data(), log_n, direction::forward, pool);
    CHECK(fwd == naive_dft(x, roots<F>::root(log_n), F::one()));

    auto inv = x;
    gpu::cpu::ntt(inv.data(), log_n, direction::inverse, pool);
    CHECK(inv == naive_dft(x, roots<F>::inverse_root(log_n), roots<F>::inverse_size(log_n)));
  }
}

/// Sizes past one cache block (2^10) take the whole-array stage path.
template <class F>
void check_large_transform(thread_pool& pool, unsigned log_n) {
  std::mt19937_64 rng(log_n);
  const std::size_t n = std::size_t(1) << log_n;
  const auto x = random_vector<F>(n, rng);
  auto y = x;
  gpu::cpu::ntt(y.data(), log_n, direction::forward, pool);
  const F w = roots<F>::root(log_n);
  for (std::size_t j : {std::size_t(0), std::size_t(1), n / 2 + 3, n - 1, std::size_t(rng() % n)}) {
    CAPTURE(j);
    CHECK(y[j] == evaluate(x, w.pow(uint64_t(j))));
  }
  CHECK(y != x);
  gpu::cpu::ntt(y.data(), log_n, direction::inverse, pool);
  CHECK(y == x);
}

/// Values of p on the n-domain in, values at g w^j out.
template <class F>
void check_odd_coset(thread_pool& pool, unsigned log_n, bool every_point) {
  std::mt19937_64 rng(100 + log_n);
  const std::size_t n = std::size_t(1) << log_n;
  const auto p = random_vector<F>(n, rng);
  auto v = p;
  gpu::cpu::ntt(v.data(), log_n, direction::forward, pool);  // v_j = p(w^j)
  gpu::cpu::to_odd_coset(v.data(), log_n, pool);
  const F w = roots<F>::root(log_n), g = roots<F>::odd_coset_generator(log_n);
  std::vector<std::size_t> js;
  if (every_point)
    for (std::size_t j = 0; j < n; ++j) js.push_back(j);
  else
    js = {0, 1, n - 1, std::size_t(rng() % n), std::size_t(rng() % n)};
  for (std::size_t j : js) {
    CAPTURE(j);
    CHECK(v[j] == evaluate(p, g * w.pow(uint64_t(j))));
  }
}

template <class C>
void check_snarkjs_coset_example(thread_pool& pool) {
  using F = typename C::fr;
  const std::string path = std::string(PROOFLINE_FIXTURES_DIR) + "/constants/" + C::name + ".json";
  REQUIRE_MESSAGE(test::file_exists(path), path << " is missing: run scripts/make-fixtures.sh");
  const auto ex = nlohmann::json::parse(test::read_text(path)).at("coset_fft_example");
  const unsigned log_n = ex.at("log2_n").template get<unsigned>();
  auto load = [&](const char* key) {
    std::vector<F> v;
    for (const auto& s : ex.at(key)) v.push_back(F::from_standard(test::from_decimal<F::N>(s.template get<std::string>())));
    return v;
  };
  auto v = load("evaluations");
  REQUIRE(v.size() == (std::size_t(1) << log_n));
  auto coefs = v;
  gpu::cpu::ntt(coefs.data(), log_n, direction::inverse, pool);
  CHECK(coefs == load("ifft"));
  gpu::cpu::to_odd_coset(v.data(), log_n, pool);
  CHECK(v == load("odd_coset_evaluations"));
}

}  // namespace

TEST_CASE("ntt of small sizes equals the naive DFT with snarkjs's roots") {
  thread_pool pool(2);
  SUBCASE("bn254") { check_against_naive_dft<zk::bn254::fr>(pool); }
  SUBCASE("bls12_381") { check_against_naive_dft<zk::bls12_381::fr>(pool); }
}

TEST_CASE("ntt past one cache block matches direct evaluation and inverts exactly") {
  thread_pool pool(2);
  SUBCASE("bn254 2^14") { check_large_transform<zk::bn254::fr>(pool, 14); }
  SUBCASE("bls12_381 2^13") { check_large_transform<zk::bls12_381::fr>(pool, 13); }
  SUBCASE("bn254 2^14 on one thread") {
    thread_pool one(1);
    check_large_transform<zk::bn254::fr>(one, 14);
  }
}

TEST_CASE("to_odd_coset gives the polynomial's values at g * w^j") {
  thread_pool pool(2);
  SUBCASE("bn254, every point of small domains") {
    for (unsigned log_n = 0; log_n <= 6; ++log_n) check_odd_coset<zk::bn254::fr>(pool, log_n, true);
  }
  SUBCASE("bls12_381, every point of small domains") {
    for (unsigned log_n = 0; log_n <= 6; ++log_n) check_odd_coset<zk::bls12_381::fr>(pool, log_n, true);
  }
  SUBCASE("bn254, sampled points of 2^14") { check_odd_coset<zk::bn254::fr>(pool, 14, false); }
}

TEST_CASE("to_odd_coset reproduces snarkjs's ifft / times inc^i / fft sequence") {
  thread_pool pool(2);
  SUBCASE("bn254") { check_snarkjs_coset_example<zk::bn254>(pool); }
  SUBCASE("bls12_381") { check_snarkjs_coset_example<zk::bls12_381>(pool); }
}
