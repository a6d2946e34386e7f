// The wire types of clients and nodes: the messages of the control actor
// (published with CAF's io::middleman for
// `proofline submit|status|cancel|await|metrics`), of the cluster dispatcher
// on a coordinator and of the node agent on a `serve --join` node. Every one
// of these crosses the network, so all are inspectable and registered by
// register_message_types. docs/CLUSTER.md describes the protocol. Part of
// messages/catalogue.hpp.
//
//   types        inline_witness, job_submission, submitted_job, watch_cursor,
//                job_progress, node_info, remote_partition, partition_result,
//                node_metrics, warm_key, cluster_metrics
//   inspect      one function each (load_bytes reads byte vectors in steps)
#pragma once

#include <caf/error.hpp>
#include <caf/meta/type_name.hpp>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "messages/values.hpp"

namespace proofline {

/// A witness sent inline with a submission (`submit --inline`): the path as
/// the job file names it once resolved, and the file's bytes.
struct inline_witness {
  std::string path;
  std::vector<uint8_t> bytes;
};

/// A job file as a client submits it: the server parses `text` with
/// jobs/job_file's rules, resolving relative paths against the directory of
/// `name` (the client's absolute path of the job file).
struct job_submission {
  std::string name;
  std::string text;
  bool inline_witnesses = false;         ///< witnesses come as `witnesses`, not from storage
  std::vector<inline_witness> witnesses;  ///< one per distinct witness path when inline
};

/// A job the server accepted: the client's id and the server's sequence number.
struct submitted_job {
  std::string id;
  uint64_t seq = 0;
};

/// What a watcher has already seen of a job: `seen` finished partitions.
struct watch_cursor {
  uint64_t seq = 0;
  uint32_t seen = 0;
};

/// News about one watched job: partitions that finished after the cursor,
/// in the order they finished, and the report once the job is complete.
struct job_progress {
  job_status status;
  std::vector<partition_report> finished;  ///< after cursor.seen, in finishing order
  uint32_t seen = 0;                       ///< the cursor to send next time
  bool complete = false;
  job_report report;  ///< set when complete
};

/// What a node offers its coordinator when it joins.
struct node_info {
  std::string name;                   ///< host:pid, for logs and metrics
  std::vector<std::string> backends;  ///< one description per GPU worker
  uint64_t memory_budget = 0;         ///< bytes
  uint32_t slots = 0;                 ///< partitions it works on at once, at most
};

/// A partition leased to a node. Paths are the coordinator's, on storage
/// every node sees; an inline witness comes as bytes instead.
struct remote_partition {
  uint64_t lease = 0;
  uint64_t job_seq = 0;  ///< the coordinator's job sequence number
  uint32_t index = 0;
  std::string job_id;
  std::string zkey;
  std::string witness;                ///< empty when inline
  std::vector<uint8_t> witness_bytes;  ///< the .wtns file when inline
  priority prio = priority::normal;
};

/// A node's answer for a lease: proof.json and public.json text, or the error.
struct partition_result {
  uint64_t node = 0;
  uint64_t lease = 0;
  bool ok = false;
  std::string proof_json;
  std::string public_json;
  partition_spans spans;  ///< on the node's clock
  file_error error;
};

/// One node as its coordinator sees it.
struct node_metrics {
  uint64_t id = 0;
  node_info info;
  uint32_t credit = 0;    ///< partitions it asked for and has not been sent
  uint32_t leased = 0;    ///< partitions it works on now
  uint64_t proved = 0;    ///< results accepted
  uint64_t failed = 0;    ///< partitions it reported failed
  uint64_t requeued = 0;  ///< partitions taken back (it left, or its job was cancelled)
  uint64_t bad_proofs = 0;       ///< proofs it sent that failed the coordinator's check
  bool out_of_service = false;  ///< sent too many bad proofs: gets no more work
};

/// A proving key the server keeps loaded (`serve` keeps keys warm across
/// submissions until the memory budget needs room).
struct warm_key {
  std::string path;
  uint64_t bytes = 0;      ///< host bytes of its points and coefficients
  uint32_t users = 0;      ///< live jobs using it now
  double last_use_ms = 0;  ///< when a job last took it, ms since the server started
  double idle_ms = 0;      ///< since then (0 while in use)
};

/// `proofline metrics`: the server's memory ledger, its jobs and its nodes.
struct cluster_metrics {
  std::string name;  ///< host:pid of the server
  memory_stats memory;
  uint32_t jobs_live = 0;
  uint32_t jobs_done = 0;
  uint32_t jobs_failed = 0;
  uint32_t jobs_cancelled = 0;
  uint64_t partitions_done = 0;
  uint64_t partitions_failed = 0;
  std::vector<node_metrics> nodes;
  std::vector<warm_key> keys;  ///< warm proving keys, least recently used first
};

/// Reads a byte vector as CAF's binary format lays it out (a varbyte length,
/// then the bytes) in steps of at most 1 MiB, so a declared length makes
/// the receiver allocate no more than the bytes that actually arrived (plus
/// one step and the vector's growth). CAF's own reader resizes to the
/// declared length first, so a 200-byte message claiming a 4 GiB witness
/// would make the server allocate 4 GiB before finding the bytes missing.
template <class Deserializer>
caf::error load_bytes(Deserializer& f, std::vector<uint8_t>& x) {
  constexpr size_t step_bytes = size_t(1) << 20;
  size_t n = 0;
  if (auto err = f.begin_sequence(n)) return err;
  x.clear();
  for (size_t done = 0; done < n;) {
    const size_t step = std::min(step_bytes, n - done);
    x.resize(done + step);
    if (auto err = f.apply_raw(step, x.data() + done)) return err;
    done += step;
  }
  return f.end_sequence();
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, inline_witness& x) {
  if constexpr (Inspector::reads_state)
    return f(caf::meta::type_name("inline_witness"), x.path, x.bytes);
  else
    return caf::error::eval([&] { return f(caf::meta::type_name("inline_witness"), x.path); },
                            [&] { return load_bytes(f, x.bytes); });
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, job_submission& x) {
  return f(caf::meta::type_name("job_submission"), x.name, x.text, x.inline_witnesses,
           x.witnesses);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, submitted_job& x) {
  return f(caf::meta::type_name("submitted_job"), x.id, x.seq);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, watch_cursor& x) {
  return f(caf::meta::type_name("watch_cursor"), x.seq, x.seen);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, job_progress& x) {
  return f(caf::meta::type_name("job_progress"), x.status, x.finished, x.seen, x.complete,
           x.report);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, node_info& x) {
  return f(caf::meta::type_name("node_info"), x.name, x.backends, x.memory_budget, x.slots);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, remote_partition& x) {
  if constexpr (Inspector::reads_state)
    return f(caf::meta::type_name("remote_partition"), x.lease, x.job_seq, x.index, x.job_id,
             x.zkey, x.witness, x.witness_bytes, x.prio);
  else
    return caf::error::eval(
        [&] {
          return f(caf::meta::type_name("remote_partition"), x.lease, x.job_seq, x.index,
                   x.job_id, x.zkey, x.witness);
        },
        [&] { return load_bytes(f, x.witness_bytes); }, [&] { return f(x.prio); });
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, partition_result& x) {
  return f(caf::meta::type_name("partition_result"), x.node, x.lease, x.ok, x.proof_json,
           x.public_json, x.spans, x.error);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, node_metrics& x) {
  return f(caf::meta::type_name("node_metrics"), x.id, x.info, x.credit, x.leased, x.proved,
           x.failed, x.requeued, x.bad_proofs, x.out_of_service);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, warm_key& x) {
  return f(caf::meta::type_name("warm_key"), x.path, x.bytes, x.users, x.last_use_ms, x.idle_ms);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, cluster_metrics& x) {
  return f(caf::meta::type_name("cluster_metrics"), x.name, x.memory, x.jobs_live, x.jobs_done,
           x.jobs_failed, x.jobs_cancelled, x.partitions_done, x.partitions_failed, x.nodes,
           x.keys);
}

}  // namespace proofline
