// The CUDA backend on a real GPU against the CPU backend, bit for bit: the
// device field code, NTTs and odd-coset steps of several sizes, G1 and G2
// MSMs (n = 1, n not a power of two, zero scalars, points at infinity,
// repeated points, skewed and uniform scalars, forced windows), MSMs whose
// scalars upload in chunks under compute (forced 2, 3 and 8 chunks at 2^16,
// the default chunking at 2^22), and whole partitions of the fixture
// circuits (proofs with r = s = 0 must be equal).
//
// Without an NVIDIA device node (/dev/nvidiactl, /dev/nvidia0) the binary
// exits 77, which CTest reports as skipped; with one, a device CUDA cannot
// use (broken driver, wrong index) fails it.
// Environment:
//   PROOFLINE_TEST_DEVICE     device index (default 0)
//   PROOFLINE_GPU_TEST_LOG_N  largest MSM/NTT size tested, log2 (default 16)
//   PROOFLINE_FIXTURES_DIR    fixtures folder (default: the source tree's)
//   PROOFLINE_GPU_PROOF_DIR   if set, proofs made by the CUDA backend (random
//                             r, s) are written there as <curve>_<size>/proof_<i>.json
//                             and public_<i>.json for snarkjs groth16 verify
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "cases.hpp"
#include "gpu/backend.hpp"
#include "gpu/cpu/msm.hpp"
#include "gpu/cpu/ntt.hpp"
#include "gpu/cuda/cuda_backend.hpp"
#include "gpu/cuda/factory.hpp"
#include "gpu/cuda/key_tables.hpp"
#include "gpu/cuda/msm_pipeline.hpp"
#include "bench/cuda/testing.hpp"
#include "zk/formats/atomic_file.hpp"
#include "zk/formats/proof_json.hpp"
#include "zk/formats/wtns.hpp"
#include "zk/formats/zkey.hpp"
#include "zk/groth16/prover.hpp"

using namespace proofline;
namespace fs = std::filesystem;
namespace cudat = gpu::cuda::testing;

namespace {

int device() {
  const char* v = std::getenv("PROOFLINE_TEST_DEVICE");
  return v ? std::atoi(v) : 0;
}

unsigned max_log_n() {
  const char* v = std::getenv("PROOFLINE_GPU_TEST_LOG_N");
  return v ? unsigned(std::atoi(v)) : 16u;
}

std::string fixtures_dir() {
  const char* v = std::getenv("PROOFLINE_FIXTURES_DIR");
  return v ? v : PROOFLINE_FIXTURES_DIR;
}

base::thread_pool& pool() {
  static base::thread_pool p(0);
  return p;
}

// ---- field ------------------------------------------------------------------

template <class F>
void check_field() {
  std::mt19937_64 rng(7);
  auto a = test::make_elements<F>(4096, rng), b = test::make_elements<F>(4096, rng);
  typename F::repr pm1 = F::modulus();
  pm1.l[0] -= 1;
  const F edge[] = {F::zero(), F::one(), F::from_montgomery_limbs(pm1)};
  for (std::size_t i = 0; i < 3; ++i)
    for (std::size_t j = 0; j < 3; ++j) {
      a[3 * i + j] = edge[i];
      b[3 * i + j] = edge[j];
    }
  std::vector<F> p(a.size()), s(a.size()), d(a.size());
  cudat::field_ops(a.data(), b.data(), p.data(), s.data(), d.data(), a.size(), device());
  std::size_t bad_p = 0, bad_s = 0, bad_d = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    bad_p += p[i] != a[i] * b[i];
    bad_s += s[i] != a[i] + b[i];
    bad_d += d[i] != a[i] - b[i];
  }
  CHECK(bad_p == 0);
  CHECK(bad_s == 0);
  CHECK(bad_d == 0);
}

// ---- NTT ----------------------------------------------------------------------

/// Every kind of NTT pass: the runtime's default, the older kinds, the
/// fused shapes scripts/bench-kernels-ntt.sh times, small fused tiles
/// (many passes), and the lazy (l1) and unit-twiddle (u1) options alone and
/// together.
constexpr const char* ntt_kernels[] = {
    "",                          "registers",               "tiled",
    "fused",                     "fused:t10:c1:r3:b128",    "fused:t10:c1:r2:b128",
    "fused:t11:c1:r2:b256",      "fused:t10:c1:r1:b256",    "fused:t11:c1:r1:b256",
    "fused:t11:c0:r2:b256",      "fused:t12:c0:r2:b512",    "fused:t4:c1:r1:b4",
    "fused:t5:c2:r3",            "fused:t10:c1:r2:b128:l1", "fused:t10:c1:r2:b128:u1",
    "fused:t10:c1:r2:b128:l1:u1", "fused:t11:c1:r2:b256:l1:u1", "fused:t6:c0:r2:b8:u1",
    "fused:t4:c1:r2:b4:l1:u1",   "fused:t10:c1:r2:b128:l1:u1:s9", "fused:t6:c1:r2:b8:l1:u1:s3"};

