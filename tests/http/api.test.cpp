// http/api and http/tokens: what the HTTP API answers, driven through
// api::handle with a stand-in runtime that records what reached it.
#include "http/api.hpp"
#include "http/multipart.hpp"

#include <algorithm>
#include <doctest/doctest.h>

#include <fstream>
#include <iterator>
#include <optional>
#include <stdexcept>
#include <tuple>
#include <vector>

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

TEST_CASE("an input.json body with witness_generator reaches the runtime as a job of inputs") {
  fake_runtime rt;
  api a(config(), rt.backend());
  // Any regular file under the allowed root stands for the generator here:
  // the registry, not the API, opens it and checks it against the key.
  const std::string gen = small_dir + "/input_0.json";
  const std::string target = prove_target() + "&witness_generator=" + gen;
  const std::string input = "{\"a\": \"3\"}";
  answer_slot s;
  a.handle(request("POST", target, input), s.reply());
  CHECK_FALSE(s.r);
  REQUIRE(rt.jobs.size() == 1);
  const local_job& j = rt.jobs[0];
  CHECK(j.spec.witness_generator == gen);
  REQUIRE(j.payload);
  REQUIRE(j.payload->witnesses.size() == 1);
  CHECK(std::string(static_cast<const char*>(j.payload->witnesses[0].data),
                    j.payload->witnesses[0].size) == input);
  // An input the circuit refuses is 422 input_rejected; a generator of
  // another circuit 422 witness_mismatch; both with the runtime's message.
  job_report failed;
  failed.state = job_state::failed;
  failed.has_error = true;
  failed.error = {"request body", "request body: input signal \"b\" not given"};
  rt.waiting.at(0)(failed, {});
  REQUIRE(s.r);
  CHECK(s.r->status == 422);
  CHECK(s.code() == "input_rejected");
  CHECK(s.r->body.find("input signal") != std::string::npos);
  answer_slot other;
  a.handle(request("POST", target, input), other.reply());
  failed.error = {gen, gen + ": computes witnesses over BLS12-381"};
  rt.waiting.at(1)(failed, {});
  REQUIRE(other.r);
  CHECK(other.r->status == 422);
  CHECK(other.code() == "witness_mismatch");

  auto refused = [&](const std::string& t, const std::string& body, int status,
                     const std::string& names) {
    auto r = ask(a, request("POST", t, body));
    REQUIRE(r.r);
    CHECK(r.r->status == status);
    CHECK(r.r->body.find(names) != std::string::npos);
  };
  refused(target, "[1]", 400, "an input.json is a JSON object");
  refused(target, "", 400, "send the input.json");
  refused(prove_target(), input, 400, "witness_generator");
  refused(prove_target() + "&witness_generator=gen.so", input, 400, "absolute path");
  refused(prove_target() + "&witness_generator=/etc/hostname", input, 403, "outside the allowed roots");
  refused(prove_target() + "&witness_generator=" + small_dir + "/none.so", input, 404, "no such file");
  CHECK(rt.jobs.size() == 2);
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

namespace {

std::string b64(const std::string& bytes) {
  static const char* table = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  std::size_t i = 0;
  for (; i + 2 < bytes.size(); i += 3) {
    const uint32_t v = (uint8_t(bytes[i]) << 16) | (uint8_t(bytes[i + 1]) << 8) | uint8_t(bytes[i + 2]);
    for (int s = 18; s >= 0; s -= 6) out += table[(v >> s) & 63];
  }
  if (i < bytes.size()) {
    uint32_t v = uint8_t(bytes[i]) << 16;
    if (i + 1 < bytes.size()) v |= uint8_t(bytes[i + 1]) << 8;
    out += table[(v >> 18) & 63];
    out += table[(v >> 12) & 63];
    out += i + 1 < bytes.size() ? table[(v >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

/// A runtime stand-in for the job and key routes: records what reached it
/// and holds the continuations until told.
struct fake_jobs {
  std::vector<job_request> created;
  std::vector<std::function<void(const maybe_refusal&)>> accepted;
  std::vector<std::function<void()>> ended;
  std::vector<std::function<bool(const job_progress&, const maybe_refusal&)>> followers;
  job_progress progress;  ///< what job and events answer

  api_backend backend() {
    api_backend b;
    b.status = [](std::function<void(const runtime_snapshot&, const std::string&)> d) {
      runtime_snapshot s;
      s.keys.push_back({key_path, 1000, 0, 0, 5});
      d(s, {});
    };
    b.create = [this](job_request j, std::function<void(const maybe_refusal&)> a,
                      std::function<void()> e) {
      created.push_back(std::move(j));
      accepted.push_back(std::move(a));
      ended.push_back(std::move(e));
    };
    b.taken = [this](const std::string& id, std::function<void(bool)> k) {
      k(std::any_of(created.begin(), created.end(), [&](const job_request& j) { return j.id == id; }));
    };
    b.job = [this](const std::string& id,
                   std::function<void(const job_progress&, const maybe_refusal&)> k) {
      if (id != progress.status.id) return k({}, refusal{error_code::not_found, "job " + id + ": no such job"});
      k(progress, std::nullopt);
    };
    b.events = [this](const std::string&, std::function<bool(const job_progress&, const maybe_refusal&)> p) {
      followers.push_back(std::move(p));
    };
    b.evict = [](const std::string& path, std::function<void(uint64_t, const maybe_refusal&)> k) {
      k(1000, std::nullopt);
      (void)path;
    };
    return b;
  }
};

/// A stream that records what the API sent through it.
struct recorded_stream final : observe::http_stream {
  std::optional<http_response> whole, head;
  std::string body;
  bool ended = false, gone = false;
  void reply(http_response r) override { whole = std::move(r); }
  bool open(http_response r) override {
    body += r.body;
    head = std::move(r);
    return !gone;
  }
  bool send(std::string bytes) override {
    if (gone) return false;
    body += bytes;
    return true;
  }
  void end() override { ended = true; }
};

std::string job_body(const nlohmann::json& j) { return j.dump(); }

}  // namespace

TEST_CASE("base64 decodes canonical text with or without padding and refuses the rest") {
  std::string out;
  CHECK(base64_decode("aGVsbG8=", out));
  CHECK(out == "hello");
  CHECK(base64_decode("aGVsbG8", out));
  CHECK(out == "hello");
  CHECK(base64_decode("", out));
  CHECK(out.empty());
  CHECK_FALSE(base64_decode("aGVsbG8*", out));
  CHECK_FALSE(base64_decode("a", out));
  CHECK_FALSE(base64_decode("aGVsbG9=", out));  // leftover bits set
  CHECK_FALSE(base64_decode("aG=VsbG8", out));
  const std::string w = file_bytes(small_dir + "/witness_0.wtns");
  CHECK(base64_decode(b64(w), out));
  CHECK(out == w);
}

TEST_CASE("a job of uploaded witnesses reaches the runtime decoded and is answered 202 with its URL") {
  fake_jobs rt;
  api a(config(2), rt.backend());
  const std::string w = file_bytes(small_dir + "/witness_0.wtns");
  auto s = ask(a, request("POST", "/v1/jobs",
                          job_body({{"key", key_path}, {"witnesses_base64", {b64(w), b64(w)}},
                                    {"priority", "high"}, {"id", "j-1"}})));
  CHECK_FALSE(s.r);  // deferred until the runtime took it
  REQUIRE(rt.created.size() == 1);
  CHECK(rt.created[0].id == "j-1");
  CHECK(rt.created[0].who == "alice");
  CHECK(rt.created[0].prio == priority::high);
  REQUIRE(rt.created[0].uploads.size() == 2);
  CHECK(rt.created[0].uploads[1] == w);
  CHECK(a.pending() == 2);
  rt.accepted[0](std::nullopt);
  REQUIRE(s.r);
  CHECK(s.r->status == 202);
  CHECK(s.header("Location") == "/v1/jobs/j-1");
  auto j = nlohmann::json::parse(s.r->body);
  CHECK(j["url"] == "/v1/jobs/j-1");
  CHECK(j["partitions"] == 2);
  // Full: the next job waits; once the first ends it is taken.
  auto full = ask(a, request("POST", "/v1/jobs",
                             job_body({{"key", key_path}, {"witnesses_base64", {b64(w)}}})));
  REQUIRE(full.r);
  CHECK(full.r->status == 429);
  CHECK(full.header("Retry-After") == "1");
  // ... but a taken id is answered 409 at the limit too: no retry would take it.
  auto taken = ask(a, request("POST", "/v1/jobs",
                              job_body({{"key", key_path}, {"witnesses_base64", {b64(w)}},
                                        {"id", "j-1"}})));
  REQUIRE(taken.r);
  CHECK(taken.r->status == 409);
  CHECK(taken.code() == "conflict");
  CHECK(taken.r->body.find("j-1") != std::string::npos);
  auto free_id = ask(a, request("POST", "/v1/jobs",
                                job_body({{"key", key_path}, {"witnesses_base64", {b64(w)}},
                                          {"id", "j-2"}})));
  REQUIRE(free_id.r);
  CHECK(free_id.r->status == 429);
  CHECK(rt.created.size() == 1);
  rt.ended[0]();
  CHECK(a.pending() == 0);
  auto again = ask(a, request("POST", "/v1/jobs",
                              job_body({{"key", key_path}, {"witnesses_base64", {b64(w)}}})));
  REQUIRE(rt.created.size() == 2);
  CHECK(rt.created[1].id.rfind("http-alice-", 0) == 0);
  // A refusal (an id in use) is answered as it came, and releases what was reserved.
  rt.accepted[1](refusal{error_code::conflict, "field id: taken"});
  REQUIRE(again.r);
  CHECK(again.r->status == 409);
  CHECK(a.pending() == 0);
}

/// A multipart/form-data body of `parts` (name, file name or "", bytes), as curl -F sends it.
std::string form(const std::vector<std::tuple<std::string, std::string, std::string>>& parts,
                 const std::string& boundary = "------------------------b0und4ry") {
  std::string out;
  for (const auto& [name, file, bytes] : parts) {
    out += "--" + boundary + "\r\nContent-Disposition: form-data; name=\"" + name + "\"";
    if (!file.empty()) out += "; filename=\"" + file + "\"\r\nContent-Type: application/octet-stream";
    out += "\r\n\r\n" + bytes + "\r\n";
  }
  return out + "--" + boundary + "--\r\n";
}

TEST_CASE("a multipart/form-data body splits into its named parts, views into the body") {
  const std::string type = "multipart/form-data; boundary=\"------------------------b0und4ry\"";
  const std::string body = "preamble\r\n" +
                           form({{"key", "", "k1"}, {"witness", "a.wtns", std::string("x\r\n--\0y", 7)}});
  std::vector<form_part> parts;
  REQUIRE(parse_form_data(type, body, 8, parts) == "");
  REQUIRE(parts.size() == 2);
  CHECK(parts[0].name == "key");
  CHECK(parts[0].filename.empty());
  CHECK(parts[0].content == "k1");
  CHECK(parts[1].name == "witness");
  CHECK(parts[1].filename == "a.wtns");
  CHECK(parts[1].content == std::string_view("x\r\n--\0y", 7));
  CHECK(parts[1].content.data() >= body.data());  // a view, not a copy
  CHECK(is_form_data("Multipart/Form-Data ; boundary=x"));
  CHECK_FALSE(is_form_data("application/json"));
  auto problem = [&](const std::string& t, const std::string& b, std::size_t max = 8) {
    std::vector<form_part> p;
    return parse_form_data(t, b, max, p);
  };
  CHECK(problem("multipart/form-data", body).find("boundary") != std::string::npos);
  CHECK(problem("multipart/form-data; boundary=other", body).find("boundary") != std::string::npos);
  CHECK(problem(type, body.substr(0, body.size() - 40)).find("does not end") != std::string::npos);
  CHECK(problem(type, body, 1).find("more than 1 parts") != std::string::npos);
  const std::string unnamed =
      "--------------------------b0und4ry\r\nContent-Disposition: form-data\r\n\r\nv\r\n"
      "--------------------------b0und4ry--";
  CHECK(problem(type, unnamed).find("no Content-Disposition") != std::string::npos);
}

TEST_CASE("a job sent as a form (curl -F) reaches the runtime like the JSON form") {
  fake_jobs rt;
  api a(config(2), rt.backend());
  const std::string w = file_bytes(small_dir + "/witness_0.wtns");
  auto post = [&](const std::string& body) {
    auto r = request("POST", "/v1/jobs", body);
    r.headers.emplace_back("Content-Type",
                           "multipart/form-data; boundary=------------------------b0und4ry");
    return ask(a, std::move(r));
  };
  auto s = post(form({{"key", "", key_path}, {"priority", "", "high"}, {"id", "", "f-1"},
                      {"witness", "0.wtns", w}, {"witness", "1.wtns", w}}));
  REQUIRE(rt.created.size() == 1);
  CHECK(rt.created[0].id == "f-1");
  CHECK(rt.created[0].prio == priority::high);
  REQUIRE(rt.created[0].uploads.size() == 2);
  CHECK(rt.created[0].uploads[1] == w);
  CHECK(rt.created[0].uploads_owner);
  rt.accepted[0](std::nullopt);
  REQUIRE(s.r);
  CHECK(s.r->status == 202);
  CHECK(s.header("Location") == "/v1/jobs/f-1");
  rt.ended[0]();
  struct bad_case {
    std::string body;
    std::string names;
  };
  for (const auto& c : std::vector<bad_case>{
           {form({{"key", "", key_path}}), "witness"},
           {form({{"witness", "0.wtns", w}}), "key"},
           {form({{"key", "", key_path}, {"colour", "", "red"}, {"witness", "0.wtns", w}}), "colour"},
           {form({{"key", "", key_path}, {"key", "", key_path}, {"witness", "0.wtns", w}}), "twice"},
           {form({{"key", "", key_path}, {"witness", "0.wtns", "not a witness"}}), "witness[0]"},
           {form({{"key", "", key_path}, {"witness", "0.wtns", w}, {"witness", "1", w},
                  {"witness", "2", w}}), "--max-pending"},
           {form({{"key", "", key_path}, {"witness", "0.wtns", w}}).substr(0, 200), "does not end"},
       }) {
    auto b = post(c.body);
    REQUIRE(b.r);
    CHECK(b.r->status == 400);
    CHECK_MESSAGE(b.r->body.find(c.names) != std::string::npos, b.r->body);
  }
  CHECK(rt.created.size() == 1);
  CHECK(a.pending() == 0);
}

TEST_CASE("a bad job is answered 400, 403 or 404 naming the field, before the runtime") {
  fake_jobs rt;
  api a(config(2), rt.backend());
  const std::string w = b64(file_bytes(small_dir + "/witness_0.wtns"));
  struct bad_case {
    std::string body;
    int status;
    std::string names;
  };
  const std::vector<bad_case> cases = {
      {"{", 400, "request body"},
      {"[]", 400, "request body"},
      {job_body({{"witnesses_base64", {w}}}), 400, "field key"},
      {job_body({{"key", 7}, {"witnesses_base64", {w}}}), 400, "field key"},
      {job_body({{"key", key_path}}), 400, "witnesses"},
      {job_body({{"key", key_path}, {"witnesses_base64", nlohmann::json::array()}}), 400,
       "field witnesses_base64"},
      {job_body({{"key", key_path}, {"witnesses_base64", {w}}, {"witnesses", {"/x"}}}), 400,
       "exactly one"},
      {job_body({{"key", key_path}, {"witnesses_base64", {"%%"}}}), 400, "witnesses_base64[0]"},
      {job_body({{"key", key_path}, {"witnesses_base64", {w, b64("not a witness file")}}}), 400,
       "witnesses_base64[1]"},
      {job_body({{"key", key_path}, {"witnesses_base64", {w, w, w}}}), 400, "--max-pending"},
      {job_body({{"key", key_path}, {"witnesses_base64", {w}}, {"priority", "now"}}), 400,
       "field priority"},
      {job_body({{"key", key_path}, {"witnesses_base64", {w}}, {"id", ".hidden"}}), 400, "field id"},
      {job_body({{"key", key_path}, {"witnesses_base64", {w}}, {"id", "a/b"}}), 400, "field id"},
      {job_body({{"key", key_path}, {"witnesses_base64", {w}}, {"colour", 1}}), 400,
       "field colour"},
      {job_body({{"key", key_path}, {"witnesses", {"witness_0.wtns"}}}), 400, "witnesses[0]"},
      {job_body({{"key", key_path}, {"witnesses", {"/etc/hostname"}}}), 403, "witnesses[0]"},
      {job_body({{"key", "/etc/hostname"}, {"witnesses_base64", {w}}}), 403, "key"},
      {job_body({{"key", key_path}, {"witnesses", {small_dir + "/none.wtns"}}}), 404,
       "witnesses[0]"},
      {job_body({{"key", "k0000000000000000"}, {"witnesses_base64", {w}}}), 404, "key"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.body.substr(0, 120));
    auto s = ask(a, request("POST", "/v1/jobs", c.body));
    REQUIRE(s.r);
    CHECK(s.r->status == c.status);
    CHECK(nlohmann::json::parse(s.r->body)["error"]["message"].get<std::string>().find(c.names) !=
          std::string::npos);
  }
  CHECK(rt.created.empty());
  CHECK(a.pending() == 0);
  // A path job under the root carries the canonical paths.
  ask(a, request("POST", "/v1/jobs",
                 job_body({{"key", key_path}, {"witnesses", {small_dir + "/witness_1.wtns"}}})));
  REQUIRE(rt.created.size() == 1);
  CHECK(rt.created[0].uploads.empty());
  CHECK(rt.created[0].paths == std::vector<std::string>{small_dir + "/witness_1.wtns"});
  a.drain();
  auto d = ask(a, request("POST", "/v1/jobs",
                          job_body({{"key", key_path}, {"witnesses_base64", {w}}})));
  REQUIRE(d.r);
  CHECK(d.r->status == 503);
  CHECK(d.header("Retry-After") == "5");
}

TEST_CASE("a job reads as result.json with its unfinished partitions pending and proof URLs") {
  fake_jobs rt;
  rt.progress.status = {4, "j", job_state::proving, 1, 0, 3};
  partition_report p;
  p.index = 1;
  p.state = partition_state::done;
  p.proof_file = "proof_1.json";
  p.public_file = "public_1.json";
  p.verified = true;
  p.spans.prove = {1, 2};
  rt.progress.finished = {p};
  api a(config(), rt.backend());
  auto s = ask(a, request("GET", "/v1/jobs/j"));
  REQUIRE(s.r);
  CHECK(s.r->status == 200);
  auto j = nlohmann::json::parse(s.r->body);
  CHECK(j["id"] == "j");
  CHECK(j["status"] == "proving");
  CHECK(j["complete"] == false);
  CHECK(j["counts"] == nlohmann::json{{"total", 3}, {"done", 1}, {"failed", 0}});
  REQUIRE(j["partitions"].size() == 3);
  CHECK(j["partitions"][0]["status"] == "pending");
  CHECK(j["partitions"][1]["status"] == "done");
  CHECK(j["partitions"][1]["proof_url"] == "/v1/jobs/j/proofs/1");
  CHECK(j["partitions"][1]["spans_ms"]["prove"] == nlohmann::json::array({1.0, 2.0}));
  CHECK(j["partitions"][2]["status"] == "pending");
  CHECK(ask(a, request("GET", "/v1/jobs/other")).r->status == 404);
  CHECK(ask(a, request("GET", "/v1/jobs/j/proofs/x")).r->status == 400);
  CHECK(ask(a, request("PUT", "/v1/jobs/j")).r->status == 405);
  CHECK(ask(a, request("GET", "/v1/jobs/j/nothing")).r->status == 404);
}

TEST_CASE("events stream each finished partition, keep-alives, then the end, and stop when the client goes") {
  fake_jobs rt;
  api a(config(), rt.backend());
  auto events = [&](std::shared_ptr<recorded_stream> st) {
    http_request r = request("GET", "/v1/jobs/j/events");
    a.handle_stream(std::move(r), st);
  };
  auto st = std::make_shared<recorded_stream>();
  events(st);
  REQUIRE(rt.followers.size() == 1);
  job_progress p;
  p.status = {4, "j", job_state::proving, 0, 0, 2};
  CHECK(rt.followers[0](p, std::nullopt));  // nothing finished yet: the head and a keep-alive
  REQUIRE(st->head);
  CHECK(st->head->status == 200);
  CHECK(st->head->content_type == "text/event-stream");
  CHECK(st->body == ": waiting\n\n");
  partition_report done;
  done.index = 1;
  done.state = partition_state::done;
  p.finished = {done};
  CHECK(rt.followers[0](p, std::nullopt));
  CHECK(st->body.find("event: partition\ndata: {\"index\":1,\"proof_url\":\"/v1/jobs/j/proofs/1\"") !=
        std::string::npos);
  p.complete = true;
  p.report.id = "j";
  p.report.state = job_state::done;
  partition_report zero = done;
  zero.index = 0;
  p.finished = {zero};
  p.report.partitions = {zero, done};
  CHECK_FALSE(rt.followers[0](p, std::nullopt));
  CHECK(st->body.find("event: end\ndata: {") != std::string::npos);
  CHECK(st->ended);
  // A client that went away ends the following.
  auto gone = std::make_shared<recorded_stream>();
  events(gone);
  p.complete = false;
  CHECK(rt.followers[1](p, std::nullopt));
  gone->gone = true;
  CHECK_FALSE(rt.followers[1](p, std::nullopt));
  // An unknown job, or no token, is one whole answer.
  auto unknown = std::make_shared<recorded_stream>();
  events(unknown);
  CHECK_FALSE(rt.followers[2](job_progress{}, refusal{error_code::not_found, "job j: no such job"}));
  REQUIRE(unknown->whole);
  CHECK(unknown->whole->status == 404);
  auto anon = std::make_shared<recorded_stream>();
  a.handle_stream(request("GET", "/v1/jobs/j/events", {}, false), anon);
  REQUIRE(anon->whole);
  CHECK(anon->whole->status == 401);
  CHECK(rt.followers.size() == 3);
}

TEST_CASE("keys are listed with their ids, and an id names the key to evict") {
  fake_jobs rt;
  api a(config(), rt.backend());
  CHECK(ask(a, request("DELETE", "/v1/keys/" + key_id_of(key_path))).r->status == 404);  // not seen yet
  auto s = ask(a, request("GET", "/v1/keys"));
  REQUIRE(s.r);
  auto j = nlohmann::json::parse(s.r->body);
  REQUIRE(j["keys"].size() == 1);
  CHECK(j["keys"][0]["id"] == key_id_of(key_path));
  auto e = ask(a, request("DELETE", "/v1/keys/" + key_id_of(key_path)));
  REQUIRE(e.r);
  CHECK(e.r->status == 200);
  CHECK(nlohmann::json::parse(e.r->body)["bytes_freed"] == 1000);
  auto bad = ask(a, request("POST", "/v1/keys", "{\"path\": \"/etc/hostname\"}"));
  CHECK(bad.r->status == 403);
  CHECK(ask(a, request("POST", "/v1/keys", "{}")).r->status == 400);
  CHECK(ask(a, request("PUT", "/v1/keys")).r->status == 405);
}
