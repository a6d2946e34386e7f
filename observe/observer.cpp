#include "observe/observer.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <caf/event_based_actor.hpp>
#include <caf/exit_reason.hpp>
#include <caf/scoped_actor.hpp>
#include <caf/send.hpp>

#include "observe/trace.hpp"

namespace proofline::observe {

namespace {

/// Replies later than this are dropped (the next sample asks again); long
/// enough for a memory manager busy with a purge of a large arena.
constexpr std::chrono::seconds reply_timeout{5};

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

observer_actor::behavior_type observer(observer_pointer self, observer_config cfg) {
  self->state.cfg = std::move(cfg);
  return {
      [=](attach_atom, const observer_wiring& w) {
        bool first = !self->state.wiring;
        self->state.wiring = w;
        if (first) self->send(self, sample_atom::value);
      },
      [=](sample_atom) {
        if (self->state.stopped || !self->state.wiring) return;
        take_sample(self);
        self->delayed_send(self, self->state.cfg.period, sample_atom::value);
      },
      [=](purged_atom, const purge_record& p) {
        if (self->state.cfg.keep_samples) self->state.samples.purges.push_back(p);
      },
      [=](snapshot_atom) { return make_snapshot(self); },
      [=](collect_atom) {
        auto& st = self->state;
        st.stopped = true;
        if (st.cfg.progress) st.cfg.progress->clear();
        observed_samples out = std::move(st.samples);
        std::sort(
            out.purges.begin(), out.purges.end(),
            [](const purge_record& a, const purge_record& b) { return a.start_ms < b.start_ms; });
        self->quit();
        return out;
      },
  };
}

void take_sample(observer_pointer self) {
  auto& st = self->state;
  const auto& cfg = st.cfg;
  const auto& w = *st.wiring;
  // Record the queues as the latest answers left them, then ask again.
  if (cfg.keep_samples) {
    queue_sample q;
    q.t_ms = cfg.clock.now_ms();
    q.ready = st.queue.ready;
    q.waiting_memory = st.have_memory ? st.memory.queued : 0;
    q.reserved = st.have_memory ? st.memory.reserved : 0;
    q.rss = st.have_memory ? st.memory.rss : 0;
    st.samples.queues.push_back(q);
  }
  draw_progress(self);

  self->request(w.scheduler, reply_timeout, stats_atom::value)
      .then([=](const scheduler_stats& s) { self->state.queue = s; }, [](caf::error&) {});
  self->request(w.memory, reply_timeout, stats_atom::value)
      .then(
          [=](const memory_stats& m) {
            self->state.memory = m;
            self->state.have_memory = true;
          },
          [](caf::error&) {});
  self->request(w.registry, reply_timeout, status_atom::value)
      .then(
          [=](const std::vector<job_status>& jobs) {
            auto& s = self->state;
            s.jobs = jobs;
            for (const auto& j : jobs)
              if (!s.complete.count(j.seq)) s.cursors.emplace(j.seq, 0);
          },
          [](caf::error&) {});
  if (st.watching || st.cursors.empty()) return;
  std::vector<watch_cursor> cursors;
  for (const auto& [seq, seen] : st.cursors) cursors.push_back({seq, seen});
  st.watching = true;
  self->request(w.registry, reply_timeout, watch_atom::value, cursors)
      .then(
          [=](const std::vector<job_progress>& news) {
            self->state.watching = false;
            on_progress(self, news);
          },
          [=](caf::error&) { self->state.watching = false; });
}

void on_progress(observer_pointer self, const std::vector<job_progress>& news) {
  auto& st = self->state;
  const double now = st.cfg.clock.now_ms();
  for (const auto& p : news) {
    for (const auto& part : p.finished) {
      const auto& s = part.spans;
      // When it finished: its proof's last step, else (failed or cancelled
      // before it) when the news came.
      st.rate.observe(s.finalize.recorded() ? std::min(s.finalize.end, now) : now, ++st.finishes);
      if (part.state == partition_state::done && s.synthesize.recorded() &&
          s.finalize.end >= s.synthesize.start)
        st.durations.add((s.finalize.end - s.synthesize.start) / 1000.0);
      if (s.gpu >= 0) {
        ++st.proved[s.gpu];
        auto& tracker = st.busy[s.gpu];
        for (const auto& d : s.device) tracker.add(d.start, d.end);
      }
    }
    if (p.complete) {
      st.complete.insert(p.status.seq);
      st.cursors.erase(p.status.seq);
    } else if (auto it = st.cursors.find(p.status.seq); it != st.cursors.end()) {
      it->second = p.seen;
    }
  }
  for (auto& [device, tracker] : st.busy) tracker.flush();
}

metrics_snapshot make_snapshot(observer_pointer self) {
  const auto& st = self->state;
  metrics_snapshot m;
  for (const auto& j : st.jobs) {
    m.partitions_done += j.done;
    m.partitions_failed += j.failed;
    ++m.jobs[to_string(j.state)];
  }
  m.proof_duration = st.durations;
  m.ready = st.queue.ready;
  m.waiting_memory = st.have_memory ? st.memory.queued : 0;
  if (st.have_memory) m.memory = st.memory;

  std::vector<gpu::nvml_sample> latest;
  std::vector<gpu::nvml_device> nvml_devices;
  if (st.cfg.nvml && st.cfg.nvml->available()) {
    latest = st.cfg.nvml->latest();
    nvml_devices = st.cfg.nvml->devices();
  }
  int devices = static_cast<int>(st.cfg.backends.size());
  for (const auto& [device, tracker] : st.busy) devices = std::max(devices, device + 1);
  for (int d = 0; d < devices; ++d) {
    gpu_metrics g;
    g.device = d;
    int cuda = -1;
    if (static_cast<size_t>(d) < st.cfg.backends.size()) {
      g.name = st.cfg.backends[d].description;
      cuda = st.cfg.backends[d].cuda_device;
    }
    if (auto it = st.busy.find(d); it != st.busy.end()) {
      g.busy_s = it->second.busy_ms() / 1000.0;
      g.window_s = it->second.window_ms() / 1000.0;
    }
    if (auto it = st.proved.find(d); it != st.proved.end()) g.partitions = it->second;
    if (cuda >= 0)
      if (auto idx = gpu::nvml_index_of_cuda_device(cuda, nvml_devices))
        for (const auto& s : latest)
          if (s.device == *idx) g.nvml_ratio = s.gpu_percent / 100.0;
    m.gpus.push_back(std::move(g));
  }
  return m;
}

void draw_progress(observer_pointer self) {
  const auto& st = self->state;
  if (!st.cfg.progress || !st.cfg.progress->active()) return;
  progress_state p;
  for (const auto& j : st.jobs) {
    p.done += j.done;
    p.failed += j.failed;
    p.total += j.total;
  }
  if (p.total == 0) return;  // no job known yet
  p.elapsed_ms = st.cfg.clock.now_ms();
  p.eta_at_rate_ms = st.rate.eta_ms(p.elapsed_ms, p.total);
  double busy = 0, window = 0;
  for (const auto& [device, tracker] : st.busy) {
    busy += tracker.busy_ms();
    window += tracker.window_ms();
  }
  if (window > 0) p.busy_fraction = busy / window;  // over all devices' windows
  p.ready = st.queue.ready;
  p.waiting_memory = st.have_memory ? st.memory.queued : 0;
  p.gpu = std::any_of(st.cfg.backends.begin(), st.cfg.backends.end(),
                      [](const backend_record& b) { return b.kind != "cpu"; });
  st.cfg.progress->update(p);
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
  observer_ = sys_.spawn(observer, std::move(cfg));
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
