#include "zk/formats/decimal.hpp"

#include <algorithm>

namespace proofline::zk::formats {

namespace {

/// 10^19, the largest power of ten below 2^64: the chunk size of conversions.
constexpr uint64_t ten19 = 10000000000000000000ull;
constexpr unsigned ten19_digits = 19;

}  // namespace

template <unsigned N>
std::string to_decimal(const ff::bigint<N>& v) {
  // Repeated division by 10^19 yields base-10^19 digits, least significant first.
  ff::bigint<N> q = v;
  std::string out;
  do {
    unsigned __int128 rem = 0;
    for (unsigned i = N; i-- > 0;) {
      unsigned __int128 cur = (rem << 64) | q.l[i];
      q.l[i] = static_cast<uint64_t>(cur / ten19);
      rem = cur % ten19;
    }
    uint64_t chunk = static_cast<uint64_t>(rem);
    for (unsigned d = 0; d < ten19_digits; ++d) {
      out += static_cast<char>('0' + chunk % 10);
      chunk /= 10;
    }
  } while (!q.is_zero());
  while (out.size() > 1 && out.back() == '0') out.pop_back();
  std::reverse(out.begin(), out.end());
  return out;
}

template <unsigned N>
bool parse_decimal(std::string_view s, ff::bigint<N>& out) {
  if (s.empty()) return false;
  ff::bigint<N> v = ff::bigint<N>::zero();
  for (char ch : s) {
    if (ch < '0' || ch > '9') return false;
    // v = v * 10 + digit; a carry out of the top limb is an overflow.
    uint64_t carry = static_cast<uint64_t>(ch - '0');
    for (unsigned i = 0; i < N; ++i) {
      unsigned __int128 t = (unsigned __int128)v.l[i] * 10 + carry;
      v.l[i] = static_cast<uint64_t>(t);
      carry = static_cast<uint64_t>(t >> 64);
    }
    if (carry) return false;
  }
  out = v;
  return true;
}

template std::string to_decimal<4>(const ff::bigint<4>&);
template std::string to_decimal<6>(const ff::bigint<6>&);
template bool parse_decimal<4>(std::string_view, ff::bigint<4>&);
template bool parse_decimal<6>(std::string_view, ff::bigint<6>&);

}  // namespace proofline::zk::formats
