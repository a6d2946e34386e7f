#include "messages/values.hpp"

namespace proofline {

const char* to_string(priority p) {
  switch (p) {
    case priority::low:
      return "low";
    case priority::normal:
      return "normal";
    case priority::high:
      return "high";
    case priority::critical:
      return "critical";
  }
  return "normal";
}

std::optional<priority> parse_priority(std::string_view s) {
  for (auto p : {priority::low, priority::normal, priority::high, priority::critical})
    if (s == to_string(p)) return p;
  return std::nullopt;
}

const char* to_string(job_state s) {
  switch (s) {
    case job_state::queued:
      return "queued";
    case job_state::synthesizing:
      return "synthesizing";
    case job_state::proving:
      return "proving";
    case job_state::done:
      return "done";
    case job_state::failed:
      return "failed";
    case job_state::cancelled:
      return "cancelled";
  }
  return "queued";
}

const char* to_string(partition_state s) {
  switch (s) {
    case partition_state::queued:
      return "queued";
    case partition_state::synthesizing:
      return "synthesizing";
    case partition_state::proving:
      return "proving";
    case partition_state::done:
      return "done";
    case partition_state::failed:
      return "failed";
    case partition_state::cancelled:
      return "cancelled";
  }
  return "queued";
}

}  // namespace proofline
