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

#include "zk/curves.hpp"
#include "zk/formats/error.hpp"
#include "zk/formats/json_limits.hpp"
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

/// What each file may hold (json_limits.hpp), from what real files need;
/// a file past a limit is refused naming it ("vk.json: nested deeper than 6
/// arrays and objects"). A verification key as snarkjs writes it takes about
/// 170 bytes (BN254) to 250 (BLS12-381) and 4 values per IC point, so 64 MiB
/// and 2^20 values hold keys of some 250,000 public signals; public.json
/// takes under 130 bytes a signal; proof.json is under 1 KiB.
inline constexpr json_limits verification_key_limits{uint64_t(64) << 20, max_json_depth,
                                                     uint64_t(1) << 20};
inline constexpr json_limits public_limits{uint64_t(32) << 20, max_json_depth, uint64_t(1) << 20};
inline constexpr json_limits proof_limits{uint64_t(64) << 10, max_json_depth, 256};

/// JSON text in memory, read as a file called `name` would be (messages name `name`).
struct json_text {
  std::string name;
  std::string text;
};

/// A Groth16 verification key as `snarkjs zkey export verificationkey` writes it.
template <class C>
using verification_key = groth16::verifying_key<C>;

/// Reads verification_key.json: protocol "groth16", curve C::snarkjs_name,
/// every coordinate a decimal below q, every point on its curve, IC of
/// nPublic + 1 points. Throws format_error naming the file and the field.
template <class C>
verification_key<C> read_verification_key(const std::string& path);
template <class C>
verification_key<C> read_verification_key(const json_text& text);

/// The curve verification_key.json names ("curve": "bn128" or "bls12381"),
/// read within verification_key_limits. Throws format_error naming the file.
curve_id verification_key_curve(const std::string& path);

/// Reads proof.json with the same checks; with check_curve false, points off
/// their curve are returned as read (for a verifier that reports them as an
/// invalid proof rather than an unreadable file). Throws format_error.
template <class C>
groth16::proof<C> read_proof(const std::string& path, bool check_curve = true);
template <class C>
groth16::proof<C> read_proof(const json_text& text, bool check_curve = true);

/// Reads public.json: an array of decimal strings below r. Throws format_error.
template <class C>
std::vector<typename C::scalar> read_public(const std::string& path);
template <class C>
std::vector<typename C::scalar> read_public(const json_text& text);

}  // namespace proofline::zk::formats
