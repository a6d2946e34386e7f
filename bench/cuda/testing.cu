// bench/cuda/testing.hpp: one-shot operations and timing loops on a device.
#include <random>
#include <type_traits>

#include "bench/cuda/ntt_families.hpp"
#include "bench/cuda/testing.hpp"
#include "gpu/cuda/device_exec.cuh"
#include "gpu/cuda/ops.cuh"

namespace proofline::gpu::cuda::testing {

namespace {

/// Points that look random: out[i] = sum_k tables[64 k + digit_k(i)] over
/// the five 6-bit digits of i (tables: 320 points on the device).
template <class G>
struct table_points_fn {
  const zk::ec::affine<G>* tables;
  zk::ec::affine<G>* out;
  PL_HD void operator()(std::size_t i) const {
    auto p = zk::ec::jacobian<G>::from_affine(tables[i & 63]);
    for (unsigned k = 1; k < 5; ++k) p = p.add_affine(tables[64 * k + ((i >> (6 * k)) & 63)]);
    out[i] = p.to_affine();
  }
};

/// prod = a b, sum = a + b, diff = a - b elementwise (tests the device field code).
template <class F>
struct field_ops_fn {
  const F* a;
  const F* b;
  F *prod, *sum, *diff;
  PL_HD void operator()(std::size_t i) const {
    prod[i] = a[i] * b[i];
    sum[i] = a[i] + b[i];
    diff[i] = a[i] - b[i];
  }
};

/// A uniform integer below `bound` (rejection sampling on its bit length).
template <unsigned N>
zk::ff::bigint<N> below(const zk::ff::bigint<N>& bound, std::mt19937_64& rng) {
  const unsigned bits = bound.bit_length();
  for (;;) {
    zk::ff::bigint<N> x;
    for (unsigned i = 0; i < N; ++i) {
      unsigned lo = 64 * i;
      x.l[i] = lo >= bits ? 0 : rng() & (bits - lo >= 64 ? ~uint64_t(0) : (uint64_t(1) << (bits - lo)) - 1);
    }
    if (x < bound) return x;
  }
}

/// out[0 .. n) on the device: table_points over 320 random multiples of the generator.
template <class C, class G>
void device_points(zk::ec::affine<G>* out, std::size_t n, uint64_t seed, cudaStream_t s) {
  using jac = zk::ec::jacobian<G>;
  std::mt19937_64 rng(seed);
  const jac gen = jac::from_affine(C::template generator<G>());
  std::vector<zk::ec::affine<G>> table(320);
  for (auto& p : table) p = gen.mul(below(C::fr::modulus(), rng)).to_affine();
  device_buffer<zk::ec::affine<G>> d_table(table.size());
  CUDA_OK(cudaMemcpyAsync(d_table.get(), table.data(), table.size() * sizeof(table[0]), cudaMemcpyHostToDevice, s));
  device_exec{s}.for_each(n, table_points_fn<G>{d_table.get(), out});
  CUDA_OK(cudaStreamSynchronize(s));  // d_table goes out of scope
}

template <class T>
device_buffer<T> to_device(const T* h, std::size_t n, cudaStream_t s) {
  device_buffer<T> d(n);
  if (n) CUDA_OK(cudaMemcpyAsync(d.get(), h, n * sizeof(T), cudaMemcpyHostToDevice, s));
  return d;
}

template <class T>
void to_host(T* h, const device_buffer<T>& d, cudaStream_t s) {
  if (d.size()) CUDA_OK(cudaMemcpyAsync(h, d.get(), d.bytes(), cudaMemcpyDeviceToHost, s));
  CUDA_OK(cudaStreamSynchronize(s));
}

cuda::ntt::kernel pick_kernel(const std::string& spec) {
  return spec.empty() ? cuda::ntt::default_kernel() : cuda::ntt::parse_kernel(spec);
}

/// The transform of kernel kc on stream s: the prover's own entry point
/// (ops.cuh) for fused passes, the other kinds from ntt_families.hpp.
template <class F>
void run_transform(const cuda::ntt::tables<F>& t, F* x, F* out, bool inverse, cudaStream_t s,
                   const cuda::ntt::kernel& kc) {
  if (kc.kind == cuda::ntt::kernel::fused)
    transform(t, x, out, inverse, s, kc);
  else
    cuda::ntt::families::transform(device_exec{s}, t, x, out, inverse, kc);
}

/// The odd-coset step of kernel kc on stream s, as run_transform picks.
template <class F>
void run_odd_coset(const cuda::ntt::tables<F>& t, F* x, cudaStream_t s, const cuda::ntt::kernel& kc) {
  if (kc.kind == cuda::ntt::kernel::fused)
    cuda::odd_coset(t, x, s, kc);
  else
    cuda::ntt::families::to_odd_coset(device_exec{s}, t, x, kc);
}

}  // namespace

template <class C, class G>
zk::ec::jacobian<G> msm(const zk::ec::affine<G>* points, const typename C::scalar* scalars, std::size_t n,
                        int device, unsigned window, bool fixed_base, unsigned chunks, const std::string& level1,
                        const std::string& reduce) {
  using X = zk::ec::xyzz<G>;
  using S = typename C::scalar;
  device_guard guard(device);
  stream st;
  const cudaStream_t s = st.get();
  const cuda::msm::chunking ch = cuda::msm::split(n, cuda::msm::chunk_count(n, chunks));
  cuda::msm::shape sh = cuda::msm::plan(n, C::fr::params::bits, window, fixed_base, ch.count);
  if (!level1.empty()) sh.level1 = cuda::msm::parse_level1(level1);
  if (!reduce.empty()) sh.reduce = cuda::msm::parse_reduce(reduce);
  device_buffer<zk::ec::affine<G>> d_points(fixed_base ? n * sh.windows : n);
  if (n)
    CUDA_OK(cudaMemcpyAsync(d_points.get(), points, n * sizeof(points[0]), cudaMemcpyHostToDevice, s));
  if (fixed_base) msm_precompute<G>(sh, d_points.get(), s);
  if (ch.count > 1) {
    device_buffer<S> d_scalars(n);
    msm_uploads up;
    const std::size_t bytes = msm_chunked_bytes<G>(sh, ch);
    device_buffer<unsigned char> mem(bytes);
    device_buffer<X> windows(sh.sums);
    msm_chunked<G>(sh, ch, scalars, d_scalars.get(), d_points.get(), windows.get(), mem.get(), bytes, &up, s);
    std::vector<X> host(sh.sums);
    to_host(host.data(), windows, s);
    return cuda::msm::combine(host.data(), sh).to_jacobian();
  }
  auto d_scalars = to_device(scalars, n, s);
  const std::size_t temp_bytes = std::max(msm_prepare_bytes<S>(sh), msm_accumulate_bytes<G>(sh));
  device_buffer<unsigned char> scratch(cuda::msm::digits_bytes(sh) + temp_bytes + carver::alignment);
  carver cv(scratch.get(), scratch.bytes());
  const cuda::msm::digits d = cuda::msm::carve_digits(cv, sh);
  void* temp = cv.take_bytes(temp_bytes);
  device_buffer<X> windows(sh.sums);
  msm_prepare<S>(sh, d_scalars.get(), d, temp, temp_bytes, s);
  msm_accumulate<G>(sh, d, d_points.get(), windows.get(), temp, temp_bytes, s);
  std::vector<X> host(sh.sums);
  to_host(host.data(), windows, s);
  return cuda::msm::combine(host.data(), sh).to_jacobian();
}

template <class F>
void ntt(F* data, unsigned log_n, bool inverse, int device, const std::string& kernel) {
  const cuda::ntt::kernel kc = pick_kernel(kernel);
  device_guard guard(device);
  stream st;
  device_domain<F> dom;
  build_domain(dom, log_n, st.get());
  const std::size_t n = std::size_t(1) << log_n;
  auto x = to_device(data, n, st.get());
  device_buffer<F> out(n);
  run_transform(dom.view, x.get(), out.get(), inverse, st.get(), kc);
  to_host(data, out, st.get());
}

template <class F>
void odd_coset(F* data, unsigned log_n, int device, const std::string& kernel) {
  const cuda::ntt::kernel kc = pick_kernel(kernel);
  device_guard guard(device);
  stream st;
  device_domain<F> dom;
  build_domain(dom, log_n, st.get());
  auto x = to_device(data, std::size_t(1) << log_n, st.get());
  run_odd_coset(dom.view, x.get(), st.get(), kc);
  to_host(data, x, st.get());
}

template <class F>
void field_ops(const F* a, const F* b, F* prod, F* sum, F* diff, std::size_t n, int device) {
  device_guard guard(device);
  stream st;
  auto da = to_device(a, n, st.get()), db = to_device(b, n, st.get());
  device_buffer<F> p(n), su(n), di(n);
  device_exec{st.get()}.for_each(n, field_ops_fn<F>{da.get(), db.get(), p.get(), su.get(), di.get()});
  to_host(prod, p, st.get());
  to_host(sum, su, st.get());
  to_host(diff, di, st.get());
}

template <class C, class G>
std::vector<zk::ec::affine<G>> random_points(std::size_t n, uint64_t seed, int device) {
  device_guard guard(device);
  stream st;
  device_buffer<zk::ec::affine<G>> d(n);
  device_points<C, G>(d.get(), n, seed, st.get());
  std::vector<zk::ec::affine<G>> out(n);
  to_host(out.data(), d, st.get());
  return out;
}

device_info describe_device(int device) {
  device_guard guard(device);
  cudaDeviceProp p{};
  CUDA_OK(cudaGetDeviceProperties(&p, device));
  device_info d;
  d.name = p.name;
  d.multiprocessors = p.multiProcessorCount;
  d.memory_gib = double(p.totalGlobalMem) / double(1ull << 30);
  d.compute_major = p.major;
  d.compute_minor = p.minor;
  CUDA_OK(cudaDriverGetVersion(&d.driver_version));
  CUDA_OK(cudaRuntimeGetVersion(&d.runtime_version));
  return d;
}

namespace {

template <class C, class G>
std::vector<double> time_msm_typed(unsigned log_n, unsigned warmup, unsigned runs, int device, uint64_t seed,
                                   unsigned window, bool fixed_base, unsigned chunks) {
  using A = zk::ec::affine<G>;
  using X = zk::ec::xyzz<G>;
  using S = typename C::scalar;
  device_guard guard(device);
  stream st;
  const cudaStream_t s = st.get();
  const std::size_t n = std::size_t(1) << log_n;
  const cuda::msm::chunking ch = cuda::msm::split(n, cuda::msm::chunk_count(n, chunks));
  const cuda::msm::shape sh = cuda::msm::plan(n, C::fr::params::bits, window, fixed_base, ch.count);
  device_buffer<A> points(fixed_base ? n * sh.windows : n);
  device_points<C, G>(points.get(), n, seed, s);
  if (fixed_base) msm_precompute<G>(sh, points.get(), s);
  pinned_buffer<S> scalars(n);
  std::mt19937_64 rng(seed ^ 0x5ca1a75);
  for (std::size_t i = 0; i < n; ++i) scalars[i] = below(C::fr::modulus(), rng);
  device_buffer<S> d_scalars(n);
  const bool chunked = ch.count > 1;
  const std::size_t temp_bytes =
      chunked ? msm_chunked_bytes<G>(sh, ch) : std::max(msm_prepare_bytes<S>(sh), msm_accumulate_bytes<G>(sh));
  const std::size_t digit_bytes = chunked ? 0 : cuda::msm::digits_bytes(sh);
  device_buffer<unsigned char> scratch(digit_bytes + temp_bytes + carver::alignment);
  carver cv(scratch.get(), scratch.bytes());
  const cuda::msm::digits d = chunked ? cuda::msm::digits{} : cuda::msm::carve_digits(cv, sh);
  void* temp = cv.take_bytes(temp_bytes);
  device_buffer<X> windows(sh.sums);
  pinned_buffer<X> host(sh.sums);
  msm_uploads up;  // chunked: the copy stream and its events
  event start, stop;
  std::vector<double> ms;
  for (unsigned r = 0; r < warmup + runs; ++r) {
    start.record(s);
    if (chunked) {
      msm_chunked<G>(sh, ch, scalars.get(), d_scalars.get(), points.get(), windows.get(), temp, temp_bytes, &up, s);
    } else {
      CUDA_OK(cudaMemcpyAsync(d_scalars.get(), scalars.get(), n * sizeof(S), cudaMemcpyHostToDevice, s));
      msm_prepare<S>(sh, d_scalars.get(), d, temp, temp_bytes, s);
      msm_accumulate<G>(sh, d, points.get(), windows.get(), temp, temp_bytes, s);
    }
    CUDA_OK(cudaMemcpyAsync(host.get(), windows.get(), windows.bytes(), cudaMemcpyDeviceToHost, s));
    stop.record(s);
    stop.synchronize();
    if (r >= warmup) ms.push_back(stop.since(start));
  }
  return ms;
}

template <class F>
std::vector<double> time_ntt_typed(unsigned log_n, bool coset, unsigned warmup, unsigned runs, int device,
                                   uint64_t seed, const std::string& kernel) {
  const cuda::ntt::kernel kc = pick_kernel(kernel);
  device_guard guard(device);
  stream st;
  const cudaStream_t s = st.get();
  const std::size_t n = std::size_t(1) << log_n;
  device_domain<F> dom;
  build_domain(dom, log_n, s);
  std::vector<F> h(n);
  std::mt19937_64 rng(seed);
  for (auto& v : h) v = F::from_montgomery_limbs(below(F::modulus(), rng));
  auto x = to_device(h.data(), n, s);
  device_buffer<F> y(n);
  event start, stop;
  std::vector<double> ms;
  for (unsigned r = 0; r < warmup + runs; ++r) {
    start.record(s);
    if (coset)
      run_odd_coset(dom.view, x.get(), s, kc);
    else
      run_transform(dom.view, x.get(), y.get(), false, s, kc);
    stop.record(s);
    stop.synchronize();
    if (r >= warmup) ms.push_back(stop.since(start));
    if (!coset) x.swap(y);
  }
  return ms;
}

}  // namespace

std::vector<double> time_msm(zk::curve_id curve, int group, unsigned log_n, unsigned warmup, unsigned runs,
                             int device, uint64_t seed, unsigned window, bool fixed_base, unsigned chunks) {
  return zk::visit_curve(curve, [&](auto c) {
    using C = decltype(c);
    if (group == 2)
      return time_msm_typed<C, typename C::g2_group>(log_n, warmup, runs, device, seed, window, fixed_base, chunks);
    return time_msm_typed<C, typename C::g1_group>(log_n, warmup, runs, device, seed, window, fixed_base, chunks);
  });
}

std::vector<double> time_ntt(zk::curve_id curve, unsigned log_n, bool coset, unsigned warmup, unsigned runs,
                             int device, uint64_t seed, const std::string& kernel) {
  return zk::visit_curve(curve, [&](auto c) {
    using C = decltype(c);
    return time_ntt_typed<typename C::fr>(log_n, coset, warmup, runs, device, seed, kernel);
  });
}

std::string ntt_kernel_name(const std::string& spec) { return cuda::ntt::describe(pick_kernel(spec)); }

#define PROOFLINE_TESTING_CURVE(C)                                                                        \
  template zk::ec::jacobian<C::g1_group> msm<C, C::g1_group>(const zk::ec::affine<C::g1_group>*,          \
                                                             const C::scalar*, std::size_t, int, unsigned, \
                                                             bool, unsigned, const std::string&,           \
                                                             const std::string&);                          \
  template zk::ec::jacobian<C::g2_group> msm<C, C::g2_group>(const zk::ec::affine<C::g2_group>*,          \
                                                             const C::scalar*, std::size_t, int, unsigned, \
                                                             bool, unsigned, const std::string&,           \
                                                             const std::string&);                          \
  template void ntt<C::fr>(C::fr*, unsigned, bool, int, const std::string&);                              \
  template void odd_coset<C::fr>(C::fr*, unsigned, int, const std::string&);                              \
  template void field_ops<C::fr>(const C::fr*, const C::fr*, C::fr*, C::fr*, C::fr*, std::size_t, int);  \
  template void field_ops<C::fq>(const C::fq*, const C::fq*, C::fq*, C::fq*, C::fq*, std::size_t, int);  \
  template std::vector<zk::ec::affine<C::g1_group>> random_points<C, C::g1_group>(std::size_t, uint64_t, int); \
  template std::vector<zk::ec::affine<C::g2_group>> random_points<C, C::g2_group>(std::size_t, uint64_t, int);

PROOFLINE_TESTING_CURVE(zk::bn254)
PROOFLINE_TESTING_CURVE(zk::bls12_381)

}  // namespace proofline::gpu::cuda::testing
