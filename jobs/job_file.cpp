#include "jobs/job_file.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>

#include <nlohmann/json.hpp>

#include "zk/formats/error.hpp"
#include "zk/formats/json_limits.hpp"
#include "zk/formats/whole_file.hpp"

namespace proofline::jobs {

namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

std::string in_quotes(const std::string& s) { return "\"" + s + "\""; }

/// Within max_job_file_bytes and max_json_depth, and at most the values that
/// jobs of `max_partitions` partitions take: a job of one witness is 11
/// (its object, five keys and their values), each witness of a list one.
zk::formats::json_limits job_file_limits(std::size_t max_partitions) {
  const uint64_t per_partition = 12;
  const uint64_t cap = UINT64_MAX / per_partition - 16;
  const uint64_t parts = std::min<uint64_t>(max_partitions, cap);
  return {max_job_file_bytes, zk::formats::max_json_depth, parts * per_partition + 16};
}

/// Resolves `p` against `base` (unless absolute), normalized, without a
/// trailing separator.
std::string resolve(const std::string& base, const std::string& p) {
  fs::path r = fs::path(p).is_absolute() ? fs::path(p) : fs::path(base) / p;
  r = r.lexically_normal();
  std::string s = r.string();
  while (s.size() > 1 && s.back() == '/') s.pop_back();
  return s.empty() ? std::string(".") : s;
}

/// Builds messages that name the file and the job.
class complaint {
 public:
  complaint(const std::string& file, std::size_t index) : file_(file), index_(index) {}
  void name(const std::string& id) { id_ = id; }
  [[noreturn]] void fail(const std::string& what) const {
    std::string where = file_ + ": ";
    if (id_.empty())
      where += "jobs[" + std::to_string(index_) + "]: ";
    else
      where += "job " + in_quotes(id_) + " (jobs[" + std::to_string(index_) + "]): ";
    throw job_file_error(where + what);
  }
  [[noreturn]] void field(const std::string& key, const std::string& what) const {
    fail("field " + in_quotes(key) + ": " + what);
  }

 private:
  std::string file_;
  std::size_t index_;
  std::string id_;
};

std::string type_of(const json& v) {
  if (v.is_string()) return "a string";
  if (v.is_array()) return "an array";
  if (v.is_object()) return "an object";
  if (v.is_boolean()) return "a boolean";
  if (v.is_number()) return "a number";
  return "null";
}

std::string nonempty_string(const json& job, const char* key, const complaint& c) {
  if (!job.contains(key)) c.fail("missing field " + in_quotes(key));
  const auto& v = job.at(key);
  if (!v.is_string()) c.field(key, "expected a non-empty string, got " + type_of(v));
  auto s = v.get<std::string>();
  if (s.empty()) c.field(key, "expected a non-empty string, got \"\"");
  if (s.find('\0') != std::string::npos)
    c.field(key, "contains a NUL character (\\u0000), which no path or id may hold");
  return s;
}

job_spec parse_job(const json& job, std::size_t index, const std::string& name,
                   const std::string& base_dir, const std::string& out_root) {
  complaint c(name, index);
  if (!job.is_object()) c.fail("expected a job object, got " + type_of(job));
  job_spec spec;
  spec.id = nonempty_string(job, "id", c);
  c.name(spec.id);

  static const char* const known[] = {"id",       "zkey",  "out",    "witness",           "witnesses",
                                      "priority", "input", "inputs", "witness_generator", "r1cs"};
  for (const auto& [key, value] : job.items()) {
    bool ok = false;
    for (const char* k : known) ok |= key == k;
    if (!ok)
      c.fail("unknown field " + in_quotes(key) +
             " (a job has id, zkey, out, witness or witnesses, or witness_generator with input "
             "or inputs, priority, r1cs)");
  }

  spec.zkey = resolve(base_dir, nonempty_string(job, "zkey", c));
  spec.out = resolve(out_root, nonempty_string(job, "out", c));
  if (job.contains("r1cs")) spec.r1cs = resolve(base_dir, nonempty_string(job, "r1cs", c));

  // A job proves .wtns files (witness / witnesses) or computes its witnesses
  // from input.json files with a generator (input / inputs).
  const bool generated = job.contains("witness_generator");
  const char* one = generated ? "input" : "witness";
  const char* many = generated ? "inputs" : "witnesses";
  if (generated) {
    spec.witness_generator = resolve(base_dir, nonempty_string(job, "witness_generator", c));
    for (const char* k : {"witness", "witnesses"})
      if (job.contains(k))
        c.fail(std::string("field ") + in_quotes(k) +
               " beside \"witness_generator\": a job with a generator takes \"input\" or "
               "\"inputs\" (input.json files)");
  } else {
    for (const char* k : {"input", "inputs"})
      if (job.contains(k))
        c.fail(std::string("field ") + in_quotes(k) +
               " needs \"witness_generator\" (the object `proofline witness build` makes)");
  }
  bool has_one = job.contains(one), has_many = job.contains(many);
  if (has_one && has_many)
    c.fail(std::string("fields ") + in_quotes(one) + " and " + in_quotes(many) +
           " are both given; give exactly one");
  if (!has_one && !has_many)
    c.fail(std::string("missing field ") + in_quotes(one) + " or " + in_quotes(many) +
           " (give exactly one)");
  if (has_one) {
    spec.single = true;
    spec.witnesses.push_back(resolve(base_dir, nonempty_string(job, one, c)));
  } else {
    spec.single = false;
    const auto& list = job.at(many);
    const std::string want = "expected a non-empty array of non-empty strings";
    if (!list.is_array()) c.field(many, want + ", got " + type_of(list));
    if (list.empty()) c.field(many, want + ", got []");
    for (std::size_t i = 0; i < list.size(); ++i) {
      const auto& w = list[i];
      if (!w.is_string() || w.get<std::string>().empty())
        c.field(many, want + "; element " + std::to_string(i) + " is " +
                          (w.is_string() ? std::string("\"\"") : type_of(w)));
      if (w.get<std::string>().find('\0') != std::string::npos)
        c.field(many, "element " + std::to_string(i) +
                          " contains a NUL character (\\u0000), which no path may hold");
      spec.witnesses.push_back(resolve(base_dir, w.get<std::string>()));
    }
  }

  if (job.contains("priority")) {
    const auto& p = job.at("priority");
    const std::string want = "expected one of low, normal, high, critical";
    if (!p.is_string()) c.field("priority", want + ", got " + type_of(p));
    auto parsed = parse_priority(p.get<std::string>());
    if (!parsed) c.field("priority", want + ", got " + in_quotes(p.get<std::string>()));
    spec.prio = *parsed;
  }
  return spec;
}

}  // namespace

