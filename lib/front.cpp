#include "lib/front.hpp"

#include <caf/event_based_actor.hpp>
#include <caf/send.hpp>

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

/// Signals a pending close once nothing is in flight any more.
void check_closed(front_pointer self) {
  auto& st = self->state;
  if (st.closing && st.live.empty() && st.submitting == 0 && st.held.empty()) {
    st.closing->set();
    st.closing.reset();
    st.closed = true;
  }
}

/// Delivers `o` to `p` now, or once its borrowed bytes are released.
void deliver(front_pointer self, const pending_ptr& p, proof_outcome&& o) {
  auto& st = self->state;
  if (p->borrowed()) {
    auto r = st.released.find(p.get());
    if (r == st.released.end()) {
      st.held.emplace(p.get(), std::make_pair(p, std::move(o)));
      return;
    }
    st.released.erase(r);
  }
  p->complete(std::move(o));
  check_closed(self);
}

void on_release(front_pointer self, const pending_ptr& p) {
  auto& st = self->state;
  auto h = st.held.find(p.get());
  if (h == st.held.end()) {
    st.released.emplace(p.get(), p);
    return;
  }
  proof_outcome o = std::move(h->second.second);
  st.held.erase(h);
  p->complete(std::move(o));
  check_closed(self);
}

void on_report(front_pointer self, uint64_t seq, const job_spec& spec,
               const job_report& report) {
  auto it = self->state.live.find(seq);
  if (it == self->state.live.end()) return;
  pending_ptr p = std::move(it->second);
  self->state.live.erase(it);
  deliver(self, p,
          outcome_of(report, spec.witnesses.empty() ? std::string() : spec.witnesses[0],
                     spec.witness_generator));
}

void on_submitted(front_pointer self, uint64_t seq, const job_spec& spec) {
  auto& st = self->state;
  if (st.closing || st.closed)
    caf::anon_send(st.cfg.registry, cancel_atom::value, seq);  // answered by the report
  self->request(st.cfg.registry, caf::infinite, await_atom::value, seq)
      .then([=](const job_report& r) { on_report(self, seq, spec, r); },
            [=](caf::error& e) {
              job_report r;
              r.state = job_state::failed;
              r.has_error = true;
              r.error = {"", "the runtime did not answer for the proof: " + self->system().render(e)};
              on_report(self, seq, spec, r);
            });
}

void submit_job(front_pointer self, const local_job& job, const pending_ptr& p) {
  auto& st = self->state;
  if (st.closing || st.closed) {
    deliver(self, p, failed_outcome(status::cancelled, "cancelled: the handle is closing"));
    return;
  }
  ++st.submitting;
  self->request(st.cfg.registry, caf::infinite, submit_atom::value, job)
      .then(
          [=](uint64_t seq) {
            --self->state.submitting;
            self->state.live[seq] = p;
            on_submitted(self, seq, job.spec);
          },
          [=](caf::error& e) {
            --self->state.submitting;
            deliver(self, p,
                    failed_outcome(status::argument,
                                   "the runtime refused the proof: " + self->system().render(e)));
          });
}

void drain(front_pointer self, const close_ptr& signal) {
  auto& st = self->state;
  if (st.closed) {
    signal->set();
    return;
  }
  st.closing = signal;
  // Each cancel's answer is the job's report, which on_report delivers.
  for (const auto& [seq, p] : st.live) caf::anon_send(st.cfg.registry, cancel_atom::value, seq);
  check_closed(self);
}

}  // namespace

front_actor::behavior_type front(front_pointer self, front_config cfg) {
  self->state.cfg = std::move(cfg);
  if (self->state.cfg.thread) self->state.cfg.thread->store(std::this_thread::get_id());
  return {
      [=](submit_atom, const local_job& job, const pending_ptr& p) { submit_job(self, job, p); },
      [=](witness_free_atom, const pending_ptr& p) { on_release(self, p); },
      [=](adopt_atom, const std::string& name, const zk::groth16::key_ptr& key,
          const adoption_ptr& answer) {
        self->request(self->state.cfg.keys, caf::infinite, adopt_atom::value, name, key)
            .then([=](const key_load_result&) { answer->set_value({}); },
                  [=](caf::error& e) { answer->set_value(self->system().render(e)); });
      },
      [=](close_atom, const close_ptr& signal) { drain(self, signal); },
  };
}

}  // namespace proofline::lib
