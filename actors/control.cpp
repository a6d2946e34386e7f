#include "actors/control.hpp"

#include "actors/detail/spawn.hpp"

#include <caf/actor_system.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/typed_response_promise.hpp>
#include <caf/message_view.hpp>
#include <caf/sec.hpp>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <filesystem>
#include <memory>
#include <optional>
#include <set>
#include <map>

#include <spdlog/spdlog.h>

namespace proofline {

namespace {

namespace fs = std::filesystem;

/// Longest wait of a remote watch (clients ask again), and most watches
/// parked at once (the oldest is answered early beyond that).
constexpr uint32_t max_watch_ms = 30'000;
constexpr size_t max_watches = 1024;

caf::error refused(std::string text) {
  return caf::make_error(caf::sec::invalid_argument, std::move(text));
}

caf::error starting() { return caf::make_error(caf::sec::runtime_error, server_starting_message); }

std::string in_quotes(const std::string& s) { return "\"" + s + "\""; }

/// The first path of `specs` outside the allowed roots, as a message; empty
/// if none. Each path checked is replaced by its resolved form (symlinks
/// followed, as the check saw it): the file is then opened by that name
/// beneath its root without following any link (base/confined.hpp), so a
/// link put on the path after this check fails the open instead of leading
/// elsewhere. Inline witnesses keep their names (they are spooled by name).
std::string path_problem(const control_config& cfg, std::vector<job_spec>& specs,
                         bool witnesses_inline) {
  auto resolve = [&](const job_spec& spec, std::string& p) -> std::string {
    if (!under_roots(p, cfg.allowed_roots))
      return "job " + in_quotes(spec.id) + ": " + outside_roots_message(p, cfg.allowed_roots);
    std::error_code ec;
    auto resolved = fs::weakly_canonical(fs::absolute(p), ec);
    if (!ec) p = resolved.string();
    return {};
  };
  for (auto& spec : specs) {
    for (auto* p : {&spec.zkey, &spec.out})
      if (auto problem = resolve(spec, *p); !problem.empty()) return problem;
    for (auto* p : {&spec.witness_generator, &spec.r1cs})
      if (!p->empty())
        if (auto problem = resolve(spec, *p); !problem.empty()) return problem;
    if (!witnesses_inline)
      for (auto& w : spec.witnesses)
        if (auto problem = resolve(spec, w); !problem.empty()) return problem;
  }
  return {};
}

class control_state {
 public:
  static inline const char* name = "control";
  using pointer = control_admin_actor::stateful_pointer<control_state>;

  explicit control_state(pointer self) : self(self) {}

  control_admin_actor::behavior_type make_behavior(control_config config);

 private:
  // ---- handlers
  caf::result<std::vector<submitted_job>> submit_jobs(const job_submission& s);
  caf::result<job_status> cancel_by_id(const std::string& id);
  caf::result<cluster_metrics> collect_metrics();
  caf::result<bool> flush();
  /// Answers at once when a watched job has news past its cursor (or the
  /// wait is 0), else parks the watch until news or `wait_ms` (capped).
  caf::result<std::vector<job_progress>> watch(const std::vector<watch_cursor>& cursors,
                                               uint32_t wait_ms);
  /// Job `seq` has news: parked watches of it that now have news are answered.
  void on_news(uint64_t seq);
  /// A parked watch's wait ran out: it is answered with what there is.
  void on_watch_timeout(uint64_t id);

  // ---- helpers
  /// Writes the inline witnesses of a submission into `dir` and points every
  /// spec at its copy. Throws std::runtime_error with the user's message.
  void spool_inline(const job_submission& s, const std::string& dir,
                    std::vector<job_spec>& specs);
  /// Removes a spool directory once every job of its submission completed.
  void clean_spool_after(const std::vector<uint64_t>& seqs, const std::string& dir);
  /// A watch waiting for news of its jobs.
  struct parked_watch {
    std::vector<watch_cursor> cursors;
    caf::typed_response_promise<std::vector<job_progress>> promise;
  };
  /// Answers a watch no longer parked with its progress now.
  void answer(parked_watch w);
  /// Parks a watch for up to `wait_ms`.
  void park(parked_watch w, uint32_t wait_ms);

