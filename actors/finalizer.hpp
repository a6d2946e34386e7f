// finalizer: one of a pool (N, default 2). For each proved partition it
// assembles the proof with fresh random r, s, checks it by pairing when the
// key carries a verifier (a proof that fails is not written: the partition is
// reported as a retryable failure), drops the partition's buffers, releases
// its reservation, asks the memory manager to purge the arena the buffers
// came from, asks the registry whether the proof may be written (claim_atom:
// not if its job was cancelled meanwhile), and if so writes proof.json and
// public.json (proof_<i>.json / public_<i>.json for a partitioned job)
// atomically and reports the partition done (with its spans) to the
// registry. Spawned detached in
// production (assembly and file writes block), undetached in tests.
//
// Memory: the purge request names the arena the partition's buffers came
// from (its synthesizer's; pool blocks are never purged). Detached, the
// finalizer binds its thread to an arena of its own (proof assembly and JSON
// allocate there) and asks for that arena's purge too; requests coalesce in
// the memory manager, which runs the purges on its own thread.
#pragma once

#include <caf/fwd.hpp>

#include <string>

#include "actors/detail/prover_ops.hpp"
#include "actors/detail/run_clock.hpp"
#include "memory/arena.hpp"
#include "memory/thread_arena.hpp"
#include "messages/interfaces.hpp"

namespace proofline {

struct finalizer_config {
  job_registry_actor registry;
  memory_manager_actor memory;
  decltype(prover_ops::finalize) finalize;
  decltype(prover_ops::write_file) write_file;
  run_clock clock;
  /// Its own thread (detached) and arena, bound on the first message.
  memory::thread_binding thread{nullptr, false, "pl.final"};
};

/// Spawns a finalizer, detached (on a thread of its own) when cfg.thread.own_thread.
finalizer_actor spawn_finalizer(caf::actor_system& sys, finalizer_config cfg);

}  // namespace proofline
