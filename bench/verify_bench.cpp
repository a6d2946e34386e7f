// proofline-verify-bench: the cost of one Groth16 verification on one core,
// and of its parts, for the snarkjs files in each directory given
// (verification_key.json, snarkjs_proof_0.json, public_0.json; the curve is
// read from the key).
//
//   proofline-verify-bench tests/fixtures/bn254/small tests/fixtures/bls12_381/small --runs 200
//
// Prints one row per directory: medians of thread CPU time, in microseconds, of the whole
// verify() and of its Miller loop (three pairs), final exponentiation, the
// G1 and G2 subgroup checks, and of prepare() (once per key). Exit 1 when a
// proof does not verify, 2 on unreadable input.
#include <algorithm>
#include <ctime>
#include <cstdlib>
#include <cstring>
#include <fstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "zk/formats/error.hpp"
#include "zk/formats/proof_json.hpp"
#include "zk/groth16/verifier.hpp"

using namespace proofline::zk;

namespace {

/// CPU time of the calling thread in microseconds: the cost on one core,
/// unaffected by other processes on a shared machine (wall time is not).
double thread_cpu_us() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

template <class F>
double median_us(unsigned runs, F&& f) {
  std::vector<double> t;
  t.reserve(runs);
  for (unsigned i = 0; i < runs; ++i) {
    const double start = thread_cpu_us();
    f();
    t.push_back(thread_cpu_us() - start);
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

/// Keeps a value alive so the timed work is not optimised away.
volatile bool sink;

template <class C>
int bench(const std::string& dir, unsigned runs) {
  const auto vk = formats::read_verification_key<C>(dir + "/verification_key.json");
  const auto proof = formats::read_proof<C>(dir + "/snarkjs_proof_0.json");
  const auto pub = formats::read_public<C>(dir + "/public_0.json");
  const auto key = groth16::prepare<C>(vk);
  const auto v = groth16::verify<C>(key, proof, pub.data(), pub.size());
  if (!v.ok) {
    fmt::print(stderr, "{}: the proof does not verify: {}\n", dir, v.reason);
    return 1;
  }
  const double prepare = median_us(std::max(1u, runs / 10), [&] {
    sink = groth16::prepare<C>(vk).problem.empty();
  });
  const double whole = median_us(runs, [&] {
    sink = groth16::verify<C>(key, proof, pub.data(), pub.size()).ok;
  });
  const pairing::pair<C> pairs[3] = {{-proof.a, proof.b}, {vk.ic[0], vk.gamma2}, {proof.c, vk.delta2}};
  pairing::gt<C> f;
  const double miller = median_us(runs, [&] { f = pairing::miller_loop<C>(pairs, 3); });
  const double final_exp = median_us(runs, [&] {
    sink = pairing::final_exponentiation<C>(f).is_one();
  });
  const double g1 = median_us(runs, [&] { sink = pairing::in_subgroup<C>(proof.a); });
  const double g2 = median_us(runs, [&] { sink = pairing::in_subgroup<C>(proof.b); });
  fmt::print("{:<10} {:<40} {:>4} {:>10.0f} {:>10.0f} {:>10.0f} {:>10.0f} {:>10.0f} {:>10.0f}\n", C::name,
             dir, pub.size(), whole, miller, final_exp, g1, g2, prepare);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  unsigned runs = 100;
  std::vector<std::string> dirs;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--runs") && i + 1 < argc)
      runs = std::max(1, std::atoi(argv[++i]));
    else
      dirs.push_back(argv[i]);
  }
  if (dirs.empty()) {
    fmt::print(stderr, "usage: proofline-verify-bench DIR... [--runs N]\n");
    return 2;
  }
  fmt::print("{:<10} {:<40} {:>4} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10}\n", "curve", "dir", "pub",
             "verify_us", "miller_us", "final_us", "g1_sub_us", "g2_sub_us", "prepare_us");
  int rc = 0;
  for (const auto& dir : dirs) {
    try {
      std::ifstream in(dir + "/verification_key.json");
      const auto curve = nlohmann::json::parse(in).at("curve").get<std::string>();
      int r = curve == bn254::snarkjs_name       ? bench<bn254>(dir, runs)
              : curve == bls12_381::snarkjs_name ? bench<bls12_381>(dir, runs)
                                                 : 2;
      rc = std::max(rc, r);
    } catch (const std::exception& e) {
      fmt::print(stderr, "{}: {}\n", dir, e.what());
      rc = 2;
    }
  }
  return rc;
}
