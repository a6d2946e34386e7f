// The product k * G read from a fixed-base window table (fixed_base.hpp),
// written once for the host and the device: the CPU's batch_mul and the CUDA
// fixed-base kernel (gpu/cuda/fixed_base_impl.cuh) walk the same table
// layout with the same digits, so they compute the same points.
//
// A scalar is recoded into signed digits d_j in [-(2^(w-1) - 1), 2^(w-1)]
// with k = sum_j d_j 2^(wj); the table holds m * 2^(wj) * G for
// m = 1..2^(w-1) in affine form, so k * G is one mixed addition per nonzero
// digit (a negative digit adds the negated entry) and no doubling at all.
#pragma once

#include <cstddef>
#include <cstdint>

#include "zk/common/hd.hpp"
#include "zk/ec/point.hpp"
#include "zk/ff/fp.hpp"

namespace proofline::zk::dev {

/// A window table seen through a pointer: host or device memory.
template <class G>
struct fixed_base_view {
  const ec::affine<G>* table = nullptr;  ///< [j * 2^(w-1) + m - 1] = m * 2^(w j) * base
  unsigned window_bits = 0;              ///< w
  unsigned windows = 0;                  ///< windows of the scalar, the top one taking the last carry

  /// k * base for a standard-form k below 2^(w windows - 1): at most
  /// `windows` mixed additions.
  template <unsigned N>
  PL_HD ec::jacobian<G> mul(const ff::bigint<N>& k) const {
    const unsigned w = window_bits;
    const uint32_t half = uint32_t(1) << (w - 1);
    ec::jacobian<G> acc = ec::jacobian<G>::infinity();
    uint32_t carry = 0;
    for (unsigned j = 0; j < windows; ++j) {
      const uint32_t v = k.bits(j * w, w) + carry;
      // v > 2^(w-1): the digit v - 2^w is negative; add the negated entry
      // and carry one into the next window.
      const bool negative = v > half;
      carry = negative ? 1 : 0;
      const uint32_t m = negative ? (uint32_t(1) << w) - v : v;
      if (m == 0) continue;
      const ec::affine<G>& entry = table[std::size_t(j) * half + m - 1];
#ifdef __CUDA_ARCH__
      // one addition site for both signs keeps a warp's threads on one path
      acc = acc.add_affine({entry.x, negative ? -entry.y : entry.y});
#else
      // on the CPU two sites are cheaper: a positive digit adds the entry in place
      acc = negative ? acc.add_affine(-entry) : acc.add_affine(entry);
#endif
    }
    return acc;
  }
};

}  // namespace proofline::zk::dev
