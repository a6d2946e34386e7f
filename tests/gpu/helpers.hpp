// Shared by the CPU-backend tests: seeded random field elements, GMP
// conversions (the independent oracle for integers mod r) and fixture paths.
#pragma once

#include <gmp.h>

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>

#include "zk/curves.hpp"

namespace proofline::test {

/// A uniformly distributed 64N-bit integer reduced into the field (Montgomery form).
template <class F>
F random_fe(std::mt19937_64& rng) {
  typename F::repr x;
  for (auto& limb : x.l) limb = rng();
  return F::from_standard(x);
}

/// GMP integer from a plain little-endian bigint.
template <unsigned N>
void to_mpz(mpz_t out, const zk::ff::bigint<N>& x) {
  mpz_import(out, N, -1, sizeof(uint64_t), 0, 0, x.l);
}

/// bigint from a GMP integer below 2^(64N).
template <unsigned N>
zk::ff::bigint<N> from_mpz(const mpz_t x) {
  auto r = zk::ff::bigint<N>::zero();
  if (mpz_sizeinbase(x, 2) > 64 * N) throw std::range_error("integer wider than the bigint");
  mpz_export(r.l, nullptr, -1, sizeof(uint64_t), 0, 0, x);
  return r;
}

/// bigint from a decimal string (as snarkjs JSON carries numbers).
template <unsigned N>
zk::ff::bigint<N> from_decimal(const std::string& s) {
  mpz_t v;
  if (mpz_init_set_str(v, s.c_str(), 10) != 0) {
    mpz_clear(v);
    throw std::invalid_argument("not a decimal integer: " + s);
  }
  auto r = from_mpz<N>(v);
  mpz_clear(v);
  return r;
}

/// The folder of a curve's fixtures: $PROOFLINE_FIXTURES_DIR/<curve>/<size>.
template <class C>
std::string fixture_dir(const char* size = "small") {
  return std::string(PROOFLINE_FIXTURES_DIR) + "/" + C::name + "/" + size;
}

inline bool file_exists(const std::string& path) { return std::ifstream(path).good(); }

inline std::string read_text(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error(path + ": cannot open");
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace proofline::test

namespace proofline::test {

/// An owned GMP integer (RAII over mpz_t).
struct mpz {
  mpz_t v;
  mpz() { mpz_init(v); }
  ~mpz() { mpz_clear(v); }
  mpz(const mpz&) = delete;
  mpz& operator=(const mpz&) = delete;
  operator mpz_ptr() { return v; }
  operator mpz_srcptr() const { return v; }
};

}  // namespace proofline::test
