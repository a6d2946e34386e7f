// Prime fields and Fp2 against GMP: every operation on thousands of seeded
// random inputs plus the edge values 0, 1, 2, p-2, p-1 and (p-1)/2.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

#include "oracle.hpp"
#include "zk/curves.hpp"

using namespace proofline::zk;
using test::mpz;

namespace {

/// Random inputs per operation and field.
constexpr int random_cases = 2000;

/// The primes as published (EIP-196/197 for BN254; the IETF pairing-friendly
/// curves draft for BLS12-381), independent of the generated parameter files.
template <class F>
const char* published_modulus();
template <>
const char* published_modulus<bn254::fq>() {
  return "21888242871839275222246405745257275088696311157297823662689037894645226208583";
}
template <>
const char* published_modulus<bn254::fr>() {
  return "21888242871839275222246405745257275088548364400416034343698204186575808495617";
}
template <>
const char* published_modulus<bls12_381::fq>() {
  return "4002409555221667393417789825735904156556882819939007885332058136124031650490837864442687"
         "629129015664037894272559787";
}
template <>
const char* published_modulus<bls12_381::fr>() {
  return "52435875175126190479447740508185965837690552500527637822603658699938581184513";
}

template <class F>
const char* field_name();
template <>
const char* field_name<bn254::fq>() {
  return "BN254 Fq";
}
template <>
const char* field_name<bn254::fr>() {
  return "BN254 Fr";
}
template <>
const char* field_name<bls12_381::fq>() {
  return "BLS12-381 Fq";
}
template <>
const char* field_name<bls12_381::fr>() {
  return "BLS12-381 Fr";
}

/// Reference arithmetic mod p.
template <class F>
struct ref {
  mpz p{published_modulus<F>()};
  mpz R;     // 2^(64 N) mod p
  mpz rinv;  // R^-1 mod p

  ref() {
    mpz_ui_pow_ui(R.get(), 2, 64 * F::N);
    mpz_mod(R.get(), R.get(), p.get());
    mpz_invert(rinv.get(), R.get(), p.get());
  }
  mpz mod(const mpz& x) const {
    mpz r;
    mpz_mod(r.get(), x.get(), p.get());
    return r;
  }
  /// The standard-form value of a field element, through GMP: l * R^-1 mod p.
  /// Reads the Montgomery limbs directly, so it checks to_standard too.
  mpz value(const F& x) const {
    mpz m(x.montgomery_limbs()), r;
    mpz_mul(r.get(), m.get(), rinv.get());
    return mod(r);
  }
};

/// 0, 1, 2, p-2, p-1, (p-1)/2 and (p+1)/2.
template <class F>
std::vector<typename F::repr> edge_values() {
  mpz p(published_modulus<F>());
  std::vector<typename F::repr> out;
  for (long d : {0L, 1L, 2L}) out.push_back(F::repr::from_u64(d));
  for (long d : {2L, 1L}) {
    mpz v;
    mpz_sub_ui(v.get(), p.get(), d);
    out.push_back(v.template limbs<F::N>());
  }
  mpz half;
  mpz_sub_ui(half.get(), p.get(), 1);
  mpz_fdiv_q_2exp(half.get(), half.get(), 1);
  out.push_back(half.template limbs<F::N>());
  mpz_add_ui(half.get(), half.get(), 1);
  out.push_back(half.template limbs<F::N>());
  return out;
}

/// Edge values first, then random values below p.
template <class F>
std::vector<typename F::repr> test_values(std::mt19937_64& rng) {
  auto v = edge_values<F>();
  for (int i = 0; i < random_cases; ++i) v.push_back(test::random_below(rng, F::modulus()));
  return v;
}

}  // namespace

