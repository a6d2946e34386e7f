// proof.json and public.json as snarkjs writes them: decimal strings, points
// affine with z = 1 ("1"; for G2 ["1", "0"]), protocol "groth16" and the curve's
// snarkjs name. Also the verification-key and proof readers the tests use.
#pragma once

#include <string>

#include "zk/groth16/proof.hpp"

namespace proofline::zk::formats {

/// {"pi_a": [x, y, "1"], "pi_b": [[x.c0, x.c1], [y.c0, y.c1], ["1", "0"]],
///  "pi_c": [x, y, "1"], "protocol": "groth16", "curve": "bn128"}
template <class C>
std::string proof_to_json(const groth16::proof<C>& p);

/// ["<w1>", ..., "<w_nPublic>"]: the public signals, standard form.
template <class C>
std::string public_to_json(const typename C::scalar* values, std::size_t count);

}  // namespace proofline::zk::formats
