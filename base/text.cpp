#include "base/text.hpp"

#include <cmath>

#include <fmt/format.h>

#include <algorithm>

namespace proofline::base {

std::string fixed(double v, int decimals) { return fmt::format("{:.{}f}", v, decimals); }

std::string duration_text(double ms) {
  if (ms < 1000) return fixed(ms, 0) + " ms";
  const double s = ms / 1000.0;
  if (s < 60) return fixed(s, 1) + " s";
  const auto whole = static_cast<long>(std::llround(s));
  if (whole < 3600) return fmt::format("{} min {:02} s", whole / 60, whole % 60);
  return fmt::format("{} h {:02} min", whole / 3600, (whole % 3600) / 60);
}

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

namespace {

/// The bytes of the control character starting at text[i] (1 or 2), or 0.
std::size_t control_at(std::string_view text, std::size_t i) {
  const auto c = static_cast<unsigned char>(text[i]);
  if (c < 0x20 || c == 0x7f) return 1;
  if (c == 0xc2 && i + 1 < text.size()) {
    const auto next = static_cast<unsigned char>(text[i + 1]);
    if (next >= 0x80 && next <= 0x9f) return 2;
  }
  return 0;
}

}  // namespace

std::size_t find_control(std::string_view text) {
  for (std::size_t i = 0; i < text.size(); ++i)
    if (control_at(text, i)) return i;
  return std::string_view::npos;
}

std::string escape_controls(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t n = control_at(text, i);
    if (n == 0) {
      out += text[i++];
      continue;
    }
    for (std::size_t k = 0; k < n; ++k, ++i)
      out += fmt::format("\\x{:02x}", static_cast<unsigned char>(text[i]));
  }
  return out;
}

namespace {

/// Optimal string alignment distance: Levenshtein plus adjacent swaps.
std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::vector<std::size_t>> d(a.size() + 1, std::vector<std::size_t>(b.size() + 1));
  for (std::size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (std::size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i)
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  return d[a.size()][b.size()];
}

}  // namespace

std::string nearest(std::string_view word, const std::vector<std::string>& candidates) {
  const std::size_t limit = std::min<std::size_t>(3, std::max<std::size_t>(1, word.size() / 3));
  std::string best;
  std::size_t best_d = limit + 1;
  for (const auto& c : candidates) {
    const std::size_t dist = edit_distance(word, c);
    if (dist < best_d) {
      best_d = dist;
      best = c;
    }
  }
  return best;
}

}  // namespace proofline::base
