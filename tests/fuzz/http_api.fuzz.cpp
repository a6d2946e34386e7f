// Fuzz target: the HTTP API's request handlers (http/api.cpp: routes,
// authentication, query decoding, key resolution, witness checks,
// backpressure, errors), behind the request parser they run after
// (observe/http_request.cpp), over a stand-in runtime that answers at once.
// The input is the bytes a client sent; a request the parser completes is
// handled twice, with its own Authorization field and without one; the
// stand-in's answer (done, failed on the witness, failed, refused) comes
// from the input's last byte.
//
// Oracle:
//  * every request is answered exactly once, with a status the API
//    documents (docs/openapi.json), and every error body is
//    {"error": {"code", "message"}} whose code maps to that status;
//  * a request without a valid token is answered 401 (except /healthz) and
//    neither the runtime nor a route saw it;
//  * the runtime is asked for a proof only by an authenticated POST of
//    /v1/prove, with a .wtns body and the one allowed key, and a job that
//    leaves, leaves with the body's bytes;
//  * 429 and 503 carry Retry-After; nothing is pending once answered.
#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "http/api.hpp"
#include "observe/http_server.hpp"

using namespace proofline;
using namespace proofline::http;
using observe::http_request;
using observe::http_response;

namespace {

void check(bool ok) {
  if (!ok) std::abort();
}

const std::string good_token = "0123456789abcdef-fuzz";
/// The one key path allowed: a regular file every process has.
const std::string allowed_key = "/proc/self/exe";

const std::set<int> documented = {200, 400, 401, 403, 404, 405, 409, 413, 422, 429, 500, 503};

struct stand_in {
  uint8_t mode = 0;
  int submits = 0, statuses = 0;
  std::string last_body;

  api_backend backend() {
    api_backend b;
    b.submit = [this](local_job j, std::function<void(const job_report&, const std::string&)> d) {
      ++submits;
      check(j.payload && j.payload->witnesses.size() == 1);
      last_body.assign(static_cast<const char*>(j.payload->witnesses[0].data),
                       j.payload->witnesses[0].size);
      job_report r;
      switch (mode % 4) {
        case 0: {
          r.state = job_state::done;
          partition_report p;
          p.state = partition_state::done;
          p.proof_json = "{}";
          p.public_json = "[]";
          r.partitions.push_back(p);
          d(r, {});
          break;
        }
        case 1:
          r.state = job_state::failed;
          r.has_error = true;
          r.error = {"request body", "request body: wrong"};
          d(r, {});
          break;
        case 2:
          r.state = job_state::failed;
          d(r, {});
          break;
        default:
          d(r, "the server is stopping");
      }
    };
    b.status = [this](std::function<void(const runtime_snapshot&, const std::string&)> d) {
      ++statuses;
      d(runtime_snapshot{}, mode % 2 ? std::string() : std::string("no answer"));
    };
    return b;
  }
};

void handle_once(const http_request& req, bool strip_auth, uint8_t mode) {
  stand_in rt;
  rt.mode = mode;
  api_config cfg;
  cfg.tokens = {{"fuzz", good_token}};
  cfg.max_pending = 1 + mode % 2;
  cfg.openapi = "{}";
  cfg.path_problem = [](const std::string& p) {
    return p == allowed_key ? std::string() : p + ": outside the allowed roots";
  };
  api a(cfg, rt.backend());
  if (mode & 8) a.drain();
  http_request r = req;
  if (strip_auth) {
    std::vector<std::pair<std::string, std::string>> kept;
    for (auto& h : r.headers) {
      std::string lower = h.first;
      for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      if (lower != "authorization") kept.push_back(h);
    }
    r.headers = std::move(kept);
  }
  const std::string* field = r.header("Authorization");
  const bool authorized = field && match_bearer(cfg.tokens, *field);
  const std::string path = r.path, method = r.method, body = r.body;
  int answers = 0;
  std::optional<http_response> got;
  a.handle(std::move(r), [&](http_response x) {
    ++answers;
    got = std::move(x);
  });
  check(answers == 1);
  check(documented.count(got->status) == 1);
  if (got->status != 200) {
    auto j = nlohmann::json::parse(got->body, nullptr, false);
    check(j.is_object() && j.contains("error") && j["error"].is_object());
    check(j["error"]["code"].is_string() && j["error"]["message"].is_string());
    check(!j["error"]["message"].get<std::string>().empty());
  }
  if (got->status == 429 || got->status == 503) {
    bool retry = false;
    for (auto& [n, v] : got->headers) retry |= n == "Retry-After" && !v.empty();
    check(retry);
  }
  if (path != "/healthz" && !authorized) {
    check(got->status == 401);
    check(rt.submits == 0 && rt.statuses == 0);
  }
  if (rt.submits) {
    check(authorized && method == "POST" && path == "/v1/prove");
    check(rt.last_body == body);
  }
  check(a.pending() == 0);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  observe::http_limits limits;
  limits.max_body_bytes = 1 << 20;
  limits.max_head_bytes = 16 * 1024;
  observe::http_parse p = observe::parse_http_request(bytes, limits);
  if (p.st != observe::http_parse::state::complete) return 0;
  const uint8_t mode = data[size - 1];
  handle_once(p.request, false, mode);
  handle_once(p.request, true, mode);
  return 0;
}
