// Kernel and proof benchmarks, as a library: `proofline bench` and the
// standalone proofline-bench call run() and print the result.
//
//   what       msm (G1), msm_g2, ntt (natural order), ntt_coset (the proof's
//              odd-coset step), prove (a whole partition on a synthetic key)
//   backend    cuda: points resident on the GPU (with their precomputed
//              window multiples unless fixed_base is off, as for proving
//              keys), MSM scalars uploaded from pinned host memory in every
//              run, timed with CUDA events;
//              prove: device time from the first NTT to the download
//              (spans), plus wall time
//              cpu: the CPU backend (gpu/cpu), timed with the steady clock
//
// Every figure is the median of `runs` (>= 10 for reported numbers) after
// `warmup` untimed runs. Inputs are random-looking: scalars uniform below r,
// points sums of random multiples of the generator, never zeros or repeats.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "zk/curves.hpp"

namespace proofline::bench {

struct request {
  std::string what = "msm";  ///< msm | msm_g2 | ntt | ntt_coset | prove
  zk::curve_id curve = zk::curve_id::bn254;
  unsigned log_n = 20;          ///< size 2^log_n (points, elements, or the proof's domain)
  std::string backend = "cuda";  ///< cuda | cpu
  unsigned runs = 10;
  unsigned warmup = 2;
  int device = 0;        ///< CUDA device
  unsigned threads = 0;  ///< CPU threads (0 = all)
  uint64_t seed = 1;
  unsigned window = 0;   ///< MSM window bits on the GPU (0 = the planner's choice)
  /// cuda: precomputed window multiples of the resident points (fixed-base
  /// MSM; the CUDA backend's default for proving keys); false = plain points.
  bool fixed_base = true;
  /// cuda NTTs: which passes, as gpu::cuda::ntt::parse_kernel spells them
  /// ("registers", "tiled", "fused:t11:c1:r2", ...); empty = the runtime's
  /// default (ntt::default_kernel: PROOFLINE_NTT_KERNEL, else fused:t10:c1:r2:b128:l1:u1).
  std::string ntt_kernel;
};

struct result {
  request req;
  std::vector<double> ms;  ///< each timed run, in order
  double median_ms = 0, min_ms = 0, max_ms = 0;
  double throughput = 0;  ///< items per second at the median
  std::string unit;       ///< "points/s", "elements/s" or "proofs/s"
  std::string timer;      ///< "cuda events", "cuda events (spans)" or "steady clock"
  std::string device;     ///< the backend's description
  std::string ntt_kernel; ///< cuda NTTs: the kernel measured, spelled out (ntt::describe)
  unsigned window = 0;    ///< cuda MSMs: the window measured (--window, else the planner's)
  /// prove: median milliseconds of each span (upload, ntt_a, ..., download),
  /// "device" (first NTT start to download end) and "wall" (prove() call).
  std::map<std::string, double> breakdown_ms;

  /// One JSON object with everything above.
  std::string json() const;
  /// A fixed-width table row; header() names the columns.
  std::string row() const;
  static std::string header();
};

/// Runs one benchmark. Throws std::invalid_argument for an unknown `what`,
/// backend or curve, gpu::backend_error when the backend fails.
result run(const request& req);

/// "bn254" / "bls12_381" (also "bn128", "bls12381") -> curve id; throws std::invalid_argument.
zk::curve_id parse_curve(const std::string& name);

}  // namespace proofline::bench
