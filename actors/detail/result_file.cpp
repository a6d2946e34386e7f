#include "actors/detail/result_file.hpp"

#include <filesystem>

#include <cmath>

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

namespace proofline {

namespace {

using json = nlohmann::ordered_json;

double round_us(double ms) { return std::round(ms * 1000.0) / 1000.0; }

json span_json(const span_ms& s) { return json::array({round_us(s.start), round_us(s.end)}); }

json error_json(const file_error& e) { return json{{"file", e.file}, {"message", e.message}}; }

json partition_json(const partition_report& p) {
  json j;
  j["index"] = p.index;
  j["status"] = to_string(p.state);
  j["proof"] = p.state == partition_state::done ? json(p.proof_file) : json(nullptr);
  j["public"] = p.state == partition_state::done ? json(p.public_file) : json(nullptr);
  json spans = json::object();
  if (p.spans.memory.recorded()) spans["memory"] = span_json(p.spans.memory);
  if (p.spans.synthesize.recorded()) spans["synthesize"] = span_json(p.spans.synthesize);
  if (p.spans.witness.recorded()) spans["witness"] = span_json(p.spans.witness);
  if (p.spans.prove.recorded()) spans["prove"] = span_json(p.spans.prove);
  if (p.spans.finalize.recorded()) spans["finalize"] = span_json(p.spans.finalize);
  j["spans_ms"] = spans;
  j["verified"] = p.verified;
  j["verify_ms"] = round_us(p.verify_ms);
  j["retries"] = p.retries;
  // The backend that proved it (or, for a failed partition, tried last).
  j["backend"] = p.spans.backend.empty() ? json(nullptr) : json(p.spans.backend);
  if (p.state == partition_state::failed) j["error"] = error_json(p.error);
  return j;
}

}  // namespace

std::string result_json(const job_report& report) {
  json j;
  j["id"] = report.id;
  j["status"] = to_string(report.state);
  j["error"] = report.has_error ? error_json(report.error) : json(nullptr);
  j["partitions"] = json::array();
  for (const auto& p : report.partitions) j["partitions"].push_back(partition_json(p));
  j["spans_ms"] = json{{"total", span_json(report.total)}};
  return j.dump(2) + "\n";
}

std::size_t clear_previous_outputs(const std::string& out) {
  namespace fs = std::filesystem;
  auto ours = [](const std::string& name) {
    if (name == "result.json" || name == "proof.json" || name == "public.json") return true;
    for (const char* prefix : {"proof_", "public_"}) {
      std::string p(prefix);
      if (name.size() > p.size() + 5 && name.compare(0, p.size(), p) == 0 &&
          name.compare(name.size() - 5, 5, ".json") == 0) {
        auto digits = name.substr(p.size(), name.size() - p.size() - 5);
        if (digits.find_first_not_of("0123456789") == std::string::npos) return true;
      }
    }
    return false;
  };
  std::size_t removed = 0;
  std::error_code ec;
  for (fs::directory_iterator it(out, ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code type_ec;
    if (!it->is_regular_file(type_ec) || !ours(it->path().filename().string())) continue;
    std::error_code rm_ec;
    if (fs::remove(it->path(), rm_ec)) ++removed;
  }
  return removed;
}

void write_result_file(
    const std::function<void(const std::string& path, std::string_view contents)>& write_file,
    const job_report& report) {
  if (report.out.empty()) return;
  auto path = (std::filesystem::path(report.out) / "result.json").string();
  try {
    write_file(path, result_json(report));
  } catch (const std::exception& e) {
    spdlog::error("job {}: cannot write {}: {}", report.id, path, e.what());
  }
}

}  // namespace proofline
