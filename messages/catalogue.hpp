// Every message of proofline, and the one list of atoms. Typed interfaces are
// in messages/interfaces.hpp. The payloads live in three parts by audience:
//
//   messages/values.hpp     enums and inspectable values (spans, errors, job
//                           specs, partition outcomes, reports, stats)
//   messages/pipeline.hpp   the local pipeline's handles (job_context,
//                           partition_ref, work_order, grant, ...): never
//                           cross the network
//   messages/remote.hpp     the wire types of clients and nodes (control
//                           actor, cluster dispatcher, node agent)
//
// This header includes all three, then lists every atom, grouped by
// recipient, and declares register_message_types, the one place that
// registers the inspectable payloads with the actor system. The run
// observer's own atoms are in observe/observer.hpp, beside the one actor that
// handles them (observe/ sits above messages/, and CAF 0.17 atoms need no
// registration).
#pragma once

#include <caf/atom.hpp>
#include <caf/fwd.hpp>

#include "messages/pipeline.hpp"
#include "messages/remote.hpp"
#include "messages/values.hpp"

namespace proofline {

// ---------------------------------------------------------------- atoms
// job registry
using submit_atom = caf::atom_constant<caf::atom("submit")>;  ///< job_spec -> seq
using status_atom = caf::atom_constant<caf::atom("status")>;  ///< [seq] -> job_status
using await_atom = caf::atom_constant<caf::atom("await")>;    ///< seq -> job_report at completion
using stage_atom = caf::atom_constant<caf::atom("stage")>;    ///< a partition entered a stage
using partition_done_atom = caf::atom_constant<caf::atom("partdone")>;  ///< partition_done: proof written
using partition_failed_atom = caf::atom_constant<caf::atom("partfailed")>;  ///< partition_failure
// key loader
using load_atom = caf::atom_constant<caf::atom("load")>;  ///< path -> key_load_result
// key cache
using key_atom = caf::atom_constant<caf::atom("key")>;  ///< path -> key_load_result (one user more)
using key_users_atom = caf::atom_constant<caf::atom("keyusers")>;  ///< key, +/- users
using preload_atom = caf::atom_constant<caf::atom("preload")>;     ///< path -> key_load_result (warm)
using adopt_atom = caf::atom_constant<caf::atom("adopt")>;  ///< name, key -> key_load_result (one user)
using evict_bytes_atom = caf::atom_constant<caf::atom("evictbytes")>;  ///< bytes wanted -> bytes freed
using evict_path_atom = caf::atom_constant<caf::atom("evictpath")>;  ///< path -> bytes freed (DELETE)
using warm_keys_atom = caf::atom_constant<caf::atom("warmkeys")>;  ///< -> warm_key[]
using prepared_atom = caf::atom_constant<caf::atom("prepared")>;  ///< a device made a key ready
using startup_atom = caf::atom_constant<caf::atom("startup")>;    ///< -> key_startup[]
// memory manager
using reserve_atom = caf::atom_constant<caf::atom("reserve")>;  ///< work_order[] -> refusals
using grant_request_atom = caf::atom_constant<caf::atom("grantreq")>;  ///< idle: -> grant
using release_atom = caf::atom_constant<caf::atom("release")>;  ///< reservation bytes back
using taken_atom = caf::atom_constant<caf::atom("taken")>;      ///< a GPU worker started it
using starved_atom = caf::atom_constant<caf::atom("starved")>;  ///< a GPU worker ran dry
using purge_atom = caf::atom_constant<caf::atom("purge")>;      ///< purge an arena
using stats_atom = caf::atom_constant<caf::atom("stats")>;      ///< -> memory_stats, scheduler_stats
using purge_due_atom = caf::atom_constant<caf::atom("purgedue")>;  ///< a coalesced purge is due
using pool_free_atom = caf::atom_constant<caf::atom("poolfree")>;  ///< a pool block is free again
using key_memory_atom = caf::atom_constant<caf::atom("keymem")>;   ///< a key's host bytes (0: gone)
using key_idle_atom = caf::atom_constant<caf::atom("keyidle")>;    ///< a warm key no job uses (evictable)
using pool_pinned_atom = caf::atom_constant<caf::atom("pooldone")>;  ///< the pool's pinning finished
using drop_queued_atom = caf::atom_constant<caf::atom("dropqueued")>;  ///< seq -> queued requests dropped
/// Cancel a job (registry, control actor; to nodes and the cluster: drop its leases).
using cancel_atom = caf::atom_constant<caf::atom("cancel")>;
// scheduler
using ready_atom = caf::atom_constant<caf::atom("ready")>;  ///< synthesized_partition
using skip_atom = caf::atom_constant<caf::atom("skip")>;    ///< ticket whose synthesis failed
using granted_atom = caf::atom_constant<caf::atom("granted")>;  ///< ticket, job seq: its synthesis began
using lost_atom = caf::atom_constant<caf::atom("lost")>;    ///< a backend index is unusable
using partition_pull_atom = caf::atom_constant<caf::atom("partpull")>;  ///< device -> synthesized_partition
using worker_done_atom = caf::atom_constant<caf::atom("workerdone")>;  ///< seq, index: proved or dropped
using worker_failed_atom = caf::atom_constant<caf::atom("workerfail")>;  ///< a backend failed a partition
using residency_atom = caf::atom_constant<caf::atom("residency")>;  ///< device holds a key, or cannot
// gpu worker
using run_atom = caf::atom_constant<caf::atom("run")>;  ///< prove the next held partition
using prepare_atom = caf::atom_constant<caf::atom("prepare")>;  ///< make a key resident ahead
using evict_key_atom = caf::atom_constant<caf::atom("evictkey")>;  ///< forget a key's device state
// synthesizer
using seek_work_atom = caf::atom_constant<caf::atom("seekwork")>;  ///< ask the memory manager for work
// finalizer
using finalize_atom = caf::atom_constant<caf::atom("finalize")>;  ///< proved_partition
using claim_atom = caf::atom_constant<caf::atom("claim")>;  ///< may a checked proof be written?
// control actor, cluster dispatcher and node agent (cancel_atom,
// status_atom, submit_atom and await_atom are shared with the pipeline)
using watch_atom = caf::atom_constant<caf::atom("watch")>;      ///< job progress past cursors
using watch_due_atom = caf::atom_constant<caf::atom("watchdue")>;  ///< a parked watch ran out
using listen_atom = caf::atom_constant<caf::atom("listen")>;    ///< tell this listener of job news
using metrics_atom = caf::atom_constant<caf::atom("metrics")>;  ///< -> cluster_metrics
using join_atom = caf::atom_constant<caf::atom("join")>;        ///< a node registers
using credit_atom = caf::atom_constant<caf::atom("credit")>;    ///< a node has room for n more
using assign_atom = caf::atom_constant<caf::atom("assign")>;    ///< a lease, to a node
using result_atom = caf::atom_constant<caf::atom("result")>;    ///< a node's partition_result
using attach_atom = caf::atom_constant<caf::atom("attach")>;    ///< wires the control actor
using rejoin_atom = caf::atom_constant<caf::atom("rejoin")>;    ///< a node agent connects again
using check_atom = caf::atom_constant<caf::atom("check")>;  ///< a node's proof, to the coordinator's checker
using hold_atom = caf::atom_constant<caf::atom("hold")>;    ///< a partition held for another node
// ---- the state journal (serve --state, actors/journal.hpp)
using record_atom = caf::atom_constant<caf::atom("record")>;      ///< accepted jobs, before the ack
using complete_atom = caf::atom_constant<caf::atom("complete")>;  ///< a job finished: forget it
using recover_atom = caf::atom_constant<caf::atom("recover")>;    ///< registry: take journaled jobs
using replay_atom = caf::atom_constant<caf::atom("replay")>;      ///< journal: re-queue its jobs
using record_done_atom = caf::atom_constant<caf::atom("recdone")>;  ///< journal: a partition is done
using news_atom = caf::atom_constant<caf::atom("news")>;  ///< a job has news for control's watches
using drain_atom = caf::atom_constant<caf::atom("drain")>;  ///< serve stops: no new work, finish what runs
using flush_atom = caf::atom_constant<caf::atom("flush")>;  ///< answered once earlier watch answers are out

/// Registers the inspectable payloads (needed before they cross the network).
void register_message_types(caf::actor_system_config& cfg);

}  // namespace proofline
