#include "zk/formats/primes.hpp"

#include <algorithm>
#include <vector>

namespace proofline::zk::formats::detail {

std::string describe_prime(const void* le, std::size_t n) {
  std::string found;
  auto check = [&](auto curve) {
    using C = decltype(curve);
    if (is_modulus<typename C::fr>(le, n))
      found = std::string("the ") + display_name(C::id) + " scalar field";
    else if (is_modulus<typename C::fq>(le, n))
      found = std::string("the ") + display_name(C::id) + " base field";
  };
  check(bn254{});
  check(bls12_381{});
  if (!found.empty()) return found;
  return "an unsupported prime field (p = " + bytes_to_decimal(le, n) + ")";
}

std::string bytes_to_decimal(const void* le, std::size_t n) {
  // Schoolbook division by 10 over big-endian bytes; inputs are a few dozen bytes.
  const auto* p = static_cast<const unsigned char*>(le);
  std::vector<unsigned> num(p, p + n);
  std::reverse(num.begin(), num.end());
  std::string digits;
  bool nonzero = true;
  while (nonzero) {
    unsigned rem = 0;
    nonzero = false;
    for (auto& byte : num) {
      unsigned cur = rem * 256 + byte;
      byte = cur / 10;
      rem = cur % 10;
      nonzero |= byte != 0;
    }
    digits += static_cast<char>('0' + rem);
  }
  std::reverse(digits.begin(), digits.end());
  return digits;
}

}  // namespace proofline::zk::formats::detail
