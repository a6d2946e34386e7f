#include "app/setup_command.hpp"

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <limits>
#include <memory>
#include <ostream>
#include <random>
#include <string>

#include "gpu/cuda/factory.hpp"
#include "zk/dev/fixed_base_engine.hpp"
#include "zk/dev/setup.hpp"
#include "zk/formats/error.hpp"
#include "zk/formats/r1cs.hpp"

namespace proofline::app {

namespace {

const char* const setup_footer =
    R"(ONLY --dev SETUPS: the toxic waste (tau, alpha, beta, gamma, delta) is derived
from the seed and written to DIR/toxic_waste.json, so anyone can forge proofs
for the key. This is for benchmarks and tests. For a real circuit run a
trusted-setup ceremony with snarkjs (powersoftau, groth16 setup, zkey contribute).

WRITES (each file atomically: temp file + rename):
  DIR/circuit.zkey           snarkjs Groth16 proving key of a random sparse R1CS:
                             N constraints plus P + 1 public-input rows, domain
                             2^ceil(log2(N + P + 1)); about half the witness
                             values are 0/1, half full width
  DIR/witness_<i>.wtns       K satisfying witnesses, i = 0..K-1
  DIR/verification_key.json  for `snarkjs groth16 verify`
  DIR/jobs.json              one job proving the K witnesses as partitions,
                             outputs under DIR/out/ (`proofline run DIR/jobs.json`)
  DIR/toxic_waste.json       the secret scalars
  DIR/README.txt             what this is and how to prove and verify

A 2^20 domain: --constraints $(( (1 << 20) - P - 1 )).

A REAL CIRCUIT (--r1cs FILE, a circom .r1cs): the key is for that circuit
(curve, constraints and public signals from the file) and no witnesses or
jobs.json are written; compute witnesses with the circuit's own generator
(snarkjs wtns calculate circuit.wasm input.json w.wtns), then
`proofline prove DIR/circuit.zkey w.wtns proof.json public.json`. A key
for benchmarking a circuit without a ceremony: as insecure as any --dev key.

BACKEND: the key's fixed-base products (millions of k * G in G1 and G2, most
of a setup's time on the CPU) run on CUDA device 0 when one is visible
(--backend auto, the default) or when asked (--backend cuda), else on the
CPU's threads; the log says which and why. The key is the same byte for byte
either way.

EXIT CODES: 0 written; 1 an I/O or GPU error while writing; 2 usage error
(missing --dev, N or K below 1, unknown curve, DIR not writable or not
empty, --backend cuda without a usable CUDA device).)";

std::optional<zk::curve_id> parse_curve(const std::string& s) {
  if (s == "bn254" || s == "bn128") return zk::curve_id::bn254;
  if (s == "bls12_381" || s == "bls12381" || s == "bls12-381") return zk::curve_id::bls12_381;
  return std::nullopt;
}

void start_log(const std::string& level) {
  auto logger = spdlog::get("proofline");
  if (!logger) logger = spdlog::stderr_color_mt("proofline");
  logger->set_pattern("[%H:%M:%S.%e] [%^%l%$] %v");
  spdlog::set_default_logger(logger);
  spdlog::set_level(spdlog::level::from_str(level));
}

/// The fixed-base engine for --backend (null: the CPU's); logs the choice
/// and why. Sets *error when --backend cuda cannot be met.
std::shared_ptr<zk::dev::fixed_base_engine> choose_engine(const std::string& backend,
                                                          std::string* error) {
  if (backend == "cpu") {
    spdlog::info("setup backend: CPU (--backend cpu)");
    return nullptr;
  }
  std::string why;
  const int visible = gpu::cuda_device_count(&why);
  if (visible > 0) {
    try {
      std::shared_ptr<zk::dev::fixed_base_engine> engine = gpu::make_cuda_fixed_base_engine(0);
      spdlog::info("setup backend: {} for the fixed-base products; --backend {} ({} visible)",
                   engine->describe(), backend, visible);
      return engine;
    } catch (const gpu::backend_error& e) {
      why = e.what();
    }
  }
  if (backend == "cuda") {
    *error = "--backend cuda: no usable CUDA device (" + why + ")";
    return nullptr;
  }
  spdlog::info("setup backend: CPU; --backend auto found no usable CUDA device ({})", why);
  return nullptr;
}

}  // namespace

