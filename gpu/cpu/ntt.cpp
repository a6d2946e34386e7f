#include "gpu/cpu/ntt.hpp"

#include <cstdint>
#include <utility>
#include <vector>

#include "zk/curves.hpp"
#include "zk/groth16/domain.hpp"

namespace proofline::gpu::cpu {

namespace {

/// Elements per cache block: 2^10 Fr elements = 32 KiB of 4-limb values,
/// small enough to stay in a core's L1 data cache through the block's stages.
constexpr unsigned block_log = 10;
/// Butterflies (or elements) per parallel task below which splitting costs
/// more than it gains.
constexpr std::size_t grain = 1 << 10;

/// The low log_n bits of x, reversed.
inline uint64_t reverse_bits(uint64_t x, unsigned log_n) {
  if (log_n == 0) return 0;
  x = ((x >> 1) & 0x5555555555555555ull) | ((x & 0x5555555555555555ull) << 1);
  x = ((x >> 2) & 0x3333333333333333ull) | ((x & 0x3333333333333333ull) << 2);
  x = ((x >> 4) & 0x0f0f0f0f0f0f0f0full) | ((x & 0x0f0f0f0f0f0f0f0full) << 4);
  x = ((x >> 8) & 0x00ff00ff00ff00ffull) | ((x & 0x00ff00ff00ff00ffull) << 8);
  x = ((x >> 16) & 0x0000ffff0000ffffull) | ((x & 0x0000ffff0000ffffull) << 16);
  x = (x >> 32) | (x << 32);
  return x >> (64 - log_n);
}

/// tw[j] = w^j for j < n/2.
template <class F>
std::vector<F> powers(const F& w, std::size_t count, base::thread_pool& pool) {
  std::vector<F> tw(count);
  pool.for_range(count, grain, [&](std::size_t b, std::size_t e) {
    F x = w.pow(uint64_t(b));
    for (std::size_t j = b; j < e; ++j) {
      tw[j] = x;
      x = x * w;
    }
  });
  return tw;
}

/// w^-j from w^j: w^-j = w^(n-j) = w^(n/2) w^(n/2-j) = -w^(n/2-j).
template <class F>
std::vector<F> inverse_powers(const std::vector<F>& tw, base::thread_pool& pool) {
  std::vector<F> itw(tw.size());
  const std::size_t half = tw.size();
  pool.for_range(half, grain, [&](std::size_t b, std::size_t e) {
    for (std::size_t j = b; j < e; ++j) itw[j] = j == 0 ? F::one() : -tw[half - j];
  });
  return itw;
}

/// One decimation-in-frequency stage of half-size m = 2^log_m over
/// butterflies [q0, q1): (a, b) -> (a + b, (a - b) w_2m^j).
template <class F>
inline void dif_stage(F* d, unsigned log_m, std::size_t half, const F* tw, std::size_t q0,
                      std::size_t q1) {
  const std::size_t m = std::size_t(1) << log_m, stride = half >> log_m;
  for (std::size_t q = q0; q < q1; ++q) {
    std::size_t j = q & (m - 1);
    std::size_t i0 = ((q >> log_m) << (log_m + 1)) + j, i1 = i0 + m;
    F a = d[i0], b = d[i1];
    d[i0] = a + b;
    d[i1] = (a - b) * tw[j * stride];
  }
}

/// One decimation-in-time stage: (a, b) -> (a + b w_2m^j, a - b w_2m^j).
template <class F>
inline void dit_stage(F* d, unsigned log_m, std::size_t half, const F* tw, std::size_t q0,
                      std::size_t q1) {
  const std::size_t m = std::size_t(1) << log_m, stride = half >> log_m;
  for (std::size_t q = q0; q < q1; ++q) {
    std::size_t j = q & (m - 1);
    std::size_t i0 = ((q >> log_m) << (log_m + 1)) + j, i1 = i0 + m;
    F a = d[i0], t = d[i1] * tw[j * stride];
    d[i0] = a + t;
    d[i1] = a - t;
  }
}

/// Natural order in, bit-reversed out; tw[j] = w^j for the transform's root w.
template <class F>
void dif(F* d, unsigned log_n, const std::vector<F>& tw, base::thread_pool& pool) {
  if (log_n == 0) return;
  const std::size_t n = std::size_t(1) << log_n, half = n / 2;
  // Stages whose blocks exceed a cache block: whole-array passes.
  unsigned log_m = log_n - 1;
  for (; log_m + 1 > block_log; --log_m)
    pool.for_range(half, grain, [&](std::size_t b, std::size_t e) {
      dif_stage(d, log_m, half, tw.data(), b, e);
    });
  // The rest: every block of 2^(log_m+1) elements on its own.
  const unsigned blog = log_m + 1;
  const std::size_t bsize = std::size_t(1) << blog, bhalf = bsize / 2;
  pool.for_each(n >> blog, [&](std::size_t blk) {
    F* base = d + blk * bsize;
    for (unsigned lm = blog; lm-- > 0;) dif_stage(base, lm, half, tw.data(), 0, bhalf);
  });
}

/// Bit-reversed order in, natural out.
template <class F>
void dit(F* d, unsigned log_n, const std::vector<F>& tw, base::thread_pool& pool) {
  if (log_n == 0) return;
  const std::size_t n = std::size_t(1) << log_n, half = n / 2;
  const unsigned blog = log_n < block_log ? log_n : block_log;
  const std::size_t bsize = std::size_t(1) << blog, bhalf = bsize / 2;
  pool.for_each(n >> blog, [&](std::size_t blk) {
    F* base = d + blk * bsize;
    for (unsigned lm = 0; lm < blog; ++lm) dit_stage(base, lm, half, tw.data(), 0, bhalf);
  });
  for (unsigned log_m = blog; log_m < log_n; ++log_m)
    pool.for_range(half, grain, [&](std::size_t b, std::size_t e) {
      dit_stage(d, log_m, half, tw.data(), b, e);
    });
}

template <class F>
void bit_reverse(F* d, unsigned log_n, base::thread_pool& pool) {
  pool.for_range(std::size_t(1) << log_n, grain, [&](std::size_t b, std::size_t e) {
    for (std::size_t i = b; i < e; ++i) {
      std::size_t j = reverse_bits(i, log_n);
      if (i < j) std::swap(d[i], d[j]);
    }
  });
}

template <class F>
void scale(F* d, std::size_t n, const F& k, base::thread_pool& pool) {
  pool.for_range(n, grain, [&](std::size_t b, std::size_t e) {
    for (std::size_t i = b; i < e; ++i) d[i] = d[i] * k;
  });
}

}  // namespace

template <class F>
void ntt(F* data, unsigned log_n, direction dir, base::thread_pool& pool) {
  using roots = zk::groth16::roots<F>;
  const F w = roots::root(log_n);  // checks log_n
  const std::size_t n = std::size_t(1) << log_n;
  auto tw = powers(w, n / 2, pool);
  if (dir == direction::inverse) tw = inverse_powers(tw, pool);
  dif(data, log_n, tw, pool);
  bit_reverse(data, log_n, pool);
  if (dir == direction::inverse) scale(data, n, roots::inverse_size(log_n), pool);
}

template <class F>
void to_odd_coset(F* data, unsigned log_n, base::thread_pool& pool) {
  using roots = zk::groth16::roots<F>;
  const F w = roots::root(log_n);
  const F g = roots::odd_coset_generator(log_n);
  const F n_inv = roots::inverse_size(log_n);
  const std::size_t n = std::size_t(1) << log_n;
  const auto tw = powers(w, n / 2, pool);
  // Inverse transform without its 1/n: coefficients * n, in bit-reversed order.
  dif(data, log_n, inverse_powers(tw, pool), pool);
  // Coefficient i (at position rev(i)) times g^i / n.
  pool.for_range(n, grain, [&](std::size_t b, std::size_t e) {
    F k = n_inv * g.pow(uint64_t(b));
    for (std::size_t i = b; i < e; ++i) {
      F& x = data[reverse_bits(i, log_n)];
      x = x * k;
      k = k * g;
    }
  });
  // Forward transform from bit-reversed coefficients to natural-order values.
  dit(data, log_n, tw, pool);
}

#define PROOFLINE_INSTANTIATE_NTT(F)                                       \
  template void ntt<F>(F*, unsigned, direction, base::thread_pool&);            \
  template void to_odd_coset<F>(F*, unsigned, base::thread_pool&);

PROOFLINE_INSTANTIATE_NTT(zk::bn254::fr)
PROOFLINE_INSTANTIATE_NTT(zk::bls12_381::fr)

#undef PROOFLINE_INSTANTIATE_NTT

}  // namespace proofline::gpu::cpu
