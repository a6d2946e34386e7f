#include "app/prove_command.hpp"

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/scoped_actor.hpp>

#include <stdlib.h>  // mkdtemp

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <memory>
#include <optional>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "actors/detail/prover_ops.hpp"
#include "actors/runtime.hpp"
#include "actors/detail/system_setup.hpp"
#include "engine/runtime_builder.hpp"
#include "app/run_command.hpp"
#include "witness/generator.hpp"
#include "zk/curves.hpp"
#include "zk/formats/atomic_file.hpp"
#include "zk/formats/error.hpp"
#include "zk/formats/r1cs.hpp"
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
checked before anything is proved (their directories must exist). With
--r1cs circuit.r1cs the witness is checked against every constraint first, and
one it breaks is named (exit 2). Check the proof with
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

/// The little-endian u32 at `at` of `bytes` (which holds it).
uint32_t u32_at(const std::string& bytes, std::size_t at) {
  uint32_t v;
  std::memcpy(&v, bytes.data() + at, sizeof v);
  return v;
}

/// What is wrong with the first bytes of a .wtns, as far as `bytes` reaches:
/// the magic, the version and, when the header section comes first (as
/// snarkjs writes it), its element size and value count against the key's.
std::string stream_header_problem(const std::string& bytes, const std::string& shown,
                                  const std::string& zkey, const zk::groth16::key_info& key) {
  if (bytes.size() >= 4 && bytes.compare(0, 4, "wtns") != 0)
    return shown + ": not a wtns file (it does not start with \"wtns\")";
  if (bytes.size() >= 12 && u32_at(bytes, 4) != 2)
    return shown + ": unsupported wtns version " + std::to_string(u32_at(bytes, 4)) +
           " (proofline reads version 2)";
  if (bytes.size() < 28 || u32_at(bytes, 12) != 1) return {};  // header section not first
  const uint32_t n8 = u32_at(bytes, 24);
  if (n8 != key.n8r)
    return shown + ": " + std::to_string(n8) + "-byte field elements, " + zkey + " expects " +
           std::to_string(key.n8r) + " (" + zk::to_string(key.curve) + ")";
  if (bytes.size() < 32 + std::size_t(n8)) return {};
  const uint32_t count = u32_at(bytes, 28 + n8);
  if (count != key.n_vars)
    return shown + ": " + std::to_string(count) + " witness values, " + zkey + " expects " +
           std::to_string(key.n_vars);
  return {};
}

/// Reads a .wtns for `key` from `in` into `out` in steps, checking it as it
/// arrives: its header (stream_header_problem) and its length, which is at
/// most what a witness for the key takes (file header, the two sections'
/// headers, n8 + 8 header bytes and n_vars values), so neither a stream that
/// is no witness nor one that never ends is read whole. Returns the problem
/// naming `shown`, or "" when the bytes are all in.
std::string read_witness_stream(std::istream& in, const std::string& shown,
                                const std::string& zkey, const zk::groth16::key_info& key,
                                std::string& out) {
  const uint64_t n8 = key.n8r;
  const uint64_t most = 12 + (12 + 8 + n8) + (12 + n8 * key.n_vars);
  // The first step ends with the header section, so a stream that is not a
  // witness for this key is refused after those bytes, whatever follows.
  std::size_t step = static_cast<std::size_t>(32 + n8);
  std::vector<char> buf(std::size_t(1) << 20);
  while (in) {
    in.read(buf.data(), static_cast<std::streamsize>(std::min(step, buf.size())));
    const auto got = static_cast<std::size_t>(in.gcount());
    if (got == 0) break;
    out.append(buf.data(), got);
    if (auto problem = stream_header_problem(out, shown, zkey, key); !problem.empty())
      return problem;
    if (out.size() > most)
      return shown + ": more than the " + std::to_string(most) + " bytes a witness for " + zkey +
             " takes (" + std::to_string(key.n_vars) + " values of " + std::to_string(n8) +
             " bytes); not read further";
    step = buf.size();
  }
  if (out.empty()) return shown + ": no witness bytes on standard input";
  return {};
}

