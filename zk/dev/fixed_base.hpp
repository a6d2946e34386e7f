// Fixed-base scalar multiplication: k * G for one base G and millions of
// scalars k, the bulk of a development key's cost (nVars * 3 G1 + n G1 +
// nVars G2 products for a circuit of domain n).
//
// Design: signed windows (fixed_base_view.hpp): with w = 10 a 254-bit
// scalar takes 26 mixed additions and no doubling, and the table 26 * 512
// points (832 KiB for BN254 G1). The table is built here, on the host; the
// CUDA fixed-base engine uploads the same table and walks it with the same
// code (fixed_base_view::mul), so both compute the same points.
//
// Results leave in affine form through Montgomery's trick: one field
// inversion per chunk of points plus 3 multiplications each, then 4 more for
// x = X/Z^2, y = Y/Z^3 (jacobian coordinates).
#pragma once

#include <algorithm>
#include <cstddef>
#include <vector>

#include "base/thread_pool.hpp"
#include "zk/dev/fixed_base_view.hpp"
#include "zk/ec/point.hpp"
#include "zk/ff/fp.hpp"

namespace proofline::zk::dev {

/// Window width (bits) of the tables. Measured per product on one x86-64
/// core (CPU time, BN254 G1 / G2, BLS12-381 G1 / G2, microseconds):
///   w = 8:  13.5 / 37.7 / 25.6 / 70.1   (32 additions; 256-768 KiB tables)
///   w = 10: 11.4 / 32.2 / 22.0 / 57.6   (26 additions; 0.8-2.5 MiB tables)
///   w = 12: 10.7 (BN254 G1; 22 additions, 2.8 MiB table)
/// 10 keeps the G1 tables within a server core's L2 while taking most of the gain.
inline constexpr unsigned fixed_base_window_bits = 10;
static_assert(fixed_base_window_bits >= 2 && fixed_base_window_bits <= 16);

/// Points converted per inversion when normalising to affine.
inline constexpr std::size_t normalize_chunk = 512;

/// Converts n jacobian points to affine with one field inversion (Montgomery's
/// trick); points at infinity become (0, 0). `scratch` is resized to n.
template <class G>
void batch_to_affine(const ec::jacobian<G>* in, ec::affine<G>* out, std::size_t n,
                     std::vector<typename G::field>& scratch) {
  using field = typename G::field;
  scratch.resize(n);
  field acc = field::one();
  for (std::size_t i = 0; i < n; ++i) {
    scratch[i] = acc;  // product of the earlier nonzero Z
    if (!in[i].is_infinity()) acc = acc * in[i].Z;
  }
  field inv = acc.inverse();
  for (std::size_t i = n; i-- > 0;) {
    if (in[i].is_infinity()) {
      out[i] = ec::affine<G>::infinity();
      continue;
    }
    const field zi = inv * scratch[i];  // 1 / Z_i
    inv = inv * in[i].Z;
    const field zi2 = zi.sqr();
    out[i] = {in[i].X * zi2, in[i].Y * zi2 * zi};
  }
}

/// The window table of one base point; immutable after construction, so
/// any number of threads may multiply with it at once.
template <class G>
class fixed_base {
 public:
  using affine_t = ec::affine<G>;
  using jacobian_t = ec::jacobian<G>;

  /// Builds the table for scalars below 2^scalar_bits: windows * 2^(w-1)
  /// additions and one batch normalisation (under a millisecond for G1).
  fixed_base(const affine_t& base, unsigned scalar_bits,
             unsigned window_bits = fixed_base_window_bits)
      : w_(window_bits), half_(1u << (window_bits - 1)) {
    // The top window must absorb the last carry: one spare bit suffices
    // because a digit is negative only when its window exceeds 2^(w-1).
    windows_ = (scalar_bits + 1 + w_ - 1) / w_;
    std::vector<jacobian_t> entries(std::size_t(windows_) * half_);
    jacobian_t window_base = jacobian_t::from_affine(base);
    for (unsigned j = 0; j < windows_; ++j) {
      jacobian_t m = window_base;
      for (unsigned k = 0; k < half_; ++k) {
        entries[std::size_t(j) * half_ + k] = m;
        m = m + window_base;
      }
      for (unsigned b = 0; b < w_; ++b) window_base = window_base.dbl();
    }
    table_.resize(entries.size());
    std::vector<typename G::field> scratch;
    batch_to_affine(entries.data(), table_.data(), entries.size(), scratch);
  }

  /// k * base for a standard-form k below 2^scalar_bits: at most
  /// `windows` mixed additions.
  template <unsigned N>
  jacobian_t mul(const ff::bigint<N>& k) const {
    return view().mul(k);
  }

  /// The table in host memory.
  fixed_base_view<G> view() const { return {table_.data(), w_, windows_}; }
  /// The entries, [j * 2^(w-1) + m - 1] = m * 2^(w j) * base, for copying elsewhere.
  const std::vector<affine_t>& table() const { return table_; }
  unsigned window_bits() const { return w_; }
  unsigned windows() const { return windows_; }

 private:
  unsigned w_, half_, windows_ = 0;
  std::vector<affine_t> table_;  ///< [j * half + m - 1] = m * 2^(w j) * base
};

/// out[i] = scalars[i] * base (affine, infinity for a zero scalar) for
/// i < n, on the pool's threads. Scalars are field elements in Montgomery form.
template <class G, class F>
void batch_mul(const fixed_base<G>& table, const F* scalars, std::size_t n, ec::affine<G>* out,
               base::thread_pool& pool) {
  const fixed_base_view<G> view = table.view();
  pool.for_range(n, normalize_chunk, [&](std::size_t begin, std::size_t end) {
    std::vector<ec::jacobian<G>> acc;
    std::vector<typename G::field> scratch;
    for (std::size_t b = begin; b < end; b += normalize_chunk) {
      const std::size_t e = std::min(end, b + normalize_chunk);
      acc.resize(e - b);
      for (std::size_t i = b; i < e; ++i) acc[i - b] = view.mul(scalars[i].to_standard());
      batch_to_affine(acc.data(), out + b, e - b, scratch);
    }
  });
}

}  // namespace proofline::zk::dev
