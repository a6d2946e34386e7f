#include "lib/outcome.hpp"

namespace proofline::lib {

proof_outcome failed_outcome(status code, std::string message) {
  proof_outcome o;
  o.code = code;
  o.message = std::move(message);
  return o;
}

proof_outcome outcome_of(const job_report& report, const std::string& witness,
                         const std::string& generator) {
  proof_outcome o;
  const partition_report* part = report.partitions.empty() ? nullptr : &report.partitions.front();
  if (part) o.backend = part->spans.backend;
  if (report.state == job_state::done && part && part->state == partition_state::done) {
    o.proof_json = part->proof_json;
    o.public_json = part->public_json;
    o.verified = part->verified;
    return o;
  }
  if (report.state == job_state::cancelled) {
    o.code = status::cancelled;
    o.message = "cancelled: the handle was closed before the proof finished";
    return o;
  }
  const bool input = report.has_error && (report.error.file == witness ||
                                          (!generator.empty() && report.error.file == generator));
  o.code = input ? status::input : status::prove;
  o.message = report.has_error ? report.error.message
                               : std::string("the job ended ") + to_string(report.state);
  return o;
}

}  // namespace proofline::lib
