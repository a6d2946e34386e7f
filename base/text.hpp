// Small text helpers shared by the tables, reports and pages the app prints.
#pragma once

#include <cstdio>
#include <string>

namespace proofline::base {

/// `v` with exactly `decimals` digits after the point ("12.50").
inline std::string fixed(double v, int decimals = 1) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.*f", decimals, v);
  return buf;
}

}  // namespace proofline::base
