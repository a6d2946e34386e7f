// The CUDA backend's arithmetic and pipelines, checked on the host (no GPU
// needed, so CI runs these): the 32-bit carry-chain Montgomery arithmetic the
// kernels use, and the MSM and NTT pipelines run through host_exec, against
// the CPU backend (gpu/cpu), which is itself tested against naive sums and
// snarkjs.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <cstdlib>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench/cuda/ntt_families.hpp"
#include "cases.hpp"
#include "gpu/cpu/msm.hpp"
#include "gpu/cpu/ntt.hpp"
#include "host_emulation.hpp"
#include "zk/ff/fp_redundant.hpp"
#include "zk/ff/mont32.hpp"

using namespace proofline;
namespace mont32 = zk::ff::mont32;

namespace {

base::thread_pool& pool() {
  static base::thread_pool p(2);
  return p;
}

/// Values that stress carries: 0, 1, p - 1, p - 2, and random ones.
template <class F>
std::vector<F> field_inputs(std::size_t n, std::mt19937_64& rng) {
  std::vector<F> v = test::make_elements<F>(n, rng);
  typename F::repr pm1 = F::modulus(), pm2 = F::modulus();
  pm1.l[0] -= 1;
  pm2.l[0] -= 2;
  v.push_back(F::zero());
  v.push_back(F::one());
  v.push_back(F::from_montgomery_limbs(pm1));
  v.push_back(F::from_montgomery_limbs(pm2));
  v.push_back(F::from_montgomery_limbs(F::repr::from_u64(1)));
  return v;
}

template <class F>
void check_mont32(std::mt19937_64& rng) {
  using P = typename F::params;
  auto v = field_inputs<F>(300, rng);
  std::size_t bad_mul = 0, bad_add = 0, bad_sub = 0;
  for (std::size_t i = 0; i < v.size(); ++i)
    for (std::size_t j = i; j < v.size(); j += 7) {
      F r;
      mont32::mul<mont32::host_chain, P>(r.l, v[i].l, v[j].l);
      bad_mul += r != v[i] * v[j];
      mont32::mul_wide<P>(r.l, v[i].l, v[j].l);
      bad_mul += r != v[i] * v[j];
      mont32::mul_pairs<mont32::host_chain, P>(r.l, v[i].l, v[j].l);
      bad_mul += r != v[i] * v[j];
      mont32::add<mont32::host_chain, P>(r.l, v[i].l, v[j].l);
      bad_add += r != v[i] + v[j];
      mont32::sub<mont32::host_chain, P>(r.l, v[i].l, v[j].l);
      bad_sub += r != v[i] - v[j];
      mont32::sub<mont32::host_chain, P>(r.l, v[j].l, v[i].l);
      bad_sub += r != v[j] - v[i];
    }
  CHECK(bad_mul == 0);
  CHECK(bad_add == 0);
  CHECK(bad_sub == 0);
  // a standard-form operand up to 2^(64N) - 1 against R^2 (from_standard's use)
  typename F::repr big;
  for (auto& l : big.l) l = ~uint64_t(0);
  F r2, a = F::from_montgomery_limbs(big), r;
  for (unsigned i = 0; i < F::N; ++i) r2.l[i] = P::r2(i);
  mont32::mul<mont32::host_chain, P>(r.l, a.l, r2.l);
  CHECK(r == F::from_standard(big));
  mont32::mul_wide<P>(r.l, a.l, r2.l);
  CHECK(r == F::from_standard(big));
  mont32::mul_pairs<mont32::host_chain, P, mont32::any_operand>(r.l, a.l, r2.l);
  CHECK(r == F::from_standard(big));
}

TEST_CASE("mont32: which products drop the accumulators' top word") {
  // (k + 1) p < 2^(32W) for operands a < k p: BN254 Fq and Fr, BLS12-381
  // Fq and Fr for k = 1; only BN254 Fr (the lazy NTT, k = 4) among the
  // scalar fields for k = 4; never for any operand.
  using bn_fq = zk::bn254::fq::params;
  using bn_fr = zk::bn254::fr::params;
  using bls_fq = zk::bls12_381::fq::params;
  using bls_fr = zk::bls12_381::fr::params;
  CHECK(mont32::spare_word<bn_fq>(1));
  CHECK(mont32::spare_word<bn_fr>(1));
  CHECK(mont32::spare_word<bls_fq>(1));
  CHECK(mont32::spare_word<bls_fr>(1));
  CHECK(mont32::spare_word<bn_fr>(4));
  CHECK_FALSE(mont32::spare_word<bls_fr>(4));
  CHECK_FALSE(mont32::spare_word<bn_fq>(mont32::any_operand));
  // BN254's top word is 0x30644e72: 5 (top + 1) fits 2^32, 6 (top + 1) does not.
  CHECK_FALSE(mont32::spare_word<bn_fr>(5));
}

template <class C, class G>
void check_msm(std::size_t n, test::scalar_mix mix, unsigned c, std::mt19937_64& rng, bool fixed = false) {
  CAPTURE(n);
  CAPTURE(c);
  CAPTURE(fixed);
  auto points = test::make_points<C, G>(n, rng);
  auto scalars = test::make_scalars<C>(n, mix, rng);
  auto want = gpu::cpu::msm<G, C::fr::N>(points.data(), scalars.data(), n, pool()).to_affine();
  auto got = test::emulated_msm<C, G>(points, scalars, c, fixed).to_affine();
  CHECK(got == want);
  if (n > 0) CHECK((!want.is_infinity() || mix == test::scalar_mix::ones || n < 4));
}

template <class C>
void msm_cases(std::mt19937_64& rng) {
  using g1 = typename C::g1_group;
  using g2 = typename C::g2_group;
  using test::scalar_mix;
  SUBCASE("n = 1") { check_msm<C, g1>(1, scalar_mix::uniform, 0, rng); }
  SUBCASE("n = 1 with a zero scalar") {
    auto p = test::make_points<C, g1>(1, rng);
    std::vector<typename C::scalar> s(1, C::scalar::zero());
    CHECK(test::emulated_msm<C, g1>(p, s).is_infinity());
  }
  SUBCASE("n = 0 is the point at infinity") {
    CHECK(test::emulated_msm<C, g1>({}, {}).is_infinity());
  }
  SUBCASE("n = 5, 100, 1000 (not powers of two), uniform scalars") {
    for (std::size_t n : {5, 100, 1000}) check_msm<C, g1>(n, scalar_mix::uniform, 0, rng);
  }
  SUBCASE("1024 points with skewed scalars") { check_msm<C, g1>(1024, scalar_mix::skewed, 0, rng); }
  SUBCASE("every scalar 1: one bucket takes every point, many levels") {
    for (unsigned c : {0u, 3u}) check_msm<C, g1>(777, scalar_mix::ones, c, rng);
  }
  SUBCASE("small and odd windows, every reduction depth") {
    for (unsigned c : {2u, 5u, 6u, 7u, 9u, 13u, 16u}) check_msm<C, g1>(300, scalar_mix::uniform, c, rng);
  }
  SUBCASE("G2, uniform and skewed") {
    check_msm<C, g2>(1, scalar_mix::uniform, 0, rng);
    check_msm<C, g2>(333, scalar_mix::uniform, 0, rng);
    check_msm<C, g2>(256, scalar_mix::skewed, 4, rng);
  }
  SUBCASE("level 1 with lazy products (G1: coordinates in [0, 2p); G2: lazy Fq2): skewed inputs, plain, fixed "
          "base and chunked") {
    namespace msm = gpu::cuda::msm;
    const msm::level1_kernel lazy{true};
    auto check_group = [&](auto group) {
      using G = decltype(group);
      for (std::size_t n : {std::size_t(1), std::size_t(2), std::size_t(257)}) {
        auto p = test::make_points<C, G>(n, rng);
        auto inputs = test::scalar_mixes<C>(n, rng);
        for (std::size_t k = 0; k < inputs.size(); ++k) {
          CAPTURE(n);
          CAPTURE(k);
          const auto& s = inputs[k];
          const auto want = gpu::cpu::msm<G, C::fr::N>(p.data(), s.data(), n, pool()).to_affine();
          CHECK(test::emulated_msm<C, G>(p, s, 0, false, 1, lazy).to_affine() == want);
          CHECK(test::emulated_msm<C, G>(p, s, 5, true, 1, lazy).to_affine() == want);
          if (n > 2) CHECK(test::emulated_msm<C, G>(p, s, 4, false, 3, lazy).to_affine() == want);
        }
      }
    };
    check_group(g1{});
    check_group(g2{});
  }
  SUBCASE("fixed base: precomputed window multiples, one bucket set") {
    for (std::size_t n : {1, 5, 100, 1000}) check_msm<C, g1>(n, scalar_mix::uniform, 0, rng, true);
    check_msm<C, g1>(700, scalar_mix::skewed, 0, rng, true);
    check_msm<C, g1>(300, scalar_mix::ones, 0, rng, true);
    for (unsigned c : {2u, 5u, 9u, 16u}) check_msm<C, g1>(200, scalar_mix::uniform, c, rng, true);
    check_msm<C, g2>(150, scalar_mix::uniform, 0, rng, true);
    check_msm<C, g2>(64, scalar_mix::skewed, 3, rng, true);
    auto p = test::make_points<C, g1>(3, rng);
    std::vector<typename C::scalar> zeros(3, C::scalar::zero());
    CHECK(test::emulated_msm<C, g1>(p, zeros, 0, true).is_infinity());
  }
}

/// x + k p as limbs (k p + x must fit: the caller keeps it below 2^(64N)).
template <class F>
F plus_multiple(const F& x, unsigned k) {
  F r = x;
  for (unsigned i = 0; i < k; ++i) {
    uint64_t carry = 0;
    for (unsigned j = 0; j < F::N; ++j) {
      const unsigned __int128 s = (unsigned __int128)r.l[j] + F::params::modulus(j) + carry;
      r.l[j] = uint64_t(s);
      carry = uint64_t(s >> 64);
    }
  }
  return r;
}

/// The fully reduced value of limbs below 4p.
template <class F>
F reduced(F x) {
  while (!(x.montgomery_limbs() < F::modulus())) {
    uint64_t borrow = 0;
    for (unsigned j = 0; j < F::N; ++j) {
      const unsigned __int128 d = (unsigned __int128)x.l[j] - F::params::modulus(j) - borrow;
      x.l[j] = uint64_t(d);
      borrow = uint64_t(d >> 64) & 1;
    }
  }
  return x;
}

/// lazy_arith's butterflies against exact_arith's on inputs anywhere in
/// [0, 2p) (the residues x and x + p, carry-heavy values included): the
/// same residues, outputs below 2p, and out() fully reduced. The product
/// alone on inputs up to 4p - 1.
template <class F>
void check_lazy(std::mt19937_64& rng) {
  namespace ntt = gpu::cuda::ntt;
  using L = ntt::lazy_arith<F>;
  using E = ntt::exact_arith<F>;
  using P = typename F::params;
  const auto v = field_inputs<F>(60, rng);
  const auto w = field_inputs<F>(8, rng);
  auto two_p = plus_multiple(F::zero(), 2);
  auto below_2p = [&](const F& x) { return x.montgomery_limbs() < two_p.montgomery_limbs(); };
  std::size_t bad_value = 0, bad_bound = 0, bad_out = 0, bad_mul = 0;
  for (std::size_t i = 0; i < v.size(); ++i)
    for (std::size_t j = i % 3; j < v.size(); j += 3)
      for (unsigned ka = 0; ka < 2; ++ka)
        for (unsigned kb = 0; kb < 2; ++kb) {
          const F a = plus_multiple(v[i], ka), b = plus_multiple(v[j], kb), t = w[(i + j) % w.size()];
          auto run = [&](auto op_lazy, auto op_exact) {
            F la = a, lb = b, ea = v[i], eb = v[j];
            op_lazy(la, lb);
            op_exact(ea, eb);
            bad_bound += !below_2p(la) + !below_2p(lb);
            bad_value += (reduced(la) != ea) + (reduced(lb) != eb);
            bad_out += (L::out(la) != ea) + (L::out(lb) != eb);
          };
          run([&](F& x, F& y) { L::dif(x, y, t); }, [&](F& x, F& y) { E::dif(x, y, t); });
          run([&](F& x, F& y) { L::dit(x, y, t); }, [&](F& x, F& y) { E::dit(x, y, t); });
          run([](F& x, F& y) { L::dif1(x, y); }, [](F& x, F& y) { E::dif1(x, y); });
          run([](F& x, F& y) { L::dit1(x, y); }, [](F& x, F& y) { E::dit1(x, y); });
        }
  for (const F& x : v)
    for (unsigned k = 0; k < 4; ++k) {
      const F a = plus_multiple(x, k);  // < 4p
      for (const F& t : w) {
        F r;
        ntt::lazy::mul<P>(r.l, a.l, t.l);
        bad_mul += !below_2p(r) || reduced(r) != x * t;
      }
    }
  CHECK(bad_value == 0);
  CHECK(bad_bound == 0);
  CHECK(bad_out == 0);
  CHECK(bad_mul == 0);
}

/// Every kind of NTT pass, and fused tiles of several shapes: small tiles
/// (many passes, columns in both placements), each radix, no columns, and
/// the largest tile; the lazy and unit-twiddle options alone and together,
/// in tiles of several shapes (lazy_arith on BN254, exact_arith on
/// BLS12-381).
constexpr const char* ntt_kernels[] = {"registers",
                                       "tiled",
                                       "fused",
                                       "fused:t4:c1:r1:b4",
                                       "fused:t5:c2:r3",
                                       "fused:t6:c0:r2:b8",
                                       "fused:t10:c1:r3",
                                       "fused:t12:c0:r2",
                                       "fused:t10:c1:r2:b128:l1",
                                       "fused:t10:c1:r2:b128:u1",
                                       "fused:t10:c1:r2:b128:l1:u1",
                                       "fused:t4:c1:r2:b4:l1:u1",
                                       "fused:t5:c2:r2:u1",
                                       "fused:t6:c0:r2:b8:u1",
                                       "fused:t12:c0:r2:l1",
                                       "fused:t3:c0:r2:b2:l1:u1",
                                       "fused:t10:c1:r2:b128:l1:u1:s9",
                                       "fused:t6:c1:r2:b8:l1:u1:s3",
                                       "fused:t5:c0:r2:s4"};

template <class F>
void check_ntt(unsigned log_n, std::mt19937_64& rng) {
  namespace ntt = gpu::cuda::ntt;
  const std::size_t n = std::size_t(1) << log_n;
  test::emulated_domain<F> dom(log_n);
  const gpu::cuda::host_exec ex;
  auto x = test::make_elements<F>(n, rng);
  for (const char* spec : ntt_kernels) {
    const std::string name = spec;
    CAPTURE(name);
    const ntt::kernel kc = ntt::parse_kernel(spec);
    for (bool inverse : {false, true}) {
      auto want = x;
      gpu::cpu::ntt(want.data(), log_n, inverse ? gpu::cpu::direction::inverse : gpu::cpu::direction::forward,
                    pool());
      auto work = x;
      std::vector<F> got(n);
      ntt::families::transform(ex, dom.view, work.data(), got.data(), inverse, kc);
      CHECK(got == want);
    }
    auto want = x;
    gpu::cpu::to_odd_coset(want.data(), log_n, pool());
    auto got = x;
    ntt::families::to_odd_coset(ex, dom.view, got.data(), kc);
    CHECK(got == want);
    if (n > 1) CHECK(got != x);
  }
}

}  // namespace

