// gpu/cpu/msm.hpp against two oracles: the naive sum of double-and-add scalar
// multiplications (small sizes), and, for every size, discrete logarithms
// known by construction: with P_i = e_i G, sum k_i P_i = (sum k_i e_i mod r) G,
// computed with GMP.
#include "gpu/cpu/msm.hpp"

#include <doctest/doctest.h>

#include <vector>

#include "helpers.hpp"

using namespace proofline;
using base::thread_pool;

namespace {

template <class C, class G>
struct msm_case {
  using affine = zk::ec::affine<G>;
  using jacobian = zk::ec::jacobian<G>;
  using scalar = typename C::scalar;
  std::vector<affine> points;
  std::vector<scalar> scalars;
  std::vector<scalar> logs;  ///< points[i] = logs[i] * generator
};

/// n points e_i G with e_i = e0 + i d (one addition each), special points
/// mixed in: infinity (e = 0), a repeated point, and its negation.
template <class C, class G>
msm_case<C, G> make_case(std::size_t n, std::mt19937_64& rng) {
  using fr = typename C::fr;
  using jacobian = zk::ec::jacobian<G>;
  msm_case<C, G> t;
  const auto gen = jacobian::from_affine(C::template generator<G>());
  fr e = test::random_fe<fr>(rng), d = test::random_fe<fr>(rng);
  jacobian p = gen.mul(e.to_standard());
  const jacobian step = gen.mul(d.to_standard());
  for (std::size_t i = 0; i < n; ++i) {
    t.points.push_back(p.to_affine());
    t.logs.push_back(e.to_standard());
    p = p + step;
    e = e + d;
  }
  if (n >= 3) {
    t.points[1] = zk::ec::affine<G>::infinity();
    t.logs[1] = fr::zero().to_standard();
    t.points[2] = t.points[0];  // the same point twice: the doubling path in a bucket
    t.logs[2] = t.logs[0];
  }
  if (n >= 100) {
    t.points[50] = -t.points[0];  // P + (-P) in a bucket
    t.logs[50] = (-fr::from_standard(t.logs[0])).to_standard();
    t.points[51] = t.points[0];
    t.logs[51] = t.logs[0];
  }
  // Scalars: random below r, with zero, r - 1, one and small values mixed in.
  for (std::size_t i = 0; i < n; ++i) t.scalars.push_back(test::random_fe<fr>(rng).to_standard());
  if (n >= 2) t.scalars[n - 1] = (-fr::one()).to_standard();  // r - 1
  if (n >= 3) t.scalars[n / 2] = fr::zero().to_standard();
  if (n >= 100) {
    t.scalars[10] = C::scalar::from_u64(1);
    t.scalars[11] = C::scalar::from_u64(2);
    t.scalars[12] = t.scalars[13];  // equal scalars: one bucket gets two points per window
  }
  return t;
}

/// (sum k_i e_i mod r) * G, the sum computed with GMP.
template <class C, class G>
zk::ec::jacobian<G> by_discrete_logs(const msm_case<C, G>& t) {
  mpz_t acc, k, e, r;
  mpz_inits(acc, k, e, r, nullptr);
  test::to_mpz(r, C::fr::modulus());
  for (std::size_t i = 0; i < t.scalars.size(); ++i) {
    test::to_mpz(k, t.scalars[i]);
    test::to_mpz(e, t.logs[i]);
    mpz_addmul(acc, k, e);
  }
  mpz_mod(acc, acc, r);
  auto total = test::from_mpz<C::fr::N>(acc);
  mpz_clears(acc, k, e, r, nullptr);
  return zk::ec::jacobian<G>::from_affine(C::template generator<G>()).mul(total);
}

template <class C, class G>
zk::ec::jacobian<G> naive(const msm_case<C, G>& t) {
  auto acc = zk::ec::jacobian<G>::infinity();
  for (std::size_t i = 0; i < t.points.size(); ++i)
    acc = acc + zk::ec::jacobian<G>::from_affine(t.points[i]).mul(t.scalars[i]);
  return acc;
}

template <class C, class G>
void check_sizes(thread_pool& pool, std::initializer_list<std::size_t> sizes) {
  std::mt19937_64 rng(7);
  for (std::size_t n : sizes) {
    CAPTURE(n);
    const auto t = make_case<C, G>(n, rng);
    const auto got = gpu::cpu::msm(t.points.data(), t.scalars.data(), n, pool);
    const auto want = by_discrete_logs(t);
    CHECK(got == want);
    if (n <= 100) CHECK(got == naive(t));
    if (n >= 2) CHECK_FALSE(got.is_infinity());
  }
}

template <class C, class G>
void check_degenerate(thread_pool& pool) {
  using affine = zk::ec::affine<G>;
  using jacobian = zk::ec::jacobian<G>;
  const affine g = C::template generator<G>();
  const auto zero = C::scalar::zero();
  // n = 0 and all-zero scalars give infinity.
  CHECK(gpu::cpu::msm<G>(&g, &zero, 0, pool).is_infinity());
  std::vector<affine> pts(5, g);
  std::vector<typename C::scalar> ks(5, zero);
  CHECK(gpu::cpu::msm(pts.data(), ks.data(), pts.size(), pool).is_infinity());
  // All points at infinity give infinity whatever the scalars.
  std::vector<affine> inf(5, affine::infinity());
  std::vector<typename C::scalar> ones(5, C::scalar::from_u64(12345));
  CHECK(gpu::cpu::msm(inf.data(), ones.data(), inf.size(), pool).is_infinity());
  // (r - 1) G = -G, one point.
  const auto r_minus_1 = (-C::fr::one()).to_standard();
  CHECK(gpu::cpu::msm(&g, &r_minus_1, 1, pool) == -jacobian::from_affine(g));
  // One point, a small scalar: 12345 G.
  CHECK(gpu::cpu::msm(pts.data(), ones.data(), 1, pool) == jacobian::from_affine(g).mul(ones[0]));
  // 5 copies of G with scalar 1 land in one bucket (the doubling path): 5 G.
  std::vector<typename C::scalar> one(5, C::scalar::from_u64(1));
  CHECK(gpu::cpu::msm(pts.data(), one.data(), pts.size(), pool) ==
        jacobian::from_affine(g).mul(C::scalar::from_u64(5)));
}

}  // namespace

