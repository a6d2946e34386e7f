// Test helpers shared by the zk suites: GMP as the independent oracle for
// field values, a seeded random source whose seed every failure prints, and
// the fixture paths.
#pragma once

#include <gmp.h>

#include <cstdint>
#include <cstdlib>
#include <random>
#include <string>

#include "zk/curves.hpp"

namespace proofline::zk::test {

/// An owned GMP integer.
class mpz {
 public:
  mpz() { mpz_init(v_); }
  explicit mpz(const char* decimal) { mpz_init_set_str(v_, decimal, 10); }
  template <unsigned N>
  explicit mpz(const ff::bigint<N>& x) {
    mpz_init(v_);
    mpz_import(v_, N, -1, sizeof(uint64_t), 0, 0, x.l);
  }
  mpz(const mpz& o) { mpz_init_set(v_, o.v_); }
  mpz& operator=(const mpz& o) {
    mpz_set(v_, o.v_);
    return *this;
  }
  ~mpz() { mpz_clear(v_); }

  mpz_ptr get() { return v_; }
  mpz_srcptr get() const { return v_; }

  /// The value as N limbs; the caller makes sure it fits.
  template <unsigned N>
  ff::bigint<N> limbs() const {
    ff::bigint<N> r = ff::bigint<N>::zero();
    size_t count = 0;
    mpz_export(r.l, &count, -1, sizeof(uint64_t), 0, 0, v_);
    return r;
  }
  std::string hex() const {
    char* s = mpz_get_str(nullptr, 16, v_);
    std::string out(s);
    void (*free_fn)(void*, size_t);
    mp_get_memory_functions(nullptr, nullptr, &free_fn);
    free_fn(s, out.size() + 1);
    return out;
  }
  std::string dec() const {
    char* s = mpz_get_str(nullptr, 10, v_);
    std::string out(s);
    void (*free_fn)(void*, size_t);
    mp_get_memory_functions(nullptr, nullptr, &free_fn);
    free_fn(s, out.size() + 1);
    return out;
  }
  bool operator==(const mpz& o) const { return mpz_cmp(v_, o.v_) == 0; }

 private:
  mpz_t v_;
};

template <unsigned N>
std::string hex(const ff::bigint<N>& x) {
  return mpz(x).hex();
}

/// The seed of every randomized test: PROOFLINE_TEST_SEED when set, else a
/// fixed value, so CI runs are repeatable and a failure can be replayed.
inline uint64_t test_seed() {
  if (const char* s = std::getenv("PROOFLINE_TEST_SEED")) return std::strtoull(s, nullptr, 0);
  return 0x9e3779b97f4a7c15ull;
}

/// A uniformly random integer below m (rejection sampling on m's bit length).
template <unsigned N>
ff::bigint<N> random_below(std::mt19937_64& rng, const ff::bigint<N>& m) {
  const unsigned bits = m.bit_length();
  for (;;) {
    ff::bigint<N> r;
    for (unsigned i = 0; i < N; ++i) r.l[i] = rng();
    for (unsigned i = 0; i < N; ++i) {
      const unsigned lo = 64 * i;
      if (lo >= bits)
        r.l[i] = 0;
      else if (bits - lo < 64)
        r.l[i] &= (uint64_t(1) << (bits - lo)) - 1;
    }
    if (r < m) return r;
  }
}

/// The fixture directory (tests/fixtures), set by the build.
inline std::string fixtures_dir() { return PROOFLINE_FIXTURES_DIR; }

}  // namespace proofline::zk::test
