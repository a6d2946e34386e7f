// Small text helpers shared by the tables, reports and pages proofline
// prints. Formatting is fmt's throughout (fmt::format where a caller needs
// more than these); this header keeps fmt out of the files that include it.
#pragma once

#include <string>
#include <vector>

namespace proofline::base {

/// `v` with exactly `decimals` digits after the point ("12.50"), as printf's
/// "%.*f" writes it.
std::string fixed(double v, int decimals = 1);

/// The items of `text` between the separators `sep`, in order: "0,1" ->
/// {"0", "1"}; an empty item between two separators stays (",1" -> {"", "1"}),
/// one after a final separator does not ("0," -> {"0"}) and "" has none, as
/// std::getline reads a list.
std::vector<std::string> split(const std::string& text, char sep);

}  // namespace proofline::base
