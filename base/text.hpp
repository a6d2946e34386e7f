// Small text helpers shared by the tables, reports and pages proofline
// prints. Formatting is fmt's throughout (fmt::format where a caller needs
// more than these); this header keeps fmt out of the files that include it.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace proofline::base {

/// `v` with exactly `decimals` digits after the point ("12.50"), as printf's
/// "%.*f" writes it.
std::string fixed(double v, int decimals = 1);

/// A time left or taken, as the progress lines show it: "850 ms", "3.2 s",
/// "4 min 05 s", "2 h 03 min".
std::string duration_text(double ms);

/// The items of `text` between the separators `sep`, in order: "0,1" ->
/// {"0", "1"}; an empty item between two separators stays (",1" -> {"", "1"}),
/// one after a final separator does not ("0," -> {"0"}) and "" has none, as
/// std::getline reads a list.
std::vector<std::string> split(const std::string& text, char sep);

/// Where the first control character of `text` starts (C0: bytes below
/// 0x20 and 0x7f; C1: U+0080 to U+009F, which UTF-8 writes as 0xc2 0x80-0x9f
/// and terminals obey as well), or std::string_view::npos when it has none.
std::size_t find_control(std::string_view text);

/// `text` with every control character (as find_control finds them) written
/// as \xNN, byte by byte, the rest as is: a string a client chose, safe to
/// print in a log line or on a terminal (no newline that starts a forged
/// line, no escape sequence the terminal obeys).
std::string escape_controls(std::string_view text);

/// The candidate nearest to `word` by edit distance (insertions, deletions,
/// substitutions and swaps of two neighbours), if it is within a third of
/// the word's length (at least 1, at most 3): "--bakend" -> "--backend".
/// Empty when nothing is that near; ties go to the first candidate.
std::string nearest(std::string_view word, const std::vector<std::string>& candidates);

}  // namespace proofline::base
