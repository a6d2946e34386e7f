// The CUDA fixed-base engine of development setups (gpu/cuda/fixed_base.hpp)
// against the CPU's batch_mul, point for point, on both curves and both
// groups: random scalars with 0, 1, 2, r - 1, r - 2 and window-edge values
// mixed in, n = 0, 1 and sizes that leave a partial last chunk, with the
// default chunk and with small ones (many chunks, both slots reused); then
// whole setups, whose zkey must equal the CPU's byte for byte.
// Part of cuda_gpu_test (its main exits 77 without a GPU).
#include <doctest/doctest.h>
#include <stdlib.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "gpu/cuda/fixed_base.hpp"
#include "zk/dev/fixed_base_engine.hpp"
#include "zk/dev/setup.hpp"

using namespace proofline;
namespace fs = std::filesystem;

namespace {

int test_device() {
  const char* v = std::getenv("PROOFLINE_TEST_DEVICE");
  return v ? std::atoi(v) : 0;
}

base::thread_pool& cpu_pool() {
  static base::thread_pool p(0);
  return p;
}

/// Scalars (Montgomery form) below r: the edge cases first, then uniform ones.
template <class F>
std::vector<F> scalars_with_edges(std::size_t n, unsigned window_bits, std::mt19937_64& rng) {
  typename F::repr r1 = F::modulus(), r2 = F::modulus();
  r1.l[0] -= 1;
  r2.l[0] -= 2;
  std::vector<F> edges = {F::zero(), F::one(), F::from_u64(2), F::from_standard(r1), F::from_standard(r2)};
  const uint64_t half = uint64_t(1) << (window_bits - 1), full = uint64_t(1) << window_bits;
  for (uint64_t v : {half - 1, half, half + 1, full - 1, full, full + half, full * full - 1})
    edges.push_back(F::from_u64(v));
  std::vector<F> out(n);
  for (std::size_t i = 0; i < n; ++i) {
    if (i < edges.size()) {
      out[i] = edges[i];
      continue;
    }
    typename F::repr x;
    for (auto& limb : x.l) limb = rng();
    out[i] = F::from_standard(x);  // reduced
  }
  return out;
}

template <class C, class G>
void check_engine(const char* group) {
  using A = zk::ec::affine<G>;
  using F = typename C::fr;
  CAPTURE(C::name);
  CAPTURE(group);
  std::mt19937_64 rng(31);
  const zk::dev::fixed_base<G> table(C::template generator<G>(), F::params::bits);
  zk::dev::cpu_fixed_base_engine cpu(cpu_pool());
  for (std::size_t chunk : {std::size_t(0), std::size_t(1), std::size_t(97)}) {
    CAPTURE(chunk);
    auto gpu = gpu::cuda::make_fixed_base_engine({test_device(), chunk});
    CHECK(gpu->describe().find("CUDA device") == 0);
    const std::vector<std::size_t> sizes =
        chunk == 1 ? std::vector<std::size_t>{0, 1, 5} : std::vector<std::size_t>{0, 1, 12, 1000, 4099};
    for (std::size_t n : sizes) {
      CAPTURE(n);
      const auto k = scalars_with_edges<F>(n, table.window_bits(), rng);
      std::vector<A> want(n + 1, A::infinity()), got(n + 1);
      got[n] = C::template generator<G>();  // past the end: must stay untouched
      cpu.mul(table, k.data(), n, want.data());
      gpu->mul(table, k.data(), n, got.data());
      std::size_t wrong = 0;
      for (std::size_t i = 0; i < n; ++i) wrong += got[i] != want[i];
      CHECK(wrong == 0);
      CHECK(got[n] == C::template generator<G>());
      if (n > 4) {
        CHECK(got[0].is_infinity());                      // 0 G
        CHECK(got[1] == C::template generator<G>());      // 1 G
        CHECK(got[3] == -C::template generator<G>());     // (r - 1) G
      }
    }
  }
}

std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  REQUIRE(in);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

/// A setup of `constraints` rows with the engine given (null: the CPU's).
void setup_into(const std::string& dir, zk::curve_id curve, uint32_t constraints,
                std::shared_ptr<zk::dev::fixed_base_engine> engine) {
  zk::dev::setup_options o;
  o.curve = curve;
  o.constraints = constraints;
  o.witnesses = 1;
  o.n_public = 2;
  o.seed = 2026;
  o.threads = 0;
  o.out_dir = dir;
  o.engine = std::move(engine);
  zk::dev::run_setup(o);
}

}  // namespace

TEST_CASE("the CUDA fixed-base engine matches batch_mul on bn254 G1 and G2") {
  check_engine<zk::bn254, zk::bn254::g1_group>("G1");
  check_engine<zk::bn254, zk::bn254::g2_group>("G2");
}

TEST_CASE("the CUDA fixed-base engine matches batch_mul on bls12_381 G1 and G2") {
  check_engine<zk::bls12_381, zk::bls12_381::g1_group>("G1");
  check_engine<zk::bls12_381, zk::bls12_381::g2_group>("G2");
}

TEST_CASE("a setup on the CUDA fixed-base engine writes the CPU's zkey byte for byte") {
  std::string tmpl = (fs::temp_directory_path() / "proofline-fixed-base-XXXXXX").string();
  REQUIRE(mkdtemp(tmpl.data()) != nullptr);
  const fs::path root = tmpl;
  for (zk::curve_id curve : {zk::curve_id::bn254, zk::curve_id::bls12_381}) {
    CAPTURE(zk::to_string(curve));
    const std::string cpu_dir = (root / (std::string(zk::to_string(curve)) + "-cpu")).string();
    const std::string gpu_dir = (root / (std::string(zk::to_string(curve)) + "-gpu")).string();
    // 5000 rows: a 2^13 domain, several 97-product chunks per section
    setup_into(cpu_dir, curve, 5000, nullptr);
    setup_into(gpu_dir, curve, 5000,
               gpu::cuda::make_fixed_base_engine({test_device(), 97}));
    const std::string a = read_bytes(cpu_dir + "/circuit.zkey"), b = read_bytes(gpu_dir + "/circuit.zkey");
    CHECK(a.size() == b.size());
    CHECK(a == b);
    CHECK(read_bytes(cpu_dir + "/verification_key.json") == read_bytes(gpu_dir + "/verification_key.json"));
  }
  std::error_code ec;
  fs::remove_all(root, ec);
}
