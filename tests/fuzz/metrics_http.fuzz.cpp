// Fuzz target: HTTP requests to the metrics endpoint (observe/metrics_http),
// which may listen beyond loopback. Whatever the request head, the reply is
// one well-formed HTTP/1.1 response whose Content-Length matches its body
// (a HEAD request's reply: none), the runtime is asked at most once (a
// scrape or a readiness probe), and a scrape always asked it.
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>

#include "observe/metrics_http.hpp"

using proofline::observe::metrics_reply;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view head(reinterpret_cast<const char*>(data), size);
  int calls = 0;
  auto body = [&]() -> std::optional<std::string> {
    ++calls;
    return std::string("proofline_jobs{state=\"done\"} 1\n");
  };
  bool scraped = false;
  std::string r = metrics_reply(head, body, &scraped);
  if (calls > 1 || (scraped && calls != 1)) std::abort();
  if (r.rfind("HTTP/1.1 ", 0) != 0) std::abort();
  auto end = r.find("\r\n\r\n");
  if (end == std::string::npos) std::abort();
  auto cl = r.find("Content-Length: ");
  if (cl == std::string::npos || cl > end) std::abort();
  size_t length = std::stoul(r.substr(cl + 16));
  // The method as the endpoint reads it: the first line up to its first space.
  std::string_view line = head.substr(0, head.find_first_of("\r\n"));
  const bool head_only = line.substr(0, line.find(' ')) == "HEAD";
  if (r.size() - end - 4 != (head_only ? 0 : length)) std::abort();
  return 0;
}