template <class F>
void check_ntt(unsigned log_n) {
  CAPTURE(log_n);
  std::mt19937_64 rng(100 + log_n);
  const auto x = test::make_elements<F>(std::size_t(1) << log_n, rng);
  std::vector<F> fwd = x, inv = x, coset = x;
  gpu::cpu::ntt(fwd.data(), log_n, gpu::cpu::direction::forward, pool());
  gpu::cpu::ntt(inv.data(), log_n, gpu::cpu::direction::inverse, pool());
  gpu::cpu::to_odd_coset(coset.data(), log_n, pool());
  for (const char* kernel : ntt_kernels) {
    const std::string name = kernel;
    CAPTURE(name);
    for (bool inverse : {false, true}) {
      auto got = x;
      cudat::ntt(got.data(), log_n, inverse, device(), kernel);
      CHECK(got == (inverse ? inv : fwd));
    }
    auto got = x;
    cudat::odd_coset(got.data(), log_n, device(), kernel);
    CHECK(got == coset);
  }
}

// ---- MSM ----------------------------------------------------------------------

/// The GPU's MSM with plain points and with precomputed window multiples
/// (fixed base) against the CPU backend's.
template <class C, class G>
void check_msm(const std::vector<zk::ec::affine<G>>& points, const std::vector<typename C::scalar>& scalars,
               unsigned window = 0) {
  CAPTURE(points.size());
  CAPTURE(window);
  auto want = gpu::cpu::msm<G, C::fr::N>(points.data(), scalars.data(), points.size(), pool()).to_affine();
  for (bool fixed : {false, true}) {
    CAPTURE(fixed);
    auto got = cudat::msm<C, G>(points.data(), scalars.data(), points.size(), device(), window, fixed).to_affine();
    CHECK(got == want);
  }
}

template <class C, class G>
void msm_suite(const char* group) {
  using test::scalar_mix;
  std::mt19937_64 rng(500);
  CAPTURE(group);
  for (std::size_t n : {std::size_t(1), std::size_t(2), std::size_t(3), std::size_t(100), std::size_t(1000),
                        std::size_t(4097)}) {
    auto p = test::make_points<C, G>(n, rng);
    check_msm<C, G>(p, test::make_scalars<C>(n, scalar_mix::uniform, rng));
  }
  for (bool fixed : {false, true}) {
    auto p = test::make_points<C, G>(1, rng);
    auto got = cudat::msm<C, G>(p.data(), std::vector<typename C::scalar>(1, C::scalar::zero()).data(), 1, device(),
                                0, fixed);
    CHECK(got.is_infinity());
  }
  {
    auto p = test::make_points<C, G>(3000, rng);
    check_msm<C, G>(p, test::make_scalars<C>(p.size(), scalar_mix::skewed, rng));
    check_msm<C, G>(p, test::make_scalars<C>(p.size(), scalar_mix::ones, rng));
    check_msm<C, G>(p, std::vector<typename C::scalar>(p.size(), C::scalar::zero()));
    for (unsigned c : {3u, 8u, 17u}) check_msm<C, G>(p, test::make_scalars<C>(p.size(), scalar_mix::uniform, rng), c);
  }
  const unsigned top = std::is_same_v<G, typename C::g1_group> ? max_log_n() : std::min(max_log_n(), 14u);
  for (unsigned k = 12; k <= top; k += 2) {
    // large inputs: device-made points (the CPU reference is the slow part)
    auto p = cudat::random_points<C, G>(std::size_t(1) << k, 900 + k, device());
    check_msm<C, G>(p, test::make_scalars<C>(p.size(), k % 4 ? scalar_mix::skewed : scalar_mix::uniform, rng));
  }
}

