#include "base/text.hpp"

#include <fmt/format.h>

namespace proofline::base {

std::string fixed(double v, int decimals) { return fmt::format("{:.{}f}", v, decimals); }

std::vector<std::string> split(const std::string& text, char sep) {
  std::vector<std::string> items;
  std::size_t begin = 0;
  while (begin < text.size()) {
    std::size_t end = text.find(sep, begin);
    if (end == std::string::npos) end = text.size();
    items.push_back(text.substr(begin, end - begin));
    begin = end + 1;
  }
  return items;
}

}  // namespace proofline::base
