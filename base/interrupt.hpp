// SIGINT and SIGTERM as a call on a thread of the program's own: the signal
// handler only writes the signal number into a pipe (async-signal-safe); a
// watcher thread reads it and calls a function that turns it into messages
// (`proofline run`: cancel requests to the job registry). No actor blocks on
// the signal and none sees it directly. A second signal of either kind,
// after the first, gets the default action (the process ends at once;
// outputs are written atomically, so none is left half-written).
#pragma once

#include <atomic>
#include <functional>
#include <thread>

namespace proofline::base {

class interrupt_watch {
 public:
  /// Installs the handlers for SIGINT and SIGTERM. Signals that arrive
  /// before start() wait in the pipe.
  interrupt_watch();
  /// Stops the watcher and restores the previous handlers.
  ~interrupt_watch();
  interrupt_watch(const interrupt_watch&) = delete;
  interrupt_watch& operator=(const interrupt_watch&) = delete;

  /// Starts the watcher thread: `on_signal(signo)` runs on it for the first
  /// signal (at once if one arrived already), never more than once;
  /// `on_second(signo)`, when given, for the second (else that signal gets
  /// the default action).
  void start(std::function<void(int)> on_signal, std::function<void(int)> on_second = {});

  /// The first signal received (SIGINT or SIGTERM), or 0.
  int signal() const { return signal_.load(std::memory_order_acquire); }

 private:
  std::atomic<int> signal_{0};
  std::thread watcher_;
};

}  // namespace proofline::base
