#include "base/text.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

namespace base = proofline::base;

namespace {

std::string printf_fixed(double v, int decimals) {
  char buf[512];
  std::snprintf(buf, sizeof(buf), "%.*f", decimals, v);
  return buf;
}

}  // namespace

TEST_CASE("fixed writes what printf's %.*f writes") {
  std::vector<double> values = {0.0,  -0.0,  0.125, 0.375, 2.5,    -2.5,  1.005, 12.5,
                                99.95, 1e-9, 1e15,  -7.25, 123.456, 0.05, 1e300, 1023.96};
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> d(-1e6, 1e6);
  for (int i = 0; i < 2000; ++i) values.push_back(d(rng));
  for (double v : values)
    for (int decimals : {0, 1, 2, 3}) {
      INFO("value ", printf_fixed(v, 17), " decimals ", decimals);
      CHECK(base::fixed(v, decimals) == printf_fixed(v, decimals));
    }
  CHECK(base::fixed(12.5, 2) == "12.50");
  CHECK(base::fixed(3.14159) == "3.1");
}

TEST_CASE("split reads a list as std::getline does") {
  using list = std::vector<std::string>;
  CHECK(base::split("0,1,2", ',') == list{"0", "1", "2"});
  CHECK(base::split("0", ',') == list{"0"});
  CHECK(base::split("", ',') == list{});
  CHECK(base::split("0,", ',') == list{"0"});
  CHECK(base::split(",1", ',') == list{"", "1"});
  CHECK(base::split("a,,b", ',') == list{"a", "", "b"});
  CHECK(base::split(" a , b ", ',') == list{" a ", " b "});
}
