// Groth16 prover maths that runs on the host around the backend's NTTs and
// MSMs:
//
//   synthesize_abc: a = A·w, b = B·w from the key's sparse coefficients,
//                   c = a∘b, each over the n-domain (Montgomery form);
//   assemble:       pi_a, pi_b, pi_c from the five MSM results and the
//                   blinding scalars r, s;
//   random_scalar:  uniform Fr from the operating system's random source.
#pragma once

#include <cstddef>

#include "zk/groth16/proof.hpp"
#include "zk/groth16/proving_key.hpp"

namespace proofline::zk::groth16 {

/// Fills a, b, c[0 .. domain_size) for one witness (standard form,
/// key.info.n_vars values). Rows past the last constraint are zero. With
/// `threads` > 1 the rows and the coefficients are split over that many
/// threads (a chunk of coefficients per thread when the chunks' constraint
/// ranges do not overlap, as in snarkjs keys, whose coefficients come sorted
/// by constraint; one thread otherwise). The field sums are exact, so the
/// result is the same bit for bit whatever the split. Below `min_per_thread`
/// rows or coefficients per thread, fewer threads are used (tests lower it).
template <class C>
void synthesize_abc(const proving_key<C>& key, const typename C::scalar* witness,
                    typename C::fr* a, typename C::fr* b, typename C::fr* c, unsigned threads = 1,
                    std::size_t min_per_thread = std::size_t(1) << 14);

/// pi_a = A·w + alpha1 + r·delta1
/// pi_b = B2·w + beta2 + s·delta2
/// pi_c = C·w + H·h + s·pi_a + r·(B1·w + beta1 + s·delta1) − r·s·delta1
template <class C>
proof<C> assemble(const proving_key<C>& key, const msm_results<C>& m, const typename C::fr& r,
                  const typename C::fr& s);

/// A uniformly random element of Fr from getrandom(2); throws on failure.
template <class C>
typename C::fr random_scalar();

}  // namespace proofline::zk::groth16
