// The results of a partition's MSMs and the proof assembled from them.
#pragma once

#include "zk/curves.hpp"

namespace proofline::zk::groth16 {

/// The five multi-scalar multiplications of a Groth16 proof (zk/groth16/prover.hpp):
/// A·w, B1·w, B2·w over all of w; C·w over the private part; H·h.
template <class C>
struct msm_results {
  typename C::g1_jacobian a, b1, c, h;
  typename C::g2_jacobian b2;
};

/// A proof in affine coordinates, as proof.json carries it.
template <class C>
struct proof {
  typename C::g1_affine a;
  typename C::g2_affine b;
  typename C::g1_affine c;
};

}  // namespace proofline::zk::groth16
