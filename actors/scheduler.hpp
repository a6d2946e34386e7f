// scheduler: holds synthesized partitions in the global order (priority, job
// sequence, partition index) and hands them to GPU workers, which pull (each
// keeps a small look-ahead, so the next partition is at the worker before the
// current one finishes). A pull with nothing to hand out is parked as a
// response promise and answered as soon as a partition can go; the scheduler
// itself never blocks.
//
// Order: partitions are handed out in grant order. Every grant carries a
// ticket (1, 2, ...); a ready partition goes out only once every earlier
// ticket is ready too or skipped (its synthesis failed). Synthesizers working
// in parallel finish in any order, so without this partition k+1 of a job
// could reach the GPU before partition k. The price is bounded: a partition
// waits at most for the rest of a synthesis that started before its own, and
// under a backlog (partitions ready ahead of the GPU) it costs nothing.
//
// Devices: every pull names its worker's device (backend index). A partition
// goes only to a device that has its key ready: the device's GPU worker
// reports each key it prepared, or could not hold (prepared_atom), so a key
// that fits one GPU's memory but not another's is proved by the GPUs that
// hold it, and every GPU that proves a key has prepared it. A refusal
// stands for the life of the key object: a device that could not hold it
// because other keys in use filled its memory does not try again. A new
// key waits on a device until its preparing worker (lane 0) has finished
// the partition it is proving. Among parked
// pulls that can take a partition, the one of the device with the fewest
// partitions in flight goes first (then the worker with the fewest, then the
// oldest pull), so an idle device is served before a busy one's look-ahead.
//
// Device loss: the scheduler remembers what each worker holds until the
// worker reports it done or failed. A partition whose backend failed goes
// to another device that can prove it and has not failed it; when none is
// left, the failure goes to the registry (which proves it again once). A
// device whose partitions failed device_failure_limit times in a row, while
// another device still proves, is lost; so is a device whose GPU worker
// terminates abnormally. A lost device's pulls are answered with an error
// (its workers quit) and what its workers held is queued again for the
// others. A partition that no device can prove any more (its key refused
// everywhere, or every device lost) fails with the reasons. The copy kept
// for a worker shares the partition's buffers; a worker reports a proved
// partition done before it sends it to a finalizer, so that copy is
// normally gone before the finalizer frees the buffers and asks for a purge.
#pragma once

#include <caf/actor_addr.hpp>
#include <caf/typed_response_promise.hpp>

#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>

#include "messages/interfaces.hpp"

namespace proofline {

/// Backend failures in a row after which a device is taken out of service,
/// provided another device is still proving. A partition is tried at most
/// twice per device (once more after the registry's retry), so one bad
/// partition alone never takes a device out.
inline constexpr unsigned device_failure_limit = 3;

struct scheduler_state {
  static inline const char* name = "scheduler";
  /// A parked pull.
  struct pull {
    caf::typed_response_promise<synthesized_partition> rp;
    caf::actor_addr worker;
    int32_t device = 0;
    uint64_t seq = 0;  ///< arrival order
  };
  /// A GPU worker and the partitions handed to it, not yet reported done.
  struct worker {
    int32_t device = 0;
    std::map<memory::grant_order, synthesized_partition> in_flight;
  };
  struct device {
    unsigned workers = 0;    ///< live GPU workers
    unsigned in_flight = 0;  ///< partitions its workers hold
    unsigned failures = 0;   ///< backend failures in a row
    bool lost = false;
    std::string why;  ///< why it was lost
  };
  /// Which devices have a key ready, and which cannot hold it (and why).
  struct key_devices {
    std::weak_ptr<const zk::groth16::proving_key_base> owner;
    std::set<int32_t> ready;
    std::map<int32_t, std::string> refused;
  };
  /// Devices whose backend failed a partition, and the latest failure.
  struct tried {
    std::set<int32_t> devices;
    partition_failure last;
  };

  std::map<memory::grant_order, synthesized_partition> ready;
  std::deque<pull> pulls;
  uint64_t next_pull = 0;
  std::map<caf::actor_addr, worker> workers;
  std::map<int32_t, device> devices;
  std::map<const zk::groth16::proving_key_base*, key_devices> keys;
  std::map<memory::grant_order, tried> failures;
  job_registry_actor registry;
  uint64_t next_ticket = 1;       // smallest ticket neither ready nor skipped
  std::set<uint64_t> seen_ahead;  // tickets above next_ticket already seen
  uint64_t handed = 0;
};

using scheduler_pointer = scheduler_actor::stateful_pointer<scheduler_state>;

scheduler_actor::behavior_type scheduler(scheduler_pointer self);

void on_ready(scheduler_pointer self, const synthesized_partition& p);
void on_skip(scheduler_pointer self, uint64_t ticket);
caf::result<synthesized_partition> on_pull(scheduler_pointer self, int32_t device);
/// The sending worker is done with partition (seq, index).
void on_worker_done(scheduler_pointer self, uint64_t seq, uint32_t index);
/// The sending worker's backend failed a partition.
void on_worker_failed(scheduler_pointer self, const partition_failure& f, bool inputs_released);
void on_prepared(scheduler_pointer self, const zk::groth16::key_ptr& key, int32_t device, bool ok,
                 const std::string& why);
/// A monitored GPU worker terminated.
void on_worker_down(scheduler_pointer self, const caf::down_msg& dm);

/// Marks a ticket as seen and advances next_ticket over contiguous ones.
void see_ticket(scheduler_pointer self, uint64_t ticket);
/// Device `device` may prove `p` now: live, the key ready there, not failed there.
bool can_prove(scheduler_pointer self, const synthesized_partition& p, int32_t device);
/// Device `device` may prove `p` now or once it has prepared its key.
bool may_prove(scheduler_pointer self, const synthesized_partition& p, int32_t device);
/// Answers parked pulls while partitions may go.
void dispatch(scheduler_pointer self);
/// Takes a device out of service: its parked pulls get an error.
void lose_device(scheduler_pointer self, int32_t device, const std::string& why);
/// Fails every ready partition that no device may prove.
void fail_stranded(scheduler_pointer self);
/// Partitions ready, pulls parked and partitions handed out, for reports.
scheduler_stats queue_stats(scheduler_pointer self);

}  // namespace proofline