TEST_CASE("host carry chains share one flag a thread, as the device's chains do") {
  // Two 64-bit additions on 32-bit words, their chains interleaved: a's low
  // words carry, b's do not. With one flag (the device's condition code) a's
  // high word receives b's carry, so a bug that interleaves two chains shows
  // on the host as it would on the GPU.
  mont32::host_chain a, b;
  const uint32_t a_lo = a.add_cc(0xffffffffu, 1u);  // carry 1
  const uint32_t b_lo = b.add_cc(1u, 1u);           // carry 0, overwriting a's
  const uint32_t a_hi = a.addc(0u, 0u);
  CHECK(a_lo == 0u);
  CHECK(b_lo == 2u);
  CHECK(a_hi == 0u);  // a chain of its own would have given 1
  // issued back to back, the same steps give the exact sum
  mont32::host_chain c;
  c.add_cc(0xffffffffu, 1u);
  CHECK(c.addc(0u, 0u) == 1u);
}

TEST_CASE("32-bit carry-chain Montgomery arithmetic equals the generic field code") {
  std::mt19937_64 rng(11);
  SUBCASE("BN254 Fq") { check_mont32<zk::bn254::fq>(rng); }
  SUBCASE("BN254 Fr") { check_mont32<zk::bn254::fr>(rng); }
  SUBCASE("BLS12-381 Fq") { check_mont32<zk::bls12_381::fq>(rng); }
  SUBCASE("BLS12-381 Fr") { check_mont32<zk::bls12_381::fr>(rng); }
}

