#include "app/verify_command.hpp"

#include <CLI/CLI.hpp>
#include <array>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <ostream>

#include "zk/formats/error.hpp"
#include "zk/formats/proof_json.hpp"
#include "zk/formats/zkey.hpp"
#include "zk/groth16/verifier.hpp"

namespace proofline::app {

namespace {

const char* const verify_footer =
    R"(Same arguments as `snarkjs groth16 verify`. KEY is verification_key.json as
`snarkjs zkey export verificationkey` writes it, or the circuit's .zkey.
Every point must be in its prime-order subgroup and every public signal below
the scalar field prime; the proof is checked with one pairing product.

Arguments in another order (a proof first, say) are named, each with what it
looks like (argument 1 looks like a proof: it has pi_a), and verify exits 2.

EXIT CODES: 0 valid; 1 invalid (the reason is printed); 2 unreadable input
(the file and the problem are printed), arguments out of order, or a usage
error.)";

/// What one of verify's files looks like from its first bytes.
enum class role { unknown, key, proof, public_signals };

struct look {
  role what = role::unknown;
  const char* sign = "";  ///< what gave it away, for the message
};

/// How much of a file the look reads: a key or proof names its first field
/// well within it.
constexpr std::size_t look_bytes = 1 << 20;

/// A .zkey (its magic), a verification key (has vk_alpha_1), a proof (has
/// pi_a) or public signals (a JSON array of strings or numbers); unknown for
/// anything else, and for what is not a regular file or cannot be read.
look look_of(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return {};
  std::ifstream f(path, std::ios::binary);
  std::string head(look_bytes, '\0');
  f.read(head.data(), static_cast<std::streamsize>(head.size()));
  head.resize(static_cast<std::size_t>(f.gcount()));
  if (head.compare(0, 4, "zkey") == 0) return {role::key, "a .zkey's header"};
  if (head.find("\"vk_alpha_1\"") != std::string::npos) return {role::key, "has vk_alpha_1"};
  if (head.find("\"pi_a\"") != std::string::npos) return {role::proof, "has pi_a"};
  // Public signals: an array of decimal strings or numbers (an array of
  // arrays, as a hostile or broken file may be, is not taken for them).
  const auto first = head.find_first_not_of(" \t\r\n");
  if (first == std::string::npos || head[first] != '[') return {};
  const auto next = head.find_first_not_of(" \t\r\n", first + 1);
  if (next != std::string::npos &&
      (head[next] == '"' || head[next] == ']' || head[next] == '-' ||
       (head[next] >= '0' && head[next] <= '9')))
    return {role::public_signals, "a JSON array"};
  return {};
}

const char* role_name(role r) {
  switch (r) {
    case role::key: return "a verification key";
    case role::proof: return "a proof";
    case role::public_signals: return "public signals";
    case role::unknown: break;
  }
  return "unknown";
}

/// When a file given looks like one that belongs in another position, which
/// argument looks like what; empty otherwise.
std::string order_problem(const verify_options& o) {
  const std::array<std::pair<const std::string*, role>, 3> args{
      {{&o.key_file, role::key}, {&o.public_file, role::public_signals}, {&o.proof_file, role::proof}}};
  std::string problem;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const look l = look_of(*args[i].first);
    if (l.what == role::unknown || l.what == args[i].second) continue;
    problem += std::string(problem.empty() ? "" : ", ") + "argument " + std::to_string(i + 1) +
               " (" + *args[i].first + ") looks like " + role_name(l.what) + " (" + l.sign + ")";
  }
  if (problem.empty()) return problem;
  return "the arguments are out of order: " + problem +
         "; the order is KEY PUBLIC PROOF, as for snarkjs groth16 verify";
}

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

struct outcome {
  zk::groth16::verdict verdict;
  zk::curve_id curve = zk::curve_id::bn254;
  std::size_t n_public = 0;
  double verify_ms = 0;
};

template <class C>
outcome check(const verify_options& o) {
  zk::groth16::verifying_key<C> vk;
  if (ends_with(o.key_file, ".zkey")) {
    const auto pk = zk::formats::load_zkey(o.key_file);
    if (pk->info.curve != C::id)
      throw zk::formats::format_error(o.key_file, "not a " + std::string(C::name) + " key");
    vk = zk::groth16::verifying_key_of(zk::groth16::typed<C>(*pk));
  } else {
    vk = zk::formats::read_verification_key<C>(o.key_file);
  }
  const auto pub = zk::formats::read_public<C>(o.public_file);
  const auto proof = zk::formats::read_proof<C>(o.proof_file, /*check_curve=*/false);
  const auto start = std::chrono::steady_clock::now();
  outcome r;
  r.verdict = zk::groth16::verify<C>(zk::groth16::prepare<C>(std::move(vk)), proof, pub.data(),
                                     pub.size());
  r.verify_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  r.curve = C::id;
  r.n_public = pub.size();
  return r;
}

}  // namespace

void add_verify_command(cli& c) {
  auto opts = std::make_shared<verify_options>();
  CLI::App* sub = &c.add(
      "verify", "Check a Groth16 proof by pairing (as `snarkjs groth16 verify`)",
      [opts](std::ostream& out, std::ostream& err) { return verify_command(*opts, out, err); });
  sub->footer(verify_footer);
  sub->add_option("key", opts->key_file, "verification_key.json (or the circuit's .zkey)")
      ->required()
      ->type_name("KEY");
  sub->add_option("public", opts->public_file, "public.json: the public signals")
      ->required()
      ->type_name("PUBLIC");
  sub->add_option("proof", opts->proof_file, "proof.json")->required()->type_name("PROOF");
  sub->add_flag("--json", opts->json, "Print one JSON object instead of a line of text");
}

int verify_command(const verify_options& o, std::ostream& out, std::ostream& err) {
  nlohmann::ordered_json j;
  j["proof"] = o.proof_file;
  j["public"] = o.public_file;
  j["key"] = o.key_file;
  outcome r;
  try {
    const auto curve = ends_with(o.key_file, ".zkey") ? zk::formats::read_zkey_info(o.key_file).curve
                                                      : zk::formats::verification_key_curve(o.key_file);
    r = zk::visit_curve(curve, [&](auto c) { return check<decltype(c)>(o); });
  } catch (const zk::formats::format_error& e) {
    // Files in the wrong positions fail to read as what they are taken
    // for; naming what each looks like says more than the read error.
    std::string problem = order_problem(o);
    if (problem.empty()) problem = e.what();
    if (o.json) {
      j["valid"] = false;
      j["error"] = problem;
      out << j.dump(1) << "\n";
    }
    err << "proofline verify: " << problem << "\n";
    return exit_usage;
  }
  if (o.json) {
    j["valid"] = r.verdict.ok;
    j["curve"] = zk::to_string(r.curve);
    j["public_signals"] = r.n_public;
    j["verify_ms"] = r.verify_ms;
    if (r.verdict.ok)
      j["reason"] = nullptr;  // listed always, so a parser finds every field
    else
      j["reason"] = r.verdict.reason;
    out << j.dump(1) << "\n";
  } else if (r.verdict.ok) {
    out << o.proof_file << ": valid (" << zk::to_string(r.curve) << ", " << r.n_public
        << " public signals)\n";
  } else {
    out << o.proof_file << ": INVALID: " << r.verdict.reason << "\n";
  }
  return r.verdict.ok ? exit_ok : exit_failed;
}

}  // namespace proofline::app
