// a, b, c on the GPU (gpu/cuda/abc/device.cuh) against the CPU's
// synthesize_abc, bit for bit: the fixture circuits, keys whose rows have
// every awkward shape, and a 2^16 key (many blocks a pass); then whole
// partitions that come without a, b, c through the CUDA backend against the
// CPU backend's results for the same witness with them.
#include <doctest/doctest.h>

#include <cuda_runtime_api.h>

#include <algorithm>
#include <memory>
#include <random>
#include <vector>

#include "abc_cases.hpp"
#include "gpu/backend.hpp"
#include "gpu/cuda/abc/device.cuh"
#include "gpu/cuda/abc/pipeline.hpp"
#include "gpu/cuda/check.cuh"
#include "gpu/cuda/cuda_backend.hpp"

using namespace proofline;
namespace abc = gpu::cuda::abc;
namespace cu = gpu::cuda;

namespace {

template <class C>
test::abc_values<C> device_abc(const zk::groth16::proving_key<C>& key, const std::vector<typename C::scalar>& w) {
  using F = typename C::fr;
  using S = typename C::scalar;
  cu::stream st;
  const cudaStream_t s = st.get();
  const auto A = abc::upload(abc::build_matrix<C>(key.coefs_a, key.info, "A"), s);
  const auto B = abc::upload(abc::build_matrix<C>(key.coefs_b, key.info, "B"), s);
  const std::size_t n = key.info.domain_size;
  cu::device_buffer<S> dw(w.size());
  cu::device_buffer<F> da(n), db(n), dc(n);
  cu::device_buffer<char> scratch(abc::scratch_bytes(A.view(), B.view()) + 1);
  CUDA_OK(cudaMemcpyAsync(dw.get(), w.data(), w.size() * sizeof(S), cudaMemcpyHostToDevice, s));
  abc::compute_on(A.view(), B.view(), dw.get(), scratch.get(), da.get(), db.get(), dc.get(), s);
  test::abc_values<C> v{std::vector<F>(n), std::vector<F>(n), std::vector<F>(n)};
  CUDA_OK(cudaMemcpyAsync(v.a.data(), da.get(), n * sizeof(F), cudaMemcpyDeviceToHost, s));
  CUDA_OK(cudaMemcpyAsync(v.b.data(), db.get(), n * sizeof(F), cudaMemcpyDeviceToHost, s));
  CUDA_OK(cudaMemcpyAsync(v.c.data(), dc.get(), n * sizeof(F), cudaMemcpyDeviceToHost, s));
  CUDA_OK(cudaStreamSynchronize(s));
  return v;
}

template <class C>
void check_same(const zk::groth16::proving_key<C>& key, const std::vector<typename C::scalar>& w) {
  test::check_equal<C>(test::cpu_abc<C>(key, w), device_abc<C>(key, w));
}

}  // namespace

TEST_CASE_TEMPLATE("a, b and c on the GPU equal the CPU's bit for bit, whatever the rows' shapes", C, zk::bn254,
                   zk::bls12_381) {
  std::mt19937_64 rng(35);
  for (unsigned log_n : {0u, 3u, 8u, 16u}) {
    CAPTURE(log_n);
    const auto key = test::awkward_key<C>(log_n, log_n < 16 ? 97 : 40000, rng);
    for (auto mix : {test::scalar_mix::uniform, test::scalar_mix::skewed})
      check_same<C>(key, test::make_scalars<C>(key.info.n_vars, mix, rng));
  }
}

TEST_CASE("a, b and c on the GPU equal the CPU's on the fixture circuits") {
  test::for_each_fixture([](const auto& key, const auto& w) { check_same(key, w); });
}

namespace {

template <class C>
std::shared_ptr<gpu::partition<C>> partition_of(const zk::groth16::proving_key<C>& key,
                                                const std::vector<typename C::scalar>& w, bool with_abc) {
  auto p = std::make_shared<gpu::partition<C>>();
  p->witness = memory::buffer<typename C::scalar>(w.size());
  std::copy(w.begin(), w.end(), p->witness.begin());
  if (with_abc) {
    const std::size_t n = key.info.domain_size;
    p->a = memory::buffer<typename C::fr>(n);
    p->b = memory::buffer<typename C::fr>(n);
    p->c = memory::buffer<typename C::fr>(n);
    zk::groth16::synthesize_abc<C>(key, w.data(), p->a.data(), p->b.data(), p->c.data());
  }
  return p;
}

template <class C>
void check_backend_abc(const char* size) {
  test::for_each_fixture_witness<C>(size, [](const zk::groth16::key_ptr& kp, const zk::groth16::proving_key<C>& key,
                                             const std::vector<typename C::scalar>& w) {
    auto cpu = gpu::make_cpu_backend(0);
    const auto want_ptr = cpu->prove(kp, partition_of<C>(key, w, true));
    const auto& want = static_cast<const gpu::result<C>&>(*want_ptr).msm;
    for (bool resident : {true, false}) {
      CAPTURE(resident);
      cu::backend_options opt;
      opt.abc = resident;  // false: the backend computes a, b, c on the host
      auto cuda = cu::make_backend(0, opt);
      CHECK(cuda->computes_abc(key) == resident);
      std::vector<gpu::span> spans;
      gpu::prove_hooks hooks;
      hooks.spans = &spans;
      const auto got_ptr = cuda->prove(kp, partition_of<C>(key, w, false), hooks);
      const auto& got = static_cast<const gpu::result<C>&>(*got_ptr).msm;
      CHECK(got.a.to_affine() == want.a.to_affine());
      CHECK(got.b1.to_affine() == want.b1.to_affine());
      CHECK(got.b2.to_affine() == want.b2.to_affine());
      CHECK(got.c.to_affine() == want.c.to_affine());
      CHECK(got.h.to_affine() == want.h.to_affine());
      CHECK(std::any_of(spans.begin(), spans.end(), [](const gpu::span& s) { return s.name == "abc"; }) ==
            resident);
      const auto st = cuda->key_stats(&key);
      CHECK((st.abc_bytes > 0) == resident);
      CHECK(st.device_bytes > st.abc_bytes);
      // a partition with a, b, c still proves the same on a key that holds its A and B
      const auto again_ptr = cuda->prove(kp, partition_of<C>(key, w, true));
      CHECK(static_cast<const gpu::result<C>&>(*again_ptr).msm.h.to_affine() == want.h.to_affine());
    }
  });
}

}  // namespace

TEST_CASE("partitions without a, b and c prove on the CUDA backend as the CPU backend proves them with") {
  check_backend_abc<zk::bn254>("small");
  check_backend_abc<zk::bn254>("medium");
  check_backend_abc<zk::bls12_381>("small");
}
