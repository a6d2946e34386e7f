// Jobs on a few threads, for host code that works on large arrays (key
// loading, synthesis). Threads are started per call and joined before it
// returns: the callers run for milliseconds to seconds, so starting a thread
// (tens of microseconds) is noise, and no pool outlives the call.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <exception>
#include <functional>
#include <system_error>
#include <thread>
#include <vector>

namespace proofline::zk {

/// Runs every job once, on up to `threads` threads (the calling thread
/// included), each thread taking the next job not yet started. Rethrows the
/// exception of the earliest job (in list order) that threw. Without threads
/// to spare (std::system_error), fewer threads take the same jobs.
inline void run_jobs(const std::vector<std::function<void()>>& jobs, unsigned threads) {
  if (jobs.empty()) return;
  std::vector<std::exception_ptr> error(jobs.size());
  std::atomic<std::size_t> next{0};
  auto worker = [&] {
    for (std::size_t j; (j = next.fetch_add(1)) < jobs.size();) {
      try {
        jobs[j]();
      } catch (...) {
        error[j] = std::current_exception();
      }
    }
  };
  std::vector<std::thread> pool;
  const std::size_t extra = std::min<std::size_t>(std::max(1u, threads), jobs.size()) - 1;
  try {
    for (std::size_t t = 0; t < extra; ++t) pool.emplace_back(worker);
  } catch (const std::system_error&) {
  }
  worker();
  for (auto& t : pool) t.join();
  for (auto& e : error)
    if (e) std::rethrow_exception(e);
}

/// Splits [0, n) into at most `threads` contiguous chunks of at least
/// `min_chunk` items and runs body(begin, end) on each (one on the calling
/// thread); with one chunk, body(0, n) runs here alone.
template <class F>
void parallel_chunks(std::size_t n, unsigned threads, std::size_t min_chunk, F&& body) {
  const std::size_t chunks = std::min<std::size_t>(
      std::max(1u, threads), std::max<std::size_t>(1, n / std::max<std::size_t>(1, min_chunk)));
  if (chunks <= 1) {
    body(std::size_t(0), n);
    return;
  }
  std::vector<std::function<void()>> jobs;
  for (std::size_t k = 0; k < chunks; ++k)
    jobs.push_back([&body, b = n * k / chunks, e = n * (k + 1) / chunks] { body(b, e); });
  run_jobs(jobs, static_cast<unsigned>(chunks));
}

}  // namespace proofline::zk
