// Byte counts as people read and write them: "9.6 GiB" in messages, "8G" or
// "512M" on the command line. Units are binary (K = 2^10, M = 2^20, G = 2^30,
// T = 2^40), because memory is sized in pages and the budget is compared with
// /proc/meminfo, which counts in KiB.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace proofline::memory {

/// "100 B", "1.5 KiB", "9.6 GiB", "8 GiB": the largest unit with a value of at
/// least 1, one decimal, a trailing ".0" dropped.
std::string format_bytes(uint64_t bytes);

/// Parses a size: a decimal number ("1.5"), optionally followed by one of
/// K, M, G, T (any case, optionally followed by "i", "B" or "iB"; "B" alone
/// means bytes). "512M" = 512 MiB, "1.5T" = 1.5 TiB, "4096" = 4096 bytes.
/// Returns nullopt for anything else, for zero and for values above 2^63.
std::optional<uint64_t> parse_size(std::string_view text);

}  // namespace proofline::memory