TEST_CASE_TEMPLATE("field parameters match the published primes and Montgomery constants", F,
                   bn254::fq, bn254::fr, bls12_381::fq, bls12_381::fr) {
  INFO(field_name<F>());
  ref<F> g;
  CHECK(mpz(F::modulus()).dec() == g.p.dec());
  CHECK(mpz(F::one().montgomery_limbs()).hex() == g.R.hex());
  mpz r2;
  mpz_mul(r2.get(), g.R.get(), g.R.get());
  typename F::repr r2_limbs;
  for (unsigned i = 0; i < F::N; ++i) r2_limbs.l[i] = F::params::r2(i);
  CHECK(mpz(r2_limbs).hex() == g.mod(r2).hex());
  // inv = -p^-1 mod 2^64: p * inv + 1 is divisible by 2^64.
  CHECK(F::modulus().l[0] * F::params::inv + 1 == 0);
}

TEST_CASE_TEMPLATE("scalar fields have snarkjs's 2-adicity and non-residue", F, bn254::fr,
                   bls12_381::fr) {
  INFO(field_name<F>());
  ref<F> g;
  mpz pm1;
  mpz_sub_ui(pm1.get(), g.p.get(), 1);
  CHECK(mpz_scan1(pm1.get(), 0) == F::params::two_adicity);
  mpz k;
  mpz_set_ui(k.get(), F::params::nqr);
  CHECK(mpz_legendre(k.get(), g.p.get()) == -1);
  for (unsigned small = 2; small < F::params::nqr; ++small) {
    mpz_set_ui(k.get(), small);
    CHECK(mpz_legendre(k.get(), g.p.get()) == 1);
  }
}

TEST_CASE_TEMPLATE("field arithmetic matches GMP on random and edge inputs", F, bn254::fq,
                   bn254::fr, bls12_381::fq, bls12_381::fr) {
  const uint64_t seed = test::test_seed();
  INFO(field_name<F>(), ", seed ", seed, " (set PROOFLINE_TEST_SEED to replay)");
  std::mt19937_64 rng(seed);
  ref<F> g;
  auto xs = test_values<F>(rng);
  auto ys = test_values<F>(rng);
  std::shuffle(ys.begin(), ys.end(), rng);  // edges meet random values and each other

  for (std::size_t i = 0; i < xs.size(); ++i) {
    const mpz a(xs[i]), b(ys[i]);
    const F fa = F::from_standard(xs[i]), fb = F::from_standard(ys[i]);
    INFO("a = 0x", a.hex(), ", b = 0x", b.hex());
    mpz t;

    // Montgomery form is a * R mod p, and to_standard inverts it.
    mpz_mul(t.get(), a.get(), g.R.get());
    CHECK(mpz(fa.montgomery_limbs()).hex() == g.mod(t).hex());
    CHECK(test::hex(fa.to_standard()) == a.hex());
    CHECK(g.value(fa).hex() == a.hex());

    mpz_add(t.get(), a.get(), b.get());
    CHECK(g.value(fa + fb).hex() == g.mod(t).hex());
    mpz_sub(t.get(), a.get(), b.get());
    CHECK(g.value(fa - fb).hex() == g.mod(t).hex());
    mpz_mul(t.get(), a.get(), b.get());
    CHECK(g.value(fa * fb).hex() == g.mod(t).hex());
    mpz_mul(t.get(), a.get(), a.get());
    CHECK(g.value(fa.sqr()).hex() == g.mod(t).hex());
    mpz_neg(t.get(), a.get());
    CHECK(g.value(-fa).hex() == g.mod(t).hex());
    mpz_mul_2exp(t.get(), a.get(), 1);
    CHECK(g.value(fa.dbl()).hex() == g.mod(t).hex());

    // Every result is fully reduced (< p), which later code relies on.
    CHECK((fa * fb).montgomery_limbs() < F::modulus());
    CHECK((fa + fb).montgomery_limbs() < F::modulus());
    CHECK((fa - fb).montgomery_limbs() < F::modulus());

    const F inv = fa.inverse();
    if (a == mpz()) {
      CHECK(inv.is_zero());
    } else {
      mpz_invert(t.get(), a.get(), g.p.get());
      CHECK(g.value(inv).hex() == t.hex());
      CHECK((fa * inv).is_one());
    }

    // pow with a full-size exponent (b, as a plain integer) and a word exponent.
    mpz_powm(t.get(), a.get(), b.get(), g.p.get());
    CHECK(g.value(fa.pow(ys[i])).hex() == t.hex());
    const uint64_t e = rng();
    mpz ee;
    mpz_import(ee.get(), 1, -1, sizeof e, 0, 0, &e);
    mpz_powm(t.get(), a.get(), ee.get(), g.p.get());
    CHECK(g.value(fa.pow(e)).hex() == t.hex());

    CHECK((fa == fb) == (a == b));
    CHECK((fa != fb) == !(a == b));
    CHECK(fa.is_zero() == (a == mpz()));
  }
  CHECK(F::from_u64(1).is_one());
  CHECK(F::zero().is_zero());
  CHECK(g.value(F::from_u64(12345)).dec() == "12345");
}