  // ---- data
  pointer self;
  control_config cfg;
  std::optional<control_wiring> wiring;     ///< set by attach
  std::map<std::string, uint64_t> by_id;    ///< client id -> newest seq
  uint64_t submissions = 0;                 ///< names spool subdirectories
  bool stopping = false;                    ///< drain_atom came: submissions are refused
  uint64_t next_watch = 1;
  std::map<uint64_t, parked_watch> watches;  ///< by id, oldest first
};

void control_state::spool_inline(const job_submission& s, const std::string& dir,
                                 std::vector<job_spec>& specs) {
  std::map<std::string, const inline_witness*> sent;
  for (const auto& w : s.witnesses) sent.emplace(w.path, &w);
  std::map<std::string, std::string> copies;  // client path -> spool path
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw std::runtime_error(dir + ": cannot create the spool directory: " + ec.message());
  for (auto& spec : specs)
    for (auto& w : spec.witnesses) {
      auto it = sent.find(w);
      if (it == sent.end())
        throw std::runtime_error(w + ": job " + in_quotes(spec.id) +
                                 " names this witness but the submission does not carry it "
                                 "(submit --inline sends every witness)");
      auto [copy, fresh] = copies.emplace(w, "");
      if (fresh) {
        // Numbered, and named after the client's file so that an error
        // naming the copy ("2-input_1.json: input signal ...") still says
        // which file it was; only portable name characters are kept.
        std::string base = fs::path(w).filename().string();
        for (char& c : base)
          if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '_' && c != '-')
            c = '_';
        if (base.size() > 64) base.erase(0, base.size() - 64);
        copy->second = (fs::path(dir) / (std::to_string(copies.size()) + "-" + base)).string();
        const auto& bytes = it->second->bytes;
        cfg.write_file(
            copy->second,
            std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
      }
      w = copy->second;
    }
}

void control_state::clean_spool_after(const std::vector<uint64_t>& seqs,
                                      const std::string& dir) {
  auto left = std::make_shared<size_t>(seqs.size());
  auto done = [left, dir] {
    if (--*left > 0) return;
    std::error_code ec;
    fs::remove_all(dir, ec);
  };
  for (auto seq : seqs)
    self->request(wiring->registry, caf::infinite, await_atom::value, seq)
        .then([done](const job_report&) { done(); }, [done](caf::error&) { done(); });
}

control_admin_actor::behavior_type control_state::make_behavior(control_config config) {
  cfg = std::move(config);
  // A peer may send anything; log it and answer with an error, never quit.
  self->set_default_handler([](caf::scheduled_actor* ptr, caf::message_view& x)
                                -> caf::result<caf::message> {
    spdlog::warn("control: dropped an unexpected message {} from {}",
                 caf::deep_to_string(x.content()).substr(0, 200),
                 caf::to_string(ptr->current_sender()));
    return caf::sec::unexpected_message;
  });
  return {
      [this](attach_atom, const control_wiring& w) {
        wiring = w;
        // Before any watch asks the registry, so no news is missed.
        self->send(w.registry, listen_atom::value, caf::actor_cast<job_listener_actor>(self));
        spdlog::debug("control: runtime attached");
      },
      [this](submit_atom, const job_submission& s) { return submit_jobs(s); },
      [this](drain_atom) { stopping = true; },
      [this](flush_atom) { return flush(); },
      [this](status_atom) -> caf::result<std::vector<job_status>> {
        if (!wiring) return starting();
        return self->delegate(wiring->registry, status_atom::value);
      },
      [this](cancel_atom, const std::string& id) { return cancel_by_id(id); },
      [this](watch_atom, const std::vector<watch_cursor>& cursors, uint32_t wait_ms) {
        return watch(cursors, wait_ms);
      },
      [this](news_atom, uint64_t seq) { on_news(seq); },
      [this](watch_due_atom, uint64_t id) { on_watch_timeout(id); },
      [this](metrics_atom) { return collect_metrics(); },
      [this](join_atom, const node_info& info, const node_actor& node) -> caf::result<uint64_t> {
        if (!wiring) return starting();
        if (!wiring->cluster)
          return refused("this server does not dispatch to nodes");
        return self->delegate(wiring->cluster, join_atom::value, info, node);
      },
      [this](credit_atom, uint64_t node, uint32_t n) -> caf::result<void> {
        if (!wiring || !wiring->cluster) return caf::unit;
        return self->delegate(wiring->cluster, credit_atom::value, node, n);
      },
      [this](result_atom, const partition_result& r) -> caf::result<void> {
        if (!wiring || !wiring->cluster) return caf::unit;
        return self->delegate(wiring->cluster, result_atom::value, r);
      },
  };
}

caf::result<bool> control_state::flush() {
  if (!wiring) return true;
  auto rp = self->make_response_promise<bool>();
  self->request(wiring->registry, caf::infinite, status_atom::value)
      .then([=](const std::vector<job_status>&) mutable { rp.deliver(true); },
            [=](caf::error&) mutable { rp.deliver(true); });
  return rp;
}

caf::result<std::vector<submitted_job>> control_state::submit_jobs(const job_submission& s) {
  if (!wiring) return starting();
  if (stopping) return caf::make_error(caf::sec::runtime_error, server_stopping_message);
  if (s.name.empty()) return refused("the submission names no job file");
  std::vector<job_spec> specs;
  std::string base = fs::path(s.name).parent_path().string();
  try {
    specs = cfg.parse_jobs(s.text, s.name, base);
  } catch (const std::exception& e) {
    return refused(e.what());
  }
  if (auto problem = path_problem(cfg, specs, s.inline_witnesses); !problem.empty())
    return refused(problem);
  std::string spool;
  if (s.inline_witnesses) {
    uint64_t total = 0;
    for (const auto& w : s.witnesses) total += w.bytes.size();
    if (total > cfg.max_inline_bytes)
      return refused(s.name + ": the submission carries " + std::to_string(total) +
                     " bytes of inline witnesses; this server takes at most " +
                     std::to_string(cfg.max_inline_bytes) +
                     " (serve --max-inline); put the witnesses on shared storage instead");
    spool = (fs::path(cfg.spool_dir) / ("submission-" + std::to_string(++submissions)))
                .string();
    try {
      spool_inline(s, spool, specs);
    } catch (const std::exception& e) {
      std::error_code ec;
      fs::remove_all(spool, ec);
      return refused(e.what());
    }
  }
  auto rp = self->make_response_promise<std::vector<submitted_job>>();
  self->request(wiring->registry, caf::infinite, submit_atom::value, specs)
      .then(
          [=](const std::vector<uint64_t>& seqs) mutable {
            std::vector<submitted_job> out;
            for (size_t i = 0; i < seqs.size(); ++i) {
              by_id[specs[i].id] = seqs[i];
              out.push_back({specs[i].id, seqs[i]});
            }
            spdlog::info("control: accepted {} job(s) of {}{}", specs.size(), s.name,
                         spool.empty() ? "" : " (inline witnesses)");
            if (!spool.empty()) clean_spool_after(seqs, spool);
            rp.deliver(std::move(out));
          },
          [=](caf::error& e) mutable {
            if (!spool.empty()) {
              std::error_code ec;
              fs::remove_all(spool, ec);
            }
            rp.deliver(std::move(e));
          });
  return rp;
}

caf::result<job_status> control_state::cancel_by_id(const std::string& id) {
  if (!wiring) return starting();
  auto rp = self->make_response_promise<job_status>();
  auto cancel = [=](uint64_t seq) mutable {
    self->request(wiring->registry, caf::infinite, cancel_atom::value, seq)
        .then(
            [=](const job_status& status) mutable {
              if (wiring->cluster)
                self->send(wiring->cluster, cancel_atom::value, seq);
              rp.deliver(status);
            },
            [=](caf::error& e) mutable { rp.deliver(std::move(e)); });
  };
  if (auto it = by_id.find(id); it != by_id.end()) {
    cancel(it->second);
    return rp;
  }
  // Not submitted through this control actor: a job the state journal
  // re-queued at start. The registry knows it by id.
  self->request(wiring->registry, caf::infinite, status_atom::value)
      .then(
          [=](const std::vector<job_status>& jobs) mutable {
            uint64_t seq = 0;
            for (const auto& j : jobs)
              if (j.id == id) seq = std::max(seq, j.seq);
            if (seq == 0)
              rp.deliver(refused("no job " + in_quotes(id) + " on this server"));
            else
              cancel(seq);
          },
          [=](caf::error& e) mutable { rp.deliver(std::move(e)); });
  return rp;
}

caf::result<cluster_metrics> control_state::collect_metrics() {
  if (!wiring) return starting();
  auto rp = self->make_response_promise<cluster_metrics>();
  auto m = std::make_shared<cluster_metrics>();
  m->name = cfg.name;
  auto w = *wiring;
  // memory, then jobs, then warm keys, then nodes; each step is a local request.
  auto nodes = [=]() mutable {
    if (!w.cluster) {
      rp.deliver(*m);
      return;
    }
    self->request(w.cluster, caf::infinite, metrics_atom::value)
        .then([=](const std::vector<node_metrics>& nodes) mutable {
                m->nodes = nodes;
                rp.deliver(*m);
              },
              [=](caf::error&) mutable { rp.deliver(*m); });
  };
  auto finish = [=]() mutable {
    if (!w.keys) {
      nodes();
      return;
    }
    self->request(w.keys, caf::infinite, warm_keys_atom::value)
        .then([=](const std::vector<warm_key>& keys) mutable {
                m->keys = keys;
                nodes();
              },
              [=](caf::error&) mutable { nodes(); });
  };
  self->request(w.memory, caf::infinite, stats_atom::value)
      .then(
          [=](const memory_stats& mem) mutable {
            m->memory = mem;
            self->request(w.registry, caf::infinite, status_atom::value)
                .then(
                    [=](const std::vector<job_status>& jobs) mutable {
                      for (const auto& j : jobs) {
                        switch (j.state) {
                          case job_state::done:
                            ++m->jobs_done;
                            break;
                          case job_state::failed:
                            ++m->jobs_failed;
                            break;
                          case job_state::cancelled:
                            ++m->jobs_cancelled;
                            break;
                          default:
                            ++m->jobs_live;
                        }
                        m->partitions_done += j.done;
                        m->partitions_failed += j.failed;
                      }
                      finish();
                    },
                    [=](caf::error& e) mutable { rp.deliver(std::move(e)); });
          },
          [=](caf::error& e) mutable { rp.deliver(std::move(e)); });
  return rp;
}

// ---- watches: control's long poll. They wait here, not in the registry,
// which only answers progress and tells control of news.

bool has_news(const std::vector<job_progress>& progress) {
  for (const auto& p : progress)
    if (!p.finished.empty() || p.complete) return true;
  return false;
}

void control_state::answer(parked_watch w) {
  self->request(wiring->registry, caf::infinite, watch_atom::value, w.cursors)
      .then([rp = w.promise](std::vector<job_progress>& p) mutable { rp.deliver(std::move(p)); },
            [rp = w.promise](caf::error& e) mutable { rp.deliver(std::move(e)); });
}

void control_state::park(parked_watch w, uint32_t wait_ms) {
  if (watches.size() >= max_watches) {
    auto oldest = watches.begin();
    answer(std::move(oldest->second));
    watches.erase(oldest);
  }
  uint64_t id = next_watch++;
  watches.emplace(id, std::move(w));
  self->delayed_send(self, std::chrono::milliseconds(wait_ms), watch_due_atom::value, id);
}

caf::result<std::vector<job_progress>> control_state::watch(
    const std::vector<watch_cursor>& cursors, uint32_t wait_ms) {
  if (!wiring)
    return caf::make_error(caf::sec::runtime_error, server_starting_message);
  wait_ms = std::min(wait_ms, max_watch_ms);
  auto rp = self->make_response_promise<std::vector<job_progress>>();
  // The registry tells control of news after this answer, never between.
  self->request(wiring->registry, caf::infinite, watch_atom::value, cursors)
      .then(
          [=](std::vector<job_progress>& p) mutable {
            if (cursors.empty() || wait_ms == 0 || has_news(p))
              rp.deliver(std::move(p));
            else
              park(parked_watch{cursors, rp}, wait_ms);
          },
          [=](caf::error& e) mutable { rp.deliver(std::move(e)); });
  return rp;
}

void control_state::on_news(uint64_t seq) {
  for (const auto& [id, w] : watches) {
    if (std::none_of(w.cursors.begin(), w.cursors.end(),
                     [seq](const watch_cursor& c) { return c.seq == seq; }))
      continue;
    self->request(wiring->registry, caf::infinite, watch_atom::value, w.cursors)
        .then([this, id = id](std::vector<job_progress>& p) {
          auto it = watches.find(id);
          if (it == watches.end() || !has_news(p)) return;  // answered already
          it->second.promise.deliver(std::move(p));
          watches.erase(it);
        });
  }
}

void control_state::on_watch_timeout(uint64_t id) {
  auto it = watches.find(id);
  if (it == watches.end()) return;
  answer(std::move(it->second));
  watches.erase(it);
}

}  // namespace

control_admin_actor spawn_control(caf::actor_system& sys, control_config cfg) {
  return spawn_stateful<control_state>(sys, std::move(cfg));
}

std::string canonical_root(const std::string& dir) {
  std::error_code ec;
  auto p = fs::canonical(dir, ec);
  if (ec) throw std::runtime_error(dir + ": " + ec.message());
  if (!fs::is_directory(p, ec)) throw std::runtime_error(dir + ": not a directory");
  return p.string();
}

bool under_roots(const std::string& path, const std::vector<std::string>& roots) {
  if (path.empty()) return false;
  std::error_code ec;
  fs::path p = fs::weakly_canonical(fs::absolute(path, ec), ec);
  if (ec) return false;
  for (const auto& root : roots) {
    fs::path r(root);
    auto [ri, pi] = std::mismatch(r.begin(), r.end(), p.begin(), p.end());
    if (ri == r.end()) return true;
  }
  return false;
}

std::string outside_roots_message(const std::string& path, const std::vector<std::string>& roots) {
  std::string list;
  for (const auto& r : roots) list += (list.empty() ? "" : ", ") + r;
  return path + ": outside the allowed roots (" + (list.empty() ? "none" : list) +
         "); see serve --allow-root";
}

std::string error_text(caf::actor_system& sys, const caf::error& e) {
  const auto& ctx = e.context();
  if (ctx.match_elements<std::string>()) return ctx.get_as<std::string>(0);
  return sys.render(e);
}

}  // namespace proofline
