// Decimal strings for field elements, as snarkjs JSON files carry them.
#pragma once

#include <string>
#include <string_view>

#include "zk/ff/fp.hpp"

namespace proofline::zk::formats {

/// The value in base 10, no leading zeros ("0" for zero).
template <unsigned N>
std::string to_decimal(const ff::bigint<N>& v);

/// Parses base-10 digits; false on anything else or on overflow of N limbs.
template <unsigned N>
bool parse_decimal(std::string_view s, ff::bigint<N>& out);

}  // namespace proofline::zk::formats