TEST_CASE_TEMPLATE("bigint comparisons and bit helpers match GMP", N,
                   std::integral_constant<unsigned, 4>, std::integral_constant<unsigned, 6>) {
  constexpr unsigned L = N::value;
  using B = ff::bigint<L>;
  const uint64_t seed = test::test_seed();
  INFO("limbs ", L, ", seed ", seed);
  std::mt19937_64 rng(seed);
  auto random_int = [&] {
    B x;
    for (unsigned i = 0; i < L; ++i) x.l[i] = rng();
    // vary the length so bit_length and comparisons see short values too
    unsigned keep = rng() % (64 * L + 1);
    for (unsigned i = 0; i < L; ++i) {
      unsigned lo = 64 * i;
      if (lo >= keep)
        x.l[i] = 0;
      else if (keep - lo < 64)
        x.l[i] &= (uint64_t(1) << (keep - lo)) - 1;
    }
    return x;
  };
  for (int n = 0; n < random_cases; ++n) {
    B x = random_int(), y = (n % 5 == 0) ? x : random_int();
    if (n % 7 == 0 && !x.is_zero()) {  // neighbours differ in one low bit
      y = x;
      y.l[0] ^= 1;
    }
    mpz a(x), b(y);
    INFO("x = 0x", a.hex(), ", y = 0x", b.hex());
    CHECK((x < y) == (mpz_cmp(a.get(), b.get()) < 0));
    CHECK((x == y) == (mpz_cmp(a.get(), b.get()) == 0));
    CHECK((x != y) == (mpz_cmp(a.get(), b.get()) != 0));
    CHECK(x.is_zero() == (mpz_sgn(a.get()) == 0));
    CHECK(x.bit_length() == (mpz_sgn(a.get()) == 0 ? 0u : mpz_sizeinbase(a.get(), 2)));
    unsigned i = rng() % (64 * L);
    CHECK(x.bit(i) == (unsigned)mpz_tstbit(a.get(), i));
    unsigned width = 1 + rng() % 32;
    unsigned pos = rng() % (64 * L + 8);  // may run past the top: reads as 0
    mpz w;
    mpz_fdiv_q_2exp(w.get(), a.get(), pos);
    mpz_fdiv_r_2exp(w.get(), w.get(), width);
    CHECK(x.bits(pos, width) == mpz_get_ui(w.get()));
  }
  CHECK(B::from_u64(7).l[0] == 7);
  CHECK(B::from_u64(7).bit_length() == 3);
  CHECK(B::zero().bit_length() == 0);
}

