// The job routes of the HTTP API: POST /v1/jobs, GET and DELETE
// /v1/jobs/{id}, its proofs by index and its Server-Sent Events.
#include "http/api.hpp"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "actors/detail/result_file.hpp"
#include "zk/formats/wtns.hpp"

#include "http/api_detail.hpp"
#include "http/multipart.hpp"

namespace proofline::http {

namespace fs = std::filesystem;
using namespace detail;

std::string job_json(const job_progress& p) {
  job_report r;
  if (p.complete) {
    r = p.report;
  } else {
    r.id = p.status.id;
    r.state = p.status.state;
    std::vector<bool> have(p.status.total, false);
    for (const auto& f : p.finished)
      if (f.index < have.size()) {
        have[f.index] = true;
        r.partitions.push_back(f);
      }
    for (uint32_t i = 0; i < p.status.total; ++i)
      if (!have[i]) {
        partition_report pending;
        pending.index = i;
        r.partitions.push_back(pending);
      }
    std::sort(r.partitions.begin(), r.partitions.end(),
              [](const partition_report& a, const partition_report& b) { return a.index < b.index; });
    for (const auto& f : r.partitions)
      if (f.state == partition_state::failed) {
        r.has_error = true;
        r.error = f.error;
        break;
      }
  }
  nlohmann::json j = nlohmann::json::parse(result_json(r));
  const std::string url = "/v1/jobs/" + r.id;
  uint32_t done = 0, failed = 0;
  for (auto& part : j["partitions"]) {
    const std::string st = part["status"];
    if (st == "done") {
      ++done;
      part["proof_url"] = url + "/proofs/" + std::to_string(part["index"].get<uint32_t>());
    } else if (st == "failed") {
      ++failed;
    }
  }
  if (!p.complete) {
    std::vector<bool> finished(p.status.total, false);
    for (const auto& f : p.finished)
      if (f.index < finished.size()) finished[f.index] = true;
    for (auto& part : j["partitions"])
      if (!finished[part["index"].get<uint32_t>()]) part["status"] = "pending";
    j["spans_ms"]["total"] = nullptr;
  }
  j["seq"] = p.status.seq;
  j["url"] = url;
  j["complete"] = p.complete;
  j["counts"] = {{"total", j["partitions"].size()}, {"done", done}, {"failed", failed}};
  return dump(j);
}


namespace {

/// POST /v1/jobs as a form (multipart/form-data, curl -F): the fields key,
/// priority and id as text, and one part named `witness` per partition,
/// in order, the .wtns file itself. Put into the JSON form's fields (the
/// witnesses as views into the body) so that one validation serves both.
std::string read_job_form(const http_request& req, std::size_t max_witnesses,
                          nlohmann::json& fields, std::vector<std::string_view>& witnesses) {
  std::vector<form_part> parts;
  const std::string* type = req.header("Content-Type");
  // key, priority, id and the witnesses: a form of more parts is refused.
  if (auto problem = parse_form_data(type ? *type : "", req.body, max_witnesses + 3, parts);
      !problem.empty())
    return problem;
  fields = nlohmann::json::object();
  for (const auto& p : parts) {
    if (p.name == "witness") {
      witnesses.push_back(p.content);
      continue;
    }
    if (p.name != "key" && p.name != "priority" && p.name != "id")
      return "form field " + p.name + ": unknown; the fields are key, priority, id and one "
             "witness file per partition";
    if (fields.contains(p.name)) return "form field " + p.name + ": given twice";
    fields[p.name] = std::string(p.content);
  }
  if (witnesses.empty())
    return "form field witness: missing; send each .wtns as a file part named witness "
           "(curl -F witness=@w0.wtns -F witness=@w1.wtns)";
  return {};
}

/// The refusal of a job of `n` witnesses in `field` over --max-pending
/// `max`, or empty.
std::string check_count(const std::string& field, std::size_t n, std::size_t max) {
  if (n <= max) return {};
  return fmt::format("{}: {} witnesses; this server takes at most --max-pending {} partitions "
                     "at once: split the job",
                     field, n, max);
}

/// The refusal of the first of `uploads` that is not a .wtns file, named
/// `<prefix> <field>[i]`, or empty.
std::string check_uploads(const char* prefix, const char* field,
                          const std::vector<std::string_view>& uploads) {
  for (std::size_t i = 0; i < uploads.size(); ++i) {
    try {
      zk::formats::read_wtns_info(zk::formats::memory_file{fmt::format("{}[{}]", field, i),
                                                           uploads[i].data(), uploads[i].size()});
    } catch (const std::exception& e) {
      return std::string(prefix) + " " + e.what();
    }
  }
  return {};
}

}  // namespace

void api::create_job(http_request&& req, const std::string& who, const http_reply& reply) {
  if (draining_) {
    reply(error_response(error_code::draining, "the server is stopping; try another or later",
                         drain_retry_s));
    return;
  }
  auto bad = [&](const std::string& message) {
    reply(error_response(error_code::bad_request, message));
  };
  nlohmann::json body;
  std::vector<std::string_view> form_witnesses;
  const std::string* type = req.header("Content-Type");
  const bool form = type && is_form_data(*type);
  if (form) {
    if (auto problem = read_job_form(req, cfg_.max_pending, body, form_witnesses);
        !problem.empty())
      return bad(problem);
  } else {
    if (std::string problem; !json_body(req, body, problem)) return bad(problem);
    if (!body.is_object())
      return bad("request body: not a JSON object; send {\"key\": ..., \"witnesses_base64\": [...]} "
                 "or a multipart/form-data form");
    for (const auto& [name, value] : body.items())
      if (name != "key" && name != "witnesses_base64" && name != "witnesses" &&
          name != "priority" && name != "id")
        return bad("field " + name + ": unknown; the fields are key, witnesses_base64, witnesses, "
                   "priority, id");
  }
  job_request job;
  job.who = who;
  std::string named_id;  // the client's id, if it chose one
  // key
  auto key = body.find("key");
  if (key == body.end()) return bad("field key: missing; name a key id or an absolute path");
  if (!key->is_string() || key->get<std::string>().empty())
    return bad("field key: not a non-empty string");
  http_response refusal;
  if (!resolve_key(key->get<std::string>(), job.zkey, refusal)) {
    reply(std::move(refusal));
    return;
  }
  // priority
  if (auto pr = body.find("priority"); pr != body.end()) {
    auto p = pr->is_string() ? parse_priority(pr->get<std::string>()) : std::nullopt;
    if (!p) return bad("field priority: " + dump(*pr) + " is not one of low, normal, high, critical");
    job.prio = *p;
  }
  // id
  if (auto id = body.find("id"); id != body.end()) {
    if (!id->is_string() || !valid_job_id(id->get<std::string>()))
      return bad("field id: " + dump(*id) +
                 " is not 1 to 64 of A-Z a-z 0-9 . _ - (not starting with '.')");
    job.id = named_id = id->get<std::string>();
  } else {
    const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                        std::chrono::system_clock::now().time_since_epoch())
                        .count();
    job.id = fmt::format("http-{}-{}-{}", who, ms, ++next_job_);
  }
  if (form) {
    if (auto p = check_count("form field witness", form_witnesses.size(), cfg_.max_pending);
        !p.empty())
      return bad(p);
    if (auto p = check_uploads("form field", "witness", form_witnesses); !p.empty()) return bad(p);
    // The witnesses stay where they were received until the gateway wrote them.
    job.uploads = std::move(form_witnesses);
    job.uploads_owner = std::make_shared<std::string>(std::move(req.body));
  } else {
    if (!read_job_witnesses(body, job, reply)) return;
    body = nlohmann::json();  // the uploads are decoded: let the text go
    req.body = std::string();
  }
  const std::size_t n = job.uploads.size() + job.paths.size();
  if (!admit(n, reply, named_id)) return;
  const std::string id = job.id;
  spdlog::info("http: {} submits job {} with {} ({} {} witness(es))", who, id, job.zkey, n,
               job.uploads.empty() ? "path" : "uploaded");
  if (!backend_.create) {
    pending_ -= n;
    reply(no_backend());
    return;
  }
  backend_.create(
      std::move(job),
      [this, reply, id, n](const maybe_refusal& refused) {
        if (refused) {
          pending_ -= n;
          reply(refusal_response(*refused));
          return;
        }
        nlohmann::json j = {{"id", id}, {"url", "/v1/jobs/" + id}, {"partitions", n}};
        reply({202, "application/json", dump(j) + "\n", {{"Location", "/v1/jobs/" + id}}});
      },
      [this, n] { pending_ -= n; });
}

