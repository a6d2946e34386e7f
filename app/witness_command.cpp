#include "app/witness_command.hpp"

#include <CLI/CLI.hpp>
#include <chrono>
#include <memory>
#include <ostream>
#include <vector>

#include <fmt/format.h>

#include "app/cli.hpp"
#include "base/exit_codes.hpp"
#include "witness/build.hpp"
#include "witness/generator.hpp"
#include "zk/formats/atomic_file.hpp"
#include "zk/formats/error.hpp"

namespace proofline::app {

namespace {

const char* const witness_footer = R"(From input.json to a witness without node or snarkjs:

  circom circuit.circom --c --r1cs --sym           writes circuit_cpp/, circuit.sym
  proofline witness build circuit_cpp              writes circuit.so
  proofline witness calc circuit.so input.json w.wtns
  proofline prove --input input.json --witness-generator circuit.so circuit.zkey proof.json public.json

`build` compiles circom's generated code (NAME.cpp, calcwit.cpp, fr.cpp, and
fr.asm with nasm when circom wrote it: that needs a CPU with ADX and BMI2;
`circom --c --no_asm` code needs neither) with proofline's own entry point into
one shared object, with the system's C++ compiler and GMP; the circuit's .dat is
inside it, so the object is all a prover needs. NAME.sym beside the directory
(circom --sym) names the input signals in errors. `calc` writes the .wtns
`snarkjs wtns calculate` writes for the same input, byte for byte. `info`
prints what an object reports.

EXIT CODES: 0 done; 1 the build or the computation failed (the message names
the file, the signal or circom's failed assert); 2 usage error.)";

struct witness_options {
  witness::build_options build;
  std::string generator;
  std::string input;
  std::string out;
  bool json = false;
  enum { none, build_cmd, calc_cmd, info_cmd } which = none;
};

int run_build(const witness_options& o, std::ostream& out, std::ostream& err) {
  auto progress = [&err](const std::string& line) { err << "witness build: " << line << std::endl; };
  witness::build_result r = witness::build_generator(o.build, progress);
  auto gen = witness::generator::open(r.output);
  err << fmt::format("witness build: {} in {:.1f} s: {}, {} witness values, {} signals, {} input "
                     "values in {} signals, {} field code\n",
                     r.output, r.seconds, gen->prime_name(), gen->witness_count(),
                     gen->signal_count(), gen->input_count(), gen->inputs().size(),
                     r.uses_asm ? "assembly" : "--no_asm");
  out << r.output << "\n";
  return exit_ok;
}

int run_calc(const witness_options& o, std::ostream& out, std::ostream& err) {
  auto gen = witness::generator::open(o.generator);
  auto t0 = std::chrono::steady_clock::now();
  witness::input_values values = gen->read_inputs(o.input);
  std::vector<uint8_t> w(gen->witness_count() * gen->field_bytes());
  gen->calculate(o.input, values, w.data());
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  zk::formats::write_file_atomic(o.out, witness::wtns_bytes(*gen, w.data()));
  err << fmt::format("witness calc: {} ({} values) in {:.1f} ms\n", o.out, gen->witness_count(), ms);
  return exit_ok;
}

int run_info(const witness_options& o, std::ostream& out) {
  auto gen = witness::generator::open(o.generator);
  out << fmt::format("{}: {}, {}\n", gen->path(), gen->prime_name(),
                     gen->uses_asm() ? "circom's assembly field code (needs ADX and BMI2)"
                                     : "circom's --no_asm field code");
  out << fmt::format("  witness values  {}\n  signals         {}\n  work bytes      {}\n",
                     gen->witness_count(), gen->signal_count(), gen->work_bytes());
  out << fmt::format("  input values    {} in {} signals\n", gen->input_count(), gen->inputs().size());
  for (const auto& s : gen->inputs())
    out << fmt::format("    {}{}\n", s.name.empty() ? fmt::format("#{:016x}", s.hash) : s.name,
                       s.size == 1 ? std::string() : fmt::format(" [{}]", s.size));
  return exit_ok;
}

}  // namespace

void add_witness_command(cli& c) {
  auto opts = std::make_shared<witness_options>();
  CLI::App& w = c.add(
      "witness", "Witness generators from circom's C++ output: build, calc, info",
      [opts](std::ostream& out, std::ostream& err) {
        try {
          switch (opts->which) {
            case witness_options::build_cmd: return run_build(*opts, out, err);
            case witness_options::calc_cmd: return run_calc(*opts, out, err);
            case witness_options::info_cmd: return run_info(*opts, out);
            default: return exit_usage;
          }
        } catch (const std::exception& e) {
          err << "proofline witness: " << e.what() << "\n";
          return exit_failed;
        }
      });
  w.footer(witness_footer);
  w.require_subcommand(1);
  CLI::App* b = w.add_subcommand("build", "Compile the directory `circom --c` wrote into a witness "
                                          "generator (a shared object)");
  b->add_option("dir", opts->build.dir, "NAME_cpp/, as circom --c writes it")
      ->required()->type_name("DIR");
  b->add_option("-o,--output", opts->build.output, "The object to write (default: NAME.so beside DIR)")
      ->type_name("FILE");
  b->add_option("--sym", opts->build.sym,
                "circom's .sym file, for the input signals' names (default: NAME.sym beside DIR)")
      ->type_name("FILE");
  b->add_option("--cxx", opts->build.cxx, "C++ compiler (default: $CXX, else c++)")->type_name("PATH");
  b->add_option("--nasm", opts->build.nasm, "nasm, for fr.asm (default: nasm on PATH)")->type_name("PATH");
  b->add_option("-j,--jobs", opts->build.jobs, "Compilers at once (default: every hardware thread)");
  b->add_flag("--keep-temp", opts->build.keep_temp, "Keep the directory of intermediate files");
  b->parse_complete_callback([opts] { opts->which = witness_options::build_cmd; });
  CLI::App* calc = w.add_subcommand("calc", "Compute a witness from input.json into a .wtns, as "
                                              "`snarkjs wtns calculate`");
  calc->add_option("generator", opts->generator, "The witness generator")->required()->type_name("FILE");
  calc->add_option("input", opts->input, "The input signals, JSON")->required()->type_name("INPUT");
  calc->add_option("out", opts->out, "The .wtns to write")->required()->type_name("WTNS");
  calc->parse_complete_callback([opts] { opts->which = witness_options::calc_cmd; });
  CLI::App* info = w.add_subcommand("info", "Print a witness generator's prime, sizes and inputs");
  info->add_option("generator", opts->generator, "The witness generator")->required()->type_name("FILE");
  info->parse_complete_callback([opts] { opts->which = witness_options::info_cmd; });
}

}  // namespace proofline::app
