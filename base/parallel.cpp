#include "base/parallel.hpp"

#include <atomic>
#include <exception>
#include <system_error>
#include <thread>

namespace proofline::base {

unsigned hardware_threads() noexcept { return std::max(1u, std::thread::hardware_concurrency()); }

void run_jobs(const std::vector<std::function<void()>>& jobs, unsigned threads) {
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
    // No thread to spare: those started and this one take every job.
  }
  worker();
  for (auto& t : pool) t.join();
  for (auto& e : error)
    if (e) std::rethrow_exception(e);
}

}  // namespace proofline::base
