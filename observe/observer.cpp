#include "observe/observer.hpp"

#include <spdlog/spdlog.h>

#include <sys/resource.h>

#include <algorithm>
#include <caf/event_based_actor.hpp>
#include <caf/exit_reason.hpp>
#include <caf/scoped_actor.hpp>
#include <caf/send.hpp>

#include "actors/detail/spawn.hpp"
#include "observe/trace.hpp"

namespace proofline::observe {

namespace {

/// Replies later than this are dropped (the next sample asks again); long
/// enough for a memory manager busy with a purge of a large arena.
constexpr std::chrono::seconds reply_timeout{5};

/// CPU time this process has used (user + system, every thread), ms; -1
/// when getrusage fails.
double process_cpu_ms() {
  rusage u{};
  if (getrusage(RUSAGE_SELF, &u) != 0) return -1;
  const auto ms = [](const timeval& t) { return double(t.tv_sec) * 1e3 + double(t.tv_usec) / 1e3; };
  return ms(u.ru_utime) + ms(u.ru_stime);
}

}  // namespace

// ---------------------------------------------------------------- busy_tracker

void busy_tracker::add(double start_ms, double end_ms) {
  end_ms = std::max(start_ms, end_ms);
  first_ = std::min(first_, start_ms);
  last_ = std::max(last_, end_ms);
  start_ms = std::max(start_ms, settled_until_);  // only what is newer than the settled past
  if (end_ms > start_ms) pending_.emplace_back(start_ms, end_ms);
}

void busy_tracker::flush() {
  if (!pending_.empty()) {
    pending_.insert(pending_.end(), open_.begin(), open_.end());
    open_ = union_of(std::move(pending_));
    pending_.clear();
  }
  // Intervals that ended long before the newest end will not grow any more.
  size_t keep = 0;
  while (keep < open_.size() && open_[keep].second < last_ - settle_ms) {
    settled_ms_ += open_[keep].second - open_[keep].first;
    settled_until_ = std::max(settled_until_, open_[keep].second);
    ++keep;
  }
  open_.erase(open_.begin(), open_.begin() + static_cast<std::ptrdiff_t>(keep));
}

double busy_tracker::busy_ms() const {
  double total = settled_ms_;
  for (const auto& [start, end] : open_) total += end - start;
  return total;
}

// ---------------------------------------------------------------- the actor

namespace {

class observer_state {
 public:
  static inline const char* name = "observer";
  using pointer = observer_actor::stateful_pointer<observer_state>;

  explicit observer_state(pointer self) : self(self) {}

  observer_actor::behavior_type make_behavior(observer_config config);

 private:
  // ---- handlers
  /// Sends the requests of one sample and records a queue sample.
  void take_sample();
  /// Appends a queue sample from the latest answers and the CPU time now
  /// (with keep_samples).
  void record_queues();
  /// The figures for a metrics scrape.
  metrics_snapshot make_snapshot() const;
  /// Every sample taken, the progress line erased; the observer then quits.
  observed_samples collect();

  // ---- helpers
  /// Partitions that finished since the last watch.
  void on_progress(const std::vector<job_progress>& news);
  /// Redraws the progress line, if any.
  void draw_progress() const;

