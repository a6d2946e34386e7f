// A small fork-join thread pool (parallel for), for the CPU backend's NTTs
// and MSMs and the development setup's fixed-base products.
//
// for_each(n, f) runs f(0) .. f(n-1) on the pool's workers and on the calling
// thread, and returns when all have finished. Tasks are claimed one index at
// a time from a shared counter, so uneven tasks balance themselves. Several
// threads may call for_each on one pool at once, and f may itself call
// for_each (the caller always works on its own batch, so nesting cannot
// deadlock). Exceptions thrown by f are rethrown to the caller (the first one;
// the remaining indices of that batch are skipped).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace proofline::base {

class thread_pool {
 public:
  /// A pool that runs work on `threads` threads in all: the caller of
  /// for_each plus threads - 1 workers. 0 means std::thread::hardware_concurrency().
  explicit thread_pool(unsigned threads = 0);
  ~thread_pool();
  thread_pool(const thread_pool&) = delete;
  thread_pool& operator=(const thread_pool&) = delete;

  /// Threads that share the work of one for_each, the caller included.
  unsigned size() const noexcept { return static_cast<unsigned>(workers_.size()) + 1; }

  /// Runs f(i) for i in [0, n) in parallel; blocks until every call returned.
  /// Cost: one queue push per worker plus an atomic increment per index.
  void for_each(std::size_t n, const std::function<void(std::size_t)>& f);

  /// Splits [0, n) into about `size() * 4` contiguous ranges of at least
  /// `grain` elements and runs f(begin, end) on each in parallel.
  void for_range(std::size_t n, std::size_t grain,
                 const std::function<void(std::size_t, std::size_t)>& f);

 private:
  struct batch;
  void worker_loop();
  static void run(batch& b);

  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::shared_ptr<batch>> queue_;
  bool stopping_ = false;
};

}  // namespace proofline::base
