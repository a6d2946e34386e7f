// `proofline prove circuit.zkey witness.wtns proof.json public.json`: one
// proof, in rapidsnark's argument order (`snarkjs groth16 prove` takes the
// same three files and writes the same two). The witness may be `-`: read
// from standard input.
//
// It runs the same runtime as `run` (one job of one partition, on the same
// backends, checked by pairing before it is written unless --no-verify, with
// the same retries), in a private temporary directory; proof.json and
// public.json are then written atomically where asked. Inputs and output
// directories are checked before anything is proved.
//
// Exit codes: 0 proof written; 1 proving failed (a proof that failed its
// check on every backend, a backend error); 2 usage or input error (a
// missing or malformed .zkey or .wtns, a witness that does not fit the key,
// an output directory that cannot be written, a backend that is not there).
#pragma once

#include <iosfwd>
#include <string>

#include "app/cli.hpp"

namespace proofline::app {

/// What `proofline prove` was asked to do: its files, and of the runtime
/// options those of add_prover_options (the rest keep their defaults).
struct prove_options : runtime_options {
  prove_options() { log_level = "warn"; }
  std::string zkey, witness, proof, public_file;
  bool log_level_given = false;
  bool quiet = false;
};

/// Registers `prove` on the cli; the options live as long as the cli.
void add_prove_command(cli& c);

/// Runs the command; `in` is the witness when opts.witness is "-".
int prove_command(const prove_options& opts, std::istream& in, std::ostream& out,
                  std::ostream& err);

}  // namespace proofline::app
