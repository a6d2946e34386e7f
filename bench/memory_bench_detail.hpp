// What the parts of `proofline bench memory` share (bench/memory_bench.cpp,
// bench/memory_backlog.cpp): timing helpers and the backlog runs. Internal
// to bench/.
#pragma once

#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

#include "bench/memory_bench.hpp"

namespace proofline::bench::memory_detail {

using clock_type = std::chrono::steady_clock;

template <class F>
inline double time_ms(F&& f) {
  auto t0 = clock_type::now();
  f();
  return std::chrono::duration<double, std::milli>(clock_type::now() - t0).count();
}

inline double ms_between(clock_type::time_point a, clock_type::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

/// The value at quantile q of sorted values (nearest rank).
inline double quantile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  auto rank = static_cast<std::size_t>(q * double(v.size() - 1) + 0.5);
  return v[std::min(rank, v.size() - 1)];
}

/// One backlog through the real pipeline on synthetic keys and partitions:
/// `mode` purge (arenas purged by message) or trim (the locked baseline's
/// malloc_trim), with or without uploads.
backlog_figures run_backlog(const memory_bench_options& o, const std::string& mode, bool upload);

}  // namespace proofline::bench::memory_detail
