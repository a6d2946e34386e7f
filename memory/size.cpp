#include "memory/size.hpp"

#include <cctype>
#include <cmath>

#include <fmt/format.h>

namespace proofline::memory {

std::string format_bytes(uint64_t bytes) {
  static constexpr const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  if (bytes < 1024) return std::to_string(bytes) + " B";
  double v = static_cast<double>(bytes);
  unsigned u = 0;
  while (v >= 1024.0 && u + 1 < sizeof(units) / sizeof(units[0])) {
    v /= 1024.0;
    ++u;
  }
  // One decimal, rounded; 1023.96 KiB prints as "1024 KiB", which is honest.
  double tenths = std::round(v * 10.0);
  if (std::fmod(tenths, 10.0) == 0.0) return fmt::format("{:.0f} {}", tenths / 10.0, units[u]);
  return fmt::format("{:.1f} {}", tenths / 10.0, units[u]);
}

std::optional<uint64_t> parse_size(std::string_view text) {
  std::size_t i = 0;
  double whole = 0;
  bool digits = false;
  while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) {
    whole = whole * 10 + (text[i] - '0');
    digits = true;
    ++i;
  }
  if (i < text.size() && text[i] == '.') {
    ++i;
    double scale = 0.1;
    while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) {
      whole += (text[i] - '0') * scale;
      scale /= 10;
      digits = true;
      ++i;
    }
  }
  if (!digits) return std::nullopt;

  std::string_view unit = text.substr(i);
  double factor = 1;
  if (!unit.empty()) {
    char u = static_cast<char>(std::toupper(static_cast<unsigned char>(unit[0])));
    switch (u) {
      case 'B':
        factor = 1;
        break;
      case 'K':
        factor = 0x1p10;
        break;
      case 'M':
        factor = 0x1p20;
        break;
      case 'G':
        factor = 0x1p30;
        break;
      case 'T':
        factor = 0x1p40;
        break;
      default:
        return std::nullopt;
    }
    std::string_view rest = unit.substr(1);
    if (u == 'B') {
      if (!rest.empty()) return std::nullopt;
    } else if (!(rest.empty() || rest == "B" || rest == "b" || rest == "i" || rest == "iB" ||
                 rest == "ib")) {
      return std::nullopt;
    }
  }
  double bytes = std::floor(whole * factor);
  if (bytes < 1 || bytes > 0x1p63) return std::nullopt;
  return static_cast<uint64_t>(bytes);
}

}  // namespace proofline::memory
