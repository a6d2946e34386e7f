// What the CUDA backend keeps on the device for one proving key: its points
// (plain, or with their precomputed window multiples), its A and B, and the
// bookkeeping that the budget (budget.hpp), the key residency
// (residency.hpp) and the table builds (table_builds.hpp) share. Plain data
// and sizes; no CUDA call happens here.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>

#include "gpu/backend.hpp"
#include "gpu/cuda/abc/device.cuh"
#include "gpu/cuda/key_tables.hpp"
#include "gpu/cuda/resources.cuh"
#include "zk/groth16/prover.hpp"

namespace proofline::gpu::cuda::detail {

using zk::groth16::key_ptr;
using zk::groth16::proving_key;
using zk::groth16::proving_key_base;

inline std::string mib(std::size_t bytes) { return std::to_string((bytes + (1 << 19)) >> 20) + " MiB"; }

/// The points a key's MSMs read: as in the key, or with a fixed base the
/// n * W precomputed window multiples (msm::precompute) the planner's
/// shapes read.
template <class C>
struct key_points {
  device_buffer<typename C::g1_affine> a, b1, c, h;
  device_buffer<typename C::g2_affine> b2;
  bool fixed_base = false;
  std::size_t bytes = 0;
};

/// Points that partitions no longer start on, freed once none reads them.
struct retired_points {
  std::shared_ptr<const void> points;
  std::size_t bytes = 0;
};

/// A proving key on the device: its points, and its tables while they build.
struct resident_base {
  std::weak_ptr<const proving_key_base> owner;  ///< detects a new key at a reused address
  std::size_t bytes = 0;      ///< device bytes counted in the budget for it (while it holds the key)
  bool counted = true;        ///< still held by the budget, its bytes counted
  bool ready = false;         ///< its points are on the device (else a call is uploading them)
  uint64_t last_use = 0;
  // window tables
  bool building = false;
  tables::verdict verdict = tables::verdict::not_paid;
  std::unique_ptr<event> build_start, build_end;
  std::unique_ptr<event> build_ref;  ///< recorded at build_ref_us on the steady clock
  double build_ref_us = 0;
  std::size_t proved = 0;          ///< partitions enqueued on it
  std::size_t proved_at_hint = 0;  ///< `proved` when the runtime first announced partitions
  std::size_t announced = 0;       ///< partitions the runtime announced since
  bool hinted = false;
  key_prep_stats stats;
  virtual ~resident_base() = default;
  /// The built tables become the points partitions read; returns the plain
  /// points they replace and the tables' bytes.
  virtual std::pair<retired_points, std::size_t> switch_tables() = 0;
};

/// A key's A and B on the device, for a, b, c of partitions that come
/// without them (abc/device.cuh).
template <class C>
struct key_matrices {
  abc::device_matrix<typename C::fr> a, b;
  std::size_t bytes() const { return a.bytes() + b.bytes(); }
};

template <class C>
struct resident_key final : resident_base {
  std::shared_ptr<const key_points<C>> points;  ///< what partitions read; replaced under the backend's lock
  std::shared_ptr<key_points<C>> built;         ///< tables being built
  /// Set with the points, before `ready`; null when they did not fit.
  std::shared_ptr<const key_matrices<C>> matrices;

  std::pair<retired_points, std::size_t> switch_tables() override {
    retired_points old{points, points ? points->bytes : 0};
    points = std::move(built);
    return {std::move(old), points->bytes};
  }
};

/// The three MSM shapes of a key: over w (A, B1, B2), w's private part (C), h (H).
struct key_shapes {
  msm::shape w, c, h;
  key_shapes(const zk::groth16::key_info& info, unsigned bits, bool fixed_base)
      : w(msm::plan(info.n_vars, bits, 0, fixed_base)),
        c(msm::plan(info.n_private(), bits, 0, fixed_base)),
        h(msm::plan(info.domain_size, bits, 0, fixed_base)) {}
};

/// Device bytes of a key's points, with or without precomputed multiples.
template <class C>
std::size_t key_bytes(const proving_key<C>& key, const key_shapes& ks) {
  const std::size_t fw = ks.w.fixed_base ? ks.w.windows : 1, fc = ks.c.fixed_base ? ks.c.windows : 1,
                    fh = ks.h.fixed_base ? ks.h.windows : 1;
  return sizeof(typename C::g1_affine) *
             ((key.points_a.size() + key.points_b1.size()) * fw + key.points_c.size() * fc +
              key.points_h.size() * fh) +
         sizeof(typename C::g2_affine) * key.points_b2.size() * fw;
}

/// Device bytes of a key's A and B (at most; abc::matrix_bytes).
template <class C>
std::size_t matrix_bytes(const proving_key<C>& key) {
  using F = typename C::fr;
  return abc::matrix_bytes<F>(key.coefs_a.size(), key.info.domain_size) +
         abc::matrix_bytes<F>(key.coefs_b.size(), key.info.domain_size);
}

}  // namespace proofline::gpu::cuda::detail
