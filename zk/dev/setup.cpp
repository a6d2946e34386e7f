#include "zk/dev/setup.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <future>
#include <mutex>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/text.hpp"
#include "base/thread_pool.hpp"
#include "zk/dev/fixed_base_engine.hpp"
#include "zk/dev/gt.hpp"
#include "zk/dev/keygen.hpp"
#include "zk/dev/r1cs.hpp"
#include "zk/dev/toxic_waste.hpp"
#include "zk/dev/writers.hpp"
#include "zk/formats/atomic_file.hpp"
#include "zk/formats/decimal.hpp"
#include "zk/formats/r1cs.hpp"

namespace proofline::zk::dev {

namespace fs = std::filesystem;

namespace {

using base::fixed;
using clock_type = std::chrono::steady_clock;

constexpr const char* zkey_name = "circuit.zkey";
constexpr const char* vk_name = "verification_key.json";
constexpr const char* jobs_name = "jobs.json";
constexpr const char* toxic_name = "toxic_waste.json";
constexpr const char* readme_name = "README.txt";
constexpr const char* out_name = "out";
constexpr const char* job_id = "synthetic";

std::string witness_name(uint32_t i) { return "witness_" + std::to_string(i) + ".wtns"; }

double since(clock_type::time_point t) {
  return std::chrono::duration<double>(clock_type::now() - t).count();
}

std::string curve_label(curve_id c) {
  return c == curve_id::bn254 ? "bn254 (snarkjs: bn128)" : "bls12_381 (snarkjs: bls12381)";
}

std::string command_line(const setup_options& o) {
  if (!o.r1cs_path.empty())
    return "proofline setup --dev --curve " + std::string(to_string(o.curve)) + " --r1cs " +
           o.r1cs_path + " --seed " + std::to_string(o.seed);
  return "proofline setup --dev --curve " + std::string(to_string(o.curve)) + " --constraints " +
         std::to_string(o.constraints) + " --witnesses " + std::to_string(o.witnesses) +
         " --public " + std::to_string(o.n_public) + " --seed " + std::to_string(o.seed);
}

std::string jobs_json(uint32_t witnesses) {
  nlohmann::ordered_json job;
  job["id"] = job_id;
  job["zkey"] = zkey_name;
  auto list = nlohmann::ordered_json::array();
  for (uint32_t i = 0; i < witnesses; ++i) list.push_back(witness_name(i));
  job["witnesses"] = list;
  job["out"] = out_name;
  nlohmann::ordered_json root;
  root["jobs"] = nlohmann::ordered_json::array({job});
  return root.dump(2) + "\n";
}

template <class C>
std::string toxic_json(const setup_options& o, const toxic_waste<C>& tw) {
  nlohmann::ordered_json j;
  j["WARNING"] =
      "INSECURE development setup: these are the secret scalars of circuit.zkey. Anyone who has "
      "them can forge proofs that verification_key.json accepts. For benchmarks and tests only.";
  j["seed"] = o.seed;
  j["curve"] = C::snarkjs_name;
  j["tau"] = formats::to_decimal(tw.tau.to_standard());
  j["alpha"] = formats::to_decimal(tw.alpha.to_standard());
  j["beta"] = formats::to_decimal(tw.beta.to_standard());
  j["gamma"] = formats::to_decimal(tw.gamma.to_standard());
  j["delta"] = formats::to_decimal(tw.delta.to_standard());
  return j.dump(1) + "\n";
}

template <unsigned N>
bool is_bit(const ff::bigint<N>& v) {
  for (unsigned k = 1; k < N; ++k)
    if (v.l[k]) return false;
  return v.l[0] <= 1;
}

/// first_unsatisfied over ranges of rows on the pool's threads: the first
/// row whose (A w) * (B w) != (C w), or n_constraints when every row holds.
template <class C>
uint32_t first_unsatisfied_row(const r1cs<C>& cs, const typename C::scalar* w,
                               base::thread_pool& pool) {
  std::atomic<uint32_t> first{cs.n_constraints};
  pool.for_range(cs.n_constraints, 1 << 14, [&](std::size_t b, std::size_t e) {
    for (std::size_t r = b; r < e && r < first.load(std::memory_order_relaxed); ++r) {
      const auto row = static_cast<uint32_t>(r);
      if (evaluate_row<C>(cs, row, 0, w) * evaluate_row<C>(cs, row, 1, w) ==
          evaluate_row<C>(cs, row, 2, w))
        continue;
      uint32_t seen = first.load();
      while (row < seen && !first.compare_exchange_weak(seen, row)) {
      }
      return;
    }
  });
  return first.load();
}

/// Creates a file in `dir` and removes it: the honest test of writability
/// (access(2) says yes to root on a read-only mount).
void probe_writable(const fs::path& dir) {
  const fs::path probe = dir / (".proofline-setup-probe-" + std::to_string(::getpid()));
  int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0)
    throw setup_error(dir.string() + ": output directory is not writable (" + std::strerror(errno) +
                      ")");
  ::close(fd);
  ::unlink(probe.c_str());
}

template <class C>
setup_result run_typed(const setup_options& o, const setup_log& log) {
  using fr = typename C::fr;
  const auto start = clock_type::now();
  std::mutex log_mutex;  // the witnesses log from their own thread
  auto info = [&](const std::string& s) {
    std::lock_guard<std::mutex> lock(log_mutex);
    if (log) log(0, s);
  };
  auto warn = [&](const std::string& s) {
    std::lock_guard<std::mutex> lock(log_mutex);
    if (log) log(1, s);
  };
  const fs::path dir(o.out_dir);
  base::thread_pool pool(o.threads);
  setup_result res;

  warn(
      "INSECURE development setup: the toxic waste (tau, alpha, beta, gamma, delta) is derived "
      "from seed " +
      std::to_string(o.seed) + " and written to " + (dir / toxic_name).string() +
      "; anyone can forge proofs for this key. For benchmarks and tests only.");

  auto t = clock_type::now();
  const bool from_file = !o.r1cs_path.empty();
  const r1cs<C> cs = from_file ? circom_r1cs<C>(o.r1cs_path)
                               : random_r1cs<C>(o.constraints, o.n_public, o.seed);
  const uint32_t witness_count = from_file ? 0 : o.witnesses;
  res.domain_size = cs.domain_size();
  res.n_vars = cs.n_vars;
  res.n_public = cs.n_public;
  res.n_constraints = cs.n_constraints;
  info("circuit" + (from_file ? " " + o.r1cs_path : std::string()) + ": " +
       std::to_string(cs.n_constraints) + " constraints + " +
       std::to_string(cs.n_public + 1) + " public-input rows, domain 2^" +
       std::to_string(cs.log_domain()) + " = " + std::to_string(cs.domain_size()) + ", " +
       std::to_string(cs.n_vars) + " variables, " + std::to_string(cs.terms.size()) +
       " matrix entries (" + fixed(since(t), 2) + " s)");

  const auto tw = toxic_waste<C>::from_seed(o.seed);
  cpu_fixed_base_engine cpu(pool);
  fixed_base_engine& engine = o.engine ? *o.engine : cpu;
  info("key: fixed-base products on " + engine.describe());

  // Witnesses: one task each, made while the key is written (each is one
  // sequential pass over the rows, and the key's products may be on a GPU,
  // leaving the cores idle); witness 0 is checked against the R1CS. Should
  // the key fail, the future's destructor waits for the witnesses first.
  std::atomic<uint64_t> booleans{0};
  auto witnesses = std::async(std::launch::async, [&] {
    const auto t0 = clock_type::now();
    if (witness_count == 0) return;
    pool.for_each(witness_count, [&](std::size_t i) {
      const auto w = random_witness<C>(cs, o.seed, static_cast<uint32_t>(i));
      if (i == 0) {
        const uint32_t bad = first_unsatisfied_row<C>(cs, w.data(), pool);
        if (bad != cs.n_constraints)
          throw std::logic_error("witness 0 does not satisfy row " + std::to_string(bad) +
                                 " of the synthetic circuit");
        uint64_t count = 0;
        for (const auto& v : w) count += is_bit(v);
        booleans = count;
      }
      write_wtns<C>((dir / witness_name(static_cast<uint32_t>(i))).string(), w);
    });
    info("wrote " + std::to_string(witness_count) + " witnesses in " + fixed(since(t0), 2) +
         " s (beside the key)");
  });

  t = clock_type::now();
  const dev_key<C> key = write_dev_zkey<C>(
      (dir / zkey_name).string(), cs, tw, pool,
      [&](const std::string& step, double s) { info("  key: " + step + " " + fixed(s, 2) + " s"); },
      &engine);
  res.n_coefs = key.n_coefs;
  res.zkey_bytes = key.file_bytes;
  res.files.push_back(zkey_name);
  info("wrote " + (dir / zkey_name).string() + " (" + std::to_string(key.file_bytes >> 20) +
       " MiB, " + std::to_string(key.n_coefs) + " coefficients) in " + fixed(since(t), 2) + " s");

  witnesses.get();
  res.boolean_fraction = double(booleans.load()) / cs.n_vars;
  for (uint32_t i = 0; i < witness_count; ++i) res.files.push_back(witness_name(i));
  if (witness_count)
    info(fixed(100 * res.boolean_fraction, 1) + "% of witness 0's values are 0 or 1");

  const fr ab = tw.alpha * tw.beta;
  const auto alphabeta = pairing_generator_power<C>(ab.to_standard());
  formats::write_file_atomic((dir / vk_name).string(), verification_key_json<C>(key.vk, alphabeta));
  res.files.push_back(vk_name);
  if (witness_count) {
    formats::write_file_atomic((dir / jobs_name).string(), jobs_json(witness_count));
    res.files.push_back(jobs_name);
  }
  formats::write_file_atomic((dir / toxic_name).string(), toxic_json<C>(o, tw));
  res.files.insert(res.files.end(), {toxic_name, readme_name});
  res.seconds = since(start);
  formats::write_file_atomic((dir / readme_name).string(), readme_text(o, res));
  info("setup done in " + fixed(res.seconds, 2) + " s: " + dir.string());
  return res;
}

}  // namespace

