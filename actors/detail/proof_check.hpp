// The pairing check of a finished partition's proof.json and public.json
// against its proving key's verification key, for proofs this process did
// not just assemble: a node's proof text on its coordinator (actors/
// cluster_dispatcher.hpp) and the proof files of journaled partitions after a
// restart (actors/journal.hpp). Defined in library proofline_prover_ops (it
// needs zk/), so actor tests link fakes instead.
#pragma once

#include <cstddef>
#include <string>

#include "zk/groth16/proving_key.hpp"

namespace proofline {

/// proof.json's text is a few hundred bytes: larger text is refused unread.
inline constexpr std::size_t max_proof_text_bytes = 64 << 10;

/// Why `proof_json` and `public_json` (named `proof_name` and `public_name`
/// in messages) are not a proof that verifies against `key`; empty when they
/// are. Uses the key's prepared verifier when it carries one
/// (proving_key_base::verifier), else prepares the verification key for
/// this call. Never throws.
std::string check_proof_text(const zk::groth16::key_ptr& key, const std::string& proof_json,
                             const std::string& public_json, const std::string& proof_name,
                             const std::string& public_name);

/// The same for the files at `proof_file` and `public_file`.
std::string check_proof_files(const zk::groth16::key_ptr& key, const std::string& proof_file,
                              const std::string& public_file);

}  // namespace proofline
