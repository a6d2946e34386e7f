#include "lib/front.hpp"

#include <caf/event_based_actor.hpp>
#include <caf/send.hpp>

#include <map>
#include <utility>

#include "actors/detail/spawn.hpp"
#include "lib/outcome.hpp"

namespace proofline::lib {

pending_proof::pending_proof(callback done, bool borrowed)
    : borrowed_(borrowed), callback_(std::move(done)) {}

pending_proof::~pending_proof() = default;

void pending_proof::complete(proof_outcome&& outcome) {
  outcome.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() -
                                                         submitted_)
                   .count();
  if (callback_) {
    // The callback owns the outcome; a waiter is told it is gone.
    auto cb = std::move(callback_);
    {
      std::lock_guard<std::mutex> g(mu_);
      done_ = true;
    }
    cv_.notify_all();
    cb(std::move(outcome));
    return;
  }
  {
    std::lock_guard<std::mutex> g(mu_);
    outcome_ = std::make_unique<proof_outcome>(std::move(outcome));
    done_ = true;
  }
  cv_.notify_all();
}

proof_outcome pending_proof::wait() {
  std::unique_lock<std::mutex> g(mu_);
  cv_.wait(g, [&] { return done_; });
  if (!outcome_) return failed_outcome(status::state, "the outcome was handed to a callback");
  proof_outcome o = std::move(*outcome_);
  outcome_.reset();
  return o;
}

void close_signal::set() {
  {
    std::lock_guard<std::mutex> g(mu);
    done = true;
  }
  cv.notify_all();
}

void close_signal::wait() {
  std::unique_lock<std::mutex> g(mu);
  cv.wait(g, [&] { return done; });
}

namespace {

class front_state {
 public:
  static inline const char* name = "library_front";
  using pointer = front_actor::stateful_pointer<front_state>;

  explicit front_state(pointer self) : self(self) {}

  front_actor::behavior_type make_behavior(front_config config);

 private:
  // ---- handlers
  /// Submits the job to the registry, then awaits its report for `p`.
  void submit_job(const local_job& job, const pending_ptr& p);
  /// The runtime let go of `p`'s borrowed bytes.
  void on_release(const pending_ptr& p);
  /// Cancels everything in flight; `signal` is set once all is delivered.
  void drain(const close_ptr& signal);

  // ---- helpers
  void on_submitted(uint64_t seq, const job_spec& spec);
  void on_report(uint64_t seq, const job_spec& spec, const job_report& report);
  /// Delivers `o` to `p` now, or once its borrowed bytes are released.
  void deliver(const pending_ptr& p, proof_outcome&& o);
  /// Signals a pending close once nothing is in flight any more.
  void check_closed();

  // ---- data
  pointer self;
  front_config cfg;
  /// Jobs submitted and not yet complete, by sequence number.
  std::map<uint64_t, pending_ptr> live;
  /// Outcomes waiting for their borrowed bytes' release.
  std::map<const pending_proof*, std::pair<pending_ptr, proof_outcome>> held;
  /// Borrowed bytes released before their outcome was known.
  std::map<const pending_proof*, pending_ptr> released;
  uint64_t submitting = 0;  ///< submit requests not yet answered
  close_ptr closing;        ///< set by a drain: no new job starts
  bool closed = false;      ///< the drain is answered: every submission completes as cancelled
};

front_actor::behavior_type front_state::make_behavior(front_config config) {
  cfg = std::move(config);
  if (cfg.thread) cfg.thread->store(std::this_thread::get_id());
  return {
      [this](submit_atom, const local_job& job, const pending_ptr& p) { submit_job(job, p); },
      [this](witness_free_atom, const pending_ptr& p) { on_release(p); },
      [this](adopt_atom, const std::string& name, const zk::groth16::key_ptr& key,
             const adoption_ptr& answer) {
        self->request(cfg.keys, caf::infinite, adopt_atom::value, name, key)
            .then([answer](const key_load_result&) { answer->set_value({}); },
                  [this, answer](caf::error& e) { answer->set_value(self->system().render(e)); });
      },
      [this](close_atom, const close_ptr& signal) { drain(signal); },
  };
}

void front_state::check_closed() {
  if (closing && live.empty() && submitting == 0 && held.empty()) {
    closing->set();
    closing.reset();
    closed = true;
  }
}

void front_state::deliver(const pending_ptr& p, proof_outcome&& o) {
  if (p->borrowed()) {
    auto r = released.find(p.get());
    if (r == released.end()) {
      held.emplace(p.get(), std::make_pair(p, std::move(o)));
      return;
    }
    released.erase(r);
  }
  p->complete(std::move(o));
  check_closed();
}

void front_state::on_release(const pending_ptr& p) {
  auto h = held.find(p.get());
  if (h == held.end()) {
    released.emplace(p.get(), p);
    return;
  }
  proof_outcome o = std::move(h->second.second);
  held.erase(h);
  p->complete(std::move(o));
  check_closed();
}

void front_state::on_report(uint64_t seq, const job_spec& spec, const job_report& report) {
  auto it = live.find(seq);
  if (it == live.end()) return;
  pending_ptr p = std::move(it->second);
  live.erase(it);
  deliver(p, outcome_of(report, spec.witnesses.empty() ? std::string() : spec.witnesses[0],
                        spec.witness_generator));
}

void front_state::on_submitted(uint64_t seq, const job_spec& spec) {
  if (closing || closed)
    caf::anon_send(cfg.registry, cancel_atom::value, seq);  // answered by the report
  self->request(cfg.registry, caf::infinite, await_atom::value, seq)
      .then([this, seq, spec](const job_report& r) { on_report(seq, spec, r); },
            [this, seq, spec](caf::error& e) {
              job_report r;
              r.state = job_state::failed;
              r.has_error = true;
              r.error = {"", "the runtime did not answer for the proof: " + self->system().render(e)};
              on_report(seq, spec, r);
            });
}

void front_state::submit_job(const local_job& job, const pending_ptr& p) {
  if (closing || closed) {
    deliver(p, failed_outcome(status::cancelled, "cancelled: the handle is closing"));
    return;
  }
  ++submitting;
  self->request(cfg.registry, caf::infinite, submit_atom::value, job)
      .then(
          [this, p, spec = job.spec](uint64_t seq) {
            --submitting;
            live[seq] = p;
            on_submitted(seq, spec);
          },
          [this, p](caf::error& e) {
            --submitting;
            deliver(p, failed_outcome(status::argument,
                                      "the runtime refused the proof: " + self->system().render(e)));
          });
}

void front_state::drain(const close_ptr& signal) {
  if (closed) {
    signal->set();
    return;
  }
  closing = signal;
  // Each cancel's answer is the job's report, which on_report delivers.
  for (const auto& [seq, p] : live) caf::anon_send(cfg.registry, cancel_atom::value, seq);
  check_closed();
}

}  // namespace

front_actor spawn_front(caf::actor_system& sys, front_config cfg) {
  // Detached: the front is the handle's completion thread, and a slow
  // callback holds back only other callbacks.
  return spawn_stateful<front_state>(sys, std::move(cfg), /*detached=*/true);
}

}  // namespace proofline::lib
