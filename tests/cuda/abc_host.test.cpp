// a, b, c from the key's matrices on the device's layout (gpu/cuda/abc),
// run on the host through host_exec, against the CPU's synthesize_abc, bit
// for bit: random keys with the shapes that break a sparse product (empty
// rows, rows longer than a segment, repeated terms, coefficients out of row
// order, the first and last signals) and the fixture circuits' keys and
// witnesses.
#include <doctest/doctest.h>

#include <random>
#include <stdexcept>
#include <vector>

#include "abc_cases.hpp"
#include "gpu/cuda/abc/matrix.hpp"
#include "gpu/cuda/abc/pipeline.hpp"
#include "gpu/cuda/exec.hpp"

using namespace proofline;
namespace abc = gpu::cuda::abc;

namespace {

/// The device layout's a, b, c, through host_exec.
template <class C>
test::abc_values<C> layout_abc(const zk::groth16::proving_key<C>& key, const std::vector<typename C::scalar>& w) {
  using F = typename C::fr;
  const auto ma = abc::build_matrix<C>(key.coefs_a, key.info, "A");
  const auto mb = abc::build_matrix<C>(key.coefs_b, key.info, "B");
  CHECK(ma.bytes() <= abc::matrix_bytes<F>(key.coefs_a.size(), key.info.domain_size));
  CHECK(mb.bytes() <= abc::matrix_bytes<F>(key.coefs_b.size(), key.info.domain_size));
  for (const auto* m : {&ma, &mb})
    for (std::size_t s = 0; s < m->segments(); ++s)
      CHECK(m->seg_begin[s + 1] - m->seg_begin[s] <= abc::segment_terms);
  const std::size_t n = key.info.domain_size;
  test::abc_values<C> v{std::vector<F>(n), std::vector<F>(n), std::vector<F>(n)};
  std::vector<char> scratch(abc::scratch_bytes(ma.view(), mb.view()) + 1);
  abc::compute(gpu::cuda::host_exec{}, ma.view(), mb.view(), w.data(), scratch.data(), v.a.data(), v.b.data(),
               v.c.data());
  return v;
}

template <class C>
void check_same(const zk::groth16::proving_key<C>& key, const std::vector<typename C::scalar>& w) {
  test::check_equal<C>(test::cpu_abc<C>(key, w), layout_abc<C>(key, w));
}

}  // namespace

TEST_CASE_TEMPLATE("a, b and c from the device's matrix layout equal the CPU's bit for bit, whatever the rows' shapes",
                   C, zk::bn254, zk::bls12_381) {
  std::mt19937_64 rng(33);
  for (unsigned log_n : {0u, 3u, 8u}) {
    CAPTURE(log_n);
    const auto key = test::awkward_key<C>(log_n, 97, rng);
    for (auto mix : {test::scalar_mix::uniform, test::scalar_mix::skewed})
      check_same<C>(key, test::make_scalars<C>(key.info.n_vars, mix, rng));
  }
}

TEST_CASE("a, b and c from the device's matrix layout equal the CPU's on the fixture circuits") {
  test::for_each_fixture([](const auto& key, const auto& w) { check_same(key, w); });
}

TEST_CASE("a coefficient outside the domain or the witness is refused when the layout is built, naming the matrix") {
  std::mt19937_64 rng(34);
  auto key = test::awkward_key<zk::bn254>(4, 20, rng);
  key.coefs_b.push_back({3, 20, zk::bn254::fr::one()});
  CHECK_THROWS_WITH_AS(abc::build_matrix<zk::bn254>(key.coefs_b, key.info, "B"),
                       doctest::Contains("coefficient of B at constraint 3, signal 20"), std::out_of_range);
  key.coefs_a.push_back({16, 0, zk::bn254::fr::one()});
  CHECK_THROWS_AS(abc::build_matrix<zk::bn254>(key.coefs_a, key.info, "A"), std::out_of_range);
}
