// observer: the app's view of a running pipeline, for the progress line, the
// metrics endpoint and the run report's queue samples and purges.
//
// Problem: reports need figures over time (queue depths, GPU busy so far)
// that no pipeline actor keeps, and the pipeline must not slow down or lock
// for them.
//
// Design: an event-based actor that every `period` (100 ms: 10 Hz) asks, by
// message, the scheduler for its ready partitions, the memory manager for its
// statistics and the job registry for job states and newly finished
// partitions (watch with no wait), and records a queue sample from the
// latest answers. Replies arrive as messages; nothing here waits. Finished
// partitions feed the per-device busy time (union of device spans, settled
// after a minute so memory stays bounded in a long `serve`) and the proof
// duration histogram. Purges come from the memory manager's observer hook
// (runtime_config::on_purge) as messages. It answers snapshot (the metrics
// endpoint's figures) at any time and collect (every sample; it then erases
// the progress line and stops).
//
//   busy_tracker      union of device spans so far, in bounded memory
//   observer_config   how often, what to draw; observer_wiring: whom to ask
//   observer_actor    attach, sample (timer), purge, snapshot, collect
//   observation       RAII owner of the observer, NVML sampler, progress
//                     line and metrics endpoint of one command
#pragma once

#include <caf/allowed_unsafe_message_type.hpp>
#include <caf/actor_system.hpp>
#include <caf/atom.hpp>
#include <caf/typed_actor.hpp>
#include <atomic>
#include <chrono>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include "actors/memory_manager.hpp"
#include "actors/detail/run_clock.hpp"
#include "base/finish_rate.hpp"
#include "observe/metrics_http.hpp"
#include "observe/progress.hpp"
#include "observe/report.hpp"
#include "gpu/nvml.hpp"
#include "messages/interfaces.hpp"

namespace proofline::observe {

/// The measure of the union of spans added so far. Spans ending more than
/// settle_ms before the newest end are folded into a total and forgotten
/// (a span arriving later than that only counts where it is newer), so
/// memory holds about a minute of spans however long the run.
class busy_tracker {
 public:
  static constexpr double settle_ms = 60'000;

  /// Adds [start, end), ms; cheap (merged at the next flush).
  void add(double start_ms, double end_ms);
  /// Merges what was added since the last flush. O(n log n) in those spans
  /// plus O(m) in the unsettled ones.
  void flush();
  /// Union measure so far (call flush first).
  double busy_ms() const;
  /// First span start to newest span end; 0 before any span.
  double window_ms() const { return last_ > first_ ? last_ - first_ : 0; }
  bool empty() const { return !(last_ > first_); }