TEST_CASE("msm of random points matches the naive sum and the discrete-log oracle") {
  thread_pool pool(2);
  SUBCASE("bn254 G1") { check_sizes<zk::bn254, zk::bn254::g1_group>(pool, {1, 2, 3, 100, 1000, 4097}); }
  SUBCASE("bn254 G2") { check_sizes<zk::bn254, zk::bn254::g2_group>(pool, {1, 2, 3, 100, 1000, 4097}); }
  SUBCASE("bls12_381 G1") {
    check_sizes<zk::bls12_381, zk::bls12_381::g1_group>(pool, {1, 2, 3, 100, 1000, 4097});
  }
  SUBCASE("bls12_381 G2") {
    check_sizes<zk::bls12_381, zk::bls12_381::g2_group>(pool, {1, 2, 3, 100, 1000, 4097});
  }
}

TEST_CASE("msm on one thread and on many threads agree") {
  std::mt19937_64 rng(3);
  const auto t = make_case<zk::bn254, zk::bn254::g1_group>(3000, rng);
  thread_pool one(1), many(5);
  CHECK(gpu::cpu::msm(t.points.data(), t.scalars.data(), 3000, one) ==
        gpu::cpu::msm(t.points.data(), t.scalars.data(), 3000, many));
}

TEST_CASE("msm handles zero scalars, infinity points, duplicates and n = 0") {
  thread_pool pool(2);
  SUBCASE("bn254 G1") { check_degenerate<zk::bn254, zk::bn254::g1_group>(pool); }
  SUBCASE("bn254 G2") { check_degenerate<zk::bn254, zk::bn254::g2_group>(pool); }
  SUBCASE("bls12_381 G1") { check_degenerate<zk::bls12_381, zk::bls12_381::g1_group>(pool); }
  SUBCASE("bls12_381 G2") { check_degenerate<zk::bls12_381, zk::bls12_381::g2_group>(pool); }
}

TEST_CASE("msm window width grows with n and stays within its cap") {
  CHECK(gpu::cpu::msm_window_bits(1, 254) <= 3);
  CHECK(gpu::cpu::msm_window_bits(1 << 10, 254) < gpu::cpu::msm_window_bits(1 << 20, 254));
  CHECK(gpu::cpu::msm_window_bits(std::size_t(1) << 30, 254) <= 16);
}

TEST_CASE("msm with few distinct points and 0/1 scalars matches the discrete-log oracle") {
  // Batched affine additions meet their edge cases in bulk here: many points
  // for one bucket in a batch (scalars 1 land in one bucket of window 0),
  // P + P and P + (-P) in a bucket, and full batches of distinct additions.
  thread_pool pool(2);
  std::mt19937_64 rng(11);
  using C = zk::bn254;
  using G = zk::bn254::g1_group;
  using fr = C::fr;
  auto t = make_case<C, G>(20000, rng);
  for (std::size_t i = 0; i < t.points.size(); ++i) {
    const std::size_t src = i % 3;  // three distinct points, one of them negated at times
    t.points[i] = (i % 7 == 0) ? -t.points[src] : t.points[src];
    t.logs[i] = (i % 7 == 0) ? (-fr::from_standard(t.logs[src])).to_standard() : t.logs[src];
    if (i % 4 != 0) t.scalars[i] = C::scalar::from_u64(i % 2);
  }
  CHECK(gpu::cpu::msm(t.points.data(), t.scalars.data(), t.points.size(), pool) ==
        by_discrete_logs(t));
}
