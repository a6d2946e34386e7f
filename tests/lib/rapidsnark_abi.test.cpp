// rapidsnark's ABI as its users drive it (go-rapidsnark, the mobile
// wrappers, a server with many threads), served by libproofline; every
// proof checked by snarkjs.
#include <doctest/doctest.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "proofline/rapidsnark/prover.h"
#include "proofline/rapidsnark/verifier.h"
#include "tests/lib/support.hpp"

using namespace proofline::test;
using ull = unsigned long long;

namespace {

// Every call of this binary shares one runtime, started at the first call
// from PROOFLINE_OPTIONS.
const bool options_set = [] {
  setenv("PROOFLINE_OPTIONS", R"({"backend": "cpu", "cpu-threads": 2, "memory-budget": "2G"})", 1);
  return true;
}();

const std::string bn = "bn254/small";

std::string text_of(const std::string& path) {
  auto b = bytes_of(path);
  return {b.begin(), b.end()};
}

/// go-rapidsnark's loop: 16 KiB buffers (here `start`), doubled on code 2.
struct doubling_result {
  int code = -1;
  int calls = 0;
  std::string proof, pub, error;
};
doubling_result prove_doubling(void* prover, const std::vector<char>& w, ull start) {
  doubling_result r;
  ull proof_cap = start, public_cap = start;
  for (;;) {
    std::vector<char> proof(proof_cap), pub(public_cap);
    char err[256] = {};
    ull proof_size = proof_cap, public_size = public_cap;
    r.code = groth16_prover_prove(prover, w.data(), w.size(), proof.data(), &proof_size,
                                  pub.data(), &public_size, err, sizeof err);
    ++r.calls;
    if (r.code == PROVER_ERROR_SHORT_BUFFER) {
      // The sizes needed, the NUL included: at least one of them grew.
      CHECK((proof_size > proof_cap || public_size > public_cap));
      while (proof_cap < proof_size) proof_cap *= 2;
      while (public_cap < public_size) public_cap *= 2;
      continue;
    }
    r.error = err;
    if (r.code == PROVER_OK) {
      // The bytes written, the NUL excluded.
      CHECK(std::strlen(proof.data()) == proof_size);
      CHECK(std::strlen(pub.data()) == public_size);
      r.proof.assign(proof.data(), proof_size);
      r.pub.assign(pub.data(), public_size);
    }
    return r;
  }
}

}  // namespace

TEST_CASE("go-rapidsnark's way: a prover object, buffers doubled while the code says short") {
  void* prover = nullptr;
  char err[256] = {};
  REQUIRE_MESSAGE(groth16_prover_create_zkey_file(
                      &prover, fixture(bn + "/circuit.zkey").c_str(), err, sizeof err) == PROVER_OK,
                  err);
  snarkjs_batch batch(fixture(bn + "/verification_key.json"), scratch_dir("abi-go"));
  for (ull start : {ull(16), ull(16) << 10}) {
    CAPTURE(start);
    auto w = bytes_of(fixture(bn + "/witness_3.wtns"));
    auto r = prove_doubling(prover, w, start);
    REQUIRE_MESSAGE(r.code == PROVER_OK, r.error);
    CHECK(r.calls == (start == 16 ? 2 : 1));  // 16 bytes are short once; 16 KiB never
    // rapidsnark's fields, in one line.
    auto proof = nlohmann::json::parse(r.proof);
    for (const char* field : {"pi_a", "pi_b", "pi_c", "protocol"}) CHECK(proof.contains(field));
    CHECK(proof["protocol"] == "groth16");
    CHECK(r.proof.find('\n') == std::string::npos);
    CHECK(nlohmann::json::parse(r.pub) ==
          nlohmann::json::parse(text_of(fixture(bn + "/public_3.json"))));
    batch.add(r.proof, r.pub);
  }
  groth16_prover_destroy(prover);
  std::string report;
  CHECK_MESSAGE(batch.verified(&report) == batch.size(), report);
}

TEST_CASE("the mobile wrappers' way: one call per proof from the key's file, 4 MiB buffers") {
  snarkjs_batch batch(fixture(bn + "/verification_key.json"), scratch_dir("abi-mobile"));
  for (int i = 0; i < 4; ++i) {
    auto w = bytes_of(fixture(bn + "/witness_" + std::to_string(i) + ".wtns"));
    std::vector<char> proof(4 << 20), pub(4 << 20);
    ull proof_size = proof.size(), public_size = pub.size();
    char err[256] = {};
    REQUIRE_MESSAGE(groth16_prover_zkey_file(fixture(bn + "/circuit.zkey").c_str(), w.data(),
                                             w.size(), proof.data(), &proof_size, pub.data(),
                                             &public_size, err, sizeof err) == PROVER_OK,
                    err);
    batch.add(std::string(proof.data(), proof_size), std::string(pub.data(), public_size));
  }
  // From a zkey buffer, as groth16_prover takes it.
  auto zkey = bytes_of(fixture(bn + "/circuit.zkey"));
  auto w = bytes_of(fixture(bn + "/witness_0.wtns"));
  std::vector<char> proof(4 << 20), pub(4 << 20);
  ull proof_size = proof.size(), public_size = pub.size();
  char err[256] = {};
  REQUIRE_MESSAGE(groth16_prover(zkey.data(), zkey.size(), w.data(), w.size(), proof.data(),
                                 &proof_size, pub.data(), &public_size, err, sizeof err) ==
                      PROVER_OK,
                  err);
  batch.add(std::string(proof.data(), proof_size), std::string(pub.data(), public_size));
  std::string report;
  CHECK_MESSAGE(batch.verified(&report) == batch.size(), report);
}