/// Both level-1 kernels (plain, and lazy: Fq2 products with one reduction
/// less for G2, coordinates in [0, 2p) for G1) against the CPU backend,
/// plain and fixed base, on the skewed inputs: all scalars equal (one
/// bucket holds every point), zero scalars, n not a multiple of any chunk
/// or block, and 3 chunks of scalars.
template <class C, class G>
void level1_suite(const char* group) {
  using test::scalar_mix;
  namespace msm = gpu::cuda::msm;
  CAPTURE(group);
  std::mt19937_64 rng(700);
  auto p = test::make_points<C, G>(2053, rng);
  const auto inputs = test::scalar_mixes<C>(p.size(), rng);
  for (std::size_t k = 0; k < inputs.size(); ++k) {
    CAPTURE(k);
    const auto& s = inputs[k];
    const auto want = gpu::cpu::msm<G, C::fr::N>(p.data(), s.data(), p.size(), pool()).to_affine();
    for (bool lazy : {false, true}) {
      const std::string spec = msm::describe(msm::level1_kernel{lazy, lazy ? 64u : 0u});
      CAPTURE(spec);
      for (bool fixed : {false, true}) {
        CAPTURE(fixed);
        CHECK(cudat::msm<C, G>(p.data(), s.data(), p.size(), device(), 0, fixed, 1, spec).to_affine() == want);
      }
      CHECK(cudat::msm<C, G>(p.data(), s.data(), p.size(), device(), 5, false, 3, spec).to_affine() == want);
      }
  }
}

/// The batched-affine rounds (a round or many, batches of 2 to 32
/// additions a thread) against the CPU backend on the device: collision
/// points (A + A, 2A + 2A, 2A + (-2A), B + (-B), infinity) under uniform,
/// skewed, all-one, all-equal and all-zero scalars, plain, fixed base and in
/// 3 chunks; then device-made points at 2^12 to 2^16 (G2: 2^14).
template <class C, class G>
void affine_suite(const char* group) {
  using test::scalar_mix;
  CAPTURE(group);
  std::mt19937_64 rng(720);
  auto p = test::make_collision_points<C, G>(2053, rng);
  const auto inputs = test::scalar_mixes<C>(p.size(), rng);
  for (std::size_t k = 0; k < inputs.size(); ++k) {
    CAPTURE(k);
    const auto& s = inputs[k];
    const auto want = gpu::cpu::msm<G, C::fr::N>(p.data(), s.data(), p.size(), pool()).to_affine();
    for (const char* spec : {"affine", "affine:r1:k1", "affine:r9:k5"}) {
      CAPTURE(spec);
      for (bool fixed : {false, true}) {
        CAPTURE(fixed);
        CHECK(cudat::msm<C, G>(p.data(), s.data(), p.size(), device(), 0, fixed, 1, spec).to_affine() == want);
      }
      CHECK(cudat::msm<C, G>(p.data(), s.data(), p.size(), device(), 5, false, 3, spec).to_affine() == want);
    }
  }
  const unsigned top = std::is_same_v<G, typename C::g1_group> ? std::min(max_log_n(), 16u) : std::min(max_log_n(), 14u);
  for (unsigned k = 12; k <= top; k += 2) {
    CAPTURE(k);
    auto q = cudat::random_points<C, G>(std::size_t(1) << k, 930 + k, device());
    const auto s = test::make_scalars<C>(q.size(), k % 4 ? scalar_mix::skewed : scalar_mix::uniform, rng);
    const auto want = gpu::cpu::msm<G, C::fr::N>(q.data(), s.data(), q.size(), pool()).to_affine();
    CHECK(cudat::msm<C, G>(q.data(), s.data(), q.size(), device(), 0, false, 1, "affine").to_affine() == want);
  }
}

/// The window reductions (the default, and block shapes from
/// a thread a point to a thread a segment) against the CPU backend, on
/// windows from 2 buckets to 2^15 (every level count the block kernel has
/// at these sizes), plain, fixed base and chunked.
template <class C, class G>
void reduce_suite(const char* group) {
  using test::scalar_mix;
  CAPTURE(group);
  std::mt19937_64 rng(710);
  auto p = test::make_points<C, G>(1500, rng);
  const auto s = test::make_scalars<C>(p.size(), scalar_mix::uniform, rng);
  const auto want = gpu::cpu::msm<G, C::fr::N>(p.data(), s.data(), p.size(), pool()).to_affine();
  for (const char* spec : {"block", "block:t8:r0", "block:t0:r4", "block:t3:r2", "block:t7:r2"}) {
    CAPTURE(spec);
    for (unsigned c : {2u, 7u, 11u, 16u}) {
      CAPTURE(c);
      CHECK(cudat::msm<C, G>(p.data(), s.data(), p.size(), device(), c, false, 1, "", spec).to_affine() == want);
    }
    CHECK(cudat::msm<C, G>(p.data(), s.data(), p.size(), device(), 0, true, 1, "", spec).to_affine() == want);
    CHECK(cudat::msm<C, G>(p.data(), s.data(), p.size(), device(), 5, false, 3, "", spec).to_affine() == want);
  }
}