TEST_CASE_TEMPLATE("Fp2 arithmetic matches GMP with u^2 = -1", F2, bn254::fq2, bls12_381::fq2) {
  using F = typename F2::base;
  const uint64_t seed = test::test_seed();
  INFO(field_name<F>(), "2, seed ", seed);
  std::mt19937_64 rng(seed + 2);
  ref<F> g;
  auto x0 = test_values<F>(rng), x1 = test_values<F>(rng);
  auto y0 = test_values<F>(rng), y1 = test_values<F>(rng);
  std::shuffle(x1.begin(), x1.end(), rng);
  std::shuffle(y0.begin(), y0.end(), rng);
  for (std::size_t i = 0; i < x0.size(); ++i) {
    const mpz a0(x0[i]), a1(x1[i]), b0(y0[i]), b1(y1[i]);
    INFO("a = 0x", a0.hex(), " + 0x", a1.hex(), " u, b = 0x", b0.hex(), " + 0x", b1.hex(), " u");
    const F2 fa{F::from_standard(x0[i]), F::from_standard(x1[i])};
    const F2 fb{F::from_standard(y0[i]), F::from_standard(y1[i])};
    mpz t, s, c0, c1;

    // (a0 + a1 u)(b0 + b1 u) = (a0 b0 - a1 b1) + (a0 b1 + a1 b0) u
    F2 m = fa * fb;
    mpz_mul(t.get(), a0.get(), b0.get());
    mpz_submul(t.get(), a1.get(), b1.get());
    CHECK(g.value(m.c0).hex() == g.mod(t).hex());
    mpz_mul(t.get(), a0.get(), b1.get());
    mpz_addmul(t.get(), a1.get(), b0.get());
    CHECK(g.value(m.c1).hex() == g.mod(t).hex());

    // (a0 + a1 u)^2 = (a0^2 - a1^2) + 2 a0 a1 u
    F2 q = fa.sqr();
    mpz_mul(t.get(), a0.get(), a0.get());
    mpz_submul(t.get(), a1.get(), a1.get());
    CHECK(g.value(q.c0).hex() == g.mod(t).hex());
    mpz_mul(t.get(), a0.get(), a1.get());
    mpz_mul_2exp(t.get(), t.get(), 1);
    CHECK(g.value(q.c1).hex() == g.mod(t).hex());

    // (a0 + a1 u)^-1 = (a0 - a1 u) / (a0^2 + a1^2)
    F2 inv = fa.inverse();
    if (fa.is_zero()) {
      CHECK(inv.is_zero());
    } else {
      mpz_mul(s.get(), a0.get(), a0.get());
      mpz_addmul(s.get(), a1.get(), a1.get());
      mpz_invert(s.get(), s.get(), g.p.get());
      mpz_mul(c0.get(), a0.get(), s.get());
      mpz_mul(c1.get(), a1.get(), s.get());
      mpz_neg(c1.get(), c1.get());
      CHECK(g.value(inv.c0).hex() == g.mod(c0).hex());
      CHECK(g.value(inv.c1).hex() == g.mod(c1).hex());
      CHECK(fa * inv == F2::one());
    }

    F2 sum = fa + fb, diff = fa - fb, neg = -fa, dbl = fa.dbl(), scaled = fa.mul_base(fb.c0);
    mpz_add(t.get(), a0.get(), b0.get());
    CHECK(g.value(sum.c0).hex() == g.mod(t).hex());
    mpz_add(t.get(), a1.get(), b1.get());
    CHECK(g.value(sum.c1).hex() == g.mod(t).hex());
    mpz_sub(t.get(), a0.get(), b0.get());
    CHECK(g.value(diff.c0).hex() == g.mod(t).hex());
    mpz_sub(t.get(), a1.get(), b1.get());
    CHECK(g.value(diff.c1).hex() == g.mod(t).hex());
    mpz_neg(t.get(), a1.get());
    CHECK(g.value(neg.c1).hex() == g.mod(t).hex());
    mpz_mul_2exp(t.get(), a0.get(), 1);
    CHECK(g.value(dbl.c0).hex() == g.mod(t).hex());
    mpz_mul(t.get(), a1.get(), b0.get());
    CHECK(g.value(scaled.c1).hex() == g.mod(t).hex());
  }
}

