// Sizes as users write them and as messages print them.
#include <doctest/doctest.h>

#include "memory/size.hpp"

using proofline::memory::format_bytes;
using proofline::memory::parse_size;

TEST_CASE("sizes parse with binary units") {
  CHECK(parse_size("4096") == 4096u);
  CHECK(parse_size("512M") == 512ull << 20);
  CHECK(parse_size("8G") == 8ull << 30);
  CHECK(parse_size("8g") == 8ull << 30);
  CHECK(parse_size("8GiB") == 8ull << 30);
  CHECK(parse_size("8GB") == 8ull << 30);
  CHECK(parse_size("1.5T") == 3ull << 39);
  CHECK(parse_size("2K") == 2048u);
  CHECK(parse_size("100B") == 100u);
}

TEST_CASE("malformed sizes are rejected") {
  for (const char* bad :
       {"", "G", "-1G", "8X", "8 G", "1.5.2G", "0", "0.0001", "8GiBs", "1e3", "100000000000T"})
    CHECK_MESSAGE(!parse_size(bad), bad);
}

TEST_CASE("byte counts print with one decimal in the largest unit") {
  CHECK(format_bytes(100) == "100 B");
  CHECK(format_bytes(1536) == "1.5 KiB");
  CHECK(format_bytes(8ull << 30) == "8 GiB");
  CHECK(format_bytes(uint64_t(9.6 * (1ull << 30))) == "9.6 GiB");
  CHECK(format_bytes(512ull << 20) == "512 MiB");
}
