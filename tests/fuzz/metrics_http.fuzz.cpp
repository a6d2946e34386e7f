// Fuzz target: the metrics endpoint's HTTP request parser
// (observe/http_server's parse_http_request, which any later HTTP endpoint of
// the daemon shares) and what the endpoint decides itself (observe/metrics_http
// and observe/prometheus). The whole input is parsed as the bytes a client
// sent, under the endpoint's limits and under small ones; its first line is
// also read as a request line, "METHOD TARGET ...", and the rest as a device
// name and a job state, the free text that reaches label values.
//
// Oracle:
//  * the parser is refused with a status it documents and a reason, and
//    stays refused with that status whatever follows; incomplete only while
//    the bytes still fit the limits; complete with a token method, a path
//    and query that make the target, at most the fields, head and body
//    bytes the limits allow, the same request from its own bytes alone, and
//    no request from a prefix of them;
//  * answer_metrics_request asks the runtime at most once, never for a
//    method other than GET or HEAD (405) nor for /healthz; it scrapes only
//    GET or HEAD of /metrics, and then sends the runtime's text unchanged;
//    every answer has a status it documents, a content type and a body;
//  * prometheus_text is exposition text: every line is a HELP or TYPE
//    comment or `name{labels} value`, and the device name and the job state
//    read back from their escaped label values are the ones written.
#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "observe/http_server.hpp"
#include "observe/metrics_http.hpp"

using namespace proofline::observe;

namespace {

void check(bool ok) {
  if (!ok) std::abort();
}

bool is_token(std::string_view s) {
  if (s.empty()) return false;
  for (unsigned char c : s)
    if (!std::isalnum(c) && std::string_view("!#$%&'*+-.^_`|~").find(static_cast<char>(c)) ==
                                std::string_view::npos)
      return false;
  return true;
}

/// The parser's promises for `bytes` under `limits`; the request it found.
std::optional<http_request> check_parse(std::string_view bytes, const http_limits& limits) {
  const http_parse p = parse_http_request(bytes, limits);
  switch (p.st) {
    case http_parse::state::refused: {
      check(p.status == 400 || p.status == 413 || p.status == 414 || p.status == 431 ||
            p.status == 501 || p.status == 505);
      check(!p.reason.empty());
      std::string more(bytes);
      more += "\r\n\r\nGET / HTTP/1.1\r\n\r\n";
      const http_parse q = parse_http_request(more, limits);
      check(q.st == http_parse::state::refused && q.status == p.status);
      return std::nullopt;
    }
    case http_parse::state::incomplete:
      check(bytes.size() <= limits.max_head_bytes + limits.max_body_bytes);
      return std::nullopt;
    case http_parse::state::complete:
      break;
  }
  const http_request& r = p.request;
  check(p.consumed <= bytes.size());
  check(r.body.size() <= limits.max_body_bytes);
  check(p.consumed - r.body.size() <= limits.max_head_bytes);
  check(r.headers.size() <= limits.max_header_fields);
  check(is_token(r.method));
  check(!r.path.empty() && r.path.front() == '/' && r.path.find('?') == std::string::npos);
  check(r.target == (r.target.find('?') == std::string::npos ? r.path : r.path + "?" + r.query));
  check(r.minor_version == 0 || r.minor_version == 1);
  for (const auto& [name, value] : r.headers) {
    check(is_token(name));
    check(value.find_first_of("\r\n") == std::string::npos);
  }
  const http_parse alone = parse_http_request(bytes.substr(0, p.consumed), limits);
  check(alone.st == http_parse::state::complete && alone.consumed == p.consumed &&
        alone.request.target == r.target && alone.request.body == r.body &&
        alone.request.headers == r.headers);
  for (size_t cut : {p.consumed / 2, p.consumed - 1})
    check(parse_http_request(bytes.substr(0, cut), limits).st == http_parse::state::incomplete);
  return r;
}

void check_answer(std::string_view method, std::string_view path) {
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

/// The first line read as "METHOD TARGET ...", whatever the parser says of
/// it: answer_metrics_request must hold for any method and path.
void check_request_line(std::string_view request_line) {
  std::string_view method = request_line.substr(0, request_line.find(' '));
  std::string_view target;
  if (auto sp = request_line.find(' '); sp != std::string_view::npos) {
    target = request_line.substr(sp + 1);
    target = target.substr(0, target.find(' '));
  }
  check_answer(method, target.substr(0, target.find('?')));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  if (auto request = check_parse(input, http_limits{}))  // the metrics endpoint's limits
    check_answer(request->method, request->path);
  http_limits small;  // limits within reach of short inputs
  small.max_head_bytes = 96;
  small.max_header_fields = 3;
  small.max_body_bytes = 16;
  check_parse(input, small);
  size_t eol = input.find_first_of("\r\n");
  check_request_line(input.substr(0, eol));
  std::string_view rest = eol == std::string_view::npos ? std::string_view() : input.substr(eol);
  size_t half = rest.size() / 2;
  check_exposition(std::string(rest.substr(0, half)), std::string(rest.substr(half)));
  return 0;
}