void add_r1cs_option(CLI::App& sub, prove_options& opts) {
  sub.add_option("--r1cs", opts.r1cs,
                 "circuit.r1cs (circom --r1cs): check the witness against every constraint "
                 "before proving; one it breaks is named (exit 2)")
      ->type_name("FILE");
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
  sub->add_option("files", opts->files,
                  "ZKEY WITNESS PROOF PUBLIC: circuit.zkey, witness.wtns (- for standard "
                  "input), proof.json and public.json to write; with --input: ZKEY PROOF PUBLIC")
      ->required()
      ->expected(3, 4)
      ->type_name("FILE");
  sub->add_option("--input", opts->input,
                  "input.json: compute the witness from it with --witness-generator")
      ->type_name("INPUT");
  sub->add_option("--witness-generator", opts->generator,
                  "The circuit's witness generator (`proofline witness build`), for --input")
      ->type_name("FILE");
  add_prover_options(*sub, *opts);
  add_r1cs_option(*sub, *opts);
  sub->add_flag("--quiet,-q", opts->quiet, "Print nothing on success; errors only");
  sub->parse_complete_callback([opts, sub] {
    opts->log_level_given = sub->count("--log-level") > 0;
    const auto& f = opts->files;
    const bool generated = !opts->input.empty() || !opts->generator.empty();
    if (opts->input.empty() != opts->generator.empty())
      throw CLI::ValidationError("--input and --witness-generator go together");
    if (generated && f.size() != 3)
      throw CLI::ValidationError("with --input: ZKEY PROOF PUBLIC (three files, no witness)");
    if (!generated && f.size() != 4)
      throw CLI::ValidationError("ZKEY WITNESS PROOF PUBLIC (four files), or --input with "
                                 "--witness-generator and ZKEY PROOF PUBLIC");
    size_t i = 0;
    opts->zkey = f[i++];
    if (!generated) opts->witness = f[i++];
    opts->proof = f[i++];
    opts->public_file = f[i++];
  });
}

void add_fullprove_command(cli& c) {
  auto opts = std::make_shared<prove_options>();
  CLI::App* sub = &c.add("fullprove",
                         "From input.json to proof.json and public.json: the witness by a witness "
                         "generator, then the proof (snarkjs groth16 fullprove's order)",
                         [opts](std::ostream& out, std::ostream& err) {
                           return prove_command(*opts, std::cin, out, err);
                         });
  sub->footer(R"(Same order as `snarkjs groth16 fullprove input.json circuit.wasm circuit.zkey
proof.json public.json`, with the generator `proofline witness build` makes from
`circom --c` output in the place of the .wasm. The same as
  proofline prove --input INPUT --witness-generator GENERATOR ZKEY PROOF PUBLIC
(exit codes as prove's; a bad input exits 2 naming the signal).)");
  sub->add_option("input", opts->input, "input.json: the circuit's input signals")
      ->required()->type_name("INPUT");
  sub->add_option("generator", opts->generator, "The witness generator (`proofline witness build`)")
      ->required()->type_name("GENERATOR");
  sub->add_option("zkey", opts->zkey, "circuit.zkey: the Groth16 proving key")
      ->required()->type_name("ZKEY");
  sub->add_option("proof", opts->proof, "proof.json to write")->required()->type_name("PROOF");
  sub->add_option("public", opts->public_file, "public.json to write")->required()->type_name("PUBLIC");
  add_prover_options(*sub, *opts);
  add_r1cs_option(*sub, *opts);
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
    // As snarkjs and rapidsnark, a missing directory is the caller's mistake,
    // not one to create.
    std::error_code exists_ec;
    if (!dir.empty() && !fs::exists(dir, exists_ec))
      return usage(*file + ": cannot be written: the directory " + dir + " does not exist");
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
  const bool generated = !o.generator.empty();
  const bool from_stdin = !generated && o.witness == "-";
  const std::string shown = generated ? o.input : from_stdin ? "- (standard input)" : o.witness;
  std::string witness = generated ? o.input : o.witness;
  auto shown_text = [&](const std::string& s) {
    return from_stdin ? replace_all(s, witness, shown) : s;
  };
  // The key's header first: it bounds what standard input may hold.
  zk::groth16::key_info info;
  try {
    info = zk::formats::read_zkey_info(o.zkey);
  } catch (const zk::formats::format_error& e) {
    return usage(e.what());
  }
  if (from_stdin) {
    witness = (scratch->path() / "witness.wtns").string();
    std::string bytes;
    if (auto problem = read_witness_stream(in, shown, o.zkey, info, bytes); !problem.empty())
      return usage(problem);
    try {
      zk::formats::write_file_atomic(witness, bytes);
    } catch (const std::exception& e) {
      return usage(e.what());
    }
  }
  try {
    if (generated) {
      // The generator fits the key and the input its signals, before any proving.
      auto gen = witness::generator::open(o.generator);
      std::string problem;
      zk::visit_curve(info.curve, [&](auto curve) {
        const auto m = decltype(curve)::fr::modulus();
        problem = gen->check_key(m.l, info.n8r, info.n_vars, o.zkey);
      });
      if (!problem.empty()) return usage(problem);
      gen->read_inputs(o.input);
    } else if (auto problem = witness_problem(shown, witness, o.zkey, info); !problem.empty()) {
      return usage(problem);
    }
    if (!o.r1cs.empty()) {
      // The constraints are this key's circuit's: the full check of the
      // witness against them runs in the synthesizer.
      const auto r = zk::formats::read_r1cs_info(o.r1cs);
      if (auto problem = constraints_problem(o.r1cs, r.curve, r.n_wires, o.zkey, info);
          !problem.empty())
        return usage(problem);
    }
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
  spec.witness_generator = o.generator;
  spec.r1cs = o.r1cs;
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
    // The inputs, not the proving (a circuit that rejects the input included).
    const bool input = file == o.zkey || file == witness || (generated && file == o.generator) ||
                       (!o.r1cs.empty() && file == o.r1cs);
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