/// The lazy-reduction Fq2 product (zk::ff::fp2_lazy, the host's carry
/// chains) against Karatsuba with three reduced products.
template <class F>
void check_fp2_lazy(std::mt19937_64& rng) {
  auto v = field_inputs<F>(60, rng);
  std::size_t bad = 0, count = 0;
  for (std::size_t i = 0; i < v.size(); ++i)
    for (std::size_t j = 0; j < v.size(); j += 3) {
      const zk::ff::fp2<F> a{v[i], v[j]}, b{v[(i * 7 + j) % v.size()], v[(j * 5 + 3) % v.size()]};
      const auto want = a.mul_inline(b);
      const auto got = a.template mul_lazy<mont32::host_chain>(b);
      const zk::ff::fp2<F, true> al{a.c0, a.c1}, bl{b.c0, b.c1};
      const auto through = al * bl;
      bad += !(got == want) + !(through.c0 == want.c0 && through.c1 == want.c1);
      ++count;
    }
  CHECK(count > 1000);
  CHECK(bad == 0);
}

TEST_CASE("the lazy-reduction Fq2 product equals Karatsuba with reduced products") {
  std::mt19937_64 rng(25);
  SUBCASE("BN254 Fq2") { check_fp2_lazy<zk::bn254::fq>(rng); }
  SUBCASE("BLS12-381 Fq2") { check_fp2_lazy<zk::bls12_381::fq>(rng); }
}

TEST_CASE("lazy NTT butterflies equal the exact ones within their bounds") {
  std::mt19937_64 rng(12);
  static_assert(gpu::cuda::ntt::lazy_supported<zk::bn254::fr>, "BN254's Fr has two spare bits");
  static_assert(!gpu::cuda::ntt::lazy_supported<zk::bls12_381::fr>, "BLS12-381's Fr has one");
  check_lazy<zk::bn254::fr>(rng);
}

