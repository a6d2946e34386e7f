// Fuzz target: what the metrics endpoint decides itself (observe/metrics_http
// and observe/prometheus); cpp-httplib parses the HTTP around it. The input's
// first line is read as a request line, "METHOD TARGET ...", and the rest as
// a device name and a job state, the free text that reaches label values.
//
// Oracle:
//  * answer_metrics_request asks the runtime at most once, never for a
//    method other than GET or HEAD (405) nor for /healthz; it scrapes only
//    GET or HEAD of /metrics, and then sends the runtime's text unchanged;
//    every answer has a status it documents, a content type and a body;
//  * prometheus_text is exposition text: every line is a HELP or TYPE
//    comment or `name{labels} value`, and the device name and the job state
//    read back from their escaped label values are the ones written.
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "observe/metrics_http.hpp"

using namespace proofline::observe;

namespace {

void check(bool ok) {
  if (!ok) std::abort();
}

void check_answer(std::string_view request_line) {
  std::string_view method = request_line.substr(0, request_line.find(' '));
  std::string_view target;
  if (auto sp = request_line.find(' '); sp != std::string_view::npos) {
    target = request_line.substr(sp + 1);
    target = target.substr(0, target.find(' '));
  }
  std::string_view path = target.substr(0, target.find('?'));  // as httplib hands it over
  const std::string figures = "proofline_jobs{state=\"done\"} 1\n";
  int calls = 0;
  metrics_provider body = [&]() -> std::optional<std::string> {
    ++calls;
    return figures;
  };
  metrics_answer a = answer_metrics_request(method, path, body);
  const bool get = method == "GET" || method == "HEAD";
  check(calls <= 1);
  check(a.status == 200 || a.status == 404 || a.status == 405 || a.status == 503);
  check(!a.content_type.empty() && !a.body.empty());
  if (!get) check(a.status == 405 && calls == 0);
  if (path == "/healthz") check(calls == 0);
  if (a.scraped) check(get && path == "/metrics" && calls == 1 && a.body == figures);
  if (get && path == "/metrics") check(a.scraped);
}

/// The label values of `label` in a sample line's braces, unescaped.
/// Aborts on text that is not exposition format.
void read_labels(std::string_view labels, const std::string& label, std::vector<std::string>& out) {
  size_t i = 0;
  while (i < labels.size()) {
    size_t eq = labels.find('=', i);
    check(eq != std::string_view::npos && eq + 1 < labels.size() && labels[eq + 1] == '"');
    std::string_view name = labels.substr(i, eq - i);
    check(!name.empty() && name.find_first_of(" \"{}\n") == std::string_view::npos);
    std::string value;
    size_t j = eq + 2;
    for (;; ++j) {
      check(j < labels.size());
      char c = labels[j];
      check(c != '\n');
      if (c == '"') break;
      if (c == '\\') {
        check(j + 1 < labels.size());
        char e = labels[++j];
        check(e == '\\' || e == '"' || e == 'n');
        value += e == 'n' ? '\n' : e;
      } else {
        value += c;
      }
    }
    if (name == label) out.push_back(value);
    i = j + 1;
    if (i < labels.size()) {
      check(labels[i] == ',');
      ++i;
    }
  }
}

void check_exposition(const std::string& device_name, const std::string& state) {
  metrics_snapshot m;
  m.jobs[state] = 3;
  m.gpus.push_back({0, device_name, 1.5, 2.0, 7, 0.5});
  m.proof_duration.add(0.7);
  const std::string text = prometheus_text(m);
  check(!text.empty() && text.back() == '\n');
  std::vector<std::string> names, states;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    std::string_view line(text.data() + pos, end - pos);
    pos = end + 1;
    if (line.rfind("# ", 0) == 0) {
      check(line.rfind("# HELP proofline_", 0) == 0 || line.rfind("# TYPE proofline_", 0) == 0);
      continue;
    }
    check(line.rfind("proofline_", 0) == 0);
    size_t brace = line.find('{');
    size_t space;
    if (brace != std::string_view::npos && brace < line.find(' ')) {
      size_t close = line.rfind('}');
      check(close != std::string_view::npos && close > brace);
      std::string_view labels = line.substr(brace + 1, close - brace - 1);
      read_labels(labels, "name", names);
      read_labels(labels, "state", states);
      space = close + 1;
    } else {
      space = line.find(' ');
    }
    check(space < line.size() && line[space] == ' ');
    std::string value(line.substr(space + 1));
    char* rest = nullptr;
    std::strtod(value.c_str(), &rest);
    check(!value.empty() && (*rest == '\0'));
  }
  check(names.size() == 4);  // busy seconds, busy ratio, partitions, NVML ratio
  for (const auto& n : names) check(n == device_name);
  check(states.size() == 1 && states[0] == state);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  size_t eol = input.find_first_of("\r\n");
  check_answer(input.substr(0, eol));
  std::string_view rest = eol == std::string_view::npos ? std::string_view() : input.substr(eol);
  size_t half = rest.size() / 2;
  check_exposition(std::string(rest.substr(0, half)), std::string(rest.substr(half)));
  return 0;
}
