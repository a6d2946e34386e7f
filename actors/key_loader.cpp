#include "actors/key_loader.hpp"

#include "zk/formats/error.hpp"

namespace proofline {

key_load_result load_key_checked(
    const std::function<zk::groth16::key_ptr(const std::string&)>& load, const std::string& path) {
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

key_loader_actor::behavior_type key_loader(
    key_loader_actor::stateful_pointer<key_loader_state> self,
    std::function<zk::groth16::key_ptr(const std::string&)> load) {
  self->state.load = std::move(load);
  return {
      [=](load_atom, const std::string& path) {
        auto r = load_key_checked(self->state.load, path);
        self->quit();
        return r;
      },
  };
}

}  // namespace proofline
