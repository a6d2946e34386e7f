#include "zk/groth16/prover.hpp"

#include <sys/random.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <system_error>
#include <vector>

#include "base/parallel.hpp"

#include "zk/ec/ct_mul.hpp"

namespace proofline::zk::groth16 {

namespace {

/// Accumulates one matrix (A or B): out[row] += value * w[signal].
/// value is c * R^2 (raw limbs) and w[signal] standard form, so their
/// Montgomery product c * R^2 * w * R^-1 is the Montgomery form of c * w.
template <class C>
void accumulate(const coef<C>* coefs, std::size_t count, const key_info& info,
                const typename C::scalar* witness, typename C::fr* out, const char* matrix) {
  using fr = typename C::fr;
  // Signals are scattered over the witness (tens of MiB at 2^20), so most
  // reads miss every cache; asking for the witness value a few coefficients
  // ahead overlaps those misses with the products in between.
  constexpr std::size_t ahead = 16;
  for (std::size_t i = 0; i < count; ++i) {
    if (i + ahead < count) {
      const auto& next = coefs[i + ahead];
      if (next.signal < info.n_vars) __builtin_prefetch(witness + next.signal);
      if (next.constraint < info.domain_size) __builtin_prefetch(out + next.constraint, 1);
    }
    const auto& k = coefs[i];
    if (k.constraint >= info.domain_size || k.signal >= info.n_vars)
      throw std::out_of_range(std::string("coefficient of ") + matrix + " at constraint " +
                              std::to_string(k.constraint) + ", signal " + std::to_string(k.signal) +
                              " lies outside the key's domain (" + std::to_string(info.domain_size) +
                              ") or witness (" + std::to_string(info.n_vars) + ")");
    out[k.constraint] += k.value * fr::from_montgomery_limbs(witness[k.signal]);
  }
}

/// One matrix on up to `threads` threads: the coefficients are cut into
/// contiguous chunks (never inside a run of one constraint); when the
/// chunks' constraint ranges are disjoint no two threads write one row, and
/// each chunk is accumulated on its own thread. Otherwise one thread does it.
template <class C>
void accumulate_parallel(const key_vector<coef<C>>& coefs, const key_info& info,
                         const typename C::scalar* witness, typename C::fr* out,
                         const char* matrix, unsigned threads, std::size_t min_per_thread) {
  const std::size_t count = coefs.size();
  const std::size_t chunks = std::min<std::size_t>(
      std::max(1u, threads), std::max<std::size_t>(1, count / std::max<std::size_t>(1, min_per_thread)));
  if (chunks <= 1) {
    accumulate<C>(coefs.data(), count, info, witness, out, matrix);
    return;
  }
  std::vector<std::size_t> cut(chunks + 1, count);
  cut[0] = 0;
  for (std::size_t k = 1; k < chunks; ++k) {
    std::size_t at = std::max(cut[k - 1], count * k / chunks);
    while (at > cut[k - 1] && at < count && coefs[at].constraint == coefs[at - 1].constraint) ++at;
    cut[k] = at;
  }
  struct range {
    uint32_t lo = UINT32_MAX, hi = 0;
  };
  std::vector<range> ranges(chunks);
  base::parallel_chunks(chunks, static_cast<unsigned>(chunks), 1, [&](std::size_t b, std::size_t e) {
    for (std::size_t k = b; k < e; ++k)
      for (std::size_t i = cut[k]; i < cut[k + 1]; ++i) {
        ranges[k].lo = std::min(ranges[k].lo, coefs[i].constraint);
        ranges[k].hi = std::max(ranges[k].hi, coefs[i].constraint);
      }
  });
  std::vector<range> sorted;
  for (const auto& r : ranges)
    if (r.lo <= r.hi) sorted.push_back(r);
  std::sort(sorted.begin(), sorted.end(), [](const range& x, const range& y) { return x.lo < y.lo; });
  for (std::size_t k = 1; k < sorted.size(); ++k)
    if (sorted[k].lo <= sorted[k - 1].hi) {
      accumulate<C>(coefs.data(), count, info, witness, out, matrix);
      return;
    }
  base::parallel_chunks(chunks, static_cast<unsigned>(chunks), 1, [&](std::size_t b, std::size_t e) {
    for (std::size_t k = b; k < e; ++k)
      accumulate<C>(coefs.data() + cut[k], cut[k + 1] - cut[k], info, witness, out, matrix);
  });
}

}  // namespace

template <class C>
void synthesize_abc(const proving_key<C>& key, const typename C::scalar* witness,
                    typename C::fr* a, typename C::fr* b, typename C::fr* c, unsigned threads,
                    std::size_t min_per_thread) {
  using fr = typename C::fr;
  const std::size_t n = key.info.domain_size;
  base::parallel_chunks(n, threads, min_per_thread, [&](std::size_t lo, std::size_t hi) {
    for (std::size_t i = lo; i < hi; ++i) a[i] = b[i] = fr::zero();
  });
  accumulate_parallel<C>(key.coefs_a, key.info, witness, a, "A", threads, min_per_thread);
  accumulate_parallel<C>(key.coefs_b, key.info, witness, b, "B", threads, min_per_thread);
  base::parallel_chunks(n, threads, min_per_thread, [&](std::size_t lo, std::size_t hi) {
    for (std::size_t i = lo; i < hi; ++i) c[i] = a[i] * b[i];
  });
}

template <class C>
proof<C> assemble(const proving_key<C>& key, const msm_results<C>& m, const typename C::fr& r,
                  const typename C::fr& s) {
  using g1 = typename C::g1_jacobian;
  using g2 = typename C::g2_jacobian;
  const auto r_int = r.to_standard();
  const auto s_int = s.to_standard();
  const auto neg_rs_int = (-(r * s)).to_standard();
  const g1 delta1 = g1::from_affine(key.delta1);
  // r, s and r·s are secret: every product with them runs in a fixed
  // sequence (ec::mul_secret), never the scalar-dependent double-and-add.
  using ec::mul_secret;

  // pi_a = A·w + alpha1 + r·delta1
  g1 pi_a = m.a.add_affine(key.alpha1) + mul_secret(delta1, r_int);
  // pi_b = B2·w + beta2 + s·delta2
  g2 pi_b = m.b2.add_affine(key.beta2) + mul_secret(g2::from_affine(key.delta2), s_int);
  // B1·w + beta1 + s·delta1: pi_b's G1 twin, needed for pi_c
  g1 pi_b1 = m.b1.add_affine(key.beta1) + mul_secret(delta1, s_int);
  // pi_c = C·w + H·h + s·pi_a + r·pi_b1 − r·s·delta1
  g1 pi_c = m.c + m.h + mul_secret(pi_a, s_int) + mul_secret(pi_b1, r_int) +
            mul_secret(delta1, neg_rs_int);

  return {pi_a.to_affine(), pi_b.to_affine(), pi_c.to_affine()};
}

template <class C>
typename C::fr random_scalar() {
  using fr = typename C::fr;
  using repr = typename fr::repr;
  constexpr unsigned N = fr::N;
  // 2 * 64N random bits reduced mod r: the bias is below 2^-(64N - bits(r)) ~ 2^-254.
  uint64_t words[2 * N];
  auto* p = reinterpret_cast<unsigned char*>(words);
  std::size_t need = sizeof words;
  while (need > 0) {
    ssize_t got = getrandom(p, need, 0);
    if (got < 0) {
      if (errno == EINTR) continue;
      throw std::system_error(errno, std::generic_category(), "getrandom");
    }
    p += got;
    need -= static_cast<std::size_t>(got);
  }
  repr lo, hi;
  std::memcpy(lo.l, words, sizeof lo.l);
  std::memcpy(hi.l, words + N, sizeof hi.l);
  // lo + hi * 2^(64N) mod r; R mod r, read as a standard-form integer, is 2^(64N) mod r.
  const fr two_64n = fr::from_standard(fr::one().montgomery_limbs());
  return fr::from_standard(lo) + fr::from_standard(hi) * two_64n;
}

#define PROOFLINE_INSTANTIATE_PROVER(C)                                                           \
  template void synthesize_abc<C>(const proving_key<C>&, const C::scalar*, C::fr*, C::fr*,       \
                                  C::fr*, unsigned, std::size_t);                                 \
  template proof<C> assemble<C>(const proving_key<C>&, const msm_results<C>&, const C::fr&,      \
                                const C::fr&);                                                    \
  template C::fr random_scalar<C>();

PROOFLINE_INSTANTIATE_PROVER(bn254)
PROOFLINE_INSTANTIATE_PROVER(bls12_381)

#undef PROOFLINE_INSTANTIATE_PROVER

}  // namespace proofline::zk::groth16
