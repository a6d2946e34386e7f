#include "gpu/cpu/msm.hpp"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <vector>

#include "zk/curves.hpp"

namespace proofline::gpu::cpu {

namespace {

/// Largest window: 2^15 buckets of a G2 XYZZ point (4 * 2 * 48 bytes on
/// BLS12-381) is 12 MiB per task.
constexpr unsigned max_window = 16;
static_assert(max_window + 1 <= 32, "a digit is read with bigint::bits (at most 32 bits)");

/// Windows of c bits needed so that the top window's top bit is above every
/// scalar bit: the Booth recoding then needs no final carry.
inline unsigned window_count(unsigned bits, unsigned c) { return bits / c + 1; }

/// The signed digit of window w: its c bits, plus the top bit of the window
/// below, minus 2^c when its own top bit is set. Lies in [-2^(c-1), 2^(c-1)].
template <unsigned N>
inline int32_t digit(const zk::ff::bigint<N>& k, unsigned w, unsigned c) {
  uint32_t v = w == 0 ? k.bits(0, c) << 1 : k.bits(w * c - 1, c + 1);
  int32_t raw = int32_t(v >> 1);
  int32_t d = raw + int32_t(v & 1);
  if (raw >> (c - 1)) d -= int32_t(1) << c;
  return d;
}

/// Work of one thread-count: rounds of tasks times the cost of a task.
inline double split_cost(std::size_t n, unsigned windows, unsigned c, unsigned slices,
                         unsigned threads) {
  double rounds = double((windows * slices + threads - 1) / threads);
  return rounds * (double(n) / slices + double(std::size_t(1) << c));
}

}  // namespace

unsigned msm_window_bits(std::size_t n, unsigned bits) {
  if (bits == 0) return 1;
  unsigned best = 1;
  double best_cost = 0;
  for (unsigned c = 1; c <= max_window; ++c) {
    // every window: n bucket additions, then 2^c additions for its running sum
    double cost = double(window_count(bits, c)) * (double(n) + double(std::size_t(1) << c));
    if (c == 1 || cost < best_cost) best = c, best_cost = cost;
  }
  return best;
}

template <class G, unsigned N>
zk::ec::jacobian<G> msm(const zk::ec::affine<G>* points, const zk::ff::bigint<N>* scalars,
                        std::size_t n, base::thread_pool& pool) {
  using jacobian = zk::ec::jacobian<G>;
  using xyzz = zk::ec::xyzz<G>;
  if (n == 0) return jacobian::infinity();

  // The longest scalar decides how many windows there are.
  std::atomic<unsigned> bits{0};
  pool.for_range(n, 1 << 14, [&](std::size_t b, std::size_t e) {
    unsigned local = 0;
    for (std::size_t i = b; i < e; ++i) local = std::max(local, scalars[i].bit_length());
    unsigned seen = bits.load();
    while (local > seen && !bits.compare_exchange_weak(seen, local)) {
    }
  });
  if (bits == 0) return jacobian::infinity();

  const unsigned c = msm_window_bits(n, bits);
  const unsigned windows = window_count(bits, c);
  const std::size_t buckets = std::size_t(1) << (c - 1);

  // Slices of the points per window, so that every thread has work.
  const unsigned threads = pool.size();
  unsigned slices = 1;
  for (unsigned k = 2; k <= 16 && k <= n; ++k)
    if (split_cost(n, windows, c, k, threads) < split_cost(n, windows, c, slices, threads))
      slices = k;
  const std::size_t per_slice = (n + slices - 1) / slices;

  std::vector<jacobian> partial(std::size_t(windows) * slices, jacobian::infinity());
  pool.for_each(partial.size(), [&](std::size_t task) {
    const unsigned w = unsigned(task / slices);
    const std::size_t lo = (task % slices) * per_slice, hi = std::min(n, lo + per_slice);
    std::vector<xyzz> bucket(buckets, xyzz::infinity());
    for (std::size_t i = lo; i < hi; ++i) {
      int32_t d = digit(scalars[i], w, c);
      if (d > 0)
        bucket[d - 1] = bucket[d - 1].add_affine(points[i]);
      else if (d < 0)
        bucket[-d - 1] = bucket[-d - 1].add_affine(-points[i]);
    }
    // sum_k (k + 1) bucket[k] as a running sum from the top bucket down.
    xyzz running = xyzz::infinity(), sum = xyzz::infinity();
    for (std::size_t k = buckets; k-- > 0;) {
      running += bucket[k];
      sum += running;
    }
    partial[task] = sum.to_jacobian();
  });

  // Horner over windows: total = sum_w 2^(c w) window_w.
  jacobian total = jacobian::infinity();
  for (unsigned w = windows; w-- > 0;) {
    for (unsigned i = 0; i < c; ++i) total = total.dbl();
    for (unsigned k = 0; k < slices; ++k) total += partial[std::size_t(w) * slices + k];
  }
  return total;
}

#define PROOFLINE_INSTANTIATE_MSM(G)                                                               \
  template zk::ec::jacobian<G> msm<G, 4>(const zk::ec::affine<G>*, const zk::ff::bigint<4>*,     \
                                          std::size_t, base::thread_pool&);

PROOFLINE_INSTANTIATE_MSM(zk::bn254::g1_group)
PROOFLINE_INSTANTIATE_MSM(zk::bn254::g2_group)
PROOFLINE_INSTANTIATE_MSM(zk::bls12_381::g1_group)
PROOFLINE_INSTANTIATE_MSM(zk::bls12_381::g2_group)

#undef PROOFLINE_INSTANTIATE_MSM

}  // namespace proofline::gpu::cpu
