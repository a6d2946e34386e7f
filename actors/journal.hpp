// journal: the actor behind `serve --state DIR`. It keeps a journal of the
// jobs a server accepted and the partitions it finished (journal_store,
// SQLite), so a daemon killed at any moment loses no accepted job.
//
// Problem: a write that must reach the disk before a submission is
// acknowledged costs an fsync, milliseconds; on the registry's thread it
// would stall every partition report behind it.
//
// Design: a detached actor (a thread of its own) and the only user of the
// store. The job registry sends it what happens, in the order it happens
// (one sender, so CAF keeps the order): record (the submission is answered
// only after the journal's reply), done per partition with its proof
// written, complete when a job is done, failed or cancelled. Registry
// sequence numbers change across restarts; the journal maps them to its own
// job keys. A write that fails is logged; a failed record fails the
// submission's answer (its jobs still run, unjournaled). A job's completion
// carries its report (the record result.json was written from), which the
// store keeps among the finished jobs, bounded as the registry bounds them.
//
// Recovery (recover, once at start): the finished jobs' reports go to the
// registry first, so `status` and `await` answer for them as before the
// restart (up to --keep-finished); then every journaled job is queued again
// with the registry. Partitions journaled as done are kept only if their
// proof and public files exist and verify against the job's key (fetched
// from the key cache, which keeps it warm for the job); the others are proved
// again. Temporary files an interrupted atomic write left in a job's out
// directory are removed first. Inline witnesses of recovered jobs, spooled
// under DIR/spool by the run that accepted them, are removed once no
// recovered job that names them is unfinished (a submission's jobs share its
// spooled files); the journal stores them relative to DIR, so the state
// directory may move between runs.
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "actors/detail/journal_store.hpp"
#include "messages/interfaces.hpp"

namespace proofline {

struct journal_config {
  std::shared_ptr<journal_store> store;
  /// Why the proof and public files of a finished partition do not verify
  /// against `key`; empty when they do. Runs on the journal's thread.
  std::function<std::string(const zk::groth16::key_ptr& key, const std::string& proof_file,
                            const std::string& public_file)>
      check_proof;
  /// Finished jobs kept (records, and their bytes): --keep-finished and
  /// --keep-finished-bytes; 0: no limit.
  std::size_t keep_finished = 0;
  std::size_t keep_finished_bytes = 0;
  /// Spawned on a thread of its own (serve); tests spawn it undetached.
  bool detached = false;
};

/// Spawns the journal, detached (on a thread of its own: SQLite blocks) when
/// cfg.detached.
journal_actor spawn_journal(caf::actor_system& sys, journal_config cfg);

/// Removes `<name>.tmp-*` files (interrupted atomic writes) from `dir`;
/// returns how many.
std::size_t remove_partial_files(const std::string& dir);

/// The spool of `store`'s state directory (DIR/spool, canonical), where
/// `serve --state DIR` spools inline witnesses unless --spool says otherwise.
std::string state_spool_root(const journal_store& store);

/// Removes the spool directories of earlier runs (DIR/spool/<pid>) in which
/// no job of `jobs` names a witness; returns how many.
std::size_t remove_stale_spools(const journal_store& store, const std::vector<journaled_job>& jobs);

}  // namespace proofline
