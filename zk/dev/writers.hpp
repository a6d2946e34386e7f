// The small files of a development setup, in snarkjs's formats:
//
//   write_wtns                 a witness (.wtns version 2: header section with
//                              n8, the prime r and the count; values section,
//                              standard form, little-endian)
//   verification_key_json      verification_key.json as `snarkjs zkey export
//                              verificationkey` writes it, vk_alphabeta_12
//                              included (gt.hpp)
#pragma once

#include <string>
#include <vector>

#include "zk/dev/gt.hpp"
#include "zk/formats/proof_json.hpp"

namespace proofline::zk::dev {

/// Writes `values` (standard form, below r) to `path` atomically. Throws
/// std::runtime_error naming the file on I/O errors.
template <class C>
void write_wtns(const std::string& path, const std::vector<typename C::scalar>& values);

/// The verification key as JSON text (one-space indent, snarkjs's key order):
/// protocol, curve, nPublic, vk_alpha_1, vk_beta_2, vk_gamma_2, vk_delta_2,
/// vk_alphabeta_12 (= alphabeta, e(alpha1, beta2)), IC.
template <class C>
std::string verification_key_json(const formats::verification_key<C>& vk, const gt<C>& alphabeta);

}  // namespace proofline::zk::dev
