// `proofline verify verification_key.json public.json proof.json`: checks a
// Groth16 proof by pairing, in `snarkjs groth16 verify`'s argument order.
// The key may also be a .zkey (its own verification key is used).
//
// Exit codes: 0 valid; 1 invalid (the reason printed); 2 unreadable input
// (the file and the problem printed) or a usage error.
#pragma once

#include <iosfwd>
#include <string>

#include "app/cli.hpp"

namespace proofline::app {

struct verify_options {
  std::string key_file, public_file, proof_file;
  bool json = false;  ///< one JSON object on stdout instead of a line of text
};

/// Registers `verify` on the cli; the options live as long as the cli.
void add_verify_command(cli& c);

/// Runs the command (see the exit codes above).
int verify_command(const verify_options& opts, std::ostream& out, std::ostream& err);

}  // namespace proofline::app
