#include "base/interrupt.hpp"

#include <cerrno>
#include <csignal>
#include <stdexcept>

#include <fcntl.h>
#include <unistd.h>

namespace proofline::base {

namespace {

// One watch at a time per process: the handler needs the pipe's write end in
// a place it can reach without locks.
int pipe_fds[2] = {-1, -1};
struct sigaction previous_int, previous_term;

constexpr char stop_byte = 0;  // written by the destructor: the watcher ends

/// Set by start() when the second signal goes to the watcher too.
volatile std::sig_atomic_t watch_second = 0;

void on_signal_handler(int signo) {
  int saved = errno;
  char b = static_cast<char>(signo);
  [[maybe_unused]] auto n = ::write(pipe_fds[1], &b, 1);
  if (!watch_second) {
    // The next signal of either kind ends the process the default way.
    std::signal(SIGINT, SIG_DFL);
    std::signal(SIGTERM, SIG_DFL);
  }
  errno = saved;
}

}  // namespace

interrupt_watch::interrupt_watch() {
  if (pipe_fds[0] >= 0) throw std::logic_error("interrupt_watch: one at a time");
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) throw std::runtime_error("interrupt_watch: pipe failed");
  struct sigaction sa {};
  sa.sa_handler = on_signal_handler;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  sigaction(SIGINT, &sa, &previous_int);
  sigaction(SIGTERM, &sa, &previous_term);
}

interrupt_watch::~interrupt_watch() {
  watch_second = 0;
  sigaction(SIGINT, &previous_int, nullptr);
  sigaction(SIGTERM, &previous_term, nullptr);
  char b = stop_byte;
  [[maybe_unused]] auto n = ::write(pipe_fds[1], &b, 1);
  if (watcher_.joinable()) watcher_.join();
  ::close(pipe_fds[0]);
  ::close(pipe_fds[1]);
  pipe_fds[0] = pipe_fds[1] = -1;
}

void interrupt_watch::start(std::function<void(int)> on_signal,
                            std::function<void(int)> on_second) {
  watch_second = on_second ? 1 : 0;
  watcher_ = std::thread([this, on_signal = std::move(on_signal),
                          on_second = std::move(on_second)] {
    for (;;) {
      char b = 0;
      auto n = ::read(pipe_fds[0], &b, 1);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0 || b == stop_byte) return;
      int expected = 0;
      if (signal_.compare_exchange_strong(expected, static_cast<int>(b), std::memory_order_acq_rel)) {
        on_signal(static_cast<int>(b));
      } else if (on_second) {
        // Any signal after this one ends the process the default way.
        std::signal(SIGINT, SIG_DFL);
        std::signal(SIGTERM, SIG_DFL);
        on_second(static_cast<int>(b));
        return;
      }
    }
  });
}

}  // namespace proofline::base
