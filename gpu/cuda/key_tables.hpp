// Whether a proving key's window tables are worth building, as a pure
// function of sizes, costs and counts (plain C++: tested without a GPU).
//
// Problem: a fixed-base MSM over precomputed window multiples (msm_pipeline.hpp,
// "Fixed base") needs fewer bucket additions than one over plain points, but
// the tables cost W times the points' device memory and a build that takes
// far longer than one partition's MSMs. Building them before the first
// partition delays every proof of the key; building them for a key that will
// prove two partitions never pays back.
//
// Design: the CUDA backend proves on plain points as soon as they are on the
// device and asks decide() after every event that changes the answer (the key
// is uploaded, a partition is done, the runtime announces more partitions).
// The tables are built, in the background, only when
//   partitions still to come x (plain cost - fixed cost) > build cost
// and their bytes fit under the device-memory limit beside everything else.
// Costs are in one unit (mixed G1 additions, as msm::shape_cost counts them),
// so no clock rate is needed: only ratios matter.
//
// Partitions still to come: what the runtime announced (backend::
// expect_partitions) less what was proved since; without an announcement,
// as many as were proved so far (the ski-rental rule: the build starts once
// the additions it would have saved equal its cost, so it never costs more
// than twice the best choice made with hindsight).
#pragma once

#include <algorithm>
#include <cstddef>
#include <string>

#include "gpu/cuda/msm_pipeline.hpp"

namespace proofline::gpu::cuda::tables {

/// A G2 addition against a G1 one: an Fp2 multiplication is three Fp ones.
constexpr double g2_weight = 3.0;
/// A Jacobian doubling (a = 0: 2M + 5S) against a mixed XYZZ addition (8M + 2S).
constexpr double dbl_weight = 0.7;
/// Multiplications of one mixed addition, to weigh an inversion (Fermat:
/// about 1.5 multiplications per scalar bit) in additions.
constexpr double mults_per_addition = 10.0;

/// The MSM sizes of one key and the bytes of its points.
struct key_sizes {
  std::size_t n_w = 0;        ///< scalars of the A, B1, B2 MSMs (n_vars)
  std::size_t n_c = 0;        ///< scalars of the C MSM (private variables)
  std::size_t n_h = 0;        ///< scalars of the H MSM (domain size)
  unsigned bits = 254;        ///< scalar bits
  std::size_t g1_bytes = 64;  ///< one affine G1 point
  std::size_t g2_bytes = 128; ///< one affine G2 point
};

/// What one key's tables cost and save, in mixed G1 additions and bytes.
struct key_costs {
  double plain = 0;              ///< one partition's five MSMs on plain points
  double fixed = 0;              ///< the same on the tables
  double build = 0;              ///< building the tables from the plain points
  std::size_t plain_bytes = 0;   ///< device bytes of the plain points
  std::size_t table_bytes = 0;   ///< device bytes of the tables (the plain points included)
};

/// Stored table points (W - 1 per input point) a thread converts to affine
/// with one shared inversion (msm::precompute_fn).
constexpr unsigned batch_inversion = msm::precompute_batch;

/// Cost of one MSM of n scalars with the planner's window.
inline double msm_cost(std::size_t n, unsigned bits, bool fixed) {
  if (n == 0) return 0;
  const msm::shape s = msm::plan(n, bits, 0, fixed);
  return msm::shape_cost(n, bits, s.c, fixed);
}

/// Building the table of one fixed-base MSM of n points: every stored
/// multiple past the first costs c doublings and its share of one inversion
/// per batch plus the batch's multiplications.
inline double build_cost(std::size_t n, unsigned bits, double weight) {
  if (n == 0) return 0;
  const msm::shape s = msm::plan(n, bits, 0, true);
  const double inversion = 1.5 * bits / mults_per_addition;
  const double per_stored = s.c * dbl_weight + inversion / batch_inversion + 6.0 / mults_per_addition;
  return weight * double(n) * double(s.windows - 1) * per_stored;
}

/// Table bytes of n points of `bytes` each under the planner's fixed-base window.
inline std::size_t table_bytes(std::size_t n, unsigned bits, std::size_t bytes) {
  if (n == 0) return 0;
  return n * msm::plan(n, bits, 0, true).windows * bytes;
}

inline key_costs estimate(const key_sizes& k) {
  key_costs r;
  const double w_weight = 2.0 + g2_weight;  // A and B1 in G1, B2 in G2, same scalars
  r.plain = w_weight * msm_cost(k.n_w, k.bits, false) + msm_cost(k.n_c, k.bits, false) +
            msm_cost(k.n_h, k.bits, false);
  r.fixed = w_weight * msm_cost(k.n_w, k.bits, true) + msm_cost(k.n_c, k.bits, true) +
            msm_cost(k.n_h, k.bits, true);
  r.build = build_cost(k.n_w, k.bits, w_weight) + build_cost(k.n_c, k.bits, 1.0) + build_cost(k.n_h, k.bits, 1.0);
  r.plain_bytes = (2 * k.n_w + k.n_c + k.n_h) * k.g1_bytes + k.n_w * k.g2_bytes;
  r.table_bytes = 2 * table_bytes(k.n_w, k.bits, k.g1_bytes) + table_bytes(k.n_c, k.bits, k.g1_bytes) +
                  table_bytes(k.n_h, k.bits, k.g1_bytes) + table_bytes(k.n_w, k.bits, k.g2_bytes);
  return r;
}

/// What decide() weighs.
struct inputs {
  key_costs costs;
  std::size_t partitions_to_come = 0;  ///< expected partitions of the key not yet proved
  std::size_t device_free = 0;         ///< limit minus every byte held now (the plain points included)
  std::size_t scratch_growth = 0;      ///< extra lane scratch the fixed-base shapes need
};

enum class verdict {
  build,     ///< the tables pay and fit: build them
  no_gain,   ///< the tables would not make an MSM cheaper
  not_paid,  ///< too few partitions to come to pay the build back
  no_room,   ///< they pay but do not fit beside the plain points under the limit
};

inline const char* to_string(verdict v) {
  switch (v) {
    case verdict::build: return "built";
    case verdict::no_gain: return "no faster than plain points";
    case verdict::not_paid: return "too few partitions to pay the build";
    case verdict::no_room: return "do not fit the device-memory limit";
  }
  return "?";
}

/// Build the tables now? Pure: the same inputs give the same answer.
inline verdict decide(const inputs& in) {
  const double saved = in.costs.plain - in.costs.fixed;
  if (!(saved > 0)) return verdict::no_gain;
  if (!(double(in.partitions_to_come) * saved > in.costs.build)) return verdict::not_paid;
  // While the tables build, the plain points stay (partitions read them), so
  // the peak is plain + tables; the plain points are already counted.
  const std::size_t need = in.costs.table_bytes + in.scratch_growth;
  if (need > in.device_free) return verdict::no_room;
  return verdict::build;
}

/// Partitions of a key still to come: the runtime's announcement less what
/// was proved since it, or (none announced) as many as were proved so far.
inline std::size_t to_come(bool announced, std::size_t announced_count, std::size_t proved_since,
                           std::size_t proved_total) {
  if (announced) return announced_count > proved_since ? announced_count - proved_since : 0;
  return proved_total;
}

}  // namespace proofline::gpu::cuda::tables