std::vector<job_spec> parse_job_file(std::string_view text, const std::string& name,
                                     const std::string& base_dir, const std::string& out_root,
                                     std::size_t max_partitions) {
  json doc;
  // The last object key the parser passed, so that a value it cannot
  // represent (1e999999) is reported with its field.
  std::string last_key;
  auto track = [&](int, json::parse_event_t event, json& value) {
    if (event == json::parse_event_t::key) last_key = value.get<std::string>();
    return true;
  };
  if (text.size() > max_job_file_bytes)
    throw job_file_error(name + ": " + zk::formats::json_size_problem(text.size(), max_job_file_bytes,
                                                                      "a job file"));
  try {
    doc = zk::formats::parse_json_limited<json>(text, job_file_limits(max_partitions), track);
  } catch (const zk::formats::json_limit_error& e) {
    if (e.which() != zk::formats::json_limit_error::limit::values)
      throw job_file_error(name + ": " + e.what());
    throw job_file_error(name + ": " + e.what() + ", more than jobs of at most " +
                         std::to_string(max_partitions) +
                         " partitions take (split the file, or raise the limit: run "
                         "--max-partitions)");
  } catch (const json::exception& e) {
    // nlohmann's what() starts with "[json.exception.parse_error.101] "; keep the rest.
    std::string what = e.what();
    auto cut = what.find("] ");
    if (cut != std::string::npos) what = what.substr(cut + 2);
    bool out_of_range = dynamic_cast<const json::out_of_range*>(&e) != nullptr;
    if (out_of_range && !last_key.empty())
      throw job_file_error(name + ": field " + in_quotes(last_key) + ": " + what);
    throw job_file_error(name + ": invalid JSON: " + what);
  }
  if (!doc.is_object())
    throw job_file_error(name + ": expected an object {\"jobs\": [...]}, got " + type_of(doc));
  for (const auto& [key, value] : doc.items())
    if (key != "jobs")
      throw job_file_error(name + ": unknown field " + in_quotes(key) +
                           " (the top level has only \"jobs\")");
  if (!doc.contains("jobs")) throw job_file_error(name + ": missing field \"jobs\"");
  const auto& jobs = doc.at("jobs");
  if (!jobs.is_array())
    throw job_file_error(name + ": field \"jobs\": expected an array of jobs, got " +
                         type_of(jobs));
  if (jobs.empty()) throw job_file_error(name + ": field \"jobs\": the list is empty");

  // Counted on the parsed document before any job is built.
  std::size_t partitions = 0;
  for (const auto& job : jobs)
    if (job.is_object()) {
      if (auto it = job.find("witnesses"); it != job.end() && it->is_array())
        partitions += it->size();
      else if (auto in = job.find("inputs"); in != job.end() && in->is_array())
        partitions += in->size();
      else
        partitions += 1;
    }
  if (partitions > max_partitions)
    throw job_file_error(name + ": names " + std::to_string(partitions) +
                         " partitions, more than the limit of " + std::to_string(max_partitions) +
                         " (split the file, or raise the limit: run --max-partitions)");

  std::vector<job_spec> specs;
  std::map<std::string, std::size_t> ids, outs;
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    auto spec = parse_job(jobs[i], i, name, base_dir, out_root);
    complaint c(name, i);
    c.name(spec.id);
    if (auto it = ids.find(spec.id); it != ids.end())
      c.field("id", "duplicate id, also used by jobs[" + std::to_string(it->second) + "]");
    if (auto it = outs.find(spec.out); it != outs.end())
      c.field("out", in_quotes(spec.out) + " is also the out directory of job " +
                         in_quotes(specs[it->second].id) + " (jobs[" + std::to_string(it->second) +
                         "])");
    ids.emplace(spec.id, i);
    outs.emplace(spec.out, i);
    specs.push_back(std::move(spec));
  }
  return specs;
}

std::vector<job_spec> read_job_file(const std::string& path,
                                    const std::optional<std::string>& out_root,
                                    std::size_t max_partitions) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) throw job_file_error(path + ": is a directory, not a job file");
  std::string text;
  try {
    text = zk::formats::read_whole_file(path, max_job_file_bytes);
  } catch (const zk::formats::format_error& e) {
    throw job_file_error(e.what());
  }
  std::string base = fs::path(path).parent_path().string();
  return parse_job_file(text, path, base, out_root ? *out_root : base, max_partitions);
}

}  // namespace proofline::jobs
