#include "messages/catalogue.hpp"
#include "messages/interfaces.hpp"

#include <caf/actor_system_config.hpp>

namespace proofline {

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
