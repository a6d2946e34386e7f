// Timings of the CPU NTT and MSM at a size taken from the environment
// (PROOFLINE_TEST_NPOW=16 for 2^16; threads from PROOFLINE_TEST_THREADS,
// default all). Skipped when unset, so CI stays fast; the results are also
// checked, so a fast wrong answer fails.
#include <doctest/doctest.h>

#include <chrono>
#include <cstdlib>
#include <vector>

#include "gpu/cpu/msm.hpp"
#include "gpu/cpu/ntt.hpp"
#include "helpers.hpp"

using namespace proofline;

namespace {

unsigned env_unsigned(const char* name, unsigned fallback) {
  const char* v = std::getenv(name);
  return v && *v ? unsigned(std::strtoul(v, nullptr, 10)) : fallback;
}

template <class F>
double seconds(F&& f) {
  auto t0 = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

template <class C, class G>
void time_msm(unsigned log_n, base::thread_pool& pool, const char* label) {
  using jacobian = zk::ec::jacobian<G>;
  using affine = zk::ec::affine<G>;
  const std::size_t n = std::size_t(1) << log_n;
  std::mt19937_64 rng(5);
  affine g;
  if constexpr (std::is_same_v<G, typename C::g1_group>)
    g = C::g1_generator();
  else
    g = C::g2_generator();
  // P_i = (i + 1) G, so sum k_i P_i = (sum k_i (i + 1)) G.
  std::vector<affine> points(n);
  std::vector<typename C::scalar> scalars(n);
  auto acc = jacobian::from_affine(g);
  auto log = C::fr::zero();
  for (std::size_t i = 0; i < n; ++i) {
    points[i] = acc.to_affine();
    acc = acc.add_affine(g);
    auto k = test::random_fe<typename C::fr>(rng);
    scalars[i] = k.to_standard();
    log = log + k * C::fr::from_u64(i + 1);
  }
  jacobian got;
  double t = seconds([&] { got = gpu::cpu::msm(points.data(), scalars.data(), n, pool); });
  MESSAGE(std::string(label) << " msm 2^" << log_n << " on " << pool.size() << " threads: " << t * 1e3 << " ms");
  CHECK(got == jacobian::from_affine(g).mul(log.to_standard()));
}

template <class F>
void time_ntt(unsigned log_n, base::thread_pool& pool, const char* label) {
  std::mt19937_64 rng(6);
  std::vector<F> x(std::size_t(1) << log_n);
  for (auto& v : x) v = test::random_fe<F>(rng);
  auto y = x;
  double tf = seconds([&] { gpu::cpu::ntt(y.data(), log_n, gpu::cpu::direction::forward, pool); });
  double ti = seconds([&] { gpu::cpu::ntt(y.data(), log_n, gpu::cpu::direction::inverse, pool); });
  CHECK(y == x);
  double tc = seconds([&] { gpu::cpu::to_odd_coset(y.data(), log_n, pool); });
  MESSAGE(std::string(label) << " ntt 2^" << log_n << " on " << pool.size() << " threads: forward " << tf * 1e3
                << " ms, inverse " << ti * 1e3 << " ms, to_odd_coset " << tc * 1e3 << " ms");
}

}  // namespace

TEST_CASE("cpu ntt and msm timings at 2^PROOFLINE_TEST_NPOW") {
  const unsigned log_n = env_unsigned("PROOFLINE_TEST_NPOW", 0);
  if (log_n == 0) {
    MESSAGE("set PROOFLINE_TEST_NPOW (e.g. 16) to time the CPU NTT and MSM");
    return;
  }
  base::thread_pool pool(env_unsigned("PROOFLINE_TEST_THREADS", 0));
  time_ntt<zk::bn254::fr>(log_n, pool, "bn254");
  time_ntt<zk::bls12_381::fr>(log_n, pool, "bls12_381");
  time_msm<zk::bn254, zk::bn254::g1_group>(log_n, pool, "bn254 G1");
  time_msm<zk::bls12_381, zk::bls12_381::g1_group>(log_n, pool, "bls12_381 G1");
  if (std::getenv("PROOFLINE_TEST_G2")) {
    time_msm<zk::bn254, zk::bn254::g2_group>(log_n, pool, "bn254 G2");
    time_msm<zk::bls12_381, zk::bls12_381::g2_group>(log_n, pool, "bls12_381 G2");
  }
}
