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

TEST_CASE("find_control finds C0, DEL and C1 control characters and nothing else") {
  CHECK(base::find_control("plain-id_1.2 with spaces") == std::string_view::npos);
  CHECK(base::find_control("caf\xc3\xa9") == std::string_view::npos);  // é is printable
  CHECK(base::find_control("ab\ncd") == 2);
  CHECK(base::find_control("\x1b[2K") == 0);
  CHECK(base::find_control("x\x7f") == 1);
  CHECK(base::find_control("id\xc2\x9b" "31m") == 2);  // C1 CSI in UTF-8
  CHECK(base::find_control("\xc2") == std::string_view::npos);
}

TEST_CASE("escape_controls writes control characters as \\xNN and keeps the rest") {
  CHECK(base::escape_controls("job-1") == "job-1");
  CHECK(base::escape_controls("evil\x1b[2K\n[info] forged") == "evil\\x1b[2K\\x0a[info] forged");
  CHECK(base::escape_controls("a\tb\x7f") == "a\\x09b\\x7f");
  CHECK(base::escape_controls("id\xc2\x9b" "31m") == "id\\xc2\\x9b31m");
  CHECK(base::escape_controls("caf\xc3\xa9") == "caf\xc3\xa9");
  const std::string escaped = base::escape_controls(std::string("a\0b", 3));
  CHECK(escaped == "a\\x00b");
  CHECK(base::find_control(escaped) == std::string_view::npos);
}

TEST_CASE("nearest suggests the candidate a typo most likely meant, and nothing far") {
  const std::vector<std::string> options = {"--backend", "--synthesizers", "--finalizers",
                                            "--gpus", "--help"};
  CHECK(base::nearest("--bakend", options) == "--backend");       // a letter left out
  CHECK(base::nearest("--backedn", options) == "--backend");      // two letters swapped
  CHECK(base::nearest("--syntesizers", options) == "--synthesizers");
  CHECK(base::nearest("--gpu", options) == "--gpus");
  CHECK(base::nearest("--memory", options).empty());               // nothing near
  CHECK(base::nearest("rn", {"run", "serve", "prove"}) == "run");
  CHECK(base::nearest("x", {"run"}).empty());
  CHECK(base::nearest("--finalizer", {}).empty());
}
