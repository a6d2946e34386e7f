// Deterministic randomness for development setups: every random choice of
// `proofline setup --dev` (the circuit, the toxic waste, each witness) comes
// from one 64-bit seed, so a setup can be reproduced exactly from its seed.
//
//   stream(seed, tag, index)  an independent generator per purpose, so adding
//                             a witness does not change the circuit or keys;
//   uniform<F>(g)             a uniform field element (rejection sampling);
//   below(g, n)               a uniform integer in [0, n).
//
// NOT cryptographically secure: xoshiro256** (Blackman and Vigna, 2018) is
// predictable from a few outputs. That is fine here because the toxic waste
// of a dev setup is public by design (its seed is printed in the README).
#pragma once

#include <cstdint>

#include "zk/ff/fp.hpp"

namespace proofline::zk::dev {

/// xoshiro256**: 256 bits of state, period 2^256 - 1, about 1 ns a draw.
class rng {
 public:
  /// Seeds the state by four rounds of splitmix64 (never all zero).
  explicit rng(uint64_t seed) {
    for (auto& s : s_) s = splitmix64(seed);
  }

  uint64_t next() {
    const uint64_t result = rotl(s_[1] * 5, 7) * 9;
    const uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }

  /// splitmix64 (Steele, Lea and Flood, 2014): advances x, returns a mixed value.
  static uint64_t splitmix64(uint64_t& x) {
    uint64_t z = (x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }

 private:
  static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  uint64_t s_[4];
};

/// What a random stream is for; each purpose draws from its own generator.
enum class purpose : uint64_t { circuit = 1, toxic_waste = 2, witness = 3 };

/// An independent generator for (seed, purpose, index).
inline rng stream(uint64_t seed, purpose p, uint64_t index = 0) {
  uint64_t x = seed;
  uint64_t a = rng::splitmix64(x);
  x = a ^ (static_cast<uint64_t>(p) * 0xd1b54a32d192ed03ull);
  uint64_t b = rng::splitmix64(x);
  x = b ^ (index * 0x8cb92ba72f3d8dd7ull);
  return rng(rng::splitmix64(x));
}

/// A uniform integer in [0, n), n > 0 (Lemire's multiply-shift; the bias,
/// below n / 2^64, is irrelevant for shaping test circuits).
inline uint64_t below(rng& g, uint64_t n) {
  return static_cast<uint64_t>((static_cast<unsigned __int128>(g.next()) * n) >> 64);
}

/// A uniform element of the prime field F (Montgomery form): draws bit_length(p)
/// random bits until the value is below p (under two draws on average).
template <class F>
F uniform(rng& g) {
  const auto p = F::modulus();
  const unsigned bits = p.bit_length();
  typename F::repr x;
  do {
    for (unsigned i = 0; i < F::N; ++i) {
      const unsigned lo = 64 * i;
      uint64_t v = g.next();
      if (lo + 64 > bits) v = lo >= bits ? 0 : v & ((uint64_t(1) << (bits - lo)) - 1);
      x.l[i] = v;
    }
  } while (!(x < p));
  return F::from_standard(x);
}

/// A uniform nonzero element of F.
template <class F>
F uniform_nonzero(rng& g) {
  F x;
  do x = uniform<F>(g);
  while (x.is_zero());
  return x;
}

}  // namespace proofline::zk::dev