void check_setup(const setup_options& o) {
  const unsigned max_log =
      visit_curve(o.curve, [](auto c) { return decltype(c)::fr::params::two_adicity - 1; });
  if (!o.r1cs_path.empty()) {
    const formats::r1cs_info info = formats::read_r1cs_info(o.r1cs_path);
    if (info.curve != o.curve)
      throw setup_error(o.r1cs_path + ": the circuit is over the " + to_string(info.curve) +
                        " scalar field, not " + to_string(o.curve));
    if (info.n_constraints < 1) throw setup_error(o.r1cs_path + ": the circuit has no constraints");
    const uint64_t rows = uint64_t(info.n_constraints) + info.n_public() + 1;
    if (log_domain_for(rows) > max_log)
      throw setup_error(o.r1cs_path + ": " + std::to_string(info.n_constraints) +
                        " constraints need a domain of 2^" + std::to_string(log_domain_for(rows)) +
                        " rows; development setups on " + to_string(o.curve) +
                        " support up to 2^" + std::to_string(max_log));
  } else {
    if (o.constraints < 1) throw setup_error("--constraints must be at least 1");
    if (o.witnesses < 1) throw setup_error("--witnesses must be at least 1");
    const uint64_t rows = uint64_t(o.constraints) + o.n_public + 1;
    if (log_domain_for(rows) > max_log)
      throw setup_error("--constraints " + std::to_string(o.constraints) + " with --public " +
                        std::to_string(o.n_public) + " needs a domain of 2^" +
                        std::to_string(log_domain_for(rows)) + " rows; development setups on " +
                        to_string(o.curve) + " support up to 2^" + std::to_string(max_log));
  }
  if (o.out_dir.empty()) throw setup_error("--out: an output directory is required");

  const fs::path dir(o.out_dir);
  std::error_code ec;
  const auto st = fs::status(dir, ec);
  if (fs::exists(st)) {
    if (!fs::is_directory(st)) throw setup_error(o.out_dir + ": exists and is not a directory");
    if (!o.force && !fs::is_empty(dir, ec))
      throw setup_error(o.out_dir +
                        ": directory is not empty; choose a new directory or pass --force to "
                        "replace the setup files in it");
    if (ec) throw setup_error(o.out_dir + ": cannot read the directory (" + ec.message() + ")");
  } else {
    fs::create_directories(dir, ec);
    if (ec)
      throw setup_error(o.out_dir + ": cannot create the output directory (" + ec.message() + ")");
  }
  probe_writable(dir);
}