/// fp_redundant's operations on both representatives of each residue (x
/// and x + p, carry-heavy values included) against fp's on the residue:
/// the same residues, every result below 2p, exact() reduced, and zero
/// recognised as 0 and as p.
template <class F>
void check_redundant(std::mt19937_64& rng) {
  using R = zk::ff::fp_redundant<F>;
  const auto v = field_inputs<F>(40, rng);
  const auto two_p = plus_multiple(F::zero(), 2);
  auto limbs = [](const R& r) {
    typename F::repr m;
    for (unsigned i = 0; i < F::N; ++i) m.l[i] = r.l[i];
    return m;
  };
  std::size_t bad_value = 0, bad_bound = 0;
  auto check = [&](const R& got, const F& want) {
    bad_bound += !(limbs(got) < two_p.montgomery_limbs());
    bad_value += got.exact() != want || !(got.exact().montgomery_limbs() < F::modulus());
  };
  for (std::size_t i = 0; i < v.size(); ++i)
    for (std::size_t j = i % 2; j < v.size(); j += 2)
      for (unsigned ka = 0; ka < 2; ++ka)
        for (unsigned kb = 0; kb < 2; ++kb) {
          const R a = R::from(plus_multiple(v[i], ka)), b = R::from(plus_multiple(v[j], kb));
          check(a * b, v[i] * v[j]);
          check(a + b, v[i] + v[j]);
          check(a - b, v[i] - v[j]);
          check(b - a, v[j] - v[i]);
          check(-a, -v[i]);
          check(a.sqr(), v[i].sqr());
        }
  CHECK(bad_value == 0);
  CHECK(bad_bound == 0);
  CHECK(R::zero().is_zero());
  CHECK(R::from(plus_multiple(F::zero(), 1)).is_zero());
  CHECK_FALSE(R::one().is_zero());
  CHECK(R::from(v[0]).exact() == v[0]);
}

TEST_CASE("Fq in [0, 2p) (the GPU MSM's level-1 coordinates) equals Fq") {
  std::mt19937_64 rng(13);
  check_redundant<zk::bn254::fq>(rng);
  check_redundant<zk::bls12_381::fq>(rng);
}

TEST_CASE("the MSM pipeline on the host matches the CPU backend on BN254") {
  std::mt19937_64 rng(21);
  msm_cases<zk::bn254>(rng);
}

TEST_CASE("the MSM pipeline on the host matches the CPU backend on BLS12-381") {
  std::mt19937_64 rng(22);
  msm_cases<zk::bls12_381>(rng);
}

/// The chunked pipeline (msm::chunked, `chunks` chunks) against the unchunked
/// one and the CPU backend, with the same points, scalars and window.
template <class C, class G>
void check_chunked(std::size_t n, test::scalar_mix mix, unsigned chunks, unsigned c, bool fixed,
                   std::mt19937_64& rng) {
  CAPTURE(n);
  CAPTURE(chunks);
  CAPTURE(c);
  CAPTURE(fixed);
  auto points = test::make_points<C, G>(n, rng);
  auto scalars = test::make_scalars<C>(n, mix, rng);
  for (std::size_t i = 0; i < n; i += 7) scalars[i] = C::scalar::zero();  // zero digits in every chunk
  const std::size_t far = 5 * (n / 7);  // a point again with its scalar again, in a later chunk
  for (std::size_t i = 10; far > 0 && i + far < n; i += 31) {
    points[i + far] = points[i];
    scalars[i + far] = scalars[i];
  }
  const auto want = gpu::cpu::msm<G, C::fr::N>(points.data(), scalars.data(), n, pool()).to_affine();
  CHECK(test::emulated_msm<C, G>(points, scalars, c, fixed, 1).to_affine() == want);
  CHECK(test::emulated_msm<C, G>(points, scalars, c, fixed, chunks).to_affine() == want);
  CHECK(!want.is_infinity());
}

TEST_CASE("an MSM whose scalars are cut into chunks equals the unchunked one and the CPU backend") {
  namespace msm = gpu::cuda::msm;
  using g1 = zk::bn254::g1_group;
  using g2 = zk::bn254::g2_group;
  using test::scalar_mix;
  std::mt19937_64 rng(23);
  SUBCASE("3 chunks of 1000 scalars, fixed base and plain points, planner's and small windows") {
    for (bool fixed : {true, false})
      for (unsigned c : {0u, 4u, 9u}) check_chunked<zk::bn254, g1>(1000, scalar_mix::uniform, 3, c, fixed, rng);
  }
  SUBCASE("skewed and all-one scalars: later chunks add to buckets earlier ones filled") {
    check_chunked<zk::bn254, g1>(1000, scalar_mix::skewed, 3, 0, true, rng);
    check_chunked<zk::bn254, g1>(600, scalar_mix::ones, 5, 0, true, rng);
    check_chunked<zk::bn254, g1>(600, scalar_mix::ones, 2, 3, false, rng);
  }
  SUBCASE("G2 and BLS12-381") {
    check_chunked<zk::bn254, g2>(300, scalar_mix::uniform, 3, 0, true, rng);
    check_chunked<zk::bls12_381, zk::bls12_381::g1_group>(500, scalar_mix::uniform, 4, 0, true, rng);
  }
  SUBCASE("more chunks than scalars: one scalar a chunk") {
    check_chunked<zk::bn254, g1>(5, scalar_mix::uniform, 8, 0, true, rng);
    auto p = test::make_points<zk::bn254, g1>(3, rng);
    std::vector<zk::bn254::scalar> zeros(3, zk::bn254::scalar::zero());
    CHECK(test::emulated_msm<zk::bn254, g1>(p, zeros, 0, true, 3).is_infinity());
    CHECK(test::emulated_msm<zk::bn254, g1>({}, {}, 0, true, 3).is_infinity());
  }
}