/// Scalars in `chunks` chunks (uploaded while earlier chunks compute) against
/// one upload and the CPU backend; chunks = 0 is the pipeline's own choice.
template <class C, class G>
void check_chunked(const std::vector<zk::ec::affine<G>>& points, const std::vector<typename C::scalar>& scalars,
                   unsigned chunks, bool fixed) {
  CAPTURE(points.size());
  CAPTURE(chunks);
  CAPTURE(fixed);
  const std::size_t n = points.size();
  auto want = gpu::cpu::msm<G, C::fr::N>(points.data(), scalars.data(), n, pool()).to_affine();
  auto whole = cudat::msm<C, G>(points.data(), scalars.data(), n, device(), 0, fixed, 1).to_affine();
  auto cut = cudat::msm<C, G>(points.data(), scalars.data(), n, device(), 0, fixed, chunks).to_affine();
  CHECK(whole == want);
  CHECK(cut == want);
  CHECK(!want.is_infinity());
}

template <class C, class G>
void chunked_suite(unsigned log_n, unsigned chunks, bool both_bases) {
  std::mt19937_64 rng(700 + log_n);
  auto p = cudat::random_points<C, G>(std::size_t(1) << log_n, 950 + log_n, device());
  auto sc = test::make_scalars<C>(p.size(), test::scalar_mix::uniform, rng);
  const std::size_t far = p.size() / 2;  // repeated points and scalars across chunks, zeros
  for (std::size_t i = 0; i < p.size() / 8; ++i) {
    p[far + 3 * i] = p[i];
    sc[far + 3 * i] = sc[i];
    sc[7 * i] = C::scalar::zero();
  }
  check_chunked<C, G>(p, sc, chunks, true);
  if (both_bases) check_chunked<C, G>(p, sc, chunks, false);
}

// ---- whole partitions ---------------------------------------------------------

template <class C>
struct fixture {
  std::string dir;
  zk::groth16::key_ptr key;
  std::vector<std::vector<typename C::scalar>> witnesses;

  explicit fixture(const std::string& size) : dir(fixtures_dir() + "/" + C::name + "/" + size) {
    REQUIRE_MESSAGE(fs::exists(dir + "/circuit.zkey"), dir << "/circuit.zkey is missing");
    key = zk::formats::load_zkey(dir + "/circuit.zkey");
    for (int i = 0; fs::exists(dir + "/witness_" + std::to_string(i) + ".wtns"); ++i) {
      witnesses.emplace_back(key->info.n_vars);
      zk::formats::read_witness<C>(dir + "/witness_" + std::to_string(i) + ".wtns", *key, witnesses.back().data());
    }
    REQUIRE(!witnesses.empty());
  }
  const zk::groth16::proving_key<C>& typed() const { return zk::groth16::typed<C>(*key); }

  gpu::partition_ptr partition(std::size_t i) const {
    const auto& info = key->info;
    auto p = std::make_shared<gpu::partition<C>>();
    p->witness = memory::buffer<typename C::scalar>(info.n_vars);
    std::copy(witnesses[i].begin(), witnesses[i].end(), p->witness.begin());
    p->a = memory::buffer<typename C::fr>(info.domain_size);
    p->b = memory::buffer<typename C::fr>(info.domain_size);
    p->c = memory::buffer<typename C::fr>(info.domain_size);
    zk::groth16::synthesize_abc<C>(typed(), witnesses[i].data(), p->a.data(), p->b.data(), p->c.data());
    return p;
  }
};

template <class C>
const zk::groth16::msm_results<C>& msms(const gpu::result_ptr& r) {
  return static_cast<const gpu::result<C>&>(*r).msm;
}

template <class C>
bool same_msms(const gpu::result_ptr& x, const gpu::result_ptr& y) {
  const auto &a = msms<C>(x), &b = msms<C>(y);
  return a.a.to_affine() == b.a.to_affine() && a.b1.to_affine() == b.b1.to_affine() &&
         a.b2.to_affine() == b.b2.to_affine() && a.c.to_affine() == b.c.to_affine() &&
         a.h.to_affine() == b.h.to_affine();
}

