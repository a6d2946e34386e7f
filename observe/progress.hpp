// The live progress line `proofline run` shows on a terminal:
//
//   12/32 partitions  GPU busy 97.3%  queue: 2 ready, 1 waiting to start  ETA 3.2 s
//
// "waiting to start" counts partitions the memory manager has not granted
// yet, for lack of memory or because synthesis is paced ahead of the
// prover; with the CPU backend the busy figure reads "CPU busy".
//
// rewritten in place on stderr a few times a second, erased when the run
// ends. Only on a TTY, never with --quiet or --json: scripts read the summary,
// the report or the JSON instead.
//
//   progress_state    what the line shows
//   progress_line     the text (pure, tested)
//   eta_ms            remaining time at the rate partitions finish
//   progress_display  rewrites the line on a terminal stream; a no-op elsewhere
//   progress_aware_sink   a log sink that erases the line before each log line
#pragma once

#include <spdlog/sinks/sink.h>

#include <cstdint>
#include <cstdio>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

namespace proofline::observe {

/// What the progress line shows.
struct progress_state {
  uint64_t done = 0;    ///< partitions proved and written
  uint64_t failed = 0;  ///< partitions failed (or cancelled)
  uint64_t total = 0;   ///< partitions submitted
  double elapsed_ms = 0;
  std::optional<double> busy_fraction;  ///< GPU busy so far (device spans); none before any
  uint64_t ready = 0;                   ///< partitions ready, waiting for a GPU worker
  uint64_t waiting_memory = 0;  ///< partitions not yet granted: memory, or synthesis pacing
  bool gpu = true;              ///< false: the CPU backend proves, and the line says so
  /// The time left at the rate partitions finish since the first one
  /// (base::finish_rate), once there is such a rate.
  std::optional<double> eta_at_rate_ms;
};

/// Remaining time: eta_at_rate_ms when there is one, so that the start (key
/// load, the first synthesis, the pipeline filling) does not inflate it;
/// before that the elapsed time per finished partition. nullopt before the
/// first one finishes, 0 once all have.
std::optional<double> eta_ms(const progress_state& s);

/// The line, without a newline.
std::string progress_line(const progress_state& s);

/// Rewrites the progress line on `stream` when `enabled` and the stream is
/// a terminal; otherwise every call does nothing. Thread-safe: the observer
/// draws it while log lines (progress_aware_sink) erase it.
class progress_display {
 public:
  progress_display(std::FILE* stream, bool enabled);
  ~progress_display();
  progress_display(const progress_display&) = delete;
  progress_display& operator=(const progress_display&) = delete;

  bool active() const { return active_; }
  /// Replaces the line (cut to the terminal's width so it never wraps).
  void update(const progress_state& s);
  /// Erases the line; update() draws it again.
  void clear();

 private:
  void erase();  // with mutex_ held

  std::FILE* stream_;
  bool active_;
  std::mutex mutex_;  // guards shown_ and the stream's line
  bool shown_ = false;
};

/// A log sink that erases the progress line before each log line, so the
/// two never mix on one terminal line; the next update draws it again.
std::shared_ptr<spdlog::sinks::sink> progress_aware_sink(std::shared_ptr<spdlog::sinks::sink> inner,
                                                         std::shared_ptr<progress_display> display);

}  // namespace proofline::observe
