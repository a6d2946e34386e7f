// Host parallelism without a pool: jobs on a few threads started for one call
// and joined before it returns. For host code that works on large arrays
// (key loading, witness reading, synthesis): the callers run for milliseconds
// to seconds, so starting a thread costs nothing worth a pool that outlives
// the call. Work that repeats many short batches (the CPU backend's NTTs and
// MSMs) uses base::thread_pool (base/thread_pool.hpp) instead.
#pragma once

#include <algorithm>
#include <cstddef>
#include <functional>
#include <vector>

namespace proofline::base {

/// The threads this machine runs at once: std::thread::hardware_concurrency(),
/// or 1 where that is unknown.
unsigned hardware_threads() noexcept;

/// Runs every job once, on up to `threads` threads (the calling thread
/// included), each thread taking the next job not yet started. Rethrows the
/// exception of the earliest job (in list order) that threw. Without threads
/// to spare (std::system_error), fewer threads take the same jobs.
void run_jobs(const std::vector<std::function<void()>>& jobs, unsigned threads);

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
  jobs.reserve(chunks);
  for (std::size_t k = 0; k < chunks; ++k)
    jobs.push_back([&body, b = n * k / chunks, e = n * (k + 1) / chunks] { body(b, e); });
  run_jobs(jobs, static_cast<unsigned>(chunks));
}

}  // namespace proofline::base
