// `proofline setup --dev`: writes a synthetic circuit's proving key,
// witnesses, verification key and job file from known toxic waste
// (zk/dev/setup.hpp). INSECURE by design: for benchmarks and tests only;
// real circuits need a snarkjs trusted-setup ceremony.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>

#include "app/cli.hpp"

namespace proofline::app {

/// What `proofline setup` was asked to do, as parsed (checked when it runs).
struct setup_options {
  bool dev = false;
  std::string curve;
  std::string r1cs;  ///< a circom .r1cs: its key instead of a random circuit's
  std::optional<uint64_t> constraints, witnesses;
  uint64_t n_public = 1;
  std::optional<uint64_t> seed;  ///< none: a random seed, printed
  unsigned threads = 0;          ///< 0: every hardware thread
  std::string out_dir;
  bool force = false;
  std::string backend = "auto";  ///< auto | cpu | cuda: where the key's fixed-base products run
  std::string log_level = "info";
};

/// Registers `setup` on the cli; the options live as long as the cli.
void add_setup_command(cli& c);

/// Runs the command: exit_ok, exit_usage (bad options, unusable directory,
/// --backend cuda without a usable GPU: one line on `err` naming the option
/// or directory) or exit_failed (I/O error while writing). The summary goes
/// to `out`, the log to stderr.
int setup_command(const setup_options& opts, std::ostream& out, std::ostream& err);

}  // namespace proofline::app
