#include "http/gateway.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <utility>
#include <vector>

#include <caf/event_based_actor.hpp>
#include <caf/send.hpp>

#include <spdlog/spdlog.h>

namespace proofline::http {

namespace {

namespace fs = std::filesystem;

/// How often followed jobs without news get a keep-alive (which shows
/// whether their client is still there).
constexpr std::chrono::seconds keep_alive{15};

using tick_atom = caf::atom_constant<caf::atom("tick")>;

/// The message of a runtime's error (the text it was made with), else CAF's rendering.
std::string why_of_error(caf::actor_system& sys, const caf::error& e) {
  const auto& ctx = e.context();
  if (ctx.match_elements<std::string>()) return ctx.get_as<std::string>(0);
  return sys.render(e);
}

refusal unknown_job(const std::string& id) {
  return {error_code::not_found, "job " + id + ": no such job on this server"};
}

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return {};
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace

std::string gateway_state::why_of(const caf::error& e) const {
  return why_of_error(self->system(), e);
}

caf::behavior gateway_state::make_behavior(gateway_config config) {
  w = std::move(config.wiring);
  keep = std::move(config.keep);
  // Every job's news, for the followers.
  self->send(w.registry, listen_atom::value, caf::actor_cast<job_listener_actor>(self));
  self->delayed_send(self, keep_alive, tick_atom::value);
  prune_outputs();  // jobs finished before a restart count too
  return {
      [this](const gateway_call& call) { (*call)(*this); },
      [this](news_atom, uint64_t seq) { on_news(seq); },
      [this](tick_atom) { on_tick(); },
      [this](submit_atom, local_job& job, const submit_done& done) { submit(job, done); },
      [this](status_atom, const status_done& done) { status(done); },
  };
}

void gateway_state::on_news(uint64_t seq) {
  std::vector<uint64_t> ids;
  for (const auto& [fid, f] : followers)
    if (f.seq == seq) ids.push_back(fid);
  for (auto fid : ids) ask_follower(fid);
}

void gateway_state::on_tick() {
  std::vector<uint64_t> gone;
  for (auto& [fid, f] : followers) {
    if (f.asking) continue;
    job_progress alive;
    alive.status.seq = f.seq;
    if (!f.progress(alive, std::nullopt)) gone.push_back(fid);
  }
  for (auto fid : gone) followers.erase(fid);
  self->delayed_send(self, keep_alive, tick_atom::value);
}

void gateway_state::submit(local_job& job, const submit_done& done) {
  self->request(w.registry, caf::infinite, submit_atom::value, std::move(job))
      .then(
          [this, done](uint64_t seq) {
            self->request(w.registry, caf::infinite, await_atom::value, seq)
                .then([done](const job_report& r) { (*done)(r, {}); },
                      [this, done](caf::error& e) {
                        job_report r;
                        r.state = job_state::failed;
                        r.has_error = true;
                        r.error = {"", "the runtime did not answer for the job: " + why_of(e)};
                        (*done)(r, {});
                      });
          },
          [this, done](caf::error& e) {
            (*done)(job_report{}, "the runtime refused the job: " + why_of(e));
          });
}

void gateway_state::status(const status_done& done) {
  auto snap = std::make_shared<runtime_snapshot>();
  auto fail = [this, done, snap](caf::error& e) {
    (*done)(*snap, "the runtime did not answer: " + why_of(e));
  };
  self->request(w.registry, std::chrono::seconds(5), status_atom::value)
      .then(
          [this, done, snap, fail](std::vector<job_status>& jobs) {
            snap->jobs = std::move(jobs);
            self->request(w.memory, std::chrono::seconds(5), stats_atom::value)
                .then(
                    [this, done, snap, fail](const memory_stats& m) {
                      snap->memory = m;
                      self->request(w.keys, std::chrono::seconds(5), warm_keys_atom::value)
                          .then(
                              [done, snap](std::vector<warm_key>& k) {
                                snap->keys = std::move(k);
                                (*done)(*snap, {});
                              },
                              fail);
                    },
                    fail);
          },
          fail);
}

void gateway_state::find_job(const std::string& id,
                             std::function<void(uint64_t, const maybe_refusal&)> k) {
  if (auto it = by_id.find(id); it != by_id.end()) {
    k(it->second, std::nullopt);
    return;
  }
  self->request(w.registry, std::chrono::seconds(10), status_atom::value)
      .then(
          [this, id, k](const std::vector<job_status>& jobs) {
            uint64_t seq = 0;
            for (const auto& j : jobs)
              if (j.id == id) seq = std::max(seq, j.seq);
            std::error_code ec;
            if (seq == 0 || !fs::is_directory(fs::path(w.jobs_dir) / id, ec))
              return k(0, unknown_job(id));
            k(seq, std::nullopt);
          },
          [this, k](caf::error& e) {
            k(0, refusal{error_code::unavailable, "the runtime did not answer: " + why_of(e)});
          });
}

void gateway_state::job_progress_of(const std::string& id, uint64_t seq, uint32_t seen,
                                    std::function<void(const job_progress&, const maybe_refusal&)> k) {
  self->request(w.registry, std::chrono::seconds(10), watch_atom::value,
                std::vector<watch_cursor>{{seq, seen}})
      .then(
          [id, k](const std::vector<job_progress>& p) {
            if (p.empty()) return k(job_progress{}, unknown_job(id));
            k(p.front(), std::nullopt);
          },
          [this, id, k](caf::error& e) {
            if (e == caf::sec::invalid_argument) {
              by_id.erase(id);  // the registry no longer keeps it
              return k(job_progress{},
                       refusal{error_code::not_found,
                               "job " + id + ": no longer kept by this server (--keep-finished)"});
            }
            k(job_progress{},
              refusal{error_code::unavailable, "the runtime did not answer: " + why_of(e)});
          });
}

void gateway_state::ask_follower(uint64_t fid) {
  auto it = followers.find(fid);
  if (it == followers.end() || it->second.asking) {
    if (it != followers.end()) it->second.again = true;
    return;
  }
  it->second.asking = true;
  it->second.again = false;
  self->request(w.registry, std::chrono::seconds(10), watch_atom::value,
                std::vector<watch_cursor>{{it->second.seq, it->second.seen}})
      .then(
          [this, fid](const std::vector<job_progress>& p) {
            auto f = followers.find(fid);
            if (f == followers.end()) return;
            f->second.asking = false;
            if (p.empty()) return;
            f->second.seen = p.front().seen;
            const bool more = f->second.progress(p.front(), std::nullopt) && !p.front().complete;
            if (!more) {
              followers.erase(f);
              return;
            }
            if (f->second.again) ask_follower(fid);
          },
          [this, fid](caf::error& e) {
            auto f = followers.find(fid);
            if (f == followers.end()) return;
            // The job is gone from the registry: its stream ends here.
            spdlog::debug("http: events of job #{} end: {}", f->second.seq, why_of(e));
            job_progress done;
            done.complete = true;
            done.status.seq = f->second.seq;
            f->second.progress(done, std::nullopt);
            followers.erase(f);
          });
}

void gateway_state::prune_outputs() {
  std::vector<std::pair<fs::file_time_type, std::string>> finished;
  std::error_code ec;
  for (fs::directory_iterator it(w.jobs_dir, ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code e;
    if (!it->is_directory(e)) continue;
    std::string id = it->path().filename().string();
    if (creating.count(id)) continue;
    const auto t = fs::last_write_time(it->path() / "result.json", e);
    if (!e) finished.emplace_back(t, std::move(id));  // no result.json: not finished
  }
  if (finished.size() <= w.keep_jobs) return;
  std::sort(finished.begin(), finished.end());
  const std::size_t extra = finished.size() - w.keep_jobs;
  for (std::size_t i = 0; i < extra; ++i) {
    const std::string& id = finished[i].second;
    std::error_code rm;
    fs::remove_all(fs::path(w.jobs_dir) / id, rm);
    if (rm)
      spdlog::warn("http: cannot remove the outputs of job {}: {}", id, rm.message());
    by_id.erase(id);
  }
  spdlog::info("http: removed the outputs of {} finished job(s), oldest first ({}{}): "
               "--http-keep-jobs {}",
               extra, finished[0].second, extra > 1 ? ", ..." : "", w.keep_jobs);
}

bool gateway_state::taken(const std::string& id) const {
  std::error_code ec;
  return creating.count(id) || by_id.count(id) || fs::exists(fs::path(w.jobs_dir) / id, ec);
}

void gateway_state::create_job(job_request job, std::function<void(const maybe_refusal&)> accepted,
                               std::function<void()> ended) {
  const std::string id = job.id;
  const fs::path out = fs::path(w.jobs_dir) / id;
  std::error_code ec;
  // The job's directory exists for as long as its outputs are kept: an id
  // whose directory exists is taken (live, finished, or from an earlier run).
  if (taken(id) || !fs::create_directory(out, ec)) {
    accepted(refusal{error_code::conflict,
                     ec ? "id " + id + ": cannot make " + out.string() + ": " + ec.message()
                        : "field id: job " + id + " exists on this server; choose another id"});
    return;
  }
  job_spec spec;
  spec.id = id;
  spec.zkey = job.zkey;
  spec.single = false;
  spec.out = out.string();
  spec.prio = job.prio;
  const fs::path spool = fs::path(w.spool_dir) / ("http-" + id);
  auto forget = [out, spool] {
    std::error_code rm;
    fs::remove_all(spool, rm);
    fs::remove_all(out, rm);
  };
  if (!job.uploads.empty()) {
    // Written before the submission, so the journal's record of the job
    // (under --state) finds its witnesses after a restart.
    try {
      fs::create_directories(spool);
      for (std::size_t i = 0; i < job.uploads.size(); ++i) {
        const std::string file = (spool / (std::to_string(i) + ".wtns")).string();
        w.write_file(file, job.uploads[i]);
        spec.witnesses.push_back(file);
      }
    } catch (const std::exception& e) {
      forget();
      accepted(refusal{error_code::unavailable,
                       std::string("cannot store the uploaded witnesses: ") + e.what()});
      return;
    }
    job.uploads.clear();
  } else {
    spec.witnesses = std::move(job.paths);
  }
  creating[id] = true;
  self->request(w.registry, caf::infinite, submit_atom::value, std::vector<job_spec>{spec})
      .then(
          [this, id, who = job.who, accepted, ended, spool](const std::vector<uint64_t>& seqs) {
            creating.erase(id);
            const uint64_t seq = seqs.empty() ? 0 : seqs.front();
            by_id[id] = seq;
            spdlog::info("http: {}'s job {} accepted as #{}", who, id, seq);
            accepted(std::nullopt);
            self->request(w.registry, caf::infinite, await_atom::value, seq)
                .then(
                    [this, id, spool, ended](const job_report& r) {
                      std::error_code rm;
                      fs::remove_all(spool, rm);  // its witnesses are no longer needed
                      spdlog::info("http: job {} {}", id, to_string(r.state));
                      ended();
                      prune_outputs();
                    },
                    [ended](caf::error&) { ended(); });
          },
          [this, id, accepted, forget](caf::error& e) {
            creating.erase(id);
            forget();
            const std::string why = why_of(e);
            const bool stopping = why.find("stopping") != std::string::npos;
            accepted(refusal{e == caf::sec::invalid_argument ? error_code::conflict
                             : stopping                     ? error_code::draining
                                                            : error_code::unavailable,
                             "the runtime refused job " + id + ": " + why});
          });
}

void gateway_state::job_proof(
    const std::string& id, uint32_t index,
    std::function<void(const std::string&, const std::string&, const maybe_refusal&)> k) {
  find_job(id, [this, id, index, k](uint64_t seq, const maybe_refusal& r) {
    if (r) return k({}, {}, r);
    job_progress_of(id, seq, 0, [this, id, index, k](const job_progress& p, const maybe_refusal& r) {
      if (r) return k({}, {}, r);
      if (index >= p.status.total)
        return k({}, {},
                 refusal{error_code::not_found,
                         "proof " + std::to_string(index) + ": job " + id + " has " +
                             std::to_string(p.status.total) + " partition(s), 0 to " +
                             std::to_string(p.status.total ? p.status.total - 1 : 0)});
      const auto& parts = p.complete ? p.report.partitions : p.finished;
      for (const auto& part : parts) {
        if (part.index != index) continue;
        if (part.state != partition_state::done)
          return k({}, {},
                   refusal{error_code::not_found,
                           "proof " + std::to_string(index) + ": partition " +
                               std::to_string(index) + " of job " + id + " " +
                               to_string(part.state) + (part.error.message.empty()
                                                            ? std::string()
                                                            : ": " + part.error.message)});
        const fs::path out = fs::path(w.jobs_dir) / id;
        std::string proof = read_text((out / part.proof_file).string());
        std::string pub = read_text((out / part.public_file).string());
        if (proof.empty() || pub.empty())
          return k({}, {},
                   refusal{error_code::not_found, "proof " + std::to_string(index) + ": " +
                                                      (out / part.proof_file).string() +
                                                      ": cannot be read"});
        return k(proof, pub, std::nullopt);
      }
      k({}, {},
        refusal{error_code::not_found, "proof " + std::to_string(index) + ": partition " +
                                           std::to_string(index) + " of job " + id +
                                           " is not done yet (job " + to_string(p.status.state) +
                                           "); GET /v1/jobs/" + id + "/events tells when"});
    });
  });
}

void gateway_state::job(const std::string& id,
                        std::function<void(const job_progress&, const maybe_refusal&)> k) {
  find_job(id, [this, id, k](uint64_t seq, const maybe_refusal& r) {
    if (r) return k(job_progress{}, r);
    job_progress_of(id, seq, 0, k);
  });
}

void gateway_state::cancel(const std::string& id,
                           std::function<void(const job_status&, const maybe_refusal&)> k) {
  find_job(id, [this, id, k](uint64_t seq, const maybe_refusal& r) {
    if (r) return k(job_status{}, r);
    self->request(w.registry, caf::infinite, cancel_atom::value, seq)
        .then([k](const job_status& s) { k(s, std::nullopt); },
              [this, id, seq, k](caf::error& e) {
                // Unknown to the registry now, or finished: which one, it says.
                self->request(w.registry, std::chrono::seconds(10), status_atom::value, seq)
                    .then(
                        [id, k](const job_status& s) {
                          k(s, refusal{error_code::conflict, "job " + id + " is " +
                                                                 to_string(s.state) +
                                                                 " already; nothing to cancel"});
                        },
                        [id, k, why = why_of(e)](caf::error&) {
                          k(job_status{}, refusal{error_code::not_found, "job " + id + ": " + why});
                        });
              });
  });
}

void gateway_state::events(const std::string& id,
                           std::function<bool(const job_progress&, const maybe_refusal&)> progress) {
  find_job(id, [this, progress](uint64_t seq, const maybe_refusal& r) {
    if (r) {
      progress(job_progress{}, r);
      return;
    }
    const uint64_t fid = ++next_follower;
    follower f;
    f.seq = seq;
    f.progress = progress;
    followers.emplace(fid, std::move(f));
    ask_follower(fid);
  });
}

void gateway_state::preload(const std::string& path,
                            std::function<void(uint64_t, const maybe_refusal&)> k) {
  self->request(w.keys, caf::infinite, preload_atom::value, path)
      .then(
          [this, path, k](const key_load_result& r) {
            if (!r.key)
              return k(0, refusal{error_code::bad_request,
                                  "field path: " + (r.error.file.empty() ? path : r.error.file) +
                                      ": " + r.error.message});
            self->request(w.keys, std::chrono::seconds(10), warm_keys_atom::value)
                .then(
                    [path, k](const std::vector<warm_key>& warm) {
                      uint64_t bytes = 0;
                      for (const auto& wk : warm)
                        if (wk.path == path) bytes = wk.bytes;
                      k(bytes, std::nullopt);
                    },
                    [k](caf::error&) { k(0, std::nullopt); });
          },
          [this, k](caf::error& e) {
            k(0, refusal{error_code::unavailable, "the key cache did not answer: " + why_of(e)});
          });
}

void gateway_state::evict(const std::string& path,
                          std::function<void(uint64_t, const maybe_refusal&)> k) {
  self->request(w.keys, std::chrono::seconds(10), evict_path_atom::value, path)
      .then([k](uint64_t bytes) { k(bytes, std::nullopt); },
            [this, path, k](caf::error& e) {
              std::string why = why_of(e);
              // The key cache says why: not loaded (404) or in use (409).
              const bool busy = why.find("in use") != std::string::npos;
              k(0, refusal{busy ? error_code::conflict : error_code::not_found,
                           "key " + path + ": " + why});
            });
}

}  // namespace proofline::http
