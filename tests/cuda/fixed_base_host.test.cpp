// The CUDA fixed-base engine's plain-C++ parts on the host (no GPU): the
// per-thread product step run through host_exec against the CPU's
// batch_mul on both curves and groups, and the chunk plan that bounds its
// device memory. The engine itself is compared with the CPU in
// fixed_base.test.cpp (cuda_gpu_test).
#include <doctest/doctest.h>

#include <random>
#include <vector>

#include "gpu/cuda/exec.hpp"
#include "gpu/cuda/fixed_base_plan.hpp"
#include "zk/curves.hpp"
#include "zk/dev/fixed_base.hpp"

using namespace proofline;
using gpu::cuda::fixed_base_chunks;

namespace {

template <class C, class G>
void check_step() {
  using A = zk::ec::affine<G>;
  using F = typename C::fr;
  CAPTURE(C::name);
  std::mt19937_64 rng(8);
  const zk::dev::fixed_base<G> table(C::template generator<G>(), F::params::bits);
  typename F::repr r1 = F::modulus();
  r1.l[0] -= 1;
  std::vector<F> k = {F::zero(), F::one(), F::from_standard(r1), F::from_u64(512), F::from_u64(513),
                      F::from_u64(1023)};
  for (int i = 0; i < 40; ++i) {
    typename F::repr x;
    for (auto& limb : x.l) limb = rng();
    k.push_back(F::from_standard(x));
  }
  std::vector<A> want(k.size()), got(k.size());
  base::thread_pool pool(1);
  zk::dev::batch_mul(table, k.data(), k.size(), want.data(), pool);
  gpu::cuda::host_exec{}.for_each(k.size(), gpu::cuda::fixed_base_fn<G, F>{table.view(), k.data(), got.data()});
  CHECK(got == want);
  CHECK(got[0].is_infinity());
  CHECK(got[2] == -C::template generator<G>());
}

}  // namespace

TEST_CASE("the fixed-base kernel's step on the host equals batch_mul on both curves and groups") {
  check_step<zk::bn254, zk::bn254::g1_group>();
  check_step<zk::bn254, zk::bn254::g2_group>();
  check_step<zk::bls12_381, zk::bls12_381::g1_group>();
  check_step<zk::bls12_381, zk::bls12_381::g2_group>();
}

TEST_CASE("fixed_base_chunks cuts n products into consecutive chunks on alternating slots") {
  CHECK(fixed_base_chunks(0, 8).empty());
  for (std::size_t n : {std::size_t(1), std::size_t(7), std::size_t(8), std::size_t(9), std::size_t(100)}) {
    for (std::size_t chunk : {std::size_t(1), std::size_t(8), std::size_t(1000)}) {
      CAPTURE(n);
      CAPTURE(chunk);
      const auto c = fixed_base_chunks(n, chunk);
      REQUIRE(c.size() == (n + chunk - 1) / chunk);
      std::size_t next = 0;
      for (std::size_t j = 0; j < c.size(); ++j) {
        CHECK(c[j].lo == next);
        CHECK(c[j].len >= 1);
        CHECK(c[j].len <= chunk);
        CHECK(c[j].slot == j % 2);
        if (j + 1 < c.size()) CHECK(c[j].len == chunk);
        next += c[j].len;
      }
      CHECK(next == n);
    }
  }
}
