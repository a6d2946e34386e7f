// Throughput of the device's Montgomery product variants (testing.hpp,
// field_bench): the same chains of products computed with the generic
// 64-bit-word code and each PROOFLINE_FF_DEVICE_MUL variant of
// zk/ff/mont32.hpp, checked against each other and against the host, timed
// with CUDA events. The fastest correct variant is the default
// (docs/BENCHMARKS.md).
#include <algorithm>
#include <random>

#include "gpu/cuda/resources.cuh"
#include "bench/cuda/testing.hpp"

namespace proofline::gpu::cuda::testing {

namespace {

using fq = zk::bn254::fq;

template <int V>
__device__ __forceinline__ fq product(const fq& a, const fq& b) {
  if constexpr (V == 0) {
    return a.mul_generic(b);
  } else if constexpr (V == 1) {
    fq r;
    zk::ff::mont32::mul<zk::ff::mont32::ptx_chain, fq::params>(r.l, a.l, b.l);
    return r;
  } else if constexpr (V == 2) {
    fq r;
    zk::ff::mont32::mul_wide<fq::params>(r.l, a.l, b.l);
    return r;
  } else if constexpr (V == 3) {
    fq r;
    zk::ff::mont32::mul_pairs<zk::ff::mont32::ptx_chain, fq::params>(r.l, a.l, b.l);
    return r;
  } else {
    // the same chains with the accumulators' (W + 2)-th word kept, as they
    // must be for an operand up to 2^256 - 1
    fq r;
    zk::ff::mont32::mul_pairs<zk::ff::mont32::ptx_chain, fq::params, zk::ff::mont32::any_operand>(r.l, a.l, b.l);
    return r;
  }
}

/// Four independent chains x_k <- x_k * y per thread (instruction-level parallelism).
template <int V>
__global__ void __launch_bounds__(256) chains(const fq* in, fq* out, unsigned iters, std::size_t n) {
  std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const fq y = in[2 * i + 1];
  fq x0 = in[2 * i], x1 = x0.mul_generic(y), x2 = x1.mul_generic(y), x3 = x2.mul_generic(y);
  for (unsigned k = 0; k < iters; ++k) {
    x0 = product<V>(x0, y);
    x1 = product<V>(x1, y);
    x2 = product<V>(x2, y);
    x3 = product<V>(x3, y);
  }
  out[4 * i] = x0;
  out[4 * i + 1] = x1;
  out[4 * i + 2] = x2;
  out[4 * i + 3] = x3;
}

}  // namespace

std::vector<field_bench_row> field_bench(int device) {
  device_guard guard(device);
  cudaDeviceProp prop{};
  CUDA_OK(cudaGetDeviceProperties(&prop, device));
  const std::size_t threads = std::size_t(prop.multiProcessorCount) * 8 * 256;
  const unsigned iters = 512;
  std::mt19937_64 rng(3);
  std::vector<fq> in(2 * threads);
  for (auto& v : in) {
    fq::repr x;
    for (auto& l : x.l) l = rng();
    v = fq::from_standard(x);
  }
  stream st;
  const cudaStream_t s = st.get();
  device_buffer<fq> d_in(in.size()), d_out(4 * threads);
  CUDA_OK(cudaMemcpyAsync(d_in.get(), in.data(), in.size() * sizeof(fq), cudaMemcpyHostToDevice, s));
  std::vector<fq> ref(4 * threads), got(4 * threads);
  std::vector<field_bench_row> rows;
  event start, stop;
  const unsigned blocks = unsigned(threads / 256);
  auto launch = [&](int v) {
    switch (v) {
      case 0: chains<0><<<blocks, 256, 0, s>>>(d_in.get(), d_out.get(), iters, threads); break;
      case 1: chains<1><<<blocks, 256, 0, s>>>(d_in.get(), d_out.get(), iters, threads); break;
      case 2: chains<2><<<blocks, 256, 0, s>>>(d_in.get(), d_out.get(), iters, threads); break;
      case 3: chains<3><<<blocks, 256, 0, s>>>(d_in.get(), d_out.get(), iters, threads); break;
      default: chains<4><<<blocks, 256, 0, s>>>(d_in.get(), d_out.get(), iters, threads); break;
    }
    CUDA_OK(cudaGetLastError());
  };
  const char* names[] = {"mul 0 generic 64-bit words", "mul 1 PTX carry chains", "mul 2 64-bit accumulators",
                         "mul 3 PTX paired chains", "mul 3 with a (W+2)-th word"};
  for (int v = 0; v < 5; ++v) {
    std::vector<double> ms;
    for (int r = 0; r < 6; ++r) {
      start.record(s);
      launch(v);
      stop.record(s);
      stop.synchronize();
      if (r) ms.push_back(stop.since(start));
    }
    std::sort(ms.begin(), ms.end());
    CUDA_OK(cudaMemcpyAsync(got.data(), d_out.get(), got.size() * sizeof(fq), cudaMemcpyDeviceToHost, s));
    CUDA_OK(cudaStreamSynchronize(s));
    field_bench_row row;
    row.name = names[v];
    row.ops = 4 * threads * std::size_t(iters);
    row.ms = ms[ms.size() / 2];
    row.gops = double(row.ops) / (row.ms * 1e6);
    if (v == 0) {
      ref = got;
      // the generic device code against the host for the first 256 threads
      for (std::size_t i = 0; i < 256; ++i) {
        const fq y = in[2 * i + 1];
        fq x[4];
        x[0] = in[2 * i];
        for (int k = 1; k < 4; ++k) x[k] = x[k - 1] * y;
        for (unsigned it = 0; it < iters; ++it)
          for (auto& xk : x) xk = xk * y;
        for (int k = 0; k < 4; ++k) row.mismatches += x[k] != got[4 * i + k];
      }
    } else {
      for (std::size_t i = 0; i < got.size(); ++i) row.mismatches += got[i] != ref[i];
    }
    rows.push_back(row);
  }
  return rows;
}

}  // namespace proofline::gpu::cuda::testing
