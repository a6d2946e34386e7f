#include "actors/key_loader.hpp"

#include "actors/detail/spawn.hpp"

#include <caf/actor_system.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/spawn_options.hpp>

#include "zk/formats/error.hpp"

namespace proofline {

key_load_result load_key_checked(const key_load_fn& load, const std::string& path) {
  key_load_result r;
  try {
    r.key = load(path);
    if (!r.key) r.error = {path, path + ": the key loader returned no key"};
  } catch (const zk::formats::format_error& e) {
    r.error = {e.file(), e.what()};
  } catch (const std::exception& e) {
    r.error = {path, path + ": " + e.what()};
  }
  return r;
}

namespace {

class key_loader_state {
 public:
  static inline const char* name = "key_loader";
  using pointer = key_loader_actor::stateful_pointer<key_loader_state>;

  explicit key_loader_state(pointer self) : self(self) {}

  key_loader_actor::behavior_type make_behavior(key_load_fn fn) {
    load = std::move(fn);
    return {
        [this](load_atom, const std::string& path) { return on_load(path); },
    };
  }

 private:
  // ---- handlers
  /// Answers the one load request, then quits.
  key_load_result on_load(const std::string& path) {
    auto r = load_key_checked(load, path);
    self->quit();
    return r;
  }

  // ---- data
  pointer self;
  key_load_fn load;
};

}  // namespace

key_loader_actor spawn_key_loader(caf::actor_system& sys, key_load_fn load, bool detached) {
  return spawn_stateful<key_loader_state>(sys, std::move(load), detached);
}

}  // namespace proofline
