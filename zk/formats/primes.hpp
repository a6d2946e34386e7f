// Naming the curves and prime fields that appear in file headers, for the
// format readers and their messages ("witness is for the BLS12-381 scalar
// field, circuit.zkey is a BN254 circuit"). Internal to zk/formats.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

#include "zk/curves.hpp"

namespace proofline::zk::formats::detail {

/// "BN254" / "BLS12-381", as people write the curve names.
inline const char* display_name(curve_id id) {
  return id == curve_id::bn254 ? "BN254" : "BLS12-381";
}

/// True when the n little-endian bytes at `le` are exactly field F's modulus.
template <class F>
bool is_modulus(const void* le, std::size_t n) {
  if (n != F::N * 8) return false;
  auto m = F::modulus();
  return std::memcmp(le, m.l, n) == 0;
}

/// "the BN254 scalar field", "the BLS12-381 base field", or
/// "an unsupported prime field (p = <decimal>)" for any other prime.
std::string describe_prime(const void* le, std::size_t n);

/// Decimal text of a little-endian unsigned integer of any length.
std::string bytes_to_decimal(const void* le, std::size_t n);

}  // namespace proofline::zk::formats::detail
