// proofline: the command line entry point. See `proofline --help`.
//
// Every subcommand registers itself on the cli (app/cli.hpp) from its own
// file; add new ones here.
#include <exception>
#include <iostream>

#include "app/bench_command.hpp"
#include "app/cli.hpp"
#include "app/error_stream.hpp"
#include "app/run_command.hpp"
#include "app/setup_command.hpp"
#include "app/client_command.hpp"
#include "app/prove_command.hpp"
#include "app/serve_command.hpp"
#include "app/submit_command.hpp"
#include "app/tls_command.hpp"
#include "app/verify_command.hpp"
#include "app/version.hpp"
#include "app/witness_command.hpp"

int main(int argc, char** argv) {
  using namespace proofline::app;
  cli commands;
  commands.set_version(version_details);  // app/version.hpp
  run_options run_opts;
  add_run_command(commands, run_opts, [&run_opts](std::ostream& out, std::ostream& err) {
    setup_logging(run_opts);
    return run_command(run_opts, out, err);
  });
  add_setup_command(commands);
  add_serve_command(commands);    // remote control and clusters (docs/CLUSTER.md)
  add_submit_command(commands);
  add_client_commands(commands);  // status, cancel, await, metrics
  add_tls_command(commands);      // TLS credentials of serve and its peers
  add_bench_command(commands);    // benchmarks (bench/registry.hpp)
  add_prove_command(commands);    // one proof, rapidsnark's arguments (app/prove_command.hpp)
  add_fullprove_command(commands);  // input.json to a proof, snarkjs fullprove's order
  add_verify_command(commands);   // verify a proof by pairing (app/verify_command.hpp)
  add_witness_command(commands);  // witness generators from circom --c (app/witness_command.hpp)

  // Errors go to error_stream(): stderr as text, or JSON lines once a
  // command's setup_logging has read --log-format json.
  std::ostream& err = error_stream();
  if (auto code = commands.parse(argc, argv, std::cout, err)) return *code;
  int code = exit_failed;
  try {
    code = commands.run(std::cout, err);
  } catch (const std::exception& e) {
    err << "proofline: " << e.what() << "\n";
  }
  flush_error_stream();
  return code;
}
