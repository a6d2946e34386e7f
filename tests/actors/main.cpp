// Test runner: doctest's main with the runtime's logs quiet (errors only),
// so failures stand out; PROOFLINE_TEST_LOG=debug shows everything.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdlib>

#include <spdlog/spdlog.h>

int main(int argc, char** argv) {
  const char* level = std::getenv("PROOFLINE_TEST_LOG");
  spdlog::set_level(level ? spdlog::level::from_str(level) : spdlog::level::err);
  return doctest::Context(argc, argv).run();
}
