// The runtime's settings from JSON (the library's options): the names of
// `run`'s options, every wrong kind or value refused naming the key.
#include <doctest/doctest.h>

#include <stdexcept>
#include <string>

#include "engine/settings.hpp"

using proofline::engine::runtime_settings;
using proofline::engine::settings_from_json;

namespace {

std::string refusal(const std::string& text) {
  try {
    settings_from_json(text, {"log"});
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("options read from JSON take run's option names and leave the rest at their defaults") {
  const runtime_settings d = settings_from_json("");
  CHECK(d.backend == "auto");
  CHECK(d.memory_budget == 0);
  const auto s = settings_from_json(R"({"backend": "cpu", "gpus": "0,1", "gpu-memory": "40G",
    "gpu-lanes": 1, "memory-budget": "8G", "synthesizers": 3, "finalizers": 1, "cpu-threads": 4,
    "no-verify": true, "synthesis-ahead": 2, "synthesis-model": "lc", "log": "stderr"})",
                                    {"log"});
  CHECK(s.backend == "cpu");
  CHECK(s.gpus == "0,1");
  CHECK(s.gpu_memory == "40G");
  CHECK(s.gpu_lanes == 1);
  CHECK(s.memory_budget == 8ull << 30);
  CHECK(s.synthesizers == 3);
  CHECK(s.finalizers == 1);
  CHECK(s.cpu_threads == 4);
  CHECK(s.no_verify);
  CHECK(s.synthesis_ahead == 2);
  CHECK(s.synthesis_model == "lc");
  CHECK(settings_from_json(R"({"memory-budget": 1048576})").memory_budget == 1048576);
}

TEST_CASE("a wrong key, kind or value is refused naming the key and what was expected") {
  CHECK(refusal(R"({"bakend": "cpu"})").find("unknown key \"bakend\"") != std::string::npos);
  CHECK(refusal(R"({"bakend": "cpu"})").find("known: backend, gpus") != std::string::npos);
  CHECK(refusal(R"({"backend": ["cpu"]})") ==
        "options: \"backend\": expected a string, got [\"cpu\"]");
  CHECK(refusal(R"({"backend": "gpu"})") ==
        "options: \"backend\": expected one of auto, cpu, cuda, got \"gpu\"");
  CHECK(refusal(R"({"synthesizers": "two"})") ==
        "options: \"synthesizers\": expected an integer, got \"two\"");
  CHECK(refusal(R"({"gpu-lanes": 0})") ==
        "options: \"gpu-lanes\": expected an integer from 1 to 8, got 0");
  CHECK(refusal(R"({"memory-budget": "lots"})").find("expected a size") != std::string::npos);
  CHECK(refusal(R"({"memory-budget": -1})").find("expected a size") != std::string::npos);
  CHECK(refusal(R"({"no-verify": 1})") == "options: \"no-verify\": expected true or false, got 1");
  CHECK(refusal("[1]") == "options: expected a JSON object");
  CHECK(refusal("{") == "options: not valid JSON");
  CHECK(refusal(std::string(70000, ' ') + "{}").find("more than the") != std::string::npos);
}
