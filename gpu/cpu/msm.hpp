// Multi-scalar multiplication on the CPU: sum_i scalars[i] * points[i] by
// Pippenger's bucket method. The reference the CUDA MSM is tested against,
// and the MSMs of the CPU backend.
//
// Design: scalars are cut into windows of c bits, recoded to signed digits in
// [-2^(c-1), 2^(c-1)] (Booth: each digit reads its c bits plus the bit below,
// so windows are independent and need no carry pass); a digit d puts the point
// (negated when d < 0) into bucket |d|. Buckets are affine points, and the
// additions into them wait in batches that share one field inversion
// (Montgomery's trick), about 5M + 1S an addition instead of the XYZZ mixed
// addition's 8M + 2S; an addition that meets another for the same bucket in
// its batch, or has no chord (doubling, P + (-P)), goes into that bucket's
// XYZZ side sum. A window's sum is sum_k k * bucket_k by a running sum from
// the top bucket; windows are combined by c doublings each. c minimises
// windows * (n + 4 * 2^(c-1)) (a running-sum step costs about four batched
// additions), capped at 16. Tasks are (window, slice of points) pairs claimed
// by the pool's threads, so one MSM uses every thread; each task has its own
// buckets.
//
// Zero scalars and points at infinity contribute nothing; equal points in a
// bucket take the doubling path. Scalars may be any integers below 2^(64N)
// (reduced or not); the result is the integer combination.
#pragma once

#include <cstddef>

#include "base/thread_pool.hpp"
#include "zk/ec/point.hpp"
#include "zk/ff/fp.hpp"

namespace proofline::gpu::cpu {

/// sum_{i < n} scalars[i] * points[i]; the point at infinity when n == 0.
/// G is a group description of zk/curves.hpp (C::g1_group or C::g2_group),
/// scalars are standard-form integers (C::scalar). Cost: about
/// (bits / c + 1) * (n + 4 * 2^(c-1)) batched affine additions over
/// pool.size() threads, where bits is the longest scalar's bit length.
/// Instantiated for the G1 and G2 groups of zk::bn254 and zk::bls12_381 with
/// N = 4.
template <class G, unsigned N>
zk::ec::jacobian<G> msm(const zk::ec::affine<G>* points, const zk::ff::bigint<N>* scalars,
                        std::size_t n, base::thread_pool& pool);

/// The window width (bits) msm() uses for n points and scalars of `bits` bits.
unsigned msm_window_bits(std::size_t n, unsigned bits);

}  // namespace proofline::gpu::cpu