TEST_CASE("one prover object proves for eight threads at once") {
  auto zkey = bytes_of(fixture(bn + "/circuit.zkey"));
  void* prover = nullptr;
  char err[256] = {};
  REQUIRE_MESSAGE(groth16_prover_create(&prover, zkey.data(), zkey.size(), err, sizeof err) ==
                      PROVER_OK,
                  err);
  std::vector<doubling_result> results(16);
  std::vector<std::thread> pool;
  for (int t = 0; t < 8; ++t)
    pool.emplace_back([&, t] {
      for (int k = 0; k < 2; ++k) {
        const int slot = 2 * t + k;
        auto w = bytes_of(fixture(bn + "/witness_" + std::to_string(slot % 4) + ".wtns"));
        results[slot] = prove_doubling(prover, w, ull(16) << 10);
      }
    });
  for (auto& t : pool) t.join();
  groth16_prover_destroy(prover);
  snarkjs_batch batch(fixture(bn + "/verification_key.json"), scratch_dir("abi-threads"));
  for (int slot = 0; slot < 16; ++slot) {
    CAPTURE(slot);
    REQUIRE_MESSAGE(results[slot].code == PROVER_OK, results[slot].error);
    CHECK(nlohmann::json::parse(results[slot].pub) ==
          nlohmann::json::parse(
              text_of(fixture(bn + "/public_" + std::to_string(slot % 4) + ".json"))));
    batch.add(results[slot].proof, results[slot].pub);
  }
  std::string report;
  CHECK_MESSAGE(batch.verified(&report) == batch.size(), report);
}

TEST_CASE("a BLS12-381 key proves too, which rapidsnark itself refuses") {
  const std::string dir = "bls12_381/small";
  void* prover = nullptr;
  char err[256] = {};
  REQUIRE_MESSAGE(groth16_prover_create_zkey_file(
                      &prover, fixture(dir + "/circuit.zkey").c_str(), err, sizeof err) == PROVER_OK,
                  err);
  auto r = prove_doubling(prover, bytes_of(fixture(dir + "/witness_1.wtns")), 16 << 10);
  groth16_prover_destroy(prover);
  REQUIRE_MESSAGE(r.code == PROVER_OK, r.error);
  ull size = 0;
  groth16_proof_size(&size);
  CHECK(r.proof.size() < size);
  snarkjs_batch batch(fixture(dir + "/verification_key.json"), scratch_dir("abi-bls"));
  batch.add(r.proof, r.pub);
  CHECK(batch.verified() == 1);
  // And groth16_verify agrees, for both curves.
  CHECK(groth16_verify(r.proof.c_str(), r.pub.c_str(),
                       text_of(fixture(dir + "/verification_key.json")).c_str(), err,
                       sizeof err) == VERIFIER_VALID_PROOF);
}

TEST_CASE("groth16_proof_size holds the longest proof of either curve") {
  // Every coordinate at its largest decimal length: 77 digits for BN254's
  // base field, 115 for BLS12-381's.
  for (auto [curve, digits] : {std::pair<const char*, int>{"bn128", 77}, {"bls12381", 115}}) {
    const std::string x(digits, '9');
    nlohmann::json p;
    p["pi_a"] = {x, x, "1"};
    p["pi_b"] = {{x, x}, {x, x}, {"1", "0"}};
    p["pi_c"] = {x, x, "1"};
    p["protocol"] = "groth16";
    p["curve"] = curve;
    ull size = 0;
    groth16_proof_size(&size);
    CHECK(p.dump().size() + 1 <= size);
  }
}

TEST_CASE("the public buffer size is 82 bytes a public signal plus 4") {
  ull from_file = 0, from_buffer = 0;
  char err[256] = {};
  REQUIRE(groth16_public_size_for_zkey_file(fixture(bn + "/circuit.zkey").c_str(), &from_file,
                                            err, sizeof err) == PROVER_OK);
  auto zkey = bytes_of(fixture(bn + "/circuit.zkey"));
  REQUIRE(groth16_public_size_for_zkey_buf(zkey.data(), zkey.size(), &from_buffer, err,
                                           sizeof err) == PROVER_OK);
  const auto n_public = nlohmann::json::parse(text_of(fixture(bn + "/public_0.json"))).size();
  CHECK(from_file == 82 * n_public + 4);
  CHECK(from_buffer == from_file);
  CHECK(groth16_public_size_for_zkey_buf(zkey.data(), 20, &from_buffer, err, sizeof err) ==
        PROVER_ERROR);
  CHECK(std::string(err).find("zkey buffer: truncated") == 0);
}