void add_setup_command(cli& c) {
  auto opts = std::make_shared<setup_options>();
  CLI::App* sub = &c.add(
      "setup",
      "Write a synthetic circuit, keys and witnesses, or keys for a circom .r1cs, for benchmarks "
      "(--dev: INSECURE)",
      [opts](std::ostream& out, std::ostream& err) { return setup_command(*opts, out, err); });
  sub->footer(setup_footer);
  sub->add_flag("--dev", opts->dev,
                "Required: a development setup from known toxic waste (INSECURE, benchmarks only)");
  sub->add_option("--curve", opts->curve, "Curve: bn254 or bls12_381")->type_name("CURVE");
  sub->add_option("--r1cs", opts->r1cs,
                  "A circom .r1cs file: a key for that circuit instead of a random one (no "
                  "witnesses; --constraints, --witnesses and --public come from the file)")
      ->type_name("FILE");
  sub->add_option("--constraints", opts->constraints, "Constraints N of the random circuit (>= 1)")
      ->type_name("N");
  sub->add_option("--witnesses", opts->witnesses, "Witnesses K to write (>= 1)")->type_name("K");
  sub->add_option("--out", opts->out_dir, "Output directory; created, must be empty unless --force")
      ->type_name("DIR");
  sub->add_option("--public", opts->n_public, "Public inputs P")
      ->type_name("P")
      ->capture_default_str();
  sub->add_option("--seed", opts->seed,
                  "Seed of the circuit, toxic waste and witnesses (default: random, printed)")
      ->type_name("S");
  sub->add_option("--threads", opts->threads, "Threads; 0 = every hardware thread")
      ->type_name("T")
      ->check(CLI::Range(0u, 4096u))
      ->capture_default_str();
  sub->add_flag("--force", opts->force,
                "Write into a non-empty DIR, replacing the files setup writes (others, such as "
                "old proofs under DIR/out/, are left as they are)");
  sub->add_option("--backend", opts->backend,
                  "Where the key's fixed-base products run: auto (CUDA device 0 when visible, "
                  "else the CPU), cpu or cuda")
      ->check(CLI::IsMember({"auto", "cpu", "cuda"}))
      ->capture_default_str();
  sub->add_option("--log-level", opts->log_level,
                  "Log level on stderr: trace, debug, info, warn, error, off")
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error", "off"}))
      ->capture_default_str();
}

int setup_command(const setup_options& o, std::ostream& out, std::ostream& err) {
  auto usage = [&](const std::string& msg) {
    err << "proofline setup: " << msg << "\n";
    return exit_usage;
  };
  if (!o.dev)
    return usage(
        "only --dev setups are supported: they use known toxic waste and are INSECURE, for "
        "benchmarks and tests only. For a real circuit, run a trusted-setup ceremony with snarkjs "
        "(snarkjs powersoftau ..., snarkjs groth16 setup, snarkjs zkey contribute).");
  zk::dev::setup_options s;
  if (!o.r1cs.empty()) {
    if (o.constraints || o.witnesses || o.n_public != 1)
      return usage(
          "--r1cs takes the circuit from the file: --constraints, --witnesses and --public do "
          "not apply (witnesses come from the circuit's own generator)");
    zk::curve_id file_curve;
    try {
      file_curve = zk::formats::read_r1cs_info(o.r1cs).curve;
    } catch (const zk::formats::format_error& e) {
      return usage(e.what());
    }
    if (!o.curve.empty()) {
      const auto curve = parse_curve(o.curve);
      if (!curve)
        return usage("--curve: unknown curve '" + o.curve + "' (expected bn254 or bls12_381)");
      if (*curve != file_curve)
        return usage("--curve " + o.curve + ", but " + o.r1cs + " is a " +
                     zk::to_string(file_curve) + " circuit");
    }
    if (o.out_dir.empty()) return usage("--out DIR is required");
    s.r1cs_path = o.r1cs;
    s.curve = file_curve;
  } else {
    if (o.curve.empty()) return usage("--curve is required (bn254 or bls12_381)");
    const auto curve = parse_curve(o.curve);
    if (!curve)
      return usage("--curve: unknown curve '" + o.curve + "' (expected bn254 or bls12_381)");
    if (!o.constraints) return usage("--constraints N (or --r1cs FILE) is required");
    if (!o.witnesses) return usage("--witnesses K is required");
    if (o.out_dir.empty()) return usage("--out DIR is required");
    constexpr uint64_t u32_max = std::numeric_limits<uint32_t>::max();
    if (*o.constraints < 1) return usage("--constraints must be at least 1, got 0");
    if (*o.witnesses < 1) return usage("--witnesses must be at least 1, got 0");
    if (*o.constraints > u32_max) return usage("--constraints must be below 2^32");
    if (*o.witnesses > u32_max) return usage("--witnesses must be below 2^32");
    if (o.n_public > u32_max) return usage("--public must be below 2^32");
    s.curve = *curve;
    s.constraints = static_cast<uint32_t>(*o.constraints);
    s.witnesses = static_cast<uint32_t>(*o.witnesses);
    s.n_public = static_cast<uint32_t>(o.n_public);
  }
  s.seed = o.seed ? *o.seed : (uint64_t(std::random_device{}()) << 32) ^ std::random_device{}();
  s.threads = o.threads;
  s.out_dir = o.out_dir;
  s.force = o.force;

  start_log(o.log_level);
  std::string engine_error;
  s.engine = choose_engine(o.backend, &engine_error);
  if (!engine_error.empty()) return usage(engine_error);
  try {
    zk::dev::check_setup(s);  // creates the directory: after every refusal that does not need it
  } catch (const zk::dev::setup_error& e) {
    return usage(e.what());
  }
  zk::dev::setup_result result;
  try {
    result = zk::dev::run_setup(s, [](int level, const std::string& line) {
      if (level > 0)
        spdlog::warn("{}", line);
      else
        spdlog::info("{}", line);
    });
  } catch (const zk::dev::setup_error& e) {
    return usage(e.what());
  }
  out << "INSECURE development setup (seed " << s.seed << ") in " << s.out_dir << ":\n";
  for (const auto& f : result.files) out << "  " << f << "\n";
  out << "domain " << result.domain_size << ", " << result.n_vars << " variables, "
      << fmt::format("{:.2f}", result.seconds) << " s\n"
      << (s.r1cs_path.empty()
              ? "next: proofline run " + s.out_dir + "/jobs.json\n"
              : "next: proofline prove " + s.out_dir +
                    "/circuit.zkey WITNESS.wtns proof.json public.json\n");
  return exit_ok;
}

}  // namespace proofline::app
