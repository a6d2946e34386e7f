#include "base/thread_pool.hpp"

#include <doctest/doctest.h>

#include <atomic>
#include <stdexcept>
#include <vector>

using proofline::base::thread_pool;

TEST_CASE("thread pool runs every index exactly once") {
  thread_pool pool(4);
  CHECK(pool.size() == 4);
  for (std::size_t n : {0u, 1u, 2u, 3u, 17u, 1000u}) {
    std::vector<std::atomic<int>> hits(n);
    pool.for_each(n, [&](std::size_t i) { hits[i].fetch_add(1); });
    for (std::size_t i = 0; i < n; ++i) CHECK(hits[i].load() == 1);
  }
}

TEST_CASE("thread pool ranges cover [0, n) without overlap") {
  thread_pool pool(3);
  for (std::size_t n : {1u, 5u, 4096u, 100003u}) {
    std::vector<std::atomic<int>> hits(n);
    pool.for_range(n, 64, [&](std::size_t b, std::size_t e) {
      for (std::size_t i = b; i < e; ++i) hits[i].fetch_add(1);
    });
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < n; ++i) wrong += hits[i].load() != 1;
    CHECK(wrong == 0);
  }
}

TEST_CASE("thread pool allows nested parallel loops") {
  thread_pool pool(2);
  std::atomic<long> sum{0};
  pool.for_each(8, [&](std::size_t i) {
    pool.for_each(100, [&](std::size_t j) { sum.fetch_add(long(i * 100 + j)); });
  });
  CHECK(sum.load() == 799 * 800 / 2);
}

TEST_CASE("thread pool rethrows an exception from a task to the caller") {
  thread_pool pool(2);
  std::atomic<int> ran{0};
  CHECK_THROWS_WITH_AS(pool.for_each(50,
                                     [&](std::size_t i) {
                                       ran.fetch_add(1);
                                       if (i == 7) throw std::runtime_error("task 7 failed");
                                     }),
                       "task 7 failed", std::runtime_error);
  // The pool still works afterwards.
  std::atomic<int> after{0};
  pool.for_each(10, [&](std::size_t) { after.fetch_add(1); });
  CHECK(after.load() == 10);
}
