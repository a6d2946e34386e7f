// Inputs shared by the host and GPU tests of a, b, c on the device's matrix
// layout (gpu/cuda/abc): the CPU's a, b, c (the oracle), keys whose rows
// have the shapes that break a sparse product, and the fixture circuits.
#pragma once

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "cases.hpp"
#include "gpu/cuda/abc/matrix.hpp"
#include "zk/curves.hpp"
#include "zk/formats/wtns.hpp"
#include "zk/formats/zkey.hpp"
#include "zk/groth16/prover.hpp"

namespace proofline::test {

namespace abc = gpu::cuda::abc;

template <class C>
struct abc_values {
  std::vector<typename C::fr> a, b, c;
};

/// The CPU's a, b, c (one thread).
template <class C>
abc_values<C> cpu_abc(const zk::groth16::proving_key<C>& key, const std::vector<typename C::scalar>& w) {
  const std::size_t n = key.info.domain_size;
  abc_values<C> v{std::vector<typename C::fr>(n), std::vector<typename C::fr>(n),
                  std::vector<typename C::fr>(n)};
  zk::groth16::synthesize_abc<C>(key, w.data(), v.a.data(), v.b.data(), v.c.data(), 1);
  return v;
}

/// A key of 2^log_n rows and n_vars signals whose A and B have the shapes
/// that break a sparse product, its coefficients shuffled out of row order.
template <class C>
zk::groth16::proving_key<C> awkward_key(unsigned log_n, uint32_t n_vars, std::mt19937_64& rng) {
  zk::groth16::proving_key<C> key;
  key.info.curve = C::id;
  key.info.log_domain = log_n;
  key.info.domain_size = uint32_t(1) << log_n;
  key.info.n_vars = n_vars;
  key.info.n_public = 1;
  const uint32_t rows = key.info.domain_size;
  auto values = test::make_elements<typename C::fr>(4096, rng);
  std::size_t next = 0;
  const auto value = [&] { return values[next++ % values.size()]; };
  for (auto* coefs : {&key.coefs_a, &key.coefs_b}) {
    std::vector<zk::groth16::coef<C>> v;
    for (uint32_t r = 0; r < rows; ++r) {
      const uint32_t kind = r % 7;
      if (kind == 0) continue;  // an empty row
      uint32_t terms = kind == 1 ? 1 : kind == 2 ? 3 : 2;
      if (r == 5) terms = 3 * abc::segment_terms + 5;   // several segments and a short one
      if (r == 9) terms = abc::segment_terms;           // exactly one full segment
      if (r == 11) terms = abc::segment_terms + 1;      // one term past a segment
      for (uint32_t t = 0; t < terms; ++t)
        v.push_back({r, static_cast<uint32_t>(rng() % n_vars), value()});
      if (kind == 3) v.push_back(v.back());                   // the same term twice
      if (kind == 4) v.push_back({r, 0, value()});            // the constant signal
      if (kind == 5) v.push_back({r, n_vars - 1, value()});   // the last signal
    }
    std::shuffle(v.begin(), v.end(), rng);
    coefs->assign(v.begin(), v.end());
  }
  return key;
}

std::string fixtures_dir() {
  const char* v = std::getenv("PROOFLINE_FIXTURES_DIR");
  return v ? v : PROOFLINE_FIXTURES_DIR;
}

/// Calls f(handle, key, witness) for every witness of the fixture circuit
/// tests/fixtures/<curve>/<size> (handle: the shared key, key: it typed).
template <class C>
void for_each_fixture_witness(
    const std::string& size,
    const std::function<void(const zk::groth16::key_ptr&, const zk::groth16::proving_key<C>&,
                             const std::vector<typename C::scalar>&)>& f) {
  namespace fs = std::filesystem;
  const char* env = std::getenv("PROOFLINE_FIXTURES_DIR");
  const std::string dir = std::string(env ? env : PROOFLINE_FIXTURES_DIR) + "/" + C::name + "/" + size;
  REQUIRE_MESSAGE(fs::exists(dir + "/circuit.zkey"), dir << "/circuit.zkey is missing");
  const auto kp = zk::formats::load_zkey(dir + "/circuit.zkey");
  const auto& key = zk::groth16::typed<C>(*kp);
  int count = 0;
  for (int i = 0; fs::exists(dir + "/witness_" + std::to_string(i) + ".wtns"); ++i, ++count) {
    std::vector<typename C::scalar> w(key.info.n_vars);
    zk::formats::read_witness<C>(dir + "/witness_" + std::to_string(i) + ".wtns", key, w.data());
    CAPTURE(i);
    f(kp, key, w);
  }
  REQUIRE(count > 0);
}

/// Calls check(key, witness) for every witness of every fixture circuit
/// (BN254 small and medium, BLS12-381 small); check takes either curve.
template <class Check>
void for_each_fixture(const Check& check) {
  const auto each = [&](const zk::groth16::key_ptr&, const auto& key, const auto& w) { check(key, w); };
  for_each_fixture_witness<zk::bn254>("small", each);
  for_each_fixture_witness<zk::bn254>("medium", each);
  for_each_fixture_witness<zk::bls12_381>("small", each);
}

/// The CPU's and another a, b, c are equal, element for element.
template <class C>
void check_equal(const abc_values<C>& want, const abc_values<C>& got) {
  REQUIRE(got.a.size() == want.a.size());
  std::size_t bad_a = 0, bad_b = 0, bad_c = 0;
  for (std::size_t i = 0; i < want.a.size(); ++i) {
    bad_a += got.a[i] != want.a[i];
    bad_b += got.b[i] != want.b[i];
    bad_c += got.c[i] != want.c[i];
  }
  CHECK(bad_a == 0);
  CHECK(bad_b == 0);
  CHECK(bad_c == 0);
}

}  // namespace proofline::test