template <class C, class G>
void check_reduce(const gpu::cuda::msm::reduce_kernel& k, std::mt19937_64& rng) {
  namespace msm = gpu::cuda::msm;
  using test::scalar_mix;
  for (std::size_t n : {std::size_t(1), std::size_t(37), std::size_t(300)})
    for (unsigned c : {2u, 3u, 6u, 10u, 13u})
      for (bool fixed : {false, true})
        for (unsigned chunks : {1u, 3u}) {
          if (fixed && chunks > 1) continue;
          CAPTURE(n);
          CAPTURE(c);
          CAPTURE(fixed);
          CAPTURE(chunks);
          auto p = test::make_points<C, G>(n, rng);
          auto sc = test::make_scalars<C>(n, c % 2 ? scalar_mix::uniform : scalar_mix::skewed, rng);
          const auto want = gpu::cpu::msm<G, C::fr::N>(p.data(), sc.data(), n, pool()).to_affine();
          CHECK(test::emulated_msm<C, G>(p, sc, c, fixed, chunks, msm::default_level1(), k).to_affine() == want);
        }
}

TEST_CASE("every window reduction shape gives the CPU backend's sums") {
  namespace msm = gpu::cuda::msm;
  CHECK(msm::parse_reduce("block") == msm::reduce_kernel{6, 3});
  CHECK(msm::parse_reduce("block:t8:r0") == msm::reduce_kernel{8, 0});
  CHECK(msm::parse_reduce("block:t0:r6") == msm::reduce_kernel{0, 6});
  CHECK(msm::parse_reduce("block:t6:r3") == msm::parse_reduce("block"));
  CHECK(msm::parse_reduce("block:t5:r3") != msm::parse_reduce("block"));
  CHECK(msm::describe(msm::parse_reduce("block:t2:r1")) == "block:t2:r1");
  CHECK(msm::describe(msm::reduce_kernel{}) == "block:t6:r3");
  for (const char* bad : {"", "serial", "Block", "blocks", "serial:block", "block:t9:r1", "block:t1:r7", "block:t0:r0",
                          "block:t5", "block:t5:r3:", "block:t05:r3", "block:tx:r3", "block:r3:t5"}) {
    CAPTURE(bad);
    CHECK_THROWS_AS(msm::parse_reduce(bad), std::invalid_argument);
  }
  // 3K + 1 points of shared memory: 32 threads of BN254 G2 XYZZ points (256 bytes) in 24.25 KiB
  CHECK(msm::segment_block_bytes<zk::ec::xyzz<zk::bn254::g2_group>>(5) == 97 * 256);
  // larger blocks than fit 96 KiB take fewer threads: 2^8 BN254 G1 points
  // (128 bytes) take 96.1 KiB, 2^7 BLS12-381 G2 ones (384 bytes) 144.4 KiB
  CHECK(msm::block_threads_log<zk::ec::xyzz<zk::bn254::g1_group>>(8) == 7);
  CHECK(msm::block_threads_log<zk::ec::xyzz<zk::bn254::g1_group>>(6) == 6);
  CHECK(msm::block_threads_log<zk::ec::xyzz<zk::bn254::g2_group>>(8) == 6);
  CHECK(msm::block_threads_log<zk::ec::xyzz<zk::bls12_381::g1_group>>(8) == 7);
  CHECK(msm::block_threads_log<zk::ec::xyzz<zk::bls12_381::g2_group>>(8) == 6);
  CHECK(msm::block_threads_log<zk::ec::xyzz<zk::bls12_381::g2_group>>(0) == 0);
  // the levels take every bucket: their segments multiply to H, none is
  // empty, every block fits its shared memory
  using G2X = zk::ec::xyzz<zk::bls12_381::g2_group>;
  for (const char* spec : {"block", "block:t8:r0", "block:t0:r1", "block:t8:r6"})
    for (unsigned lg = 0; lg <= 23; ++lg) {
      CAPTURE(spec);
      CAPTURE(lg);
      const auto lv = msm::plan_reduce<G2X>(std::size_t(1) << lg, msm::parse_reduce(spec));
      unsigned sum = 0;
      for (unsigned i = 0; i < lv.count; ++i) {
        CHECK((lg == 0 || lv.tl[i] + lv.rl[i] > 0));
        CHECK(msm::segment_block_bytes<G2X>(lv.tl[i]) <= msm::reduce_block_bytes_max);
        sum += lv.tl[i] + lv.rl[i];
      }
      CHECK(sum == lg);
      CHECK(lv.count >= 1);
    }
  CHECK(msm::plan_reduce<G2X>(std::size_t(1) << 15, msm::reduce_kernel{}).count == 2);  // 2^9, then 2^6
  std::mt19937_64 rng(31);
  // the default, a thread a point (the plain scan), a thread a segment (no
  // scan), and one between, each on every group
  std::vector<msm::reduce_kernel> kernels;
  for (const char* spec : {"block", "block:t3:r0", "block:t0:r2", "block:t2:r1"})
    kernels.push_back(msm::parse_reduce(spec));
  const auto each = [&](auto check) {
    for (const auto& k : kernels) {
      CAPTURE(msm::describe(k));
      check(k);
    }
  };
  SUBCASE("BN254 G1") { each([&](const auto& k) { check_reduce<zk::bn254, zk::bn254::g1_group>(k, rng); }); }
  SUBCASE("BN254 G2") { each([&](const auto& k) { check_reduce<zk::bn254, zk::bn254::g2_group>(k, rng); }); }
  SUBCASE("BLS12-381 G1") {
    each([&](const auto& k) { check_reduce<zk::bls12_381, zk::bls12_381::g1_group>(k, rng); });
  }
  SUBCASE("BLS12-381 G2") {
    each([&](const auto& k) { check_reduce<zk::bls12_381, zk::bls12_381::g2_group>(k, rng); });
  }
}