TEST_CASE("errors come back with rapidsnark's codes and a message") {
  auto zkey = bytes_of(fixture(bn + "/circuit.zkey"));
  auto w = bytes_of(fixture(bn + "/witness_0.wtns"));
  std::vector<char> proof(16 << 10), pub(16 << 10);
  ull proof_size = proof.size(), public_size = pub.size();
  char err[256] = {};
  void* prover = nullptr;
  REQUIRE(groth16_prover_create(&prover, zkey.data(), zkey.size(), err, sizeof err) == PROVER_OK);

  SUBCASE("a witness of another circuit's length: code 3") {
    auto other = bytes_of(fixture("bn254/medium/witness_0.wtns"));
    CHECK(groth16_prover_prove(prover, other.data(), other.size(), proof.data(), &proof_size,
                               pub.data(), &public_size, err,
                               sizeof err) == PROVER_INVALID_WITNESS_LENGTH);
    CHECK(std::string(err).find("witness values") != std::string::npos);
  }
  SUBCASE("a truncated zkey: code 1 naming it") {
    void* bad = nullptr;
    CHECK(groth16_prover_create(&bad, zkey.data(), zkey.size() - 100, err, sizeof err) ==
          PROVER_ERROR);
    CHECK(bad == nullptr);
    CHECK(std::string(err).find("zkey buffer: ") == 0);
  }
  SUBCASE("NULL arguments: code 1, in rapidsnark's order") {
    CHECK(groth16_prover_prove(nullptr, w.data(), w.size(), proof.data(), &proof_size, pub.data(),
                               &public_size, err, sizeof err) == PROVER_ERROR);
    CHECK(std::string(err) == "Null prover object");
    CHECK(groth16_prover_prove(prover, nullptr, w.size(), proof.data(), &proof_size, pub.data(),
                               &public_size, err, sizeof err) == PROVER_ERROR);
    CHECK(std::string(err) == "Null witness buffer");
    CHECK(groth16_prover_prove(prover, w.data(), w.size(), proof.data(), nullptr, pub.data(),
                               &public_size, err, sizeof err) == PROVER_ERROR);
    CHECK(std::string(err) == "Null proof size");
    CHECK(groth16_prover_create(nullptr, zkey.data(), zkey.size(), err, sizeof err) ==
          PROVER_ERROR);
    CHECK(groth16_prover_zkey_file(nullptr, w.data(), w.size(), proof.data(), &proof_size,
                                   pub.data(), &public_size, err, sizeof err) == PROVER_ERROR);
    // No error buffer at all is fine too.
    CHECK(groth16_prover_prove(prover, nullptr, 0, nullptr, nullptr, nullptr, nullptr, nullptr,
                               0) == PROVER_ERROR);
  }
  SUBCASE("a garbled witness: code 1 naming it") {
    std::vector<char> garbage(w.size(), 'x');
    CHECK(groth16_prover_prove(prover, garbage.data(), garbage.size(), proof.data(), &proof_size,
                               pub.data(), &public_size, err, sizeof err) == PROVER_ERROR);
    CHECK(std::string(err).find("witness: not a wtns file") == 0);
  }
  groth16_prover_destroy(prover);
  groth16_prover_destroy(nullptr);
}

TEST_CASE("groth16_verify says valid, invalid or error") {
  auto w = bytes_of(fixture(bn + "/witness_2.wtns"));
  std::vector<char> proof(16 << 10), pub(16 << 10);
  ull proof_size = proof.size(), public_size = pub.size();
  char err[256] = {};
  REQUIRE(groth16_prover_zkey_file(fixture(bn + "/circuit.zkey").c_str(), w.data(), w.size(),
                                   proof.data(), &proof_size, pub.data(), &public_size, err,
                                   sizeof err) == PROVER_OK);
  const std::string vk = text_of(fixture(bn + "/verification_key.json"));
  CHECK(groth16_verify(proof.data(), pub.data(), vk.c_str(), err, sizeof err) ==
        VERIFIER_VALID_PROOF);
  auto signals = nlohmann::json::parse(pub.data());
  signals[0] = "1";
  CHECK(groth16_verify(proof.data(), signals.dump().c_str(), vk.c_str(), err, sizeof err) ==
        VERIFIER_INVALID_PROOF);
  CHECK(std::string(err).find("pairing") != std::string::npos);
  CHECK(groth16_verify("{", pub.data(), vk.c_str(), err, sizeof err) == VERIFIER_ERROR);
  CHECK(std::string(err).find("proof: not valid JSON") == 0);
  CHECK(groth16_verify(proof.data(), pub.data(), "{}", err, sizeof err) == VERIFIER_ERROR);
  CHECK(groth16_verify(nullptr, pub.data(), vk.c_str(), err, sizeof err) == VERIFIER_ERROR);
}
