#include "app/prove_command.hpp"

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/scoped_actor.hpp>

#include <stdlib.h>  // mkdtemp

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <memory>
#include <optional>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "actors/prover_ops.hpp"
#include "actors/runtime.hpp"
#include "actors/system_setup.hpp"
#include "engine/runtime_builder.hpp"
#include "app/run_command.hpp"
#include "zk/formats/atomic_file.hpp"
#include "zk/formats/error.hpp"
#include "zk/formats/wtns.hpp"
#include "zk/formats/zkey.hpp"

namespace proofline::app {

namespace fs = std::filesystem;

namespace {

const char* const prove_footer = R"(Same arguments as rapidsnark's prover; `snarkjs groth16 prove circuit.zkey
witness.wtns proof.json public.json` writes the same two files. WITNESS may be
- to read the .wtns from standard input. The proof goes through the same
runtime as `proofline run` (same backends; checked by pairing before it is
written unless --no-verify; a failed check or backend error is proved again
on the same backend, then on another GPU or the CPU). proof.json and
public.json are written atomically; inputs and output directories are
checked before anything is proved. Check the proof with
  proofline verify circuit.zkey public.json proof.json
  snarkjs groth16 verify verification_key.json public.json proof.json

EXIT CODES: 0 proof written; 1 proving failed (the error names the partition
and the backend); 2 usage or input error (a missing or malformed .zkey or
.wtns, a witness that does not fit the key, an output directory that cannot
be written, --backend cuda without a usable GPU).)";

/// A private directory under the system's temporary directory, removed
/// with everything in it when this goes out of scope.
class scratch_dir {
 public:
  scratch_dir() {
    std::string tmpl = (fs::temp_directory_path() / "proofline-prove-XXXXXX").string();
    if (!mkdtemp(tmpl.data()))
      throw std::runtime_error(tmpl + ": cannot create a temporary directory: " +
                               std::strerror(errno));
    path_ = tmpl;
  }
  ~scratch_dir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  scratch_dir(const scratch_dir&) = delete;
  scratch_dir& operator=(const scratch_dir&) = delete;
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

std::string read_text(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) throw std::runtime_error(p.string() + ": cannot open");
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

/// Replaces every occurrence of `from` in `s` with `to`.
std::string replace_all(std::string s, const std::string& from, const std::string& to) {
  if (from.empty()) return s;
  for (std::size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size()))
    s.replace(at, from.size(), to);
  return s;
}

/// Why the witness cannot be proved with the key, from the headers alone;
/// empty when its length and element size fit.
std::string witness_problem(const std::string& shown, const std::string& path,
                            const std::string& zkey, const zk::groth16::key_info& key) {
  const auto w = zk::formats::read_wtns_info(path);
  if (w.n8 != key.n8r)
    return shown + ": " + std::to_string(w.n8) + "-byte field elements, " + zkey + " expects " +
           std::to_string(key.n8r) + " (" + zk::to_string(key.curve) + ")";
  if (w.count != key.n_vars)
    return shown + ": " + std::to_string(w.count) + " witness values, " + zkey + " expects " +
           std::to_string(key.n_vars);
  return {};
}

}  // namespace

void add_prove_command(cli& c) {
  auto opts = std::make_shared<prove_options>();
  CLI::App* sub = &c.add("prove",
                         "Prove one witness into proof.json and public.json (as rapidsnark, or "
                         "`snarkjs groth16 prove`)",
                         [opts](std::ostream& out, std::ostream& err) {
                           return prove_command(*opts, std::cin, out, err);
                         });
  sub->footer(prove_footer);
  sub->add_option("zkey", opts->zkey, "circuit.zkey: the Groth16 proving key")
      ->required()
      ->type_name("ZKEY");
  sub->add_option("witness", opts->witness, "witness.wtns, or - for standard input")
      ->required()
      ->type_name("WITNESS");
  sub->add_option("proof", opts->proof, "proof.json to write")->required()->type_name("PROOF");
  sub->add_option("public", opts->public_file, "public.json to write (the public signals)")
      ->required()
      ->type_name("PUBLIC");
  add_prover_options(*sub, *opts);
  sub->add_flag("--quiet,-q", opts->quiet, "Print nothing on success; errors only");
  sub->parse_complete_callback(
      [opts, sub] { opts->log_level_given = sub->count("--log-level") > 0; });
}

int prove_command(const prove_options& o, std::istream& in, std::ostream& out,
                  std::ostream& err) {
  run_options logging;
  logging.log_level = o.log_level;
  logging.log_level_given = o.log_level_given;
  logging.quiet = o.quiet;
  setup_logging(logging);
  auto usage = [&](const std::string& message) {
    err << "proofline prove: " << message << "\n";
    return exit_usage;
  };

  // 1. Outputs, inputs and the backend, all before anything is proved.
  if (fs::path(o.proof).lexically_normal() == fs::path(o.public_file).lexically_normal())
    return usage(o.proof + ": given as both PROOF and PUBLIC");
  for (const auto* file : {&o.proof, &o.public_file}) {
    const std::string dir = fs::path(*file).parent_path().string();
    if (auto problem = zk::formats::writable_dir_problem(dir); !problem.empty())
      return usage(*file + ": cannot be written: " + problem);
    std::error_code ec;
    if (fs::is_directory(*file, ec)) return usage(*file + ": is a directory");
  }
  std::optional<scratch_dir> scratch;
  try {
    scratch.emplace();
  } catch (const std::exception& e) {
    return usage(e.what());
  }
  const bool from_stdin = o.witness == "-";
  const std::string shown = from_stdin ? "- (standard input)" : o.witness;
  std::string witness = o.witness;
  if (from_stdin) {
    witness = (scratch->path() / "witness.wtns").string();
    const std::string bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    if (bytes.empty()) return usage(shown + ": no witness bytes on standard input");
    try {
      zk::formats::write_file_atomic(witness, bytes);
    } catch (const std::exception& e) {
      return usage(e.what());
    }
  }
  auto shown_text = [&](const std::string& s) {
    return from_stdin ? replace_all(s, witness, shown) : s;
  };
  zk::groth16::key_info info;
  try {
    info = zk::formats::read_zkey_info(o.zkey);
    if (auto problem = witness_problem(shown, witness, o.zkey, info); !problem.empty())
      return usage(problem);
  } catch (const zk::formats::format_error& e) {
    return usage(shown_text(e.what()));
  }
  // 2. One job of one partition through the runtime, into the scratch directory.
  engine::runtime_settings settings = o;
  settings.finalizers = 1;
  std::optional<engine::runtime_builder> builder;
  try {
    builder.emplace(settings, engine::runtime_role{});
  } catch (const std::exception& e) {
    return usage(e.what());
  }
  if (auto problem = builder->choose(); !problem.empty()) return usage(problem);
  job_spec spec;
  spec.id = o.proof;
  spec.zkey = o.zkey;
  spec.witnesses = {witness};
  spec.single = true;
  spec.out = scratch->path().string();

  caf::actor_system_config cfg;
  configure_actor_system(cfg);
  caf::actor_system sys{cfg};
  job_report report;
  bool answered = false;
  try {
    auto started = builder->start(sys);
    runtime& rt = *started;
    caf::scoped_actor self{sys};
    std::optional<uint64_t> seq;
    std::string refused;
    self->request(rt.registry(), caf::infinite, submit_atom::value, spec)
        .receive([&](uint64_t s) { seq = s; }, [&](caf::error& e) { refused = sys.render(e); });
    if (seq)
      self->request(rt.registry(), caf::infinite, await_atom::value, *seq)
          .receive(
              [&](job_report& r) {
                report = std::move(r);
                answered = true;
              },
              [&](caf::error& e) { refused = sys.render(e); });
    rt.shutdown();
    if (!answered) {
      err << "proofline prove: the runtime did not prove " << shown << ": " << refused << "\n";
      return exit_failed;
    }
  } catch (const std::invalid_argument& e) {  // the runtime refused its configuration
    return usage(e.what());
  }

  // 3. The outputs, or the error naming the file.
  if (report.state != job_state::done) {
    const std::string message =
        report.has_error ? shown_text(report.error.message)
                         : std::string("the job ") + to_string(report.state);
    err << "proofline prove: " << message << "\n";
    const std::string& file = report.error.file;
    const bool input = file == o.zkey || file == witness;  // the inputs, not the proving
    return input ? exit_usage : exit_failed;
  }
  const partition_report& part = report.partitions.at(0);
  try {
    zk::formats::write_file_atomic(o.proof, read_text(scratch->path() / part.proof_file));
    zk::formats::write_file_atomic(o.public_file, read_text(scratch->path() / part.public_file));
  } catch (const std::exception& e) {
    err << "proofline prove: " << e.what() << "\n";
    return exit_failed;
  }
  if (!o.quiet) {
    const auto& s = part.spans;
    out << o.proof << ", " << o.public_file << ": proved on " << s.backend << " in "
        << fmt::format("{:.1f}", s.finalize.end - s.synthesize.start) << " ms";
    if (part.verified)
      out << ", verified by pairing in " << fmt::format("{:.2f}", part.verify_ms) << " ms";
    else
      out << ", not checked (--no-verify)";
    if (part.retries) out << ", after " << part.retries << " retr" << (part.retries == 1 ? "y" : "ies");
    out << "\n";
  }
  return exit_ok;
}

}  // namespace proofline::app