TEST_CASE("the level-1 kernel: spellings, and both kernels give the CPU backend's sum") {
  namespace msm = gpu::cuda::msm;
  using C = zk::bn254;
  using G = zk::bn254::g2_group;
  using A = zk::ec::affine<G>;
  using X = zk::ec::xyzz<G>;
  for (bool lazy : {false, true}) {
    const std::string spec = msm::describe(msm::level1_kernel{lazy});
    CAPTURE(spec);
    CHECK(msm::parse_level1(spec).lazy == lazy);
  }
  CHECK(msm::describe(msm::level1_kernel{}) == "xyzz");
  for (const char* spec : {"xyzz:b32", "xyzz:lazy:b64", "xyzz:b128", "xyzz:lazy:b256"}) {
    CAPTURE(spec);
    CHECK(msm::describe(msm::parse_level1(spec)) == spec);
  }
  CHECK(msm::parse_level1("xyzz:lazy:b128").lazy);
  CHECK(msm::parse_level1("xyzz:lazy:b128").threads == 128);
  CHECK(msm::parse_level1("xyzz").threads == 0);
  // unless spelled: 256 (the executor's) for BN254 G1, 128 for larger points
  CHECK(msm::level1_threads<zk::ec::affine<zk::bn254::g1_group>>() == 0);
  CHECK(msm::level1_threads<zk::ec::affine<zk::bn254::g2_group>>() == 128);
  CHECK(msm::level1_threads<zk::ec::affine<zk::bls12_381::g1_group>>() == 128);
  CHECK(msm::level1_threads<zk::ec::affine<zk::bls12_381::g2_group>>() == 128);
  for (const char* bad : {"", "xyz", "xyzzy", "xyzz:", "xyzz:r128", "xyzz:lazy:r168", "affinex", "xyzz:lazy:lazy",
                          "xyzz::lazy", "XYZZ", "xyzz:b", "xyzz:b100", "xyzz:b512", "xyzz:b128:lazy", "xyzz:b0128",
                          ":b128", "xyzz:b128:b64"}) {
    CAPTURE(bad);
    CHECK_THROWS_AS(msm::parse_level1(bad), std::invalid_argument);
  }
  CHECK(msm::plan(100, 254).level1.lazy == msm::default_level1().lazy);

  // level 1 of every chunk runs the shape's kernel; the sums are the same
  std::mt19937_64 rng(24);
  const std::size_t n = 400;
  auto points = test::make_points<C, G>(n, rng);
  auto scalars = test::make_scalars<C>(n, test::scalar_mix::skewed, rng);
  const auto want = gpu::cpu::msm<G, C::fr::N>(points.data(), scalars.data(), n, pool()).to_affine();
  const gpu::cuda::host_exec ex{};
  const msm::chunking ch = msm::split(n, 3);
  for (const char* spec : {"xyzz", "xyzz:lazy", "xyzz:lazy:b64"}) {
    CAPTURE(spec);
    msm::shape s = msm::plan(n, C::fr::params::bits, 6, false, ch.count);
    s.level1 = msm::parse_level1(spec);
    const msm::exec_steps<gpu::cuda::host_exec, C::scalar, A, X> st{ex};
    std::vector<char> mem(msm::chunked_bytes<decltype(st), C::scalar, A, X>(st, s, ch));
    gpu::cuda::carver cv(mem.data(), mem.size());
    std::vector<X> windows(s.sums);
    msm::chunked(st, s, ch, scalars.data(), points.data(), windows.data(), cv);
    CHECK(msm::combine(windows.data(), s).to_affine() == want);
  }
}

TEST_CASE("batched-affine kernel: spellings, the rounds a shape takes, and when MSMs take it") {
  namespace msm = gpu::cuda::msm;
  for (const char* spec : {"affine", "affine:r1", "affine:r16", "affine:k1", "affine:r3:k10", "affine:r12:k5"}) {
    CAPTURE(spec);
    const msm::level1_kernel k = msm::parse_level1(spec);
    CHECK(k.affine);
    CHECK(msm::describe(k) == spec);
  }
  CHECK(msm::parse_level1("affine:r3:k2").rounds == 3);
  CHECK(msm::parse_level1("affine:r3:k2").batch_log == 2);
  for (const char* bad : {"affine:", "affine:r0", "affine:r17", "affine:k0", "affine:k11", "affine:k2:r3",
                          "affine:r03", "affine:r3:", "affine:b64", "affine:lazy", "affine:r3:k2:k2", "affinex"}) {
    CAPTURE(bad);
    CHECK_THROWS_AS(msm::parse_level1(bad), std::invalid_argument);
  }
  CHECK_FALSE(msm::parse_level1("xyzz:lazy").affine);
  // off by default at every size (affine_min_n), unless PROOFLINE_MSM_KERNEL says
  if (!std::getenv("PROOFLINE_MSM_KERNEL")) {
    CHECK_FALSE(msm::plan(std::size_t(1) << 20, 254).level1.affine);
    CHECK(msm::level1_for(std::size_t(1) << 30).affine == (msm::affine_min_n <= (std::size_t(1) << 30)));
  }
  // rounds: about log2 of the mean bucket's entries, 1 to 8, or as spelled
  msm::shape s = msm::plan(1 << 12, 254, 4);  // 8 buckets a window, 512 entries a bucket
  s.level1 = msm::parse_level1("affine");
  CHECK(msm::affine_rounds(s) == 8);
  s = msm::plan(1 << 12, 254, 12);  // 2^11 buckets a window, 2 entries a bucket
  s.level1 = msm::parse_level1("affine");
  CHECK(msm::affine_rounds(s) == 1);
  s.level1 = msm::parse_level1("affine:r5");
  CHECK(msm::affine_rounds(s) == 5);
  CHECK(msm::affine_rounds_on(s));
}

/// The batched-affine rounds against the CPU backend on group G: collision
/// points (A + A, 2A + 2A, 2A + (-2A), B + (-B), infinity) under uniform,
/// skewed, all-one, all-equal and all-zero scalars, plain, fixed base and
/// in 3 chunks, for rounds from one to many and batches from 2 to 32.
template <class C, class G>
void check_affine(std::mt19937_64& rng) {
  namespace msm = gpu::cuda::msm;
  using test::scalar_mix;
  for (std::size_t n : {std::size_t(1), std::size_t(2), std::size_t(24), std::size_t(131)}) {
    auto p = n >= 24 ? test::make_collision_points<C, G>(n, rng) : test::make_points<C, G>(n, rng);
    const auto inputs = test::scalar_mixes<C>(n, rng);
    for (std::size_t k = 0; k < inputs.size(); ++k) {
      CAPTURE(n);
      CAPTURE(k);
      const auto& sc = inputs[k];
      const auto want = gpu::cpu::msm<G, C::fr::N>(p.data(), sc.data(), n, pool()).to_affine();
      for (const char* spec : {"affine", "affine:r1:k1", "affine:r4:k2", "affine:r9:k5"}) {
        CAPTURE(spec);
        const msm::level1_kernel kernel = msm::parse_level1(spec);
        CHECK(test::emulated_msm<C, G>(p, sc, 0, false, 1, kernel).to_affine() == want);
        CHECK(test::emulated_msm<C, G>(p, sc, 3, false, 1, kernel).to_affine() == want);
        CHECK(test::emulated_msm<C, G>(p, sc, 5, true, 1, kernel).to_affine() == want);
        if (n > 2) CHECK(test::emulated_msm<C, G>(p, sc, 4, false, 3, kernel).to_affine() == want);
      }
    }
  }
}

