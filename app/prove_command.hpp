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
#include <vector>

#include "app/cli.hpp"

namespace proofline::app {

/// What `proofline prove` was asked to do: its files, and of the runtime
/// options those of add_prover_options (the rest keep their defaults).
struct prove_options : runtime_options {
  prove_options() { log_level = "warn"; }
  std::string zkey, witness, proof, public_file;
  /// --input and --witness-generator: the witness is computed from input.json
  /// by the generator (`proofline witness build`) instead of read from a .wtns.
  std::string input, generator;
  /// --r1cs: the circuit's constraints; the witness is checked against them
  /// before it is proved, naming the first one it breaks.
  std::string r1cs;
  std::vector<std::string> files;  ///< the positional arguments, as given
  bool log_level_given = false;
  bool quiet = false;
};

/// Registers `prove` on the cli; the options live as long as the cli.
void add_prove_command(cli& c);

/// Registers `fullprove INPUT GENERATOR ZKEY PROOF PUBLIC`: snarkjs's
/// `groth16 fullprove` order, with the witness generator in the place of
/// the circuit's .wasm; the same as prove --input --witness-generator.
void add_fullprove_command(cli& c);

/// Runs the command; `in` is the witness when opts.witness is "-".
int prove_command(const prove_options& opts, std::istream& in, std::ostream& out,
                  std::ostream& err);

}  // namespace proofline::app