setup_result run_setup(const setup_options& opts, const setup_log& log) {
  check_setup(opts);
  return visit_curve(opts.curve, [&](auto c) { return run_typed<decltype(c)>(opts, log); });
}

namespace {

/// The opening of every README.txt: what makes the key insecure.
constexpr const char* readme_warning =
    "proofline development setup -- INSECURE: FOR BENCHMARKS AND TESTS ONLY\n"
    "=======================================================================\n"
    "\n"
    "The Groth16 proving key in this directory was made from KNOWN toxic waste\n"
    "(tau, alpha, beta, gamma, delta), derived from the seed below and listed in\n"
    "toxic_waste.json. Anyone with this directory, or just the seed, can forge\n"
    "proofs that verification_key.json accepts. Never use it to secure anything:\n"
    "real circuits need a trusted-setup ceremony (snarkjs powersoftau, then\n"
    "snarkjs groth16 setup and zkey contribute).\n";

std::string readme_r1cs(const setup_options& o, const setup_result& r) {
  return readme_warning + fmt::format(
      "\n"
      "Made by:\n"
      "  {command}\n"
      "\n"
      "Circuit: {r1cs}\n"
      "  curve            {curve}\n"
      "  constraints      {constraints} + {public_rows} public-input rows\n"
      "  domain           {domain}\n"
      "  variables        {vars} (w0 = 1, {publics} public)\n"
      "  A/B coefficients {coefs}\n"
      "\n"
      "Files:\n"
      "  circuit.zkey            snarkjs Groth16 proving key (sections 1-10; section 10\n"
      "                          holds an INSECURE banner and one contribution named\n"
      "                          INSECURE, not a ceremony's contributions)\n"
      "  verification_key.json   snarkjs verification key\n"
      "  toxic_waste.json        the secret scalars: the reason this is insecure\n"
      "  README.txt              this file\n"
      "\n"
      "Witnesses come from the circuit's own witness generator, e.g.:\n"
      "  snarkjs wtns calculate circuit_js/circuit.wasm input.json witness.wtns\n"
      "Prove and verify:\n"
      "  proofline prove circuit.zkey witness.wtns proof.json public.json\n"
      "  snarkjs groth16 verify verification_key.json public.json proof.json\n",
      fmt::arg("command", command_line(o)), fmt::arg("r1cs", o.r1cs_path),
      fmt::arg("curve", curve_label(o.curve)), fmt::arg("constraints", r.n_constraints),
      fmt::arg("public_rows", r.n_public + 1), fmt::arg("domain", r.domain_size),
      fmt::arg("vars", r.n_vars), fmt::arg("publics", r.n_public), fmt::arg("coefs", r.n_coefs));
}

}  // namespace

