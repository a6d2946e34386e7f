// http/api and http/tokens: what the HTTP API answers, driven through
// api::handle with a stand-in runtime that records what reached it.
#include "http/api.hpp"

#include <doctest/doctest.h>

#include <fstream>
#include <iterator>
#include <optional>
#include <stdexcept>

#include <nlohmann/json.hpp>

using namespace proofline;
using namespace proofline::http;
using observe::http_request;
using observe::http_response;

namespace {

const std::string small_dir = std::string(PROOFLINE_FIXTURES_DIR) + "/bn254/small";
const std::string key_path = small_dir + "/circuit.zkey";
const std::string token = "0123456789abcdef-test";

std::string file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

/// A runtime stand-in: holds each submission's continuation until told.
struct fake_runtime {
  std::vector<local_job> jobs;
  std::vector<std::function<void(const job_report&, const std::string&)>> waiting;
  int status_calls = 0;

  api_backend backend() {
    api_backend b;
    b.submit = [this](local_job j, std::function<void(const job_report&, const std::string&)> d) {
      jobs.push_back(std::move(j));
      waiting.push_back(std::move(d));
    };
    b.status = [this](std::function<void(const runtime_snapshot&, const std::string&)> d) {
      ++status_calls;
      d(runtime_snapshot{}, {});
    };
    return b;
  }
};

api_config config(std::size_t max_pending = 2) {
  api_config c;
  c.tokens = {{"alice", token}};
  c.max_pending = max_pending;
  c.path_problem = [](const std::string& p) {
    return p.rfind(small_dir, 0) == 0 ? std::string() : p + ": outside the allowed roots";
  };
  c.openapi = "{}";
  return c;
}

http_request request(std::string method, std::string target, std::string body = {},
                     bool authorized = true) {
  http_request r;
  r.method = std::move(method);
  r.target = target;
  auto q = target.find('?');
  r.path = target.substr(0, q);
  r.query = q == std::string::npos ? "" : target.substr(q + 1);
  r.body = std::move(body);
  if (authorized) r.headers.emplace_back("Authorization", "Bearer " + token);
  return r;
}

/// What the API answered, once (nullopt while deferred).
struct answer_slot {
  std::optional<http_response> r;
  observe::http_reply reply() {
    return [this](http_response x) {
      REQUIRE_FALSE(r);
      r = std::move(x);
    };
  }
  std::string code() const { return nlohmann::json::parse(r->body)["error"]["code"]; }
  std::string header(const std::string& name) const {
    for (const auto& [n, v] : r->headers)
      if (n == name) return v;
    return {};
  }
};

answer_slot ask(api& a, http_request req) {
  answer_slot s;
  a.handle(std::move(req), s.reply());
  return s;
}

std::string prove_target() { return "/v1/prove?key=" + key_path; }

job_report done_report() {
  job_report r;
  r.state = job_state::done;
  partition_report p;
  p.state = partition_state::done;
  p.proof_json = "{\"pi_a\": [\"1\"]}\n";
  p.public_json = "[\"7\"]\n";
  r.partitions.push_back(p);
  return r;
}

}  // namespace

