// A Groth16 verification key: what `snarkjs zkey export verificationkey`
// writes, and what a .zkey carries in its header and IC sections.
#pragma once

#include <cstdint>
#include <vector>

#include "zk/groth16/proving_key.hpp"

namespace proofline::zk::groth16 {

template <class C>
struct verifying_key {
  uint32_t n_public = 0;
  typename C::g1_affine alpha1;
  typename C::g2_affine beta2, gamma2, delta2;
  std::vector<typename C::g1_affine> ic;  ///< n_public + 1 points
};

/// The verification key inside a proving key (a copy of n_public + 5 points).
template <class C>
verifying_key<C> verifying_key_of(const proving_key<C>& pk) {
  return {pk.info.n_public, pk.alpha1, pk.beta2, pk.gamma2, pk.delta2, {pk.ic.begin(), pk.ic.end()}};
}

}  // namespace proofline::zk::groth16