std::string readme_text(const setup_options& o, const setup_result& r) {
  if (!o.r1cs_path.empty()) return readme_r1cs(o, r);
  return readme_warning + fmt::format(
      "\n"
      "Made by:\n"
      "  {command}\n"
      "\n"
      "Circuit: a random sparse R1CS with the shape of real ones (not a meaningful\n"
      "computation): boolean, and/xor, select, product-of-sums and linear rows.\n"
      "  curve            {curve}\n"
      "  constraints      {constraints} + {public_rows} public-input rows\n"
      "  domain           {domain}\n"
      "  variables        {vars} (w0 = 1, {publics} public)\n"
      "  A/B coefficients {coefs}\n"
      "  witness values   {boolean:.1f}% are 0 or 1 (witness_0.wtns)\n"
      "\n"
      "Files:\n"
      "  circuit.zkey            snarkjs Groth16 proving key (sections 1-10; section 10\n"
      "                          holds an INSECURE banner and one contribution named\n"
      "                          INSECURE, not a ceremony's contributions)\n"
      "  witness_<i>.wtns        {witnesses} satisfying witnesses (i = 0..{last})\n"
      "  verification_key.json   snarkjs verification key\n"
      "  jobs.json               one job proving every witness as a partition; outputs\n"
      "                          go to out/ (proof_<i>.json, public_<i>.json, result.json)\n"
      "  toxic_waste.json        the secret scalars: the reason this is insecure\n"
      "  README.txt              this file\n"
      "\n"
      "Prove and verify (from this directory):\n"
      "  proofline run jobs.json\n"
      "  snarkjs groth16 verify verification_key.json out/public_0.json out/proof_0.json\n"
      "or every proof at once, from the proofline source tree:\n"
      "  scripts/verify-proofs.sh <this dir>/verification_key.json <this dir>/out\n"
      "snarkjs proves with the same files too:\n"
      "  snarkjs groth16 prove circuit.zkey witness_0.wtns proof.json public.json\n",
      fmt::arg("command", command_line(o)), fmt::arg("curve", curve_label(o.curve)),
      fmt::arg("constraints", o.constraints), fmt::arg("public_rows", o.n_public + 1),
      fmt::arg("domain", r.domain_size), fmt::arg("vars", r.n_vars),
      fmt::arg("publics", o.n_public), fmt::arg("coefs", r.n_coefs),
      fmt::arg("boolean", 100 * r.boolean_fraction), fmt::arg("witnesses", o.witnesses),
      fmt::arg("last", o.witnesses - 1));
}

}  // namespace proofline::zk::dev
