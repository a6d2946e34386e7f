// bench/kernels.hpp: timing loops around the CPU and CUDA backends.
#include "bench/kernels.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <memory>
#include <random>
#include <stdexcept>
#include <type_traits>

#include "gpu/backend.hpp"
#include "gpu/cpu/msm.hpp"
#include "gpu/cpu/ntt.hpp"
#include "base/thread_pool.hpp"
#include "gpu/cuda/factory.hpp"
#include "zk/groth16/proving_key.hpp"
#if PROOFLINE_HAVE_CUDA
#include "gpu/cuda/cuda_backend.hpp"
#include "gpu/cuda/msm_pipeline.hpp"
#include "bench/cuda/testing.hpp"
#endif

namespace proofline::bench {

namespace {

double now_ms() {
  using namespace std::chrono;
  return duration<double, std::milli>(steady_clock::now().time_since_epoch()).count();
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  std::size_t m = v.size() / 2;
  return v.size() % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
}

/// Uniform below the field's modulus (rejection on its bit length).
template <class F>
typename F::repr below_modulus(std::mt19937_64& rng) {
  const auto bound = F::modulus();
  const unsigned bits = bound.bit_length();
  for (;;) {
    typename F::repr x;
    for (unsigned i = 0; i < F::N; ++i) {
      unsigned lo = 64 * i;
      x.l[i] = lo >= bits ? 0 : rng() & (bits - lo >= 64 ? ~uint64_t(0) : (uint64_t(1) << (bits - lo)) - 1);
    }
    if (x < bound) return x;
  }
}

template <class C>
std::vector<typename C::scalar> random_scalars(std::size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<typename C::scalar> v(n);
  for (auto& s : v) s = below_modulus<typename C::fr>(rng);
  return v;
}

template <class F>
std::vector<F> random_elements(std::size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<F> v(n);
  for (auto& x : v) x = F::from_montgomery_limbs(below_modulus<F>(rng));
  return v;
}

/// n random-looking points on the host: point i is the sum of five random
/// multiples of the generator picked by i's 6-bit digits (4 mixed additions),
/// converted to affine in batches with one inversion each (Montgomery's trick).
template <class C, class G>
std::vector<zk::ec::affine<G>> host_points(std::size_t n, uint64_t seed, base::thread_pool& pool) {
  using jac = zk::ec::jacobian<G>;
  using field = typename G::field;
  std::mt19937_64 rng(seed);
  const jac gen = jac::from_affine(C::template generator<G>());
  std::vector<zk::ec::affine<G>> table(320);
  for (auto& p : table) p = gen.mul(below_modulus<typename C::fr>(rng)).to_affine();
  std::vector<zk::ec::affine<G>> out(n);
  constexpr std::size_t batch = 1024;
  pool.for_each((n + batch - 1) / batch, [&](std::size_t b) {
    const std::size_t lo = b * batch, hi = std::min(n, lo + batch);
    std::vector<jac> p(hi - lo);
    std::vector<field> prefix(hi - lo);
    field acc = field::one();
    for (std::size_t i = lo; i < hi; ++i) {
      jac q = jac::from_affine(table[i & 63]);
      for (unsigned k = 1; k < 5; ++k) q = q.add_affine(table[64 * k + ((i >> (6 * k)) & 63)]);
      p[i - lo] = q;
      acc = acc * q.Z;
      prefix[i - lo] = acc;
    }
    field inv = acc.inverse();
    for (std::size_t j = hi - lo; j-- > 0;) {
      field zi = j ? inv * prefix[j - 1] : inv;
      inv = inv * p[j].Z;
      field zi2 = zi.sqr();
      out[lo + j] = {p[j].X * zi2, p[j].Y * zi2 * zi};
    }
  });
  return out;
}

/// Points for a benchmark: made on the GPU when the CUDA backend is measured.
template <class C, class G>
std::vector<zk::ec::affine<G>> bench_points(const request& req, std::size_t n, uint64_t seed,
                                            base::thread_pool& pool) {
#if PROOFLINE_HAVE_CUDA
  if (req.backend == "cuda") return gpu::cuda::testing::random_points<C, G>(n, seed, req.device);
#endif
  return host_points<C, G>(n, seed, pool);
}

void require_cuda(const request& req) {
  std::string why;
  if (gpu::cuda_device_count(&why) <= req.device)
    throw std::invalid_argument("backend cuda: no CUDA device " + std::to_string(req.device) + " (" + why + ")");
}

#if PROOFLINE_HAVE_CUDA
std::string cuda_device_name(int device) {
  auto d = gpu::cuda::testing::describe_device(device);
  return d.name + ", " + std::to_string(d.multiprocessors) + " SMs, driver " + std::to_string(d.driver_version) +
         ", runtime " + std::to_string(d.runtime_version);
}
#endif

// ---- MSM and NTT ---------------------------------------------------------------

template <class C>
void kernel_bench(const request& req, result& res) {
  const std::size_t n = std::size_t(1) << req.log_n;
  const bool g2 = req.what == "msm_g2";
  const bool msm = req.what == "msm" || g2;
  res.unit = msm ? "points/s" : "elements/s";
  if (req.backend == "cuda") {
#if PROOFLINE_HAVE_CUDA
    require_cuda(req);
    res.timer = "cuda events";
    res.device = cuda_device_name(req.device);
    if (msm) {
      // PROOFLINE_BENCH_MSM_CHUNKS=k forces k chunks of scalars (1: one upload before any compute);
      // unset, the pipeline's choice (msm::chunk_count)
      const char* forced = std::getenv("PROOFLINE_BENCH_MSM_CHUNKS");
      const unsigned chunks = gpu::cuda::msm::chunk_count(n, forced ? unsigned(std::atoi(forced)) : 0u);
      if (chunks > 1) res.timer += ", scalars uploaded in " + std::to_string(chunks) + " chunks under compute";
      res.window = gpu::cuda::msm::plan(n, C::fr::params::bits, req.window, req.fixed_base, chunks).c;
      res.ms = gpu::cuda::testing::time_msm(C::id, g2 ? 2 : 1, req.log_n, req.warmup, req.runs, req.device, req.seed,
                                            req.window, req.fixed_base, chunks);
    } else {
      res.ntt_kernel = gpu::cuda::testing::ntt_kernel_name(req.ntt_kernel);
      res.ms = gpu::cuda::testing::time_ntt(C::id, req.log_n, req.what == "ntt_coset", req.warmup, req.runs,
                                            req.device, req.seed, req.ntt_kernel);
    }
    return;
#else
    throw std::invalid_argument("backend cuda: proofline was built without CUDA");
#endif
  }
  base::thread_pool pool(req.threads);
  res.timer = "steady clock";
  res.device = "CPU, " + std::to_string(pool.size()) + " threads";
  auto timed = [&](auto&& f) {
    for (unsigned r = 0; r < req.warmup + req.runs; ++r) {
      double t0 = now_ms();
      f();
      double t1 = now_ms();
      if (r >= req.warmup) res.ms.push_back(t1 - t0);
    }
  };
  if (msm) {
    auto scalars = random_scalars<C>(n, req.seed ^ 0x5ca1a75);
    if (g2) {
      using G = typename C::g2_group;
      auto points = host_points<C, G>(n, req.seed, pool);
      timed([&] { gpu::cpu::msm<G, C::fr::N>(points.data(), scalars.data(), n, pool); });
    } else {
      using G = typename C::g1_group;
      auto points = host_points<C, G>(n, req.seed, pool);
      timed([&] { gpu::cpu::msm<G, C::fr::N>(points.data(), scalars.data(), n, pool); });
    }
    return;
  }
  auto x = random_elements<typename C::fr>(n, req.seed);
  if (req.what == "ntt_coset")
    timed([&] { gpu::cpu::to_odd_coset(x.data(), req.log_n, pool); });
  else
    timed([&] { gpu::cpu::ntt(x.data(), req.log_n, gpu::cpu::direction::forward, pool); });
}

// ---- whole partitions ----------------------------------------------------------

template <class C>
void prove_bench(const request& req, result& res) {
  const std::size_t n = std::size_t(1) << req.log_n;
  base::thread_pool pool(req.threads);
  std::unique_ptr<gpu::backend> be;
  if (req.backend == "cuda") {
    require_cuda(req);
#if PROOFLINE_HAVE_CUDA
    gpu::cuda::backend_options opt;
    opt.tables = req.fixed_base ? gpu::cuda::table_policy::first : gpu::cuda::table_policy::never;
    be = gpu::cuda::make_backend(req.device, opt);
#else
    be = gpu::make_cuda_backend(req.device);
#endif
    res.timer = "cuda events (spans)";
  } else {
    be = gpu::make_cpu_backend(req.threads);
    res.timer = "steady clock";
  }
  res.device = be->describe();
  res.unit = "proofs/s";

  // A synthetic key of a 2^log_n domain: n variables (one public), random points.
  auto key = std::make_shared<zk::groth16::proving_key<C>>();
  auto& info = key->info;
  info.curve = C::id;
  info.n8q = C::fq_bytes;
  info.n8r = C::fr_bytes;
  info.n_vars = uint32_t(n);
  info.n_public = 1;
  info.domain_size = uint32_t(n);
  info.log_domain = req.log_n;
  key->path = std::string("synthetic 2^") + std::to_string(req.log_n) + " key";
  using g1 = typename C::g1_group;
  using g2 = typename C::g2_group;
  // The key holds its arrays in key_vector; the bench points come as std::vector.
  auto fill = [](auto& dst, const auto& src) { dst.assign(src.begin(), src.end()); };
  fill(key->points_a, bench_points<C, g1>(req, n, req.seed + 1, pool));
  fill(key->points_b1, bench_points<C, g1>(req, n, req.seed + 2, pool));
  fill(key->points_c, bench_points<C, g1>(req, n - 2, req.seed + 3, pool));
  fill(key->points_h, bench_points<C, g1>(req, n, req.seed + 4, pool));
  fill(key->points_b2, bench_points<C, g2>(req, n, req.seed + 5, pool));
  zk::groth16::key_ptr kp = key;

  auto part = std::make_shared<gpu::partition<C>>();
  part->witness = memory::buffer<typename C::scalar>(n);
  auto w = random_scalars<C>(n, req.seed + 6);
  w[0] = C::scalar::from_u64(1);
  std::copy(w.begin(), w.end(), part->witness.begin());
  memory::buffer<typename C::fr>* abc[] = {&part->a, &part->b, &part->c};
  for (unsigned k = 0; k < 3; ++k) {
    *abc[k] = memory::buffer<typename C::fr>(n);
    auto e = random_elements<typename C::fr>(n, req.seed + 7 + k);
    std::copy(e.begin(), e.end(), abc[k]->begin());
  }
  gpu::partition_ptr pp = part;

  std::map<std::string, std::vector<double>> per_span;
  std::vector<double> wall;
  for (unsigned r = 0; r < req.warmup + req.runs; ++r) {
    std::vector<gpu::span> spans;
    gpu::prove_hooks hooks;
    hooks.spans = &spans;
    double t0 = now_ms();
    be->prove(kp, pp, hooks);
    double t1 = now_ms();
    if (r < req.warmup) continue;
    double first = 0, last = 0;
    for (const auto& s : spans) {
      per_span[s.name].push_back((s.end_us - s.start_us) / 1000.0);
      if (s.name == "ntt_a") first = s.start_us;
      last = std::max(last, s.end_us);
    }
    const double device_ms = (last - first) / 1000.0;
    res.ms.push_back(req.backend == "cuda" ? device_ms : t1 - t0);
    per_span["device"].push_back(device_ms);
    wall.push_back(t1 - t0);
  }
  for (auto& [name, v] : per_span) res.breakdown_ms[name] = median(v);
  res.breakdown_ms["wall"] = median(wall);
}

}  // namespace

zk::curve_id parse_curve(const std::string& name) {
  if (name == "bn254" || name == "bn128") return zk::curve_id::bn254;
  if (name == "bls12_381" || name == "bls12381" || name == "bls12-381") return zk::curve_id::bls12_381;
  throw std::invalid_argument("unknown curve '" + name + "' (bn254 or bls12_381)");
}

result run(const request& req) {
  static const char* whats[] = {"msm", "msm_g2", "ntt", "ntt_coset", "prove"};
  if (std::find_if(std::begin(whats), std::end(whats), [&](const char* w) { return req.what == w; }) ==
      std::end(whats))
    throw std::invalid_argument("unknown benchmark '" + req.what + "' (msm, msm_g2, ntt, ntt_coset, prove)");
  if (req.backend != "cuda" && req.backend != "cpu")
    throw std::invalid_argument("unknown backend '" + req.backend + "' (cuda or cpu)");
  if (req.runs == 0) throw std::invalid_argument("runs must be at least 1");
  if (req.log_n > 28) throw std::invalid_argument("log_n " + std::to_string(req.log_n) + " is above 28");
  result res;
  res.req = req;
  zk::visit_curve(req.curve, [&](auto c) {
    using C = decltype(c);
    if (req.what == "prove")
      prove_bench<C>(req, res);
    else
      kernel_bench<C>(req, res);
  });
  res.median_ms = median(res.ms);
  res.min_ms = *std::min_element(res.ms.begin(), res.ms.end());
  res.max_ms = *std::max_element(res.ms.begin(), res.ms.end());
  const double items = req.what == "prove" ? 1.0 : double(std::size_t(1) << req.log_n);
  res.throughput = res.median_ms > 0 ? items / (res.median_ms / 1000.0) : 0;
  return res;
}

std::string result::json() const {
  nlohmann::json j;
  j["what"] = req.what;
  j["curve"] = zk::to_string(req.curve);
  j["log_n"] = req.log_n;
  j["backend"] = req.backend;
  j["runs"] = req.runs;
  j["warmup"] = req.warmup;
  j["device"] = device;
  j["timer"] = timer;
  j["ms"] = ms;
  j["median_ms"] = median_ms;
  j["min_ms"] = min_ms;
  j["max_ms"] = max_ms;
  j["throughput"] = throughput;
  j["unit"] = unit;
  if (window) j["window"] = window;
  if (req.backend == "cuda" && req.what != "ntt" && req.what != "ntt_coset") j["fixed_base"] = req.fixed_base;
  if (!ntt_kernel.empty()) {
    j["ntt_kernel"] = ntt_kernel;
    j["tiled"] = ntt_kernel != "registers";
  }
  if (!breakdown_ms.empty()) j["breakdown_ms"] = breakdown_ms;
  return j.dump();
}

std::string result::header() {
  return fmt::format("{:<10} {:<10} {:>5} {:<7} {:>11} {:>11} {:>11} {:>14}", "what", "curve", "log_n",
                     "backend", "median_ms", "min_ms", "max_ms", "throughput");
}

std::string result::row() const {
  std::string row = fmt::format("{:<10} {:<10} {:>5} {:<7} {:>11.3f} {:>11.3f} {:>11.3f} {:>10.3g} {}",
                                req.what, zk::to_string(req.curve), req.log_n, req.backend, median_ms,
                                min_ms, max_ms, throughput, unit);
  if (!ntt_kernel.empty()) row += "  " + ntt_kernel;
  return row;
}

}  // namespace proofline::bench
