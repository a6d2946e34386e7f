// The secret scalars of a Groth16 setup. Whoever knows them can forge
// proofs for the circuit, which is why a real setup is a multi-party
// ceremony that destroys them. A development setup derives them from a
// seed and prints the seed: INSECURE by design, for benchmarks only.
#pragma once

#include <cstdint>

#include "zk/dev/rng.hpp"

namespace proofline::zk::dev {

/// tau (the evaluation point), alpha, beta, gamma, delta; all nonzero,
/// Montgomery form.
template <class C>
struct toxic_waste {
  using fr = typename C::fr;
  fr tau, alpha, beta, gamma, delta;

  /// The toxic waste of `seed`, drawn in the order tau, alpha, beta, gamma, delta.
  static toxic_waste from_seed(uint64_t seed) {
    rng g = stream(seed, purpose::toxic_waste);
    toxic_waste t;
    t.tau = uniform_nonzero<fr>(g);
    t.alpha = uniform_nonzero<fr>(g);
    t.beta = uniform_nonzero<fr>(g);
    t.gamma = uniform_nonzero<fr>(g);
    t.delta = uniform_nonzero<fr>(g);
    return t;
  }
};

}  // namespace proofline::zk::dev
