// Partitions as the scheduler receives them, built without the pipeline:
// for tests that drive the scheduler alone (tests/actors/scheduler,
// tests/actors/multigpu).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "actors/scheduler.hpp"  // the partition and job types it receives
#include "zk/groth16/proving_key.hpp"

namespace proofline::test {

/// A key object whose address and path are all the scheduler reads.
inline zk::groth16::key_ptr fake_key(const std::string& path) {
  auto k = std::make_shared<zk::groth16::proving_key_base>();
  k->path = path;
  return k;
}

/// Partition `index` of job `seq`, synthesized and granted memory ticket
/// `ticket`; its witness reads "w<seq>_<index>".
inline synthesized_partition ready_partition(const zk::groth16::key_ptr& key, uint64_t seq,
                                             uint32_t index, uint64_t ticket,
                                             priority prio = priority::normal) {
  auto j = std::make_shared<job_context>();
  j->seq = seq;
  j->key = key;
  j->spec.prio = prio;
  j->spec.witnesses.assign(index + 1, "");
  j->spec.witnesses[index] = "w" + std::to_string(seq) + "_" + std::to_string(index);
  synthesized_partition p;
  p.part.job = j;
  p.part.index = index;
  p.part.ticket = ticket;
  p.reservation = std::make_shared<memory::reservation>(ticket, 1, nullptr);
  return p;
}

}  // namespace proofline::test
