// proof.json and public.json as snarkjs writes them: decimal strings, points
// affine with z = 1 ("1"; for G2 ["1", "0"]), protocol "groth16" and the curve's
// snarkjs name. Also the verification-key and proof readers the tests use.
//
// Output is byte for byte what snarkjs writes (one-space indent, keys in
// snarkjs's order, no trailing newline). The point at infinity is written and
// read as snarkjs writes it: ["0", "1", "0"] (G2: [["0","0"],["1","0"],["0","0"]]).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "zk/formats/error.hpp"
#include "zk/groth16/proof.hpp"
#include "zk/groth16/verifying_key.hpp"

namespace proofline::zk::formats {

/// {"pi_a": [x, y, "1"], "pi_b": [[x.c0, x.c1], [y.c0, y.c1], ["1", "0"]],
///  "pi_c": [x, y, "1"], "protocol": "groth16", "curve": "bn128"}
template <class C>
std::string proof_to_json(const groth16::proof<C>& p);

/// ["<w1>", ..., "<w_nPublic>"]: the public signals, standard form.
template <class C>
std::string public_to_json(const typename C::scalar* values, std::size_t count);

/// A Groth16 verification key as `snarkjs zkey export verificationkey` writes it.
template <class C>
using verification_key = groth16::verifying_key<C>;

/// Reads verification_key.json: protocol "groth16", curve C::snarkjs_name,
/// every coordinate a decimal below q, every point on its curve, IC of
/// nPublic + 1 points. Throws format_error naming the file and the field.
template <class C>
verification_key<C> read_verification_key(const std::string& path);

/// Reads proof.json with the same checks; with check_curve false, points off
/// their curve are returned as read (for a verifier that reports them as an
/// invalid proof rather than an unreadable file). Throws format_error.
template <class C>
groth16::proof<C> read_proof(const std::string& path, bool check_curve = true);

/// Reads public.json: an array of decimal strings below r. Throws format_error.
template <class C>
std::vector<typename C::scalar> read_public(const std::string& path);

/// read_proof and read_public on text in memory (a node's proof on a
/// coordinator); errors name `name`.
template <class C>
groth16::proof<C> parse_proof(const std::string& text, const std::string& name,
                              bool check_curve = true);
template <class C>
std::vector<typename C::scalar> parse_public(const std::string& text, const std::string& name);

}  // namespace proofline::zk::formats