TEST_CASE("batched-affine rounds leave level 1 about 2^-R of a long run") {
  // The sums are right with no round merging anything (level 1 adds the
  // rest), so this checks the rounds do the additions.
  namespace msm = gpu::cuda::msm;
  using C = zk::bn254;
  using G = zk::bn254::g1_group;
  const gpu::cuda::host_exec ex;
  std::mt19937_64 rng(34);
  const std::size_t n = 1000;
  const auto p = test::make_points<C, G>(n, rng);
  const auto ones = test::make_scalars<C>(n, test::scalar_mix::ones, rng);  // one bucket of n entries
  const auto left = [&](const std::string& spec) {
    msm::shape s = msm::plan(n, C::fr::params::bits, 8);
    s.level1 = msm::parse_level1(spec);
    std::vector<char> dig(msm::digits_bytes(s)), temp(msm::prepare_bytes<gpu::cuda::host_exec, C::scalar>(ex, s));
    gpu::cuda::carver dc(dig.data(), dig.size()), tc(temp.data(), temp.size());
    const msm::digits d = msm::carve_digits(dc, s);
    msm::prepare(ex, s, ones.data(), d, tc);
    gpu::cuda::carver count;
    msm::affine_rounds_pass(ex, s, d.keys, d.vals, d.count, p.data(), count);
    std::vector<char> mem(count.used());
    gpu::cuda::carver mc(mem.data(), mem.size());
    const auto l = msm::affine_rounds_pass(ex, s, d.keys, d.vals, d.count, p.data(), mc);
    CHECK(*d.count == n);
    for (uint32_t i = 1; i < *l.count; ++i) CHECK(l.keys[i - 1] <= l.keys[i]);
    return std::size_t(*l.count);
  };
  // point 1 is at infinity and 3 is -(point 0): n - 1 points, about 2^-R
  // of them left, give or take a few at the run's ends
  CHECK(left("affine:r1") <= n / 2 + 2);
  CHECK(left("affine:r4") <= n / 16 + 4);
  CHECK(left("affine:r10") <= 2);
  CHECK(left("affine:r1:k1") == left("affine:r1:k10"));
}

TEST_CASE("batched-affine rounds give the CPU backend's sum on every group, collisions included") {
  std::mt19937_64 rng(33);
  SUBCASE("BN254 G1") { check_affine<zk::bn254, zk::bn254::g1_group>(rng); }
  SUBCASE("BN254 G2") { check_affine<zk::bn254, zk::bn254::g2_group>(rng); }
  SUBCASE("BLS12-381 G1") { check_affine<zk::bls12_381, zk::bls12_381::g1_group>(rng); }
  SUBCASE("BLS12-381 G2") { check_affine<zk::bls12_381, zk::bls12_381::g2_group>(rng); }
}

TEST_CASE("msm::split cuts n scalars into growing, non-empty chunks that cover them") {
  namespace msm = gpu::cuda::msm;
  auto ch = msm::split(1000, 3);
  CHECK(ch.count == 3);
  CHECK(ch.begin[0] == 0);
  CHECK(ch.begin[1] == 47);  // 1000 * 1/21
  CHECK(ch.begin[2] == 238);  // 1000 * 5/21
  CHECK(ch.begin[3] == 1000);
  for (std::size_t n : {std::size_t(1), std::size_t(2), std::size_t(7), std::size_t(100), std::size_t(1) << 24})
    for (unsigned k = 1; k <= msm::max_chunks + 2; ++k) {
      CAPTURE(n);
      CAPTURE(k);
      ch = msm::split(n, k);
      CHECK(ch.count == std::min<std::size_t>({k, msm::max_chunks, n}));
      CHECK(ch.begin[ch.count] == n);
      for (unsigned j = 0; j < ch.count; ++j) CHECK(ch.begin[j] < ch.begin[j + 1]);
    }
  CHECK(msm::chunk_count(std::size_t(1) << 20) == 1);  // small MSMs stay whole
  CHECK(msm::chunk_count(std::size_t(1) << 22) == msm::chunked_default);
  CHECK(msm::chunk_count(std::size_t(1) << 24, 1) == 1);
  CHECK(msm::chunk_count(0, 3) == 1);
  // 2^24 in 3 chunks: the first chunk's upload, the part left exposed, is under 5% of the whole
  ch = msm::split(std::size_t(1) << 24, 3);
  CHECK(ch.begin[1] * 20 < (std::size_t(1) << 24));
  // a pass per chunk weighs on the buckets: the planner takes fewer of them for 3 passes
  CHECK(msm::plan(std::size_t(1) << 24, 254, 0, true, 3).c < msm::plan(std::size_t(1) << 24, 254, 0, true).c);
  // a chunk of a fixed-base MSM keeps the window and addresses the whole table
  const auto s = msm::plan(1000, 254, 0, true, 3);
  const auto p = msm::chunk_shape(s, msm::split(1000, 3), 2);
  CHECK(p.n == 1000 - 238);
  CHECK(p.c == s.c);
  CHECK(p.offset == 238);
  CHECK(p.table_n == 1000);
}

TEST_CASE("msm::plan keeps every bucket key below the sentinel and bounds the levels") {
  namespace msm = gpu::cuda::msm;
  for (std::size_t n : {std::size_t(1), std::size_t(1) << 10, std::size_t(1) << 20, std::size_t(1) << 24})
    for (unsigned bits : {254u, 255u}) {
      auto s = msm::plan(n, bits);
      CAPTURE(n);
      CHECK(s.windows * s.c >= bits + 1);
      CHECK(s.buckets < s.sentinel);
      CHECK(s.levels >= 1);
    }
  CHECK(msm::plan(std::size_t(1) << 20, 254).c == 15);  // H200 sweeps: best or within 1% of it
  CHECK(msm::plan(std::size_t(1) << 24, 254).c == 17);
  auto f = msm::plan(std::size_t(1) << 24, 254, 0, true);
  CHECK(f.windows == 12);  // a fixed base affords c = 22: 12 windows instead of 15
  CHECK(f.buckets == f.half);
  CHECK(f.sums == 1);
}