template <class C>
void check_partitions(const std::string& size, bool precompute = true) {
  CAPTURE(size);
  CAPTURE(precompute);
  fixture<C> fx(size);
  auto cpu = gpu::make_cpu_backend(2);
  gpu::cuda::backend_options opt;
  opt.tables = precompute ? gpu::cuda::table_policy::first : gpu::cuda::table_policy::never;
  auto cuda = gpu::cuda::make_backend(device(), opt);
  const auto zero = C::fr::zero();
  for (std::size_t i = 0; i < fx.witnesses.size(); ++i) {
    CAPTURE(i);
    auto part = fx.partition(i);
    auto want = cpu->prove(fx.key, part);
    std::vector<gpu::span> spans;
    int consumed = 0;
    gpu::prove_hooks hooks;
    hooks.spans = &spans;
    hooks.inputs_consumed = [&] { ++consumed; };
    auto got = cuda->prove(fx.key, part, hooks);
    CHECK(same_msms<C>(got, want));
    auto pw = zk::groth16::assemble<C>(fx.typed(), msms<C>(want), zero, zero);
    auto pg = zk::groth16::assemble<C>(fx.typed(), msms<C>(got), zero, zero);
    CHECK((pg.a == pw.a && pg.b == pw.b && pg.c == pw.c));
    CHECK(consumed == 1);
    REQUIRE(spans.size() == 11);
    const char* names[] = {"upload", "ntt_a", "ntt_b", "ntt_c", "h", "msm_a",
                           "msm_b1", "msm_b2", "msm_c", "msm_h", "download"};
    for (std::size_t k = 0; k < spans.size(); ++k) {
      CHECK(spans[k].name == names[k]);
      CHECK(spans[k].end_us >= spans[k].start_us);
      if (k > 1) CHECK(spans[k].start_us >= spans[k - 1].end_us - 1.0);
    }
    if (const char* out = std::getenv("PROOFLINE_GPU_PROOF_DIR"); out && precompute) {
      const fs::path dir = fs::path(out) / (std::string(C::name) + "_" + size);
      fs::create_directories(dir);
      auto proof = zk::groth16::assemble<C>(fx.typed(), msms<C>(got), zk::groth16::random_scalar<C>(),
                                            zk::groth16::random_scalar<C>());
      const auto idx = std::to_string(i);
      zk::formats::write_file_atomic((dir / ("proof_" + idx + ".json")).string(), zk::formats::proof_to_json<C>(proof));
      zk::formats::write_file_atomic((dir / ("public_" + idx + ".json")).string(),
                                     zk::formats::public_to_json<C>(fx.witnesses[i].data() + 1, fx.key->info.n_public));
    }
  }
}

}  // namespace

TEST_CASE("the device field code equals the host field code") {
  SUBCASE("BN254 Fq") { check_field<zk::bn254::fq>(); }
  SUBCASE("BN254 Fr") { check_field<zk::bn254::fr>(); }
  SUBCASE("BLS12-381 Fq") { check_field<zk::bls12_381::fq>(); }
  SUBCASE("BLS12-381 Fr") { check_field<zk::bls12_381::fr>(); }
}

TEST_CASE("NTTs and odd-coset steps on the GPU equal the CPU backend's") {
  SUBCASE("BN254") {
    for (unsigned k : {0u, 1u, 2u, 3u, 4u, 5u, 8u, 9u, 10u, 11u, 13u, 15u}) check_ntt<zk::bn254::fr>(k);
    for (unsigned k = 16; k <= max_log_n(); k += 2) check_ntt<zk::bn254::fr>(k);
  }
  SUBCASE("BLS12-381") {
    for (unsigned k : {1u, 6u, 11u, 17u}) check_ntt<zk::bls12_381::fr>(k);
  }
}

TEST_CASE("MSMs on the GPU equal the CPU backend's on BN254") {
  SUBCASE("G1") { msm_suite<zk::bn254, zk::bn254::g1_group>("G1"); }
  SUBCASE("G2") { msm_suite<zk::bn254, zk::bn254::g2_group>("G2"); }
}

TEST_CASE("MSMs on the GPU equal the CPU backend's on BLS12-381") {
  SUBCASE("G1") { msm_suite<zk::bls12_381, zk::bls12_381::g1_group>("G1"); }
  SUBCASE("G2") { msm_suite<zk::bls12_381, zk::bls12_381::g2_group>("G2"); }
}

