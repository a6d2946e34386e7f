#include "base/parallel.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <functional>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace base = proofline::base;

TEST_CASE("run_jobs runs every job exactly once, on several threads") {
  for (unsigned threads : {0u, 1u, 3u, 16u}) {
    std::vector<std::atomic<int>> hits(50);
    std::mutex mutex;
    std::set<std::thread::id> ids;
    std::vector<std::function<void()>> jobs;
    for (std::size_t j = 0; j < hits.size(); ++j)
      jobs.push_back([&, j] {
        hits[j].fetch_add(1);
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
        std::lock_guard<std::mutex> lock(mutex);
        ids.insert(std::this_thread::get_id());
      });
    base::run_jobs(jobs, threads);
    for (auto& h : hits) CHECK(h.load() == 1);
    CHECK(ids.size() <= std::max(1u, threads));
    if (threads <= 1) CHECK(ids.count(std::this_thread::get_id()) == 1);
    if (threads >= 3) CHECK(ids.size() > 1);
  }
  base::run_jobs({}, 4);  // nothing to do, returns
}

TEST_CASE("run_jobs rethrows the earliest failed job's exception after all ran") {
  std::atomic<int> ran{0};
  std::vector<std::function<void()>> jobs;
  for (int j = 0; j < 20; ++j)
    jobs.push_back([&, j] {
      ran.fetch_add(1);
      if (j == 7 || j == 13) throw std::runtime_error("job " + std::to_string(j));
    });
  std::string what;
  try {
    base::run_jobs(jobs, 4);
  } catch (const std::runtime_error& e) {
    what = e.what();
  }
  CHECK(what == "job 7");
  CHECK(ran.load() == 20);
}

TEST_CASE("parallel_chunks covers [0, n) once, in chunks no smaller than asked") {
  for (std::size_t n : {0u, 1u, 99u, 100u, 10007u}) {
    std::vector<std::atomic<int>> hits(n);
    std::atomic<std::size_t> chunks{0}, smallest{n};
    base::parallel_chunks(n, 8, 100, [&](std::size_t b, std::size_t e) {
      chunks.fetch_add(1);
      for (std::size_t s = smallest.load(); e - b < s && !smallest.compare_exchange_weak(s, e - b);) {
      }
      for (std::size_t i = b; i < e; ++i) hits[i].fetch_add(1);
    });
    std::size_t wrong = 0;
    for (auto& h : hits) wrong += h.load() != 1;
    CHECK(wrong == 0);
    CHECK(chunks.load() == (n < 200 ? 1u : std::min<std::size_t>(8, n / 100)));
    if (chunks.load() > 1) CHECK(smallest.load() >= 100);
  }
}

TEST_CASE("hardware_threads is at least one") { CHECK(base::hardware_threads() >= 1); }
