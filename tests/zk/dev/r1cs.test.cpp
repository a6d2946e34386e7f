// Synthetic circuits (zk/dev/r1cs.hpp): determinism, shape, value mix, and
// witnesses that satisfy every row while a corrupted one does not.
#include "zk/dev/r1cs.hpp"

#include <doctest/doctest.h>

#include <array>
#include <cstdint>
#include <stdexcept>
#include <vector>

using namespace proofline;
using namespace proofline::zk::dev;

namespace {

template <unsigned N>
bool is_bit(const zk::ff::bigint<N>& v) {
  for (unsigned k = 1; k < N; ++k)
    if (v.l[k]) return false;
  return v.l[0] <= 1;
}

template <class C>
void check_satisfied(uint32_t n, uint32_t p, uint64_t seed) {
  CAPTURE(C::name);
  CAPTURE(n);
  CAPTURE(p);
  CAPTURE(seed);
  const auto cs = random_r1cs<C>(n, p, seed);
  REQUIRE(cs.n_vars == 1 + p + n);
  REQUIRE(cs.offsets.size() == 3 * std::size_t(n) + 1);
  for (uint32_t k = 0; k < 3; ++k) {
    const auto w = random_witness<C>(cs, seed, k);
    REQUIRE(w.size() == cs.n_vars);
    CHECK(w[0] == C::scalar::from_u64(1));
    CHECK(first_unsatisfied<C>(cs, w.data()) == n);
  }
  // Adding 2 to the variable the last defining row computes breaks exactly
  // that row: it enters C with coefficient +-1 (and, for a bit b, b * b = b
  // fails for b + 2), and no earlier row reads it.
  auto w = random_witness<C>(cs, seed, 0);
  uint32_t row = n;
  while (row-- > 0 && cs.defines[row] == r1cs<C>::none) {
  }
  REQUIRE(row < n);
  const uint32_t v = cs.defines[row];
  w[v] = (C::fr::from_standard(w[v]) + C::fr::from_u64(2)).to_standard();
  CHECK(first_unsatisfied<C>(cs, w.data()) == row);
}

}  // namespace

TEST_CASE("witnesses of random circuits satisfy every row, and a changed value breaks one") {
  for (uint32_t n : {1u, 2u, 15u, 16u, 17u, 300u, 1000u})
    for (uint32_t p : {0u, 1u, 3u}) {
      check_satisfied<zk::bn254>(n, p, 1000 + n + p);
      check_satisfied<zk::bls12_381>(n, p, 2000 + n + p);
    }
}

TEST_CASE("a circuit and its witnesses are a function of the seed") {
  const auto a = random_r1cs<zk::bn254>(500, 2, 42);
  const auto b = random_r1cs<zk::bn254>(500, 2, 42);
  const auto c = random_r1cs<zk::bn254>(500, 2, 43);
  REQUIRE(a.terms.size() == b.terms.size());
  bool same = a.offsets == b.offsets;
  for (std::size_t i = 0; same && i < a.terms.size(); ++i)
    same = a.terms[i].signal == b.terms[i].signal && a.terms[i].coef == b.terms[i].coef;
  CHECK(same);
  CHECK((c.offsets != a.offsets || c.terms.size() != a.terms.size()));
  const auto w0 = random_witness<zk::bn254>(a, 42, 0);
  const auto w0_again = random_witness<zk::bn254>(b, 42, 0);
  const auto w1 = random_witness<zk::bn254>(a, 42, 1);
  CHECK(w0 == w0_again);
  CHECK(w0 != w1);
}

TEST_CASE("random circuits have rows of every shape and about half 0/1 witness values") {
  constexpr uint32_t n = 4000, p = 2;
  const auto cs = random_r1cs<zk::bn254>(n, p, 7);
  std::array<uint32_t, row_kinds> kinds{};
  for (auto k : cs.kinds) ++kinds[static_cast<unsigned>(k)];
  for (unsigned k = 0; k < row_kinds; ++k) {
    CAPTURE(k);
    CHECK(kinds[k] > n / 50);  // every shape shows up, at least 2%
  }
  // One assertion row and one free input per 16 rows keep nVars = 1 + P + N.
  CHECK(kinds[static_cast<unsigned>(row_kind::assertion)] == n / 16);
  CHECK(cs.n_free == n / 16);

  // Density: A and B rows average between 1 and 3 entries, some rows have 4+.
  uint64_t a_terms = 0, b_terms = 0, c_terms = 0, wide = 0;
  for (uint32_t r = 0; r < n; ++r) {
    a_terms += cs.end(r, 0) - cs.begin(r, 0);
    b_terms += cs.end(r, 1) - cs.begin(r, 1);
    c_terms += cs.end(r, 2) - cs.begin(r, 2);
    wide += (cs.end(r, 0) - cs.begin(r, 0)) >= 4;
  }
  CHECK(a_terms > n);
  CHECK(a_terms < 3 * n);
  CHECK(b_terms > n);
  CHECK(b_terms < 3 * n);
  CHECK(c_terms > n / 2);
  CHECK(wide > n / 50);

  // Coefficients: mostly 1, some -1, some full width.
  uint64_t ones = 0, minus_ones = 0, wide_coefs = 0;
  using fr = zk::bn254::fr;
  const auto small = zk::bn254::scalar::from_u64(1u << 16);
  for (const auto& t : cs.terms) {
    ones += t.coef == fr::one();
    minus_ones += t.coef == -fr::one();
    wide_coefs += !(t.coef.to_standard() < small) && t.coef != -fr::one();
  }
  CHECK(ones > cs.terms.size() / 2);
  CHECK(minus_ones > cs.terms.size() / 20);
  CHECK(wide_coefs > cs.terms.size() / 50);

  const auto w = random_witness<zk::bn254>(cs, 7, 0);
  uint64_t bits = 0;
  for (const auto& v : w) bits += is_bit(v);
  const double share = double(bits) / w.size();
  CAPTURE(share);
  CHECK(share > 0.40);
  CHECK(share < 0.60);
}

TEST_CASE("the domain covers the constraints plus the public-input rows") {
  CHECK(log_domain_for(1) == 0);
  CHECK(log_domain_for(2) == 1);
  CHECK(log_domain_for(1024) == 10);
  CHECK(log_domain_for(1025) == 11);
  const auto cs = random_r1cs<zk::bn254>(1021, 2, 1);  // 1021 + 3 = 1024 rows
  CHECK(cs.domain_size() == 1024);
  const auto cs2 = random_r1cs<zk::bn254>(1022, 2, 1);  // 1025 rows
  CHECK(cs2.domain_size() == 2048);
}

TEST_CASE("a circuit without constraints is refused") {
  CHECK_THROWS_AS(random_r1cs<zk::bn254>(0, 1, 1), std::invalid_argument);
}