bool api::read_job_witnesses(const nlohmann::json& body, job_request& job,
                             const http_reply& reply) {
  auto bad = [&](const std::string& message) {
    reply(error_response(error_code::bad_request, message));
    return false;
  };
  // uploaded or paths, exactly one of them
  auto up = body.find("witnesses_base64");
  auto paths = body.find("witnesses");
  if ((up == body.end()) == (paths == body.end()))
    return bad("fields witnesses_base64, witnesses: give exactly one of them (uploaded .wtns "
               "files in base64, or their paths under --allow-root)");
  const auto& list = up != body.end() ? *up : *paths;
  const char* field = up != body.end() ? "witnesses_base64" : "witnesses";
  if (!list.is_array() || list.empty())
    return bad(std::string("field ") + field + ": not a non-empty array of strings");
  if (auto p = check_count(std::string("field ") + field, list.size(), cfg_.max_pending);
      !p.empty())
    return bad(p);
  auto decoded = std::make_shared<std::vector<std::string>>();
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string name = fmt::format("{}[{}]", field, i);
    if (!list[i].is_string() || list[i].get_ref<const std::string&>().empty())
      return bad("field " + name + ": not a non-empty string");
    const std::string& text = list[i].get_ref<const std::string&>();
    if (up != body.end()) {
      std::string bytes;
      if (!base64_decode(text, bytes)) return bad("field " + name + ": not base64");
      decoded->push_back(std::move(bytes));
    } else {
      if (text[0] != '/') return bad("field " + name + ": " + text + ": not an absolute path");
      std::string problem = cfg_.path_problem ? cfg_.path_problem(text) : "paths are not accepted";
      if (!problem.empty()) {
        reply(error_response(error_code::forbidden, "field " + name + ": " + problem));
        return false;
      }
      std::error_code ec;
      std::string canonical = fs::canonical(text, ec).string();
      if (ec || !fs::is_regular_file(canonical, ec)) {
        reply(error_response(error_code::not_found, "field " + name + ": " + text + ": no such file"));
        return false;
      }
      job.paths.push_back(std::move(canonical));
    }
  }
  // Views once every string is in place (a move would relocate a short one's bytes).
  for (const auto& bytes : *decoded) job.uploads.emplace_back(bytes);
  if (auto p = check_uploads("field", "witnesses_base64", job.uploads); !p.empty()) return bad(p);
  if (!decoded->empty()) job.uploads_owner = decoded;
  return true;
}

