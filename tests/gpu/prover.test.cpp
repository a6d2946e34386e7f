// Whole Groth16 proofs on the CPU backend, checked by snarkjs: the fixture
// circuits (tests/fixtures/<curve>/small) are loaded, synthesized, proved,
// assembled and written as snarkjs JSON, then `snarkjs groth16 verify` must
// accept them and reject a tampered one. Synthesis is checked against a GMP
// recomputation, and the quotient step against the divisibility by Z.
#include <doctest/doctest.h>
#include <nlohmann/json.hpp>
#include <stdlib.h>
#include <sys/wait.h>

#include <algorithm>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "gpu/backend.hpp"
#include "gpu/cpu/ntt.hpp"
#include "helpers.hpp"
#include "zk/formats/atomic_file.hpp"
#include "zk/formats/proof_json.hpp"
#include "zk/formats/wtns.hpp"
#include "zk/formats/zkey.hpp"
#include "zk/groth16/domain.hpp"
#include "zk/groth16/prover.hpp"

using namespace proofline;
namespace fs = std::filesystem;

namespace {

/// A fixture circuit (tests/fixtures/<curve>/<size>) and its first witness.
template <class C>
struct fixture {
  std::string dir;
  zk::groth16::key_ptr key_handle;
  const zk::groth16::proving_key<C>* key = nullptr;
  std::vector<typename C::scalar> witness;

  explicit fixture(const char* size = "small") : dir(test::fixture_dir<C>(size)) {
    for (const char* f : {"circuit.zkey", "verification_key.json", "witness_0.wtns", "public_0.json"})
      REQUIRE_MESSAGE(test::file_exists(dir + "/" + f),
                      dir << "/" << f << " is missing: run scripts/make-fixtures.sh");
    key_handle = zk::formats::load_zkey(dir + "/circuit.zkey", 2);
    REQUIRE(key_handle->info.curve == C::id);
    key = &zk::groth16::typed<C>(*key_handle);
    witness.resize(key->info.n_vars);
    zk::formats::read_witness<C>(dir + "/witness_0.wtns", *key_handle, witness.data());
  }