TEST_CASE("both level-1 MSM kernels (plain and lazy products) equal the CPU backend") {
  SUBCASE("BN254 G1") { level1_suite<zk::bn254, zk::bn254::g1_group>("G1"); }
  SUBCASE("BN254 G2") { level1_suite<zk::bn254, zk::bn254::g2_group>("G2"); }
  SUBCASE("BLS12-381 G1") { level1_suite<zk::bls12_381, zk::bls12_381::g1_group>("G1"); }
  SUBCASE("BLS12-381 G2") { level1_suite<zk::bls12_381, zk::bls12_381::g2_group>("G2"); }
}

TEST_CASE("the batched-affine MSM kernel equals the CPU backend, collisions included") {
  SUBCASE("BN254 G1") { affine_suite<zk::bn254, zk::bn254::g1_group>("G1"); }
  SUBCASE("BN254 G2") { affine_suite<zk::bn254, zk::bn254::g2_group>("G2"); }
  SUBCASE("BLS12-381 G1") { affine_suite<zk::bls12_381, zk::bls12_381::g1_group>("G1"); }
  SUBCASE("BLS12-381 G2") { affine_suite<zk::bls12_381, zk::bls12_381::g2_group>("G2"); }
}

TEST_CASE("every window reduction shape equals the CPU backend") {
  SUBCASE("BN254 G1") { reduce_suite<zk::bn254, zk::bn254::g1_group>("G1"); }
  SUBCASE("BN254 G2") { reduce_suite<zk::bn254, zk::bn254::g2_group>("G2"); }
  SUBCASE("BLS12-381 G1") { reduce_suite<zk::bls12_381, zk::bls12_381::g1_group>("G1"); }
  SUBCASE("BLS12-381 G2") { reduce_suite<zk::bls12_381, zk::bls12_381::g2_group>("G2"); }
}

TEST_CASE("MSMs with the scalars uploaded in chunks under compute equal whole ones and the CPU backend's") {
  SUBCASE("BN254 G1 2^16 in 3, 2 and 8 chunks") {
    for (unsigned k : {3u, 2u, 8u}) chunked_suite<zk::bn254, zk::bn254::g1_group>(16, k, k == 3);
  }
  SUBCASE("BN254 G2 and BLS12-381 G1, 2^14 in 3 chunks") {
    chunked_suite<zk::bn254, zk::bn254::g2_group>(14, 3, false);
    chunked_suite<zk::bls12_381, zk::bls12_381::g1_group>(14, 3, false);
  }
  SUBCASE("BN254 G1 2^22: the size from which MSMs are chunked by default") {
    REQUIRE(gpu::cuda::msm::chunk_count(std::size_t(1) << 22) > 1);
    chunked_suite<zk::bn254, zk::bn254::g1_group>(22, 0, false);
  }
}

TEST_CASE("whole partitions on the CUDA backend equal the CPU backend's") {
  SUBCASE("BN254 small") { check_partitions<zk::bn254>("small"); }
  SUBCASE("BN254 medium") { check_partitions<zk::bn254>("medium"); }
  SUBCASE("BLS12-381 small") { check_partitions<zk::bls12_381>("small"); }
  SUBCASE("BN254 small, plain points (no precomputed multiples)") { check_partitions<zk::bn254>("small", false); }
  SUBCASE("BLS12-381 small, plain points") { check_partitions<zk::bls12_381>("small", false); }
}

