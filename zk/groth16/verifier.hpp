// The Groth16 verifier: accepts a proof (A, B, C) for public signals
// x_1..x_n under a verification key exactly when
//
//   e(A, B) = e(alpha1, beta2) * e(L, gamma2) * e(C, delta2),
//   L = IC_0 + x_1 IC_1 + ... + x_n IC_n,
//
// and every point is in its prime-order subgroup (on-curve alone would let a
// point of small order through on BLS12-381 G1 and on both G2 groups). The
// check runs as one product e(-A, B) e(L, gamma2) e(C, delta2) sharing one
// Miller loop and one final exponentiation, times e(alpha1, beta2), which
// prepare() computes once per key along with the key's own subgroup checks.
//
// Cost per proof: three Miller loops, one final exponentiation, the subgroup
// checks of A, B, C and n scalar products for L (docs/BENCHMARKS.md has the
// measured figures). Thread-safe: a prepared key is read-only.
#pragma once

#include <cstddef>
#include <string>

#include "zk/groth16/proof.hpp"
#include "zk/groth16/verifying_key.hpp"
#include "zk/pairing/pairing.hpp"

namespace proofline::zk::groth16 {

/// The outcome of a check: ok, or the reason it failed in words
/// ("pi_b is not in the G2 subgroup", "the pairing equation does not hold").
struct verdict {
  bool ok = false;
  std::string reason;
  explicit operator bool() const { return ok; }
};

/// A verification key checked once and ready for many proofs.
template <class C>
struct prepared_key {
  verifying_key<C> vk;
  pairing::gt<C> alpha_beta;  ///< e(alpha1, beta2)
  std::string problem;        ///< why the key itself is unusable; empty when it is fine
};

/// Checks the key's points (each in its subgroup, IC of n_public + 1 points)
/// and computes e(alpha1, beta2). A bad key is reported in `problem` and every
/// proof checked against it fails with that reason.
template <class C>
prepared_key<C> prepare(verifying_key<C> vk);

/// Verifies one proof. `count` must equal the key's n_public; values are
/// standard-form and must be below r.
template <class C>
verdict verify(const prepared_key<C>& key, const proof<C>& p, const typename C::scalar* pub,
               std::size_t count);

}  // namespace proofline::zk::groth16