  /// A synthesized partition for the witness.
  std::shared_ptr<gpu::partition<C>> partition() const {
    const auto& info = key->info;
    auto p = std::make_shared<gpu::partition<C>>();
    p->witness = memory::buffer<typename C::scalar>(info.n_vars);
    std::copy(witness.begin(), witness.end(), p->witness.begin());
    p->a = memory::buffer<typename C::fr>(info.domain_size);
    p->b = memory::buffer<typename C::fr>(info.domain_size);
    p->c = memory::buffer<typename C::fr>(info.domain_size);
    zk::groth16::synthesize_abc<C>(*key, witness.data(), p->a.data(), p->b.data(), p->c.data());
    return p;
  }
};

/// A fresh directory under the system's temp folder, removed at scope exit.
struct temp_dir {
  fs::path path;
  temp_dir() {
    std::string tmpl = (fs::temp_directory_path() / "proofline-gpu-test-XXXXXX").string();
    REQUIRE(mkdtemp(tmpl.data()) != nullptr);
    path = tmpl;
  }
  ~temp_dir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

struct verdict {
  int exit_code;
  std::string output;
  bool ok() const { return exit_code == 0 && output.find("OK") != std::string::npos; }
};

/// Writes proof.json and public.json into `dir` and runs snarkjs groth16 verify.
template <class C>
verdict snarkjs_verify(const fixture<C>& fx, const zk::groth16::proof<C>& proof, const fs::path& dir) {
  const auto proof_path = (dir / "proof.json").string();
  const auto public_path = (dir / "public.json").string();
  const auto log_path = (dir / "verify.log").string();
  zk::formats::write_file_atomic(proof_path, zk::formats::proof_to_json<C>(proof));
  zk::formats::write_file_atomic(public_path, zk::formats::public_to_json<C>(fx.witness.data() + 1,
                                                                             fx.key->info.n_public));
  const std::string cmd = std::string("'") + PROOFLINE_SNARKJS + "' groth16 verify '" + fx.dir +
                          "/verification_key.json' '" + public_path + "' '" + proof_path + "' > '" +
                          log_path + "' 2>&1";
  int status = std::system(cmd.c_str());
  verdict v{WIFEXITED(status) ? WEXITSTATUS(status) : -1, test::read_text(log_path)};
  return v;
}

/// Standard-form values as decimal strings, by GMP.
template <class C>
std::vector<std::string> decimals(const typename C::scalar* v, std::size_t n) {
  std::vector<std::string> out;
  test::mpz x;
  for (std::size_t i = 0; i < n; ++i) {
    test::to_mpz(x, v[i]);
    char* s = mpz_get_str(nullptr, 10, x);
    out.emplace_back(s);
    free(s);
  }
  return out;
}

template <class C>
void check_synthesis() {
  using fr = typename C::fr;
  using scalar = typename C::scalar;
  fixture<C> fx;
  const auto& info = fx.key->info;
  const std::size_t n = info.domain_size;
  std::vector<fr> a(n), b(n), c(n);
  zk::groth16::synthesize_abc<C>(*fx.key, fx.witness.data(), a.data(), b.data(), c.data());

  // The witness is the one snarkjs computed: its public part matches public_0.json.
  const auto pub = nlohmann::json::parse(test::read_text(fx.dir + "/public_0.json"));
  CHECK(pub.template get<std::vector<std::string>>() == decimals<C>(fx.witness.data() + 1, info.n_public));

  // GMP recomputation of A·w and B·w: a coefficient stores c R^2 mod r.
  test::mpz r, r2_inv, acc, k, w;
  test::to_mpz(r, fr::modulus());
  mpz_set_ui(r2_inv, 1);
  mpz_mul_2exp(r2_inv, r2_inv, 128 * fr::N);
  REQUIRE(mpz_invert(r2_inv, r2_inv, r) != 0);
  auto naive = [&](const zk::groth16::key_vector<zk::groth16::coef<C>>& coefs) {
    std::vector<scalar> out(n, scalar::zero());
    for (const auto& e : coefs) {
      test::to_mpz(k, e.value.montgomery_limbs());
      mpz_mul(k, k, r2_inv);
      test::to_mpz(w, fx.witness[e.signal]);
      mpz_mul(k, k, w);
      test::to_mpz(acc, out[e.constraint]);
      mpz_add(acc, acc, k);
      mpz_mod(acc, acc, r);
      out[e.constraint] = test::from_mpz<fr::N>(acc);
    }
    return out;
  };
  const auto a_naive = naive(fx.key->coefs_a), b_naive = naive(fx.key->coefs_b);
  std::size_t wrong_a = 0, wrong_b = 0, wrong_c = 0, nonzero = 0;
  for (std::size_t i = 0; i < n; ++i) {
    wrong_a += a[i].to_standard() != a_naive[i];
    wrong_b += b[i].to_standard() != b_naive[i];
    test::to_mpz(acc, a_naive[i]);
    test::to_mpz(k, b_naive[i]);
    mpz_mul(acc, acc, k);
    mpz_mod(acc, acc, r);
    wrong_c += c[i].to_standard() != test::from_mpz<fr::N>(acc);
    nonzero += !a[i].is_zero() && !b[i].is_zero();
  }
  CHECK(wrong_a == 0);
  CHECK(wrong_b == 0);
  CHECK(wrong_c == 0);
  CHECK(nonzero > info.n_public);

  // a(x)b(x) - c(x) = Z(x) H(x) with deg H <= n - 2. On the odd coset
  // (x = g w^j, g^n = -1) Z = -2, so the coset values of a b - c interpolate
  // to a polynomial of degree <= n - 2 in x: its coefficient n - 1 is zero.
  // A wrong coset step or an inconsistent c breaks that.
  base::thread_pool pool(2);
  auto top_coefficient = [&](std::vector<fr> A, std::vector<fr> B, std::vector<fr> Cv, bool& any) {
    gpu::cpu::to_odd_coset(A.data(), info.log_domain, pool);
    gpu::cpu::to_odd_coset(B.data(), info.log_domain, pool);
    gpu::cpu::to_odd_coset(Cv.data(), info.log_domain, pool);
    std::vector<fr> d(n);
    for (std::size_t i = 0; i < n; ++i) d[i] = A[i] * B[i] - Cv[i];
    gpu::cpu::ntt(d.data(), info.log_domain, gpu::cpu::direction::inverse, pool);
    const fr g_inv = zk::groth16::roots<fr>::odd_coset_generator(info.log_domain).inverse();
    fr k_i = fr::one();
    any = false;
    for (std::size_t i = 0; i < n; ++i, k_i = k_i * g_inv) {
      d[i] = d[i] * k_i;
      any = any || !d[i].is_zero();
    }
    return d[n - 1];
  };
  bool any = false;
  CHECK(top_coefficient(a, b, c, any).is_zero());
  CHECK(any);
  auto c_bad = c;
  c_bad[3] = c_bad[3] + fr::one();
  CHECK_FALSE(top_coefficient(a, b, c_bad, any).is_zero());
}

template <class C>
bool same(const zk::groth16::proof<C>& x, const zk::groth16::proof<C>& y) {
  return x.a == y.a && x.b == y.b && x.c == y.c;
}

template <class C>
void check_whole_proof() {
  using fr = typename C::fr;
  fixture<C> fx;
  temp_dir tmp;
  auto backend = gpu::make_cpu_backend(2);
  CHECK(std::string(backend->kind()) == "cpu");

  std::vector<gpu::span> spans;
  int consumed = 0;
  gpu::prove_hooks hooks;
  hooks.spans = &spans;
  hooks.inputs_consumed = [&] { ++consumed; };
  const auto res = backend->prove(fx.key_handle, fx.partition(), hooks);
  REQUIRE(res);
  REQUIRE(res->curve == C::id);
  const auto& m = static_cast<const gpu::result<C>&>(*res).msm;

  CHECK(consumed == 1);
  std::vector<std::string> names;
  for (const auto& s : spans) names.push_back(s.name);
  CHECK(names == std::vector<std::string>{"upload", "ntt_a", "ntt_b", "ntt_c", "h", "msm_a", "msm_b1",
                                          "msm_b2", "msm_c", "msm_h"});
  for (std::size_t i = 0; i < spans.size(); ++i) {
    CHECK(spans[i].end_us >= spans[i].start_us);
    if (i) CHECK(spans[i].start_us >= spans[i - 1].end_us);
  }

  const auto p1 = zk::groth16::assemble<C>(*fx.key, m, zk::groth16::random_scalar<C>(),
                                           zk::groth16::random_scalar<C>());
  const auto v1 = snarkjs_verify(fx, p1, tmp.path / "random1");
  CHECK_MESSAGE(v1.ok(), v1.output);

  // Fresh r, s: a different proof of the same witness, also valid.
  const auto p2 = zk::groth16::assemble<C>(*fx.key, m, zk::groth16::random_scalar<C>(),
                                           zk::groth16::random_scalar<C>());
  CHECK(p1.a != p2.a);
  CHECK(p1.b != p2.b);
  CHECK(p1.c != p2.c);
  const auto v2 = snarkjs_verify(fx, p2, tmp.path / "random2");
  CHECK_MESSAGE(v2.ok(), v2.output);

  // r = s = 0 gives one deterministic proof; it is valid (just not zero-knowledge).
  const auto z1 = zk::groth16::assemble<C>(*fx.key, m, fr::zero(), fr::zero());
  const auto z2 = zk::groth16::assemble<C>(*fx.key, m, fr::zero(), fr::zero());
  CHECK(same(z1, z2));
  CHECK_FALSE(same(z1, p1));
  const auto vz = snarkjs_verify(fx, z1, tmp.path / "zero");
  CHECK_MESSAGE(vz.ok(), vz.output);

  // Tampered: pi_c moved by the generator.
  auto bad = p1;
  bad.c = (C::g1_jacobian::from_affine(bad.c) + C::g1_jacobian::from_affine(C::g1_generator())).to_affine();
  const auto vb = snarkjs_verify(fx, bad, tmp.path / "tampered");
  CHECK_MESSAGE(!vb.ok(), vb.output);
  CHECK(vb.exit_code != 0);
}

}  // namespace

TEST_CASE("synthesize_abc matches a GMP recomputation and makes a b - c divisible by Z") {
  SUBCASE("bn254") { check_synthesis<zk::bn254>(); }
  SUBCASE("bls12_381") { check_synthesis<zk::bls12_381>(); }
}

TEST_CASE("a proof from the CPU backend verifies with snarkjs and a tampered one does not") {
  SUBCASE("bn254") { check_whole_proof<zk::bn254>(); }
  SUBCASE("bls12_381") { check_whole_proof<zk::bls12_381>(); }
}

TEST_CASE("a proof of a 2^12-point domain (NTT stages past one cache block) verifies with snarkjs") {
  fixture<zk::bn254> fx("medium");
  REQUIRE(fx.key->info.log_domain >= 12);
  temp_dir tmp;
  auto backend = gpu::make_cpu_backend(2);
  const auto res = backend->prove(fx.key_handle, fx.partition());
  const auto& m = static_cast<const gpu::result<zk::bn254>&>(*res).msm;
  const auto proof = zk::groth16::assemble<zk::bn254>(*fx.key, m, zk::groth16::random_scalar<zk::bn254>(),
                                                      zk::groth16::random_scalar<zk::bn254>());
  const auto v = snarkjs_verify(fx, proof, tmp.path);
  CHECK_MESSAGE(v.ok(), v.output);
}

TEST_CASE("random_scalar gives distinct reduced field elements") {
  using fr = zk::bn254::fr;
  const auto x = zk::groth16::random_scalar<zk::bn254>();
  const auto y = zk::groth16::random_scalar<zk::bn254>();
  CHECK(x != y);
  CHECK(x.to_standard() < fr::modulus());
  CHECK(zk::groth16::random_scalar<zk::bls12_381>().to_standard() < zk::bls12_381::fr::modulus());
}

TEST_CASE("the CPU backend rejects a partition that does not fit the key") {
  fixture<zk::bn254> fx;
  auto backend = gpu::make_cpu_backend(1);
  SUBCASE("partition on another curve") {
    auto p = std::make_shared<gpu::partition<zk::bls12_381>>();
    CHECK_THROWS_WITH_AS(backend->prove(fx.key_handle, p), doctest::Contains("partition is on bls12_381"),
                         gpu::backend_error);
  }
  SUBCASE("witness of the wrong length") {
    auto p = fx.partition();
    p->witness = memory::buffer<zk::bn254::scalar>(fx.key->info.n_vars - 1);
    CHECK_THROWS_WITH_AS(backend->prove(fx.key_handle, p), doctest::Contains("witness values"),
                         gpu::backend_error);
  }
}

template <class C>
void check_abc_left_to_backend(const char* size) {
  fixture<C> fx(size);
  auto backend = gpu::make_cpu_backend(2);
  const auto with = fx.partition();
  auto without = std::make_shared<gpu::partition<C>>();
  without->witness = memory::buffer<typename C::scalar>(fx.key->info.n_vars);
  std::copy(fx.witness.begin(), fx.witness.end(), without->witness.begin());
  REQUIRE(with->has_abc());
  REQUIRE_FALSE(without->has_abc());
  std::vector<gpu::span> spans;
  gpu::prove_hooks hooks;
  hooks.spans = &spans;
  const auto& want = static_cast<const gpu::result<C>&>(*backend->prove(fx.key_handle, with)).msm;
  const auto got_ptr = backend->prove(fx.key_handle, without, hooks);
  const auto& got = static_cast<const gpu::result<C>&>(*got_ptr).msm;
  CHECK(got.a.to_affine() == want.a.to_affine());
  CHECK(got.b1.to_affine() == want.b1.to_affine());
  CHECK(got.b2.to_affine() == want.b2.to_affine());
  CHECK(got.c.to_affine() == want.c.to_affine());
  CHECK(got.h.to_affine() == want.h.to_affine());
  CHECK(std::any_of(spans.begin(), spans.end(), [](const gpu::span& s) { return s.name == "abc"; }));
  CHECK_FALSE(backend->computes_abc(*fx.key_handle));
  // a partition with some of a, b, c is refused
  auto partial = fx.partition();
  partial->c = memory::buffer<typename C::fr>();
  CHECK_THROWS_WITH_AS(backend->prove(fx.key_handle, partial), doctest::Contains("c values"), gpu::backend_error);
}

TEST_CASE("the CPU backend computes a, b and c of a partition that comes without them, as synthesis would") {
  SUBCASE("bn254") { check_abc_left_to_backend<zk::bn254>("medium"); }
  SUBCASE("bls12_381") { check_abc_left_to_backend<zk::bls12_381>("small"); }
}

template <class C>
void check_threaded_synthesis(const char* size) {
  using fr = typename C::fr;
  fixture<C> fx(size);
  const std::size_t n = fx.key->info.domain_size;
  std::vector<fr> a1(n), b1(n), c1(n);
  zk::groth16::synthesize_abc<C>(*fx.key, fx.witness.data(), a1.data(), b1.data(), c1.data());
  for (unsigned threads : {2u, 3u, 8u}) {
    CAPTURE(threads);
    std::vector<fr> a(n), b(n), c(n);
    // Chunks of 4 rows or coefficients, so even a small key splits.
    zk::groth16::synthesize_abc<C>(*fx.key, fx.witness.data(), a.data(), b.data(), c.data(),
                                   threads, 4);
    CHECK(a == a1);
    CHECK(b == b1);
    CHECK(c == c1);
  }
  // Coefficients out of constraint order: chunks overlap, one thread takes
  // the matrix, and the result is the same.
  auto shuffled = *fx.key;
  std::reverse(shuffled.coefs_a.begin(), shuffled.coefs_a.end());
  std::swap(shuffled.coefs_b.front(), shuffled.coefs_b.back());
  std::vector<fr> a(n), b(n), c(n);
  zk::groth16::synthesize_abc<C>(shuffled, fx.witness.data(), a.data(), b.data(), c.data(), 4, 4);
  CHECK(a == a1);
  CHECK(b == b1);
  CHECK(c == c1);
}

TEST_CASE("synthesize_abc on several threads gives the same a, b, c bit for bit") {
  SUBCASE("bn254") { check_threaded_synthesis<zk::bn254>("medium"); }
  SUBCASE("bls12_381") { check_threaded_synthesis<zk::bls12_381>("small"); }
}