TEST_CASE("partitions prove on plain points at once, and on the window tables once they pay: same results") {
  fixture<zk::bn254> fx("medium");
  REQUIRE(fx.witnesses.size() >= 2);
  auto cpu = gpu::make_cpu_backend(2);
  auto cuda = gpu::make_cuda_backend(device());  // tables when they pay (the default)
  const auto want0 = cpu->prove(fx.key, fx.partition(0)), want1 = cpu->prove(fx.key, fx.partition(1));
  CHECK_FALSE(cuda->key_stats(fx.key.get()).resident);
  // No partitions announced, none proved: nothing pays for tables yet.
  cuda->prepare(fx.key);
  auto st = cuda->key_stats(fx.key.get());
  CHECK(st.resident);
  CHECK_FALSE(st.tables);
  CHECK(st.to_device_ms > 0);
  CHECK(st.device_bytes > 0);
  CHECK(st.tables_bytes == 0);
  const auto plain0 = cuda->prove(fx.key, fx.partition(0));
  CHECK(same_msms<zk::bn254>(plain0, want0));
  CHECK_FALSE(cuda->key_stats(fx.key.get()).tables);
  // Many partitions announced: the next partition starts the build, which
  // switches in between partitions (key_stats and prove() look for it).
  cuda->expect_partitions(fx.key, 1000000);
  const auto plain1 = cuda->prove(fx.key, fx.partition(1));
  CHECK(same_msms<zk::bn254>(plain1, want1));
  for (int i = 0; i < 2000 && !cuda->key_stats(fx.key.get()).tables; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  st = cuda->key_stats(fx.key.get());
  REQUIRE(st.tables);
  CHECK(st.tables_bytes > st.device_bytes / 2);
  CHECK(st.tables_ms > 0);
  CHECK(st.tables_note.empty());
  const auto fixed0 = cuda->prove(fx.key, fx.partition(0)), fixed1 = cuda->prove(fx.key, fx.partition(1));
  CHECK(same_msms<zk::bn254>(fixed0, plain0));
  CHECK(same_msms<zk::bn254>(fixed1, plain1));
}

TEST_CASE("tables are skipped when they do not fit the device-memory limit, and partitions still prove") {
  fixture<zk::bn254> fx("medium");
  auto cpu = gpu::make_cpu_backend(2);
  // A limit of the tables' own size: they cannot fit beside the plain points
  // (nor can they ever), while the plain points, NTT tables and scratch of
  // a circuit this small fit many times over.
  const auto& info = fx.key->info;
  gpu::cuda::tables::key_sizes ks;
  ks.n_w = info.n_vars;
  ks.n_c = info.n_private();
  ks.n_h = info.domain_size;
  gpu::cuda::backend_options opt;
  opt.memory_limit = gpu::cuda::tables::estimate(ks).table_bytes;
  auto cuda = gpu::cuda::make_backend(device(), opt);
  cuda->expect_partitions(fx.key, 1000000);
  for (int r = 0; r < 3; ++r) CHECK(same_msms<zk::bn254>(cuda->prove(fx.key, fx.partition(0)), cpu->prove(fx.key, fx.partition(0))));
  const auto st = cuda->key_stats(fx.key.get());
  CHECK_FALSE(st.tables);
  CHECK(st.tables_note.find("device-memory") != std::string::npos);
}

TEST_CASE("a key's upload does not stall the partitions of a key that is ready") {
  fixture<zk::bn254> ready("medium");
  fixture<zk::bls12_381> other("small");
  auto cpu = gpu::make_cpu_backend(2);
  auto cuda = gpu::make_cuda_backend(device());
  cuda->prepare(ready.key);
  // Another thread prepares a second key (upload, NTT tables) while this
  // one proves the first: both finish, results unchanged.
  std::thread prep([&] { cuda->prepare(other.key); });
  auto got = cuda->prove(ready.key, ready.partition(0));
  prep.join();
  CHECK(same_msms<zk::bn254>(got, cpu->prove(ready.key, ready.partition(0))));
  CHECK(cuda->key_stats(other.key.get()).resident);
}

TEST_CASE("two threads proving at once get the CPU backend's results, compute one after the other") {
  fixture<zk::bn254> fx("medium");
  REQUIRE(fx.witnesses.size() >= 2);
  auto cpu = gpu::make_cpu_backend(2);
  auto cuda = gpu::make_cuda_backend(device());
  cuda->prove(fx.key, fx.partition(0));  // key resident, domain built
  const int rounds = 3;
  std::vector<gpu::result_ptr> got(2 * rounds);
  std::vector<std::vector<gpu::span>> spans(2 * rounds);
  auto worker = [&](int t) {
    for (int r = 0; r < rounds; ++r) {
      gpu::prove_hooks h;
      h.spans = &spans[2 * r + t];
      got[2 * r + t] = cuda->prove(fx.key, fx.partition(t), h);
    }
  };
  std::thread t0(worker, 0), t1(worker, 1);
  t0.join();
  t1.join();
  for (int t = 0; t < 2; ++t) {
    auto want = cpu->prove(fx.key, fx.partition(t));
    for (int r = 0; r < rounds; ++r) CHECK(same_msms<zk::bn254>(got[2 * r + t], want));
  }
  // Compute intervals (ntt_a start .. download end) must not overlap: each
  // partition's compute waits on the device for the previous one's end
  // (its window reductions and download included). Both lanes' spans are
  // on the backend's one device clock, so the order is exact; the slack is
  // the events' resolution (well under a microsecond) and a float's
  // rounding of the elapsed times.
  std::vector<std::pair<double, double>> compute;
  for (auto& s : spans) compute.push_back({s[1].start_us, s.back().end_us});
  std::sort(compute.begin(), compute.end());
  for (std::size_t k = 1; k < compute.size(); ++k)
    CHECK(compute[k].first >= compute[k - 1].second - 2.0);
}

TEST_CASE("a device-memory limit too small for the key fails with a clear error, and evict() frees a key") {
  fixture<zk::bn254> fx("small");
  gpu::cuda::backend_options tiny;
  tiny.memory_limit = 64 << 10;
  auto small = gpu::cuda::make_backend(device(), tiny);
  CHECK_THROWS_WITH_AS(small->prove(fx.key, fx.partition(0)), doctest::Contains("device memory"),
                       gpu::backend_error);
  auto cuda = gpu::make_cuda_backend(device());
  auto first = cuda->prove(fx.key, fx.partition(0));
  cuda->evict(fx.key.get());
  auto again = cuda->prove(fx.key, fx.partition(0));
  CHECK(same_msms<zk::bn254>(first, again));
}

TEST_CASE("a partition that does not fit its key is rejected") {
  fixture<zk::bn254> fx("small");
  auto cuda = gpu::make_cuda_backend(device());
  auto p = std::make_shared<gpu::partition<zk::bn254>>();
  p->witness = memory::buffer<zk::bn254::scalar>(3);
  CHECK_THROWS_WITH_AS(cuda->prove(fx.key, p), doctest::Contains("witness values: 3"), gpu::backend_error);
}

/// Whether the NVIDIA driver exposes a device node: it creates /dev/nvidiactl
/// and /dev/nvidia<N> when a GPU is installed. Only their absence means "no
/// GPU here"; with a node present, a device CUDA cannot use is a failure.
bool nvidia_device_node_exists() {
  return ::access("/dev/nvidiactl", F_OK) == 0 || ::access("/dev/nvidia0", F_OK) == 0;
}

int main(int argc, char** argv) {
  if (!nvidia_device_node_exists()) {
    std::printf("cuda_gpu_test: skipped: no NVIDIA device node (/dev/nvidiactl, /dev/nvidia0)\n");
    return 77;
  }
  std::string why;
  const int n = gpu::cuda_device_count(&why);
  if (n <= device()) {
    std::printf("cuda_gpu_test: FAILED: an NVIDIA device node exists but CUDA device %d is not "
                "usable (%s); a broken driver or a wrong PROOFLINE_TEST_DEVICE fails this test\n",
                device(), n ? (std::to_string(n) + " visible").c_str() : why.c_str());
    return 1;
  }
  const auto info = cudat::describe_device(device());
  std::printf("cuda_gpu_test on %s (%d SMs, driver %d, runtime %d)\n", info.name.c_str(), info.multiprocessors,
              info.driver_version, info.runtime_version);
  doctest::Context ctx;
  ctx.applyCommandLine(argc, argv);
  return ctx.run();
}

TEST_CASE("prepare() makes a key resident, concurrent with a prove() of it, and changes no result") {
  fixture<zk::bn254> fx("medium");
  auto cpu = gpu::make_cpu_backend(2);
  auto cuda = gpu::make_cuda_backend(device());
  // A worker prepares while another already proves: both wait for the one
  // upload (the key cache), neither uploads twice or sees half a key.
  gpu::result_ptr during;
  std::thread prover([&] { during = cuda->prove(fx.key, fx.partition(1)); });
  cuda->prepare(fx.key);
  prover.join();
  CHECK(same_msms<zk::bn254>(during, cpu->prove(fx.key, fx.partition(1))));
  // Prepared, the next prove() starts computing at once: no key upload inside it.
  std::vector<gpu::span> spans;
  gpu::prove_hooks h;
  h.spans = &spans;
  auto after = cuda->prove(fx.key, fx.partition(0), h);
  CHECK(same_msms<zk::bn254>(after, cpu->prove(fx.key, fx.partition(0))));
  REQUIRE_FALSE(spans.empty());
  CHECK(spans.front().name == "upload");
  // A key on another curve prepares too; a null key is ignored.
  fixture<zk::bls12_381> other("small");
  cuda->prepare(other.key);
  CHECK(same_msms<zk::bls12_381>(cuda->prove(other.key, other.partition(0)),
                                 cpu->prove(other.key, other.partition(0))));
  cuda->prepare(nullptr);
}