  // ---- data
  pointer self;
  observer_config cfg;
  std::optional<observer_wiring> wiring;  ///< set by attach; no samples before
  // latest answers
  std::vector<job_status> jobs;
  memory_stats memory;
  bool have_memory = false;
  scheduler_stats queue;
  // finished partitions, from watch
  std::map<uint64_t, uint32_t> cursors;  ///< job seq -> finished partitions seen
  std::set<uint64_t> complete;           ///< jobs whose completion was seen
  bool watching = false;                 ///< a watch request is out
  std::map<int, busy_tracker> busy;      ///< by backend index
  std::map<int, uint64_t> proved;        ///< partitions per backend index
  duration_histogram durations;          ///< of partitions done
  uint64_t finishes = 0;     ///< partitions seen finished
  base::finish_rate rate;    ///< of those finishes, for the progress line's ETA
  observed_samples samples;
  bool stopped = false;
};

observer_actor::behavior_type observer_state::make_behavior(observer_config config) {
  cfg = std::move(config);
  return {
      [this](attach_atom, const observer_wiring& w) {
        bool first = !wiring;
        wiring = w;
        if (first) self->send(self, sample_atom::value);
      },
      [this](sample_atom) {
        if (stopped || !wiring) return;
        take_sample();
        self->delayed_send(self, cfg.period, sample_atom::value);
      },
      [this](purged_atom, const purge_record& p) {
        if (cfg.keep_samples) samples.purges.push_back(p);
      },
      [this](snapshot_atom) { return make_snapshot(); },
      [this](collect_atom) { return collect(); },
  };
}

observed_samples observer_state::collect() {
  // A last sample, so that the samples span every device span of the run.
  if (!stopped && wiring) record_queues();
  stopped = true;
  if (cfg.progress) cfg.progress->clear();
  observed_samples out = std::move(samples);
  std::sort(out.purges.begin(), out.purges.end(),
            [](const purge_record& a, const purge_record& b) { return a.start_ms < b.start_ms; });
  self->quit();
  return out;
}

void observer_state::record_queues() {
  if (!cfg.keep_samples) return;
  queue_sample q;
  q.t_ms = cfg.clock.now_ms();
  q.ready = queue.ready;
  q.waiting_memory = have_memory ? memory.queued : 0;
  q.reserved = have_memory ? memory.reserved : 0;
  q.rss = have_memory ? memory.rss : 0;
  q.cpu_ms = process_cpu_ms();
  samples.queues.push_back(q);
}

void observer_state::take_sample() {
  const auto& w = *wiring;
  // Record the queues as the latest answers left them, then ask again.
  record_queues();
  draw_progress();

  self->request(w.scheduler, reply_timeout, stats_atom::value)
      .then([this](const scheduler_stats& s) { queue = s; }, [](caf::error&) {});
  self->request(w.memory, reply_timeout, stats_atom::value)
      .then(
          [this](const memory_stats& m) {
            memory = m;
            have_memory = true;
          },
          [](caf::error&) {});
  self->request(w.registry, reply_timeout, status_atom::value)
      .then(
          [this](const std::vector<job_status>& answer) {
            jobs = answer;
            for (const auto& j : jobs)
              if (!complete.count(j.seq)) cursors.emplace(j.seq, 0);
          },
          [](caf::error&) {});
  if (watching || cursors.empty()) return;
  std::vector<watch_cursor> asked;
  for (const auto& [seq, seen] : cursors) asked.push_back({seq, seen});
  watching = true;
  self->request(w.registry, reply_timeout, watch_atom::value, asked)
      .then(
          [this](const std::vector<job_progress>& news) {
            watching = false;
            on_progress(news);
          },
          [this](caf::error&) { watching = false; });
}

void observer_state::on_progress(const std::vector<job_progress>& news) {
  const double now = cfg.clock.now_ms();
  for (const auto& p : news) {
    for (const auto& part : p.finished) {
      const auto& s = part.spans;
      // When it finished: its proof's last step, else (failed or cancelled
      // before it) when the news came.
      rate.observe(s.finalize.recorded() ? std::min(s.finalize.end, now) : now, ++finishes);
      if (part.state == partition_state::done && s.synthesize.recorded() &&
          s.finalize.end >= s.synthesize.start)
        durations.add((s.finalize.end - s.synthesize.start) / 1000.0);
      if (s.gpu >= 0) {
        ++proved[s.gpu];
        auto& tracker = busy[s.gpu];
        for (const auto& d : s.device) tracker.add(d.start, d.end);
      }
    }
    if (p.complete) {
      complete.insert(p.status.seq);
      cursors.erase(p.status.seq);
    } else if (auto it = cursors.find(p.status.seq); it != cursors.end()) {
      it->second = p.seen;
    }
  }
  for (auto& [device, tracker] : busy) tracker.flush();
}

metrics_snapshot observer_state::make_snapshot() const {
  metrics_snapshot m;
  for (const auto& j : jobs) {
    m.partitions_done += j.done;
    m.partitions_failed += j.failed;
    ++m.jobs[to_string(j.state)];
  }
  m.proof_duration = durations;
  m.ready = queue.ready;
  m.waiting_memory = have_memory ? memory.queued : 0;
  if (have_memory) m.memory = memory;

  std::vector<gpu::nvml_sample> latest;
  std::vector<gpu::nvml_device> nvml_devices;
  if (cfg.nvml && cfg.nvml->available()) {
    latest = cfg.nvml->latest();
    nvml_devices = cfg.nvml->devices();
  }
  int devices = static_cast<int>(cfg.backends.size());
  for (const auto& [device, tracker] : busy) devices = std::max(devices, device + 1);
  for (int d = 0; d < devices; ++d) {
    gpu_metrics g;
    g.device = d;
    int cuda = -1;
    if (static_cast<size_t>(d) < cfg.backends.size()) {
      g.name = cfg.backends[d].description;
      cuda = cfg.backends[d].cuda_device;
    }
    if (auto it = busy.find(d); it != busy.end()) {
      g.busy_s = it->second.busy_ms() / 1000.0;
      g.window_s = it->second.window_ms() / 1000.0;
    }
    if (auto it = proved.find(d); it != proved.end()) g.partitions = it->second;
    if (cuda >= 0)
      if (auto idx = gpu::nvml_index_of_cuda_device(cuda, nvml_devices))
        for (const auto& s : latest)
          if (s.device == *idx) g.nvml_ratio = s.gpu_percent / 100.0;
    m.gpus.push_back(std::move(g));
  }
  return m;
}

void observer_state::draw_progress() const {
  if (!cfg.progress || !cfg.progress->active()) return;
  progress_state p;
  for (const auto& j : jobs) {
    p.done += j.done;
    p.failed += j.failed;
    p.total += j.total;
  }
  if (p.total == 0) return;  // no job known yet
  p.elapsed_ms = cfg.clock.now_ms();
  p.eta_at_rate_ms = rate.eta_ms(p.elapsed_ms, p.total);
  double busy_ms = 0, window_ms = 0;
  for (const auto& [device, tracker] : busy) {
    busy_ms += tracker.busy_ms();
    window_ms += tracker.window_ms();
  }
  if (window_ms > 0) p.busy_fraction = busy_ms / window_ms;  // over all devices' windows
  p.ready = queue.ready;
  p.waiting_memory = have_memory ? memory.queued : 0;
  p.gpu = std::any_of(cfg.backends.begin(), cfg.backends.end(),
                      [](const backend_record& b) { return b.kind != "cpu"; });
  cfg.progress->update(p);
}

}  // namespace

observer_actor spawn_observer(caf::actor_system& sys, observer_config cfg) {
  return spawn_stateful<observer_state>(sys, std::move(cfg));
}

// ---------------------------------------------------------------- observation

observation::observation(caf::actor_system& sys, const run_clock& clock,
                         std::vector<backend_record> backends, observation_options opts)
    : sys_(sys), clock_(clock), opts_(std::move(opts)), backends_(std::move(backends)) {
  if (opts_.nvml) {
    nvml_ = std::make_shared<gpu::nvml_sampler>(clock_.epoch());
    if (nvml_->available())
      spdlog::info("NVML: sampling {} device(s) every {} ms", nvml_->devices().size(),
                   nvml_->period().count());
    else
      spdlog::info("NVML: no samples ({})", nvml_->why());
  }
  if (opts_.progress) {
    progress_ = std::make_shared<progress_display>(stderr, true);
    // Log lines erase the progress line first. Done before any actor runs,
    // as a logger's sinks may not change while other threads log.
    if (progress_->active())
      if (auto logger = spdlog::default_logger())
        for (auto& sink : logger->sinks()) sink = progress_aware_sink(sink, progress_);
  }
  observer_config cfg;
  cfg.clock = clock_;
  cfg.period = opts_.period;
  cfg.backends = backends_;
  cfg.nvml = nvml_;
  cfg.progress = progress_;
  cfg.keep_samples = opts_.keep_samples;
  observer_ = spawn_observer(sys_, std::move(cfg));
  if (opts_.metrics) {
    try {
      metrics_ = std::make_unique<metrics_server>(
          *opts_.metrics,
          [&sys = sys_, who = observer_] {
            return scrape(sys, who, std::chrono::milliseconds(2000));
          },
          [ready = ready_] { return ready->load(); });
    } catch (...) {
      caf::anon_send_exit(observer_, caf::exit_reason::user_shutdown);
      throw;
    }
    spdlog::info("metrics: {}", metrics_->url());
  }
}

observation::~observation() {
  metrics_.reset();
  if (!finished_) {
    caf::anon_send_exit(observer_, caf::exit_reason::user_shutdown);
    if (nvml_) nvml_->stop();
  }
}

std::function<void(const purge_event&)> observation::purge_hook() const {
  // Called right after the purge returns, so its end is "now" on the run's
  // clock and its start that minus its duration.
  return [who = observer_, clock = clock_](const purge_event& e) {
    double end = clock.now_ms();
    caf::anon_send(who, purged_atom::value,
                   purge_record{end - e.ms, end, e.arena, e.bytes, e.thread});
  };
}

void observation::attach(const observer_wiring& wiring) {
  caf::anon_send(observer_, attach_atom::value, wiring);
}

std::string observation::metrics_url() const { return metrics_ ? metrics_->url() : ""; }

void observation::finish(run_record& rec) {
  if (finished_) return;
  finished_ = true;
  metrics_.reset();  // no scrape may ask the observer once it stops
  caf::scoped_actor self{sys_};
  self->request(observer_, std::chrono::seconds(10), collect_atom::value)
      .receive(
          [&](observed_samples& s) {
            rec.queues = std::move(s.queues);
            rec.purges = std::move(s.purges);
          },
          [&](caf::error& e) { spdlog::warn("observer: {}", sys_.render(e)); });
  if (nvml_) {
    nvml_->stop();
    rec.nvml_available = nvml_->available();
    rec.nvml_why = nvml_->why();
    rec.nvml_period_ms = static_cast<double>(nvml_->period().count());
    rec.nvml_devices = nvml_->devices();
    rec.nvml_samples = nvml_->samples();
  } else {
    rec.nvml_available = false;
    rec.nvml_why = "no CUDA backend in this run";
  }
}

std::optional<std::string> scrape(caf::actor_system& sys, const observer_actor& who,
                                  std::chrono::milliseconds timeout) {
  std::optional<std::string> body;
  caf::scoped_actor self{sys};
  self->request(who, timeout, snapshot_atom::value)
      .receive([&](metrics_snapshot& m) { body = prometheus_text(m); }, [&](caf::error&) {});
  return body;
}

}  // namespace proofline::observe