 private:
  std::vector<std::pair<double, double>> pending_;
  std::vector<std::pair<double, double>> open_;  // sorted, disjoint
  double settled_ms_ = 0;
  double settled_until_ = -std::numeric_limits<double>::infinity();
  double first_ = std::numeric_limits<double>::infinity();
  double last_ = -std::numeric_limits<double>::infinity();
};

/// What collect returns: every queue sample and purge of the run so far.
struct observed_samples {
  std::vector<queue_sample> queues;
  std::vector<purge_record> purges;
};

// The observer's own atoms (CAF 0.17 atoms are compile-time constants and
// need no registration, so they live beside the one actor that handles them).
using sample_atom = caf::atom_constant<caf::atom("sample")>;      ///< take a sample (timer)
using snapshot_atom = caf::atom_constant<caf::atom("snapshot")>;  ///< -> the figures so far
using collect_atom = caf::atom_constant<caf::atom("collect")>;    ///< -> every sample taken
using purged_atom = caf::atom_constant<caf::atom("purged")>;      ///< the memory manager ran a purge

/// The pipeline actors an observer asks, sent once the runtime is up.
struct observer_wiring {
  job_registry_actor registry;
  memory_manager_actor memory;
  scheduler_actor scheduler;
};

struct observer_config {
  run_clock clock;
  std::chrono::milliseconds period{100};  ///< 10 Hz
  /// Names and CUDA ordinals per backend (partition_spans::gpu indexes it).
  std::vector<backend_record> backends;
  /// NVML's latest values for the metrics; null when not sampling.
  std::shared_ptr<const gpu::nvml_sampler> nvml;
  /// The terminal line, redrawn at each sample; null for none. Touched only
  /// by the observer once spawned (collect erases it).
  std::shared_ptr<progress_display> progress;
  /// Keep every sample for collect (run); false keeps none (serve: bounded).
  bool keep_samples = true;
};

using observer_actor = caf::typed_actor<
    /// The runtime is up: start sampling it.
    caf::reacts_to<attach_atom, observer_wiring>,
    /// Take a sample now and schedule the next (sent to itself).
    caf::reacts_to<sample_atom>,
    /// The memory manager ran a purge (from runtime_config::on_purge).
    caf::reacts_to<purged_atom, purge_record>,
    /// The figures for one metrics scrape.
    caf::replies_to<snapshot_atom>::with<metrics_snapshot>,
    /// Every sample taken; the observer then erases the progress line and quits.
    caf::replies_to<collect_atom>::with<observed_samples>>;

/// Spawns the observer (on the actor system's scheduler).
observer_actor spawn_observer(caf::actor_system& sys, observer_config cfg);

// ---------------------------------------------------------------- observation
// Everything a command observes, set up and torn down in one place: the
// observer actor, the NVML sampler, the progress line and the metrics
// endpoint. Lifecycle: construct (before the runtime, whose config takes
// purge_hook()), attach (once the runtime is up), finish (after the last job).

struct observation_options {
  bool progress = false;  ///< draw the progress line on stderr (if it is a terminal)
  bool nvml = false;      ///< sample NVML (a CUDA backend runs)
  std::optional<metrics_endpoint> metrics;  ///< serve metrics there
  std::chrono::milliseconds period{100};    ///< sampling period
  bool keep_samples = true;                 ///< false: a long-lived server
};

class observation {
 public:
  /// Spawns the observer, starts NVML sampling and the metrics endpoint (its
  /// scrapes answer with empty figures until attach). Throws
  /// std::runtime_error naming the address when the endpoint cannot bind.
  observation(caf::actor_system& sys, const run_clock& clock, std::vector<backend_record> backends,
              observation_options opts);
  /// Stops everything still running.
  ~observation();
  observation(const observation&) = delete;
  observation& operator=(const observation&) = delete;

  /// For runtime_config::on_purge: forwards each purge to the observer, on
  /// the run's clock. Runs on the memory manager's thread; sends only.
  std::function<void(const purge_event&)> purge_hook() const;
  /// Starts sampling the runtime's actors.
  void attach(const observer_wiring& wiring);
  /// The process is stopping (serve's drain): from now on /readyz answers
  /// 503; /metrics still answers with the figures.
  void stop_ready() { ready_->store(false); }
  /// "http://127.0.0.1:9100/metrics" while serving; empty otherwise.
  std::string metrics_url() const;
  /// Stops the endpoint, the observer and NVML; adds their samples to `rec`.
  void finish(run_record& rec);

 private:
  caf::actor_system& sys_;
  run_clock clock_;
  observation_options opts_;
  std::vector<backend_record> backends_;
  std::shared_ptr<gpu::nvml_sampler> nvml_;
  std::shared_ptr<progress_display> progress_;
  observer_actor observer_;
  std::unique_ptr<metrics_server> metrics_;
  std::shared_ptr<std::atomic<bool>> ready_ = std::make_shared<std::atomic<bool>>(true);
  bool finished_ = false;
};

/// One scrape's body: asks `who` for a snapshot (waits up to `timeout`) and
/// renders it; nullopt when no answer came.
std::optional<std::string> scrape(caf::actor_system& sys, const observer_actor& who,
                                  std::chrono::milliseconds timeout);

}  // namespace proofline::observe

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(proofline::observe::observer_wiring)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(proofline::observe::purge_record)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(proofline::observe::metrics_snapshot)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(proofline::observe::observed_samples)
