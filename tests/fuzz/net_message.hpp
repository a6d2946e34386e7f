// What fuzz_net_message decodes, shared with the seed writer: an input is
// one byte naming the kind, then the bytes CAF's binary serializer produced.
// Kind 0 is a whole caf::message, decoded as BASP decodes a payload (type
// names looked up among the registered types, then each value); the other
// kinds are single payload types the control actor accepts, decoded
// directly so the fuzzer reaches their fields without first finding the type
// names.
#pragma once

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/atom.hpp>

#include <cstdint>

#include "messages/catalogue.hpp"

namespace proofline::fuzz {

enum class net_kind : uint8_t {
  message,           ///< caf::message, any registered types
  job_submission,    ///< submit_atom's payload
  watch_cursors,     ///< watch_atom's std::vector<watch_cursor>
  node_info,         ///< join_atom's payload
  partition_result,  ///< result_atom's payload
  count,
};

/// An actor system that knows proofline's message types and runs no worker
/// threads (the deserializers only need its type registry).
inline caf::actor_system& net_system() {
  struct config : caf::actor_system_config {
    config() {
      set("scheduler.policy", caf::atom("testing"));
      register_message_types(*this);
    }
  };
  // Never destroyed: the process ends with it (no threads to join).
  static auto* cfg = new config;
  static auto* sys = new caf::actor_system(*cfg);
  return *sys;
}

}  // namespace proofline::fuzz