TEST_CASE_TEMPLATE("the host's product equals the portable product and GMP on extreme limbs", F,
                   bn254::fq, bn254::fr, bls12_381::fq, bls12_381::fr) {
  // operator* runs the mulx/adcx/adox product on x86-64 hosts with ADX
  // (zk/ff/mont_x86_64.hpp); mul_generic is the portable CIOS loop. Their
  // carries differ most on Montgomery limbs near 0 and near p, so these are
  // fed as limbs directly (from_standard would scramble them).
  const uint64_t seed = test::test_seed();
  INFO(field_name<F>(), ", seed ", seed);
#if defined(__x86_64__) && defined(__OPTIMIZE__)
  const std::string path =
      std::string(field_name<F>()) + ": assembly product " +
      (ff::x86::host_adx ? "in use" : "not in use (no ADX here, or PROOFLINE_NO_ADX=1)");
  MESSAGE(path);
#endif
  std::mt19937_64 rng(seed + 3);
  ref<F> g;
  const auto p = F::modulus();
  std::vector<typename F::repr> limbs;
  for (uint64_t d : {1ull, 2ull, 3ull, 0x10000ull}) {  // p - d
    auto v = p;
    uint64_t borrow = 0;
    v.l[0] = ff::sbb(v.l[0], d, borrow);
    for (unsigned i = 1; i < F::N; ++i) v.l[i] = ff::sbb(v.l[i], 0, borrow);
    limbs.push_back(v);
  }
  for (uint64_t v : {0ull, 1ull, 2ull, ~0ull}) limbs.push_back(F::repr::from_u64(v));
  auto top = F::repr::zero();  // a single high limb below p's
  top.l[F::N - 1] = p.l[F::N - 1] - 1;
  limbs.push_back(top);
  auto ones = top;  // all low limbs set
  for (unsigned i = 0; i + 1 < F::N; ++i) ones.l[i] = ~0ull;
  limbs.push_back(ones);
  for (int i = 0; i < 500; ++i) limbs.push_back(test::random_below(rng, p));

  for (const auto& x : limbs)
    for (std::size_t j = 0; j < limbs.size(); j += (&x - limbs.data()) < 10 ? 1 : 37) {
      const auto& y = limbs[j];
      const F a = F::from_montgomery_limbs(x), b = F::from_montgomery_limbs(y);
      const F fast = a * b, portable = a.mul_generic(b);
      INFO("a = 0x", mpz(x).hex(), ", b = 0x", mpz(y).hex());
      REQUIRE(fast == portable);
      CHECK(fast.montgomery_limbs() < p);
      mpz t;
      mpz_mul(t.get(), g.value(a).get(), g.value(b).get());
      CHECK(g.value(fast).hex() == g.mod(t).hex());
    }
}

#if defined(__x86_64__) && defined(__OPTIMIZE__)
TEST_CASE("the assembly product runs where CPUID has ADX, unless PROOFLINE_NO_ADX=1") {
  // CTest runs this file twice: zk_test as it is, and zk_test_no_adx with
  // PROOFLINE_NO_ADX=1 (tests/zk/CMakeLists.txt), where the products above
  // are the portable ones.
  const char* off = std::getenv("PROOFLINE_NO_ADX");
  const bool turned_off = off && off[0] == '1';
  const std::string seen = std::string("CPUID: ") + (ff::x86::detect_adx() ? "ADX" : "no ADX") +
                           "; PROOFLINE_NO_ADX=" + (off ? off : "(unset)");
  MESSAGE(seen);
  CHECK(ff::x86::host_adx == (ff::x86::detect_adx() && !turned_off));
}
#endif

TEST_CASE_TEMPLATE("from_standard reduces every 64N-bit value, up to 2^(64N) - 1", F, bn254::fq,
                   bn254::fr, bls12_381::fq, bls12_381::fr) {
  // Parsers and the blinding sampler (random 64N-bit words) hand from_standard
  // values at or above p; the product it uses must take them.
  const uint64_t seed = test::test_seed();
  INFO(field_name<F>(), ", seed ", seed);
  std::mt19937_64 rng(seed + 5);
  ref<F> g;
  std::vector<typename F::repr> xs;
  auto all = F::repr::zero();
  for (auto& l : all.l) l = ~0ull;
  xs.push_back(all);
  xs.push_back(F::modulus());
  for (int i = 0; i < 200; ++i) {
    typename F::repr x;
    for (auto& l : x.l) l = rng();
    xs.push_back(x);
  }
  for (const auto& x : xs) {
    INFO("x = 0x", mpz(x).hex());
    const F v = F::from_standard(x);
    CHECK(v.montgomery_limbs() < F::modulus());
    CHECK(g.value(v).hex() == g.mod(mpz(x)).hex());
  }
}
