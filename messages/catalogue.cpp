#include "messages/catalogue.hpp"
#include "messages/interfaces.hpp"

#include <caf/actor_system_config.hpp>

#include <filesystem>

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

std::string job_context::proof_name(uint32_t index) const {
  return spec.single ? std::string("proof.json") : "proof_" + std::to_string(index) + ".json";
}

std::string job_context::public_name(uint32_t index) const {
  return spec.single ? std::string("public.json") : "public_" + std::to_string(index) + ".json";
}

std::string job_context::out_path(const std::string& name) const {
  return (std::filesystem::path(spec.out) / name).string();
}

void register_message_types(caf::actor_system_config& cfg) {
  cfg.add_message_type<span_ms>("proofline::span_ms");
  cfg.add_message_type<named_span>("proofline::named_span");
  cfg.add_message_type<partition_spans>("proofline::partition_spans");
  cfg.add_message_type<file_error>("proofline::file_error");
  cfg.add_message_type<job_spec>("proofline::job_spec");
  cfg.add_message_type<partition_done>("proofline::partition_done");
  cfg.add_message_type<partition_failure>("proofline::partition_failure");
  cfg.add_message_type<job_status>("proofline::job_status");
  cfg.add_message_type<partition_report>("proofline::partition_report");
  cfg.add_message_type<job_report>("proofline::job_report");
  cfg.add_message_type<memory_stats>("proofline::memory_stats");
  cfg.add_message_type<scheduler_stats>("proofline::scheduler_stats");
  // remote control and clusters
  cfg.add_message_type<inline_witness>("proofline::inline_witness");
  cfg.add_message_type<job_submission>("proofline::job_submission");
  cfg.add_message_type<submitted_job>("proofline::submitted_job");
  cfg.add_message_type<watch_cursor>("proofline::watch_cursor");
  cfg.add_message_type<job_progress>("proofline::job_progress");
  cfg.add_message_type<node_info>("proofline::node_info");
  cfg.add_message_type<remote_partition>("proofline::remote_partition");
  cfg.add_message_type<partition_result>("proofline::partition_result");
  cfg.add_message_type<node_metrics>("proofline::node_metrics");
  cfg.add_message_type<warm_key>("proofline::warm_key");
  cfg.add_message_type<cluster_metrics>("proofline::cluster_metrics");
  cfg.add_message_type<node_actor>("proofline::node_actor");
}

}  // namespace proofline