void api::get_job(const std::string& id, const http_reply& reply) {
  if (!backend_.job) return reply(no_backend());
  backend_.job(id, [reply](const job_progress& p, const maybe_refusal& refused) {
    if (refused) return reply(refusal_response(*refused));
    reply(json_response(200, job_json(p)));
  });
}

void api::get_proof(const std::string& id, const std::string& index, const http_reply& reply) {
  uint32_t i = 0;
  bool ok = !index.empty() && index.size() <= 9;
  for (char c : index) ok = ok && c >= '0' && c <= '9';
  if (!ok) {
    reply(error_response(error_code::bad_request,
                         "proof index " + index + ": not a partition number (0, 1, ...)"));
    return;
  }
  i = static_cast<uint32_t>(std::stoul(index));
  if (!backend_.proof) return reply(no_backend());
  backend_.proof(id, i, [reply](const std::string& proof, const std::string& pub,
                                const maybe_refusal& refused) {
    if (refused) return reply(refusal_response(*refused));
    reply({200, "application/json", proof_answer(proof, pub)});
  });
}

void api::cancel_job(const std::string& id, const http_reply& reply) {
  if (!backend_.cancel) return reply(no_backend());
  backend_.cancel(id, [reply](const job_status& s, const maybe_refusal& refused) {
    if (refused) return reply(refusal_response(*refused));
    nlohmann::json j = {{"id", s.id},         {"status", to_string(s.state)},
                        {"done", s.done},     {"failed", s.failed},
                        {"total", s.total}};
    reply(json_response(200, dump(j)));
  });
}

void api::job_events(const std::string& id, const observe::http_stream_ptr& stream) {
  auto opened = std::make_shared<bool>(false);
  if (!backend_.events) {
    stream->reply(no_backend());
    return;
  }
  backend_.events(id, [stream, opened](const job_progress& p, const maybe_refusal& refused) {
    if (refused) {
      stream->reply(refusal_response(*refused));
      return false;
    }
    std::string text;
    const std::string url = "/v1/jobs/" + p.status.id;
    for (const auto& f : p.finished) {
      nlohmann::json e = {{"index", f.index},
                          {"status", to_string(f.state)},
                          {"verified", f.verified},
                          {"retries", f.retries}};
      if (f.state == partition_state::done)
        e["proof_url"] = url + "/proofs/" + std::to_string(f.index);
      if (f.state == partition_state::failed)
        e["error"] = {{"file", f.error.file}, {"message", f.error.message}};
      text += sse("partition", dump(e));
    }
    if (p.complete) text += sse("end", job_json(p));
    if (text.empty()) text = ": waiting\n\n";  // a keep-alive: shows whether the client is there
    bool ok;
    if (!*opened) {
      *opened = true;
      ok = stream->open({200, "text/event-stream", std::move(text), {{"Cache-Control", "no-store"}}});
    } else {
      ok = stream->send(std::move(text));
    }
    if (p.complete) {
      stream->end();
      return false;
    }
    return ok;
  });
}

}  // namespace proofline::http