TEST_CASE("a token file gives names and tokens and refuses a bad line naming it") {
  auto t = parse_tokens("# clients\nalice 0123456789abcdef\n\nbob  fedcba9876543210xyz\n", "t");
  REQUIRE(t.size() == 2);
  CHECK(t[1].name == "bob");
  CHECK(t[1].token == "fedcba9876543210xyz");
  CHECK_THROWS_WITH_AS(parse_tokens("alice short\n", "t"),
                       "t:1: the token of alice is shorter than 16 characters",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(parse_tokens("a 0123456789abcdef\na 0123456789abcdeg\n", "t"),
                       "t:2: the name a is given twice", std::invalid_argument);
  CHECK_THROWS_WITH_AS(parse_tokens("one-word\n", "t"), "t:1: expected NAME TOKEN (two words)",
                       std::invalid_argument);
  CHECK_THROWS_AS(parse_tokens("# nothing\n", "t"), std::invalid_argument);
}

TEST_CASE("a bearer token matches only the whole token of a line") {
  auto t = parse_tokens("alice 0123456789abcdef\nbob fedcba9876543210\n", "t");
  REQUIRE(match_bearer(t, "Bearer fedcba9876543210"));
  CHECK(match_bearer(t, "Bearer fedcba9876543210")->name == "bob");
  CHECK(match_bearer(t, "bearer 0123456789abcdef")->name == "alice");
  CHECK_FALSE(match_bearer(t, "Bearer 0123456789abcde"));
  CHECK_FALSE(match_bearer(t, "Bearer 0123456789abcdef0"));
  CHECK_FALSE(match_bearer(t, "Basic 0123456789abcdef"));
  CHECK_FALSE(match_bearer(t, "Bearer "));
}

TEST_CASE("no request without a valid token reaches a route or the runtime") {
  fake_runtime rt;
  api a(config(), rt.backend());
  for (const char* target : {"/v1/prove", "/v1/status", "/v1/openapi.json", "/v1/nothing"}) {
    auto s = ask(a, request("POST", target, file_bytes(small_dir + "/witness_0.wtns"), false));
    REQUIRE(s.r);
    CHECK(s.r->status == 401);
    CHECK(s.code() == "unauthorized");
    auto wrong = request("GET", target, {}, false);
    wrong.headers.emplace_back("Authorization", "Bearer 0123456789abcdef-tesT");
    CHECK(ask(a, std::move(wrong)).r->status == 401);
  }
  CHECK(rt.jobs.empty());
  CHECK(rt.status_calls == 0);
  CHECK(ask(a, request("GET", "/healthz", {}, false)).r->status == 200);
}

TEST_CASE("a proof is submitted in memory and answered with snarkjs's two files") {
  fake_runtime rt;
  api a(config(), rt.backend());
  answer_slot s;
  a.handle(request("POST", prove_target() + "&priority=high",
                   file_bytes(small_dir + "/witness_0.wtns")),
           s.reply());
  CHECK_FALSE(s.r);  // deferred until the runtime answers
  REQUIRE(rt.jobs.size() == 1);
  const local_job& j = rt.jobs[0];
  CHECK(j.spec.zkey == key_path);
  CHECK(j.spec.prio == priority::high);
  CHECK(j.spec.id.rfind("http-alice-", 0) == 0);
  REQUIRE(j.payload);
  CHECK(j.payload->return_outputs);
  CHECK(j.payload->witnesses.at(0).size == file_bytes(small_dir + "/witness_0.wtns").size());
  CHECK(a.pending() == 1);
  rt.waiting[0](done_report(), {});
  REQUIRE(s.r);
  CHECK(s.r->status == 200);
  CHECK(s.r->body == "{\"proof\": {\"pi_a\": [\"1\"]}, \"public_signals\": [\"7\"]}\n");
  CHECK(a.pending() == 0);
}

TEST_CASE("bad requests are answered 400, 403, 404 or 405 naming the field, before the runtime") {
  fake_runtime rt;
  api a(config(), rt.backend());
  const std::string w = file_bytes(small_dir + "/witness_0.wtns");
  auto refused = [&](http_request r, int status, const std::string& code,
                     const std::string& names) {
    auto s = ask(a, std::move(r));
    REQUIRE(s.r);
    CHECK(s.r->status == status);
    CHECK(s.code() == code);
    CHECK(s.r->body.find(names) != std::string::npos);
  };
  refused(request("POST", "/v1/prove", w), 400, "bad_request", "query parameter key");
  refused(request("POST", prove_target() + "&priority=urgent", w), 400, "bad_request",
          "query parameter priority");
  refused(request("POST", prove_target(), ""), 400, "bad_request", "request body: empty");
  refused(request("POST", prove_target(), "not a witness at all"), 400, "bad_request",
          "request body");
  refused(request("POST", "/v1/prove?key=/etc/hostname", w), 403, "forbidden",
          "outside the allowed roots");
  refused(request("POST", "/v1/prove?key=k0123456789abcdef", w), 404, "not_found", "key");
  refused(request("POST", "/v1/prove?key=" + small_dir + "/none.zkey", w), 404, "not_found",
          "no such file");
  refused(request("GET", "/v1/prove"), 405, "method_not_allowed", "POST");
  refused(request("GET", "/v2/prove"), 404, "not_found", "/v2/prove");
  CHECK(rt.jobs.empty());
}

TEST_CASE("beyond max-pending a proof is answered 429 with Retry-After, and taken once one ends") {
  fake_runtime rt;
  api a(config(2), rt.backend());
  const std::string w = file_bytes(small_dir + "/witness_0.wtns");
  answer_slot one, two;
  a.handle(request("POST", prove_target(), w), one.reply());
  a.handle(request("POST", prove_target(), w), two.reply());
  auto third = ask(a, request("POST", prove_target(), w));
  REQUIRE(third.r);
  CHECK(third.r->status == 429);
  CHECK(third.code() == "too_many_pending");
  CHECK(third.header("Retry-After") == "1");
  CHECK(rt.jobs.size() == 2);
  rt.waiting[0](done_report(), {});
  answer_slot fourth;
  a.handle(request("POST", prove_target(), w), fourth.reply());
  CHECK_FALSE(fourth.r);
  CHECK(rt.jobs.size() == 3);
}

TEST_CASE("a witness that does not fit the key is 422, a drain 503 with Retry-After") {
  fake_runtime rt;
  api a(config(), rt.backend());
  const std::string w = file_bytes(small_dir + "/witness_0.wtns");
  answer_slot s;
  a.handle(request("POST", prove_target(), w), s.reply());
  job_report failed;
  failed.state = job_state::failed;
  failed.has_error = true;
  failed.error = {"request body", "request body: 3928 witness values, the key expects 456"};
  rt.waiting.at(0)(failed, {});
  REQUIRE(s.r);
  CHECK(s.r->status == 422);
  CHECK(s.code() == "witness_mismatch");
  a.drain();
  auto d = ask(a, request("POST", prove_target(), w));
  CHECK(d.r->status == 503);
  CHECK(d.code() == "draining");
  CHECK(d.header("Retry-After") == "5");
  CHECK(ask(a, request("GET", "/v1/status")).r->status == 200);
}

TEST_CASE("query parameters are percent-decoded and a malformed escape is no value") {
  std::string v;
  CHECK(query_param("a=1&key=%2Fsrv%2Fk%20x.zkey", "key", v));
  CHECK(v == "/srv/k x.zkey");
  CHECK_FALSE(query_param("key=%2", "key", v));
  CHECK_FALSE(query_param("other=1", "key", v));
  CHECK(key_id_of(key_path).size() == 17);
  CHECK(key_id_of(key_path) == key_id_of(key_path));
  CHECK(key_id_of(small_dir + "/none").empty());
}
