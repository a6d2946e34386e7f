#include "base/thread_pool.hpp"

#include <algorithm>

#include "base/parallel.hpp"

namespace proofline::base {

/// One for_each call: the indices still to claim and those still running.
struct thread_pool::batch {
  const std::function<void(std::size_t)>* f;
  std::size_t n;
  std::atomic<std::size_t> next{0};
  std::atomic<std::size_t> done{0};
  std::mutex mutex;  // guards error and the completion wait
  std::condition_variable finished;
  std::exception_ptr error;
};

thread_pool::thread_pool(unsigned threads) {
  if (threads == 0) threads = base::hardware_threads();
  workers_.reserve(threads - 1);
  for (unsigned i = 1; i < threads; ++i) workers_.emplace_back([this] { worker_loop(); });
}

thread_pool::~thread_pool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  for (auto& t : workers_) t.join();
}

void thread_pool::run(batch& b) {
  for (;;) {
    std::size_t i = b.next.fetch_add(1, std::memory_order_relaxed);
    if (i >= b.n) return;
    try {
      (*b.f)(i);
    } catch (...) {
      std::lock_guard<std::mutex> lock(b.mutex);
      if (!b.error) b.error = std::current_exception();
      // Skip what nobody has claimed yet; count the skipped indices as done.
      std::size_t claimed = b.next.exchange(b.n);
      if (claimed < b.n) b.done.fetch_add(b.n - claimed, std::memory_order_acq_rel);
    }
    if (b.done.fetch_add(1, std::memory_order_acq_rel) + 1 == b.n) {
      std::lock_guard<std::mutex> lock(b.mutex);
      b.finished.notify_all();
    }
  }
}

void thread_pool::worker_loop() {
  for (;;) {
    std::shared_ptr<batch> b;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping and nothing left
      b = std::move(queue_.front());
      queue_.pop_front();
    }
    run(*b);
  }
}

void thread_pool::for_each(std::size_t n, const std::function<void(std::size_t)>& f) {
  if (n == 0) return;
  if (n == 1 || workers_.empty()) {
    for (std::size_t i = 0; i < n; ++i) f(i);
    return;
  }
  auto b = std::make_shared<batch>();
  b->f = &f;
  b->n = n;
  // Each queued entry lets one worker join this batch; a worker that finds the
  // batch drained returns at once.
  std::size_t helpers = std::min<std::size_t>(workers_.size(), n - 1);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (std::size_t i = 0; i < helpers; ++i) queue_.push_back(b);
  }
  if (helpers == 1)
    wake_.notify_one();
  else
    wake_.notify_all();
  run(*b);
  {
    std::unique_lock<std::mutex> lock(b->mutex);
    b->finished.wait(lock, [&] { return b->done.load(std::memory_order_acquire) >= b->n; });
  }
  if (b->error) std::rethrow_exception(b->error);
}

void thread_pool::for_range(std::size_t n, std::size_t grain,
                            const std::function<void(std::size_t, std::size_t)>& f) {
  if (n == 0) return;
  grain = std::max<std::size_t>(grain, 1);
  std::size_t parts = std::max<std::size_t>(1, std::min<std::size_t>(size() * 4, n / grain));
  std::size_t step = (n + parts - 1) / parts;
  parts = (n + step - 1) / step;
  for_each(parts, [&](std::size_t k) { f(k * step, std::min(n, (k + 1) * step)); });
}

}  // namespace proofline::base
