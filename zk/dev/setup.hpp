// `proofline setup --dev`: a whole benchmark directory from a seed.
//
//   DIR/circuit.zkey           snarkjs Groth16 proving key (keygen.hpp)
//   DIR/witness_<i>.wtns       K satisfying witnesses (r1cs.hpp)
//   DIR/verification_key.json  for `snarkjs groth16 verify`
//   DIR/jobs.json              one job proving the K witnesses as partitions,
//                              outputs under DIR/out/ (paths relative to DIR)
//   DIR/toxic_waste.json       the secret scalars, in decimal
//   DIR/README.txt             what this is (INSECURE) and how to use it
//
// With a circom .r1cs file (setup_options::r1cs_path) the key is that
// circuit's and no witnesses or jobs.json are written: the circuit's own
// witness generator computes its witnesses.
//
// Every file is written atomically (temp file + rename). The circuit, the
// toxic waste and each witness come from independent streams of the seed, so
// the same seed gives the same circuit and key whatever K is.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "zk/curves.hpp"

namespace proofline::zk::dev {

class fixed_base_engine;

struct setup_options {
  curve_id curve = curve_id::bn254;
  /// A circom .r1cs file: the key is for its circuit (curve, constraints
  /// and public signals from the file; `constraints`, `witnesses` and
  /// `n_public` unused). Empty: a random circuit.
  std::string r1cs_path;
  uint32_t constraints = 0;  ///< N >= 1
  uint32_t witnesses = 0;    ///< K >= 1
  uint32_t n_public = 1;     ///< P
  uint64_t seed = 0;
  unsigned threads = 0;  ///< 0: every hardware thread
  std::string out_dir;
  bool force = false;  ///< write into a non-empty out_dir
  /// Computes the key's fixed-base products (fixed_base_engine.hpp); none:
  /// the CPU, on `threads` threads.
  std::shared_ptr<fixed_base_engine> engine;
};

/// A problem the user must fix (bad option values, an unusable output
/// directory); what() names the option or directory and the problem.
class setup_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct setup_result {
  uint32_t domain_size = 0;
  uint32_t n_vars = 0;
  uint32_t n_public = 0;       ///< public signals
  uint32_t n_constraints = 0;  ///< constraints, public-input rows not included
  uint64_t n_coefs = 0;
  uint64_t zkey_bytes = 0;
  double boolean_fraction = 0;     ///< share of witness 0's values that are 0 or 1
  double seconds = 0;              ///< whole setup
  std::vector<std::string> files;  ///< written, relative to out_dir
};

/// Log lines as the setup goes: level (0 info, 1 warning) and text; called
/// from one thread at a time (the witnesses, made beside the key, log too).
using setup_log = std::function<void(int level, const std::string& line)>;

/// Checks the options (throws setup_error on N or K of 0, a domain beyond the
/// curve's limit, an .r1cs file of another curve; formats::format_error for
/// an unreadable .r1cs) and the output directory: creates it; refuses one that is
/// not a directory, not writable, or not empty unless `force`.
void check_setup(const setup_options& opts);

/// Runs the whole setup; check_setup first. Throws setup_error for the
/// user's problems and std::runtime_error (naming the file) for I/O errors.
setup_result run_setup(const setup_options& opts, const setup_log& log = {});

/// The README.txt text for a setup (exposed for tests).
std::string readme_text(const setup_options& opts, const setup_result& r);

}  // namespace proofline::zk::dev
