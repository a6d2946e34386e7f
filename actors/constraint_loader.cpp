#include "actors/constraint_loader.hpp"

#include "actors/detail/spawn.hpp"

#include <caf/actor_system.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/spawn_options.hpp>

#include "zk/formats/error.hpp"

namespace proofline {

namespace {

using load_fn = decltype(prover_ops::load_constraints);

class constraint_loader_state {
 public:
  static inline const char* name = "constraint_loader";
  using pointer = constraint_loader_actor::stateful_pointer<constraint_loader_state>;

  explicit constraint_loader_state(pointer self) : self(self) {}

  constraint_loader_actor::behavior_type make_behavior(load_fn fn) {
    load = std::move(fn);
    return {
        [this](load_atom, const std::string& file) { return on_load(file); },
    };
  }

 private:
  // ---- handlers
  /// Answers the one load request, then quits.
  constraints_load_result on_load(const std::string& file) {
    self->quit();
    try {
      return {load(file), {}};
    } catch (const zk::formats::format_error& e) {
      return {nullptr, {e.file(), e.what()}};
    } catch (const std::exception& e) {
      return {nullptr, {file, file + ": " + e.what()}};
    }
  }

  // ---- data
  pointer self;
  load_fn load;
};

}  // namespace

constraint_loader_actor spawn_constraint_loader(caf::actor_system& sys, load_fn load,
                                                bool detached) {
  return spawn_stateful<constraint_loader_state>(sys, std::move(load), detached);
}

}  // namespace proofline
