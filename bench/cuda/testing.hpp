// Single operations on the GPU from plain C++, for the gpu tests and the
// benchmarks: each call uploads its inputs, runs on `device` and returns the
// result (synchronously), or times repeated runs with CUDA events.
// Instantiated for zk::bn254 and zk::bls12_381 (G = C::g1_group or
// C::g2_group, F = C::fr or C::fq). Throws backend_error.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "gpu/backend.hpp"
#include "zk/curves.hpp"

namespace proofline::gpu::cuda::testing {

/// sum_i scalars[i] * points[i]; window = 0 lets the planner choose;
/// fixed_base precomputes the window multiples of the points first; chunks:
/// the scalars are uploaded and digested in that many chunks (msm_chunked),
/// 1 = whole, 0 = msm::chunk_count()'s choice for n; level1: the level-1
/// kernel as msm::parse_level1 spells it, empty = msm::default_level1();
/// reduce: the window reduction as msm::parse_reduce spells it, empty =
/// msm::default_reduce().
template <class C, class G>
zk::ec::jacobian<G> msm(const zk::ec::affine<G>* points, const typename C::scalar* scalars, std::size_t n,
                        int device, unsigned window = 0, bool fixed_base = false, unsigned chunks = 0,
                        const std::string& level1 = "", const std::string& reduce = "");

/// Natural-order forward or inverse NTT of data[0 .. 2^log_n), in place;
/// kernel: which passes, as ntt::parse_kernel spells them (gpu/cuda/ntt/
/// tuning.hpp; registers and tiled from bench/cuda/ntt_families.hpp);
/// empty = ntt::default_kernel().
template <class F>
void ntt(F* data, unsigned log_n, bool inverse, int device, const std::string& kernel = "");

/// Values on the 2^log_n domain -> values on its odd coset, in place.
template <class F>
void odd_coset(F* data, unsigned log_n, int device, const std::string& kernel = "");

/// prod = a b, sum = a + b, diff = a - b with the device's field code.
template <class F>
void field_ops(const F* a, const F* b, F* prod, F* sum, F* diff, std::size_t n, int device);

/// n random-looking, distinct points (sums of five random multiples of the
/// generator chosen by i's 6-bit digits), made on the device from `seed`.
template <class C, class G>
std::vector<zk::ec::affine<G>> random_points(std::size_t n, uint64_t seed, int device);

/// What the benchmarks report about the device.
struct device_info {
  std::string name;
  int multiprocessors = 0;
  double memory_gib = 0;
  int compute_major = 0, compute_minor = 0;
  int driver_version = 0;   ///< cudaDriverGetVersion, e.g. 13000
  int runtime_version = 0;  ///< cudaRuntimeGetVersion
};
device_info describe_device(int device);

/// Milliseconds of `runs` MSMs of 2^log_n (after `warmup` untimed ones), each
/// timed with CUDA events from the upload of the scalars (pinned host memory)
/// to the download of the window sums; points stay resident (with their
/// precomputed window multiples when fixed_base). group 1 or 2. chunks as
/// for msm(): with more than one, chunk k+1 uploads while chunk k computes.
std::vector<double> time_msm(zk::curve_id curve, int group, unsigned log_n, unsigned warmup, unsigned runs,
                             int device, uint64_t seed, unsigned window = 0, bool fixed_base = false,
                             unsigned chunks = 0);

/// Milliseconds of `runs` natural-order NTTs (coset = false) or odd-coset
/// steps (coset = true) of 2^log_n resident elements, with kernel as for ntt().
std::vector<double> time_ntt(zk::curve_id curve, unsigned log_n, bool coset, unsigned warmup, unsigned runs,
                             int device, uint64_t seed, const std::string& kernel = "");

/// The kernel `spec` names (empty: ntt::default_kernel()), spelled out in
/// full; throws std::invalid_argument for a bad name.
std::string ntt_kernel_name(const std::string& spec);

/// One variant of the device's Montgomery product, measured by field_bench.
struct field_bench_row {
  std::string name;
  std::size_t ops = 0;         ///< products per run
  double ms = 0;               ///< median of 5 runs
  double gops = 0;             ///< 10^9 products per second
  std::size_t mismatches = 0;  ///< results differing from the reference
};

/// BN254 Fq products on every SM (4 independent chains per thread): the
/// generic 64-bit-word code (checked against the host), then each
/// PROOFLINE_FF_DEVICE_MUL variant (checked against the generic).
std::vector<field_bench_row> field_bench(int device);

}  // namespace proofline::gpu::cuda::testing
