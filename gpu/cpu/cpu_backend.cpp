// The CPU prover backend: the odd-coset NTTs and the five MSMs of a partition
// on a thread pool (gpu/cpu/ntt.hpp, gpu/cpu/msm.hpp). It is the fallback
// when no GPU is visible and the reference the CUDA backend is checked
// against, so it computes exactly the function zk/groth16/prover.hpp gives:
//
//   upload    copy witness, a, b, c into backend-owned scratch (the CPU's
//             "device memory"); then hooks.inputs_consumed()
//   abc       only for a partition that came without a, b, c: synthesize_abc
//             on the pool's threads, as synthesis would have
//   ntt_a/b/c to_odd_coset on each of a, b, c
//   h         h = a*b - c, out of Montgomery form
//   msm_*     A·w, B1·w, B2·w over w[0 .. n_vars), C·w over w[n_public+1 ..),
//             H·h over the domain
#include <chrono>
#include <cstring>
#include <string>

#include "gpu/backend.hpp"
#include "gpu/cpu/msm.hpp"
#include "gpu/cpu/ntt.hpp"
#include "zk/groth16/prover.hpp"
#include "base/thread_pool.hpp"

namespace proofline::gpu {

namespace {

double now_us() {
  using namespace std::chrono;
  return duration<double, std::micro>(steady_clock::now().time_since_epoch()).count();
}

class cpu_backend final : public backend {
 public:
  explicit cpu_backend(unsigned threads) : pool_(threads) {}

  const char* kind() const override { return "cpu"; }

  std::string describe() const override {
    return "CPU backend, " + std::to_string(pool_.size()) + " threads";
  }

 private:
  template <class C>
  result_ptr prove_typed(const zk::groth16::proving_key<C>& key, const partition<C>& part,
                         const prove_hooks& hooks) {
    using fr = typename C::fr;
    using scalar = typename C::scalar;
    const auto& info = key.info;
    check_sizes(key, part);
    const std::size_t n = info.domain_size;

    auto timed = [&](const char* name, auto&& f) {
      double t0 = now_us();
      f();
      if (hooks.spans) hooks.spans->push_back({name, t0, now_us()});
    };

    memory::buffer<scalar> w(info.n_vars);
    memory::buffer<fr> a(n), b(n), c(n);
    timed("upload", [&] {
      std::memcpy(w.data(), part.witness.data(), w.bytes());
      if (!part.has_abc()) return;
      std::memcpy(a.data(), part.a.data(), a.bytes());
      std::memcpy(b.data(), part.b.data(), b.bytes());
      std::memcpy(c.data(), part.c.data(), c.bytes());
    });
    if (!part.has_abc())  // left to the backend (a retry of a GPU's partition, say)
      timed("abc", [&] {
        zk::groth16::synthesize_abc<C>(key, w.data(), a.data(), b.data(), c.data(),
                                       static_cast<unsigned>(pool_.size()));
      });
    if (hooks.inputs_consumed) hooks.inputs_consumed();

    timed("ntt_a", [&] { cpu::to_odd_coset(a.data(), info.log_domain, pool_); });
    timed("ntt_b", [&] { cpu::to_odd_coset(b.data(), info.log_domain, pool_); });
    timed("ntt_c", [&] { cpu::to_odd_coset(c.data(), info.log_domain, pool_); });

    memory::buffer<scalar> h(n);
    timed("h", [&] {
      pool_.for_range(n, 1 << 12, [&](std::size_t lo, std::size_t hi) {
        for (std::size_t i = lo; i < hi; ++i) h[i] = (a[i] * b[i] - c[i]).to_standard();
      });
    });
    a = memory::buffer<fr>();  // the coset values are no longer needed
    b = memory::buffer<fr>();
    c = memory::buffer<fr>();

    auto res = std::make_shared<result<C>>();
    auto& m = res->msm;
    using g1 = typename C::g1_group;
    using g2 = typename C::g2_group;
    timed("msm_a", [&] { m.a = cpu::msm<g1>(key.points_a.data(), w.data(), info.n_vars, pool_); });
    timed("msm_b1", [&] { m.b1 = cpu::msm<g1>(key.points_b1.data(), w.data(), info.n_vars, pool_); });
    timed("msm_b2", [&] { m.b2 = cpu::msm<g2>(key.points_b2.data(), w.data(), info.n_vars, pool_); });
    timed("msm_c", [&] {
      m.c = cpu::msm<g1>(key.points_c.data(), w.data() + info.n_public + 1, info.n_private(), pool_);
    });
    timed("msm_h", [&] { m.h = cpu::msm<g1>(key.points_h.data(), h.data(), n, pool_); });
    return res;
  }

  /// The partition and the key must agree on every length the prover reads.
  template <class C>
  static void check_sizes(const zk::groth16::proving_key<C>& key, const partition<C>& part) {
    try {
      check_partition(key, part, 32);
    } catch (const backend_error& e) {
      throw backend_error(std::string("cpu backend: ") + e.what() + " (key " + key.path + ")");
    }
  }

 public:
  // Below the member templates it reaches from a generic lambda: clang 14
  // (the sanitizer builds' compiler) otherwise leaves them uninstantiated
  // and the link fails.
  result_ptr prove(const zk::groth16::key_ptr& key, const partition_ptr& part,
                   const prove_hooks& hooks) override {
    if (!key || !part) throw backend_error("cpu backend: prove() needs a key and a partition");
    const auto& info = key->info;
    if (part->curve != info.curve)
      throw backend_error("cpu backend: partition is on " + std::string(zk::to_string(part->curve)) +
                          ", key " + key->path + " is on " + zk::to_string(info.curve));
    try {
      return zk::visit_curve(info.curve, [&](auto curve) -> result_ptr {
        using C = decltype(curve);
        return prove_typed<C>(zk::groth16::typed<C>(*key),
                              static_cast<const partition<C>&>(*part), hooks);
      });
    } catch (const backend_error&) {
      throw;
    } catch (const std::exception& e) {
      throw backend_error("cpu backend (" + key->path + "): " + e.what());
    }
  }

 private:
  base::thread_pool pool_;
};

}  // namespace

std::unique_ptr<backend> make_cpu_backend(unsigned threads) {
  return std::make_unique<cpu_backend>(threads);
}

}  // namespace proofline::gpu
