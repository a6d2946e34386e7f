// The scheduler's state class: its handlers, the placement predicate and the
// queues (actors/scheduler.hpp describes the order and placement rules).
// Only actors/scheduler.cpp and the tests that inspect the queues include it.
#pragma once

#include <caf/actor_addr.hpp>
#include <caf/typed_response_promise.hpp>

#include <deque>
#include <map>
#include <memory>
#include <set>
#include <string>

#include "actors/scheduler.hpp"
#include "messages/interfaces.hpp"

namespace proofline {

class scheduler_state {
 public:
  static inline const char* name = "scheduler";
  using pointer = scheduler_actor::stateful_pointer<scheduler_state>;

  explicit scheduler_state(pointer self) : self(self) {}

  scheduler_actor::behavior_type make_behavior(scheduler_config config);

  // ---- queries (also read by tests)
  /// Whether every ticket before p's that is not yet seen is in synthesis for
  /// p's own job (so p may go to an idle worker without reordering jobs).
  bool behind_own_job_only(const synthesized_partition& p) const;
  /// Backend `device` is in service: not lost, and a worker of it has pulled.
  bool in_service(int32_t device) const;
  /// Backend `device` may prove `p` now or once it has prepared p's key: in
  /// service and the key not refused there (the fallback refuses none).
  bool may_prove(const synthesized_partition& p, int32_t device) const;
  /// Whether `p` may go to backend `device` at all, by its placement: the
  /// backends it admits that may prove it; if none may, the other primaries;
  /// if none of those may, the fallback. See actors/scheduler.hpp.
  bool eligible(const synthesized_partition& p, int32_t device) const;
  /// `p` may go to `device` now: eligible, and its key ready there.
  bool can_prove(const synthesized_partition& p, int32_t device) const;

  // ---- data
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

  scheduler_config cfg;
  std::map<memory::grant_order, synthesized_partition> ready;
  std::deque<pull> pulls;
  uint64_t next_pull = 0;
  std::map<caf::actor_addr, worker> workers;
  std::map<int32_t, device> devices;
  std::map<const zk::groth16::proving_key_base*, key_devices> keys;
  job_registry_actor registry;
  uint64_t next_ticket = 1;       // smallest ticket neither ready nor skipped
  std::set<uint64_t> seen_ahead;  // tickets above next_ticket already seen
  std::map<uint64_t, uint64_t> in_synthesis;  // ticket -> job seq, granted and not yet seen
  uint64_t handed = 0;

 private:
  // ---- handlers
  void on_ready(const synthesized_partition& p);
  void on_skip(uint64_t ticket);
  void on_granted(uint64_t ticket, uint64_t seq);
  caf::result<synthesized_partition> on_pull(int32_t device);
  /// The sending worker is done with partition (seq, index).
  void on_worker_done(uint64_t seq, uint32_t index);
  /// The sending worker's backend failed a partition: the registry places a
  /// retry; a failure that lost the device (f.device_lost) also takes it out.
  void on_worker_failed(const partition_failure& f);
  void on_lost(int32_t device);
  void on_prepared(const zk::groth16::key_ptr& key, int32_t device, bool ok,
                   const std::string& why);
  /// A monitored GPU worker terminated.
  void on_worker_down(const caf::down_msg& dm);
  /// Partitions ready, pulls parked and partitions handed out, for reports.
  scheduler_stats queue_stats() const;

  // ---- helpers
  /// Marks a ticket as seen and advances next_ticket over contiguous ones.
  void see_ticket(uint64_t ticket);
  /// Answers parked pulls while partitions may go.
  void dispatch();
  /// Takes a device out of service: its parked pulls get an error.
  void lose_device(int32_t device, const std::string& why);
  /// Fails every ready partition that no backend may prove any more.
  void fail_stranded();

  pointer self;
};

}  // namespace proofline
