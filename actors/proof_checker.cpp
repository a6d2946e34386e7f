#include "actors/proof_checker.hpp"

#include <caf/event_based_actor.hpp>
#include <caf/local_actor.hpp>
#include <caf/spawn_options.hpp>

#include <chrono>

namespace proofline {

namespace {

/// The proof checker: checks a node's proof with `check` and, when it
/// verifies, writes both files with `write`.
class proof_checker_state {
 public:
  static inline const char* name = "proof_checker";
  using pointer = proof_checker_actor::stateful_pointer<proof_checker_state>;

  explicit proof_checker_state(pointer) {}

  proof_checker_actor::behavior_type make_behavior(node_proof_check c, file_writer w) {
    check = std::move(c);
    write = std::move(w);
    return {
        [this](check_atom, const node_proof& p) { return on_check(p); },
    };
  }

 private:
  // ---- handlers
  node_proof_verdict on_check(const node_proof& p) const {
    const job_context& job = *p.job;
    const std::string proof_name = job.proof_name(p.index);
    const std::string public_name = job.public_name(p.index);
    node_proof_verdict v;
    const auto t0 = std::chrono::steady_clock::now();
    v.problem = check ? check(job.key, p.proof_json, p.public_json, proof_name, public_name)
                      : std::string("the coordinator has no proof check");
    v.verify_ms = std::chrono::duration<double, std::milli>(
                      std::chrono::steady_clock::now() - t0)
                      .count();
    // Claimed by the dispatcher before it asked: written whatever a
    // cancel says now (the job completes once this is reported).
    if (!v.problem.empty()) return v;
    if (job.returns_outputs()) {  // the proof goes back in the job's report, not to a file
      v.proof_json = p.proof_json;
      v.public_json = p.public_json;
      v.written = true;
      return v;
    }
    std::string path = job.out_path(proof_name);
    try {
      write(path, p.proof_json);
      path = job.out_path(public_name);
      write(path, p.public_json);
      v.written = true;
    } catch (const std::exception& e) {
      v.write_error = {path, e.what()};
    }
    return v;
  }

  // ---- data
  node_proof_check check;
  file_writer write;
};

}  // namespace

proof_checker_actor spawn_proof_checker(caf::local_actor& parent, node_proof_check check,
                                        file_writer write, bool detached) {
  auto fun = [](proof_checker_state::pointer self, node_proof_check c, file_writer w) {
    return self->state.make_behavior(std::move(c), std::move(w));
  };
  return detached
             ? parent.spawn<caf::detached + caf::linked>(fun, std::move(check), std::move(write))
             : parent.spawn<caf::linked>(fun, std::move(check), std::move(write));
}

}  // namespace proofline
