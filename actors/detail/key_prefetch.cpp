#include "actors/detail/key_prefetch.hpp"

#include <algorithm>
#include <set>

namespace proofline {

std::vector<std::string> keys_to_prefetch(const std::vector<std::pair<int, std::string>>& jobs,
                                          std::size_t limit) {
  std::vector<std::size_t> order(jobs.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return jobs[a].first > jobs[b].first; });
  std::vector<std::string> keys;
  std::set<std::string> seen;
  for (std::size_t i : order) {
    if (keys.size() >= limit) break;
    if (seen.insert(jobs[i].second).second) keys.push_back(jobs[i].second);
  }
  return keys;
}

}  // namespace proofline