TEST_CASE("window tables: every stored multiple is 2^(c w) P in affine form, batches of inversions included") {
  namespace msm = gpu::cuda::msm;
  using C = zk::bn254;
  using G = C::g1_group;
  using J = zk::ec::jacobian<G>;
  std::mt19937_64 rng(31);
  auto points = test::make_points<C, G>(5, rng);
  points[2] = zk::ec::affine<G>::infinity();  // its multiples stay at infinity
  // c = 2: 128 windows, many batches and a short last one; c = 17: one batch and a bit
  for (unsigned c : {2u, 17u}) {
    CAPTURE(c);
    const msm::shape s = msm::plan(points.size(), C::fr::params::bits, c, true);
    REQUIRE(s.windows > msm::precompute_batch);
    std::vector<zk::ec::affine<G>> table(points.size() * s.windows);
    msm::precompute(gpu::cuda::host_exec{}, s, points.data(), table.data());
    std::size_t bad = 0;
    for (std::size_t i = 0; i < points.size(); ++i) {
      J acc = J::from_affine(points[i]);
      for (unsigned w = 0; w < s.windows; ++w) {
        if (w)
          for (unsigned d = 0; d < c; ++d) acc = acc.dbl();
        bad += table[w * points.size() + i] != acc.to_affine();
      }
    }
    CHECK(bad == 0);
  }
}

TEST_CASE("the NTT pipeline on the host matches the CPU backend") {
  std::mt19937_64 rng(31);
  SUBCASE("BN254, 2^0 .. 2^11, 2^17 (three tiled passes)") {
    for (unsigned k = 0; k <= 11; ++k) check_ntt<zk::bn254::fr>(k, rng);
    check_ntt<zk::bn254::fr>(17, rng);
  }
  SUBCASE("BLS12-381, 2^1, 2^4, 2^9") {
    for (unsigned k : {1u, 4u, 9u}) check_ntt<zk::bls12_381::fr>(k, rng);
  }
}

TEST_CASE("the prover's NTT entry points refuse the kinds only the tests and benchmarks carry") {
  namespace ntt = gpu::cuda::ntt;
  using fr = zk::bn254::fr;
  std::mt19937_64 rng(37);
  const unsigned log_n = 4;
  test::emulated_domain<fr> dom(log_n);
  const gpu::cuda::host_exec ex;
  for (const char* spec : {"registers", "tiled"}) {
    const std::string name = spec;
    CAPTURE(name);
    const ntt::kernel kc = ntt::parse_kernel(spec);
    auto x = test::make_elements<fr>(std::size_t(1) << log_n, rng);
    std::vector<fr> out(x.size());
    CHECK_THROWS_AS(ntt::transform(ex, dom.view, x.data(), out.data(), false, kc), std::invalid_argument);
    CHECK_THROWS_AS(ntt::to_odd_coset(ex, dom.view, x.data(), kc), std::invalid_argument);
  }
}

TEST_CASE("h is a*b - c out of Montgomery form") {
  using fr = zk::bn254::fr;
  std::mt19937_64 rng(41);
  auto a = test::make_elements<fr>(64, rng), b = test::make_elements<fr>(64, rng),
       c = test::make_elements<fr>(64, rng);
  std::vector<zk::bn254::scalar> h(64);
  gpu::cuda::ntt::compute_h(gpu::cuda::host_exec{}, 64, a.data(), b.data(), c.data(), h.data());
  for (std::size_t i = 0; i < 64; ++i) CHECK(fr::from_standard(h[i]) == a[i] * b[i] - c[i]);
}

TEST_CASE("NTT kernel names parse, print back, and bad ones are refused") {
  namespace ntt = gpu::cuda::ntt;
  CHECK(ntt::parse_kernel("tiled").kind == ntt::kernel::tiled);
  CHECK(ntt::parse_kernel("registers").kind == ntt::kernel::registers);
  const ntt::kernel k = ntt::parse_kernel("fused:t10:c2:r3");
  CHECK(k.kind == ntt::kernel::fused);
  CHECK(k.tile_log == 10);
  CHECK(k.cols == 2);
  CHECK(k.radix == 3);
  CHECK(k.threads == 128);
  CHECK(ntt::describe(k) == "fused:t10:c2:r3:b128");
  CHECK(ntt::describe(ntt::parse_kernel(ntt::describe(k))) == ntt::describe(k));
  CHECK(!k.lazy);
  CHECK(!k.unit);
  const ntt::kernel lu = ntt::parse_kernel("fused:u1:l1");
  CHECK(lu.lazy);
  CHECK(lu.unit);
  CHECK(ntt::describe(lu) == "fused:t10:c1:r2:b128:l1:u1");
  CHECK(ntt::describe(ntt::parse_kernel("fused:l1:u0")) == "fused:t10:c1:r2:b128:l1");
  CHECK(ntt::describe(ntt::parse_kernel("fused:u1")) == "fused:t10:c1:r2:b128:u1");
  const ntt::kernel sm = ntt::parse_kernel("fused:l1:u1:s9");
  CHECK(ntt::describe(sm) == "fused:t10:c1:r2:b128:l1:u1:s9");
  CHECK(ntt::tile_log_for(sm, 20) == 9);
  CHECK(ntt::tile_log_for(sm, ntt::small_tile_max_log) == 9);
  CHECK(ntt::tile_log_for(sm, ntt::small_tile_max_log + 1) == 10);
  CHECK(ntt::tile_log_for(lu, 20) == 10);
  CHECK(ntt::describe(ntt::parse_kernel("fused:s0")) == "fused:t10:c1:r2:b128");
  for (const char* bad : {"", "fast", "tiled:t10", "fused:", "fused:t13", "fused:t10:c10", "fused:r4", "fused:r0",
                          "fused:b100", "fused:x3", "fused:t", "fused:t1x", "fused:l2", "fused:u10", "tiled:l1",
                          "fused:r3:l1", "fused:r1:u1", "fused:s1", "fused:s13", "fused:c2:s2", "fused:s"}) {
    CAPTURE(bad);
    CHECK_THROWS_AS(ntt::parse_kernel(bad), std::invalid_argument);
  }
}
