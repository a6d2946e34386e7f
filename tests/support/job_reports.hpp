// Job reports as the registry hands them out, built by hand for the tests of
// what reads them (tests/observe: the summary, the HTML page).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "messages/catalogue.hpp"

namespace proofline::test {

/// Job `id`, written to "out/<id>", in `state`, with one partition per entry
/// of `partitions` in that state, from submission to completion `total`.
inline job_report job_with(std::string id, job_state state,
                           const std::vector<partition_state>& partitions, span_ms total = {}) {
  job_report j;
  j.out = "out/" + id;
  j.id = std::move(id);
  j.state = state;
  j.partitions.resize(partitions.size());
  for (size_t i = 0; i < partitions.size(); ++i) j.partitions[i].state = partitions[i];
  j.total = total;
  return j;
}

/// A failed job whose first failed partition read `file` and found
/// `message`.
inline job_report failed_job(std::string id, const std::vector<partition_state>& partitions,
                             std::string file, std::string message, span_ms total = {}) {
  job_report j = job_with(std::move(id), job_state::failed, partitions, total);
  j.has_error = true;
  j.error = {std::move(file), std::move(message)};
  return j;
}

}  // namespace proofline::test
