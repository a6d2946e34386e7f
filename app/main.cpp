// proofline: the command line entry point. See `proofline --help`.
#include <exception>
#include <iostream>

#include <spdlog/spdlog.h>

#include "app/cli.hpp"
#include "app/run_command.hpp"

int main(int argc, char** argv) {
  using namespace proofline::app;
  run_options opts;
  if (auto code = parse_command_line(argc, argv, opts, std::cout, std::cerr)) return *code;
  try {
    setup_logging(opts);
    return run_command(opts, std::cout, std::cerr);
  } catch (const std::exception& e) {
    std::cerr << "proofline: " << e.what() << "\n";
    return exit_failed;
  }
}
