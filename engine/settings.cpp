#include "engine/settings.hpp"

#include <algorithm>
#include <fstream>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "memory/size.hpp"

namespace proofline::engine {

namespace {

constexpr uint64_t gib = 1ull << 30;
constexpr uint64_t min_budget = 256ull << 20;  // below this no realistic partition fits

/// The most bytes of option text read; options are a few hundred bytes.
constexpr std::size_t max_settings_bytes = 64 << 10;

[[noreturn]] void bad(const std::string& key, const std::string& expected,
                      const nlohmann::json& got) {
  throw std::invalid_argument("options: \"" + key + "\": expected " + expected + ", got " +
                              got.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

std::string text_of(const std::string& key, const nlohmann::json& v,
                    std::initializer_list<const char*> allowed = {}) {
  if (!v.is_string()) bad(key, "a string", v);
  std::string s = v.get<std::string>();
  if (allowed.size() &&
      std::none_of(allowed.begin(), allowed.end(), [&](const char* a) { return s == a; })) {
    std::string list;
    for (const char* a : allowed) list += (list.empty() ? "" : ", ") + std::string(a);
    bad(key, "one of " + list, v);
  }
  return s;
}

unsigned count_of(const std::string& key, const nlohmann::json& v, unsigned lo, unsigned hi) {
  if (!v.is_number_integer() && !v.is_number_unsigned()) bad(key, "an integer", v);
  const auto n = v.get<int64_t>();
  if (n < lo || n > hi)
    bad(key, "an integer from " + std::to_string(lo) + " to " + std::to_string(hi), v);
  return static_cast<unsigned>(n);
}

bool flag_of(const std::string& key, const nlohmann::json& v) {
  if (!v.is_boolean()) bad(key, "true or false", v);
  return v.get<bool>();
}

uint64_t size_of(const std::string& key, const nlohmann::json& v) {
  if (v.is_number_unsigned() || (v.is_number_integer() && v.get<int64_t>() > 0))
    return v.get<uint64_t>();
  if (v.is_string())
    if (auto bytes = memory::parse_size(v.get<std::string>()); bytes && *bytes > 0) return *bytes;
  bad(key, "a size in bytes or with a unit (512M, 8G)", v);
}

}  // namespace

uint64_t physical_memory() {
  std::ifstream in("/proc/meminfo");
  std::string key;
  uint64_t kib = 0;
  std::string unit;
  while (in >> key >> kib >> unit)
    if (key == "MemTotal:") return kib * 1024;
  return 0;
}

uint64_t default_memory_budget() {
  uint64_t total = physical_memory();
  if (total == 0) return 4 * gib;
  uint64_t share = total / 10 * 7;
  uint64_t budget = share > gib ? share - gib : 0;
  return budget < min_budget ? min_budget : budget;
}

runtime_settings settings_from_json(const std::string& text,
                                    std::initializer_list<const char*> also) {
  runtime_settings s;
  if (text.size() > max_settings_bytes)
    throw std::invalid_argument("options: " + std::to_string(text.size()) +
                                " bytes, more than the " + std::to_string(max_settings_bytes) +
                                " options may take");
  if (text.find_first_not_of(" \t\r\n") == std::string::npos) return s;
  nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) throw std::invalid_argument("options: not valid JSON");
  if (!j.is_object()) throw std::invalid_argument("options: expected a JSON object");
  for (auto item = j.begin(); item != j.end(); ++item) {
    const std::string& key = item.key();
    const nlohmann::json& v = item.value();
    if (std::any_of(also.begin(), also.end(), [&](const char* a) { return key == a; })) continue;
    if (key == "backend") {
      s.backend = text_of(key, v, {"auto", "cpu", "cuda"});
    } else if (key == "gpus") {
      s.gpus = text_of(key, v);
    } else if (key == "gpu-memory") {
      s.gpu_memory = text_of(key, v);
    } else if (key == "gpu-lanes") {
      s.gpu_lanes = count_of(key, v, 1, 8);
    } else if (key == "synthesizers") {
      s.synthesizers = count_of(key, v, 0, 256);
    } else if (key == "finalizers") {
      s.finalizers = count_of(key, v, 1, 256);
    } else if (key == "cpu-threads") {
      s.cpu_threads = count_of(key, v, 0, 4096);
    } else if (key == "synthesis-ahead") {
      s.synthesis_ahead = count_of(key, v, 1, 1024);
    } else if (key == "synthesis-ahead-max") {
      s.synthesis_ahead_max = count_of(key, v, 1, 1024);
    } else if (key == "memory-budget") {
      s.memory_budget = size_of(key, v);
    } else if (key == "no-verify") {
      s.no_verify = flag_of(key, v);
    } else if (key == "synthesis-model") {
      s.synthesis_model = text_of(key, v, {"plain", "lc", "lc-keep"});
    } else {
      std::string known =
          "backend, gpus, gpu-memory, gpu-lanes, synthesizers, finalizers, cpu-threads, "
          "synthesis-ahead, synthesis-ahead-max, memory-budget, no-verify, synthesis-model";
      for (const char* a : also) known += std::string(", ") + a;
      throw std::invalid_argument("options: unknown key \"" + key + "\" (known: " + known + ")");
    }
  }
  return s;
}

}  // namespace proofline::engine
