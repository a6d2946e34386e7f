// Limits on what CAF 0.17.6 decodes from a peer's message, for the message
// types a peer may name and for how deeply messages nest.
//
// Problems, in CAF's decoder (libcaf_core), which decodes a message element
// of any built-in type a peer names:
//  * Recursion without bound. A message element may be a message, and every
//    error (replies, down and exit messages) carries a message, so a peer
//    can nest messages as deeply as its bytes allow (15 bytes a level with
//    `@message`); a config value's lists nest at 2 bytes a level. 1.5 MB of
//    nested messages overflowed the decoding thread's stack here
//    (fuzz_net_message, AddressSanitizer: stack-overflow).
//  * Types proofline never sends, whose decoding does more than decode:
//    `@group` and `@group_down` look a group up by the module a peer names
//    (CAF's remote group module resolves it on a node the peer chooses);
//    `@config_value` and CAF's stream messages (`@downstream_msg`,
//    `@upstream_msg`, `@open_stream_msg`) hold variants and nested lists.
//
// Design: the executable defines caf::message::load(deserializer&) and
// caf::uniform_type_info_map::make_value(const std::string&), which
// libcaf_core reaches through its PLT and vtables, so the executable's
// definitions are the ones called. load counts the nesting of the calling
// thread and make_value refuses the type names above; both then call
// libcaf_core's own function (net/next_definition.hpp). A refusal throws
// decode_refused, which the BASP guard (net/basp_guard.cpp) turns into a
// closed connection, like any other exception from the decoder. proofline's
// own messages nest two levels at most (an error with its context) and name
// none of the refused types, so only a peer's crafted bytes meet a limit.
#include "net/decode_limits.hpp"

#include <caf/deserializer.hpp>
#include <caf/message.hpp>
#include <caf/type_erased_value.hpp>
#include <caf/uniform_type_info_map.hpp>

#include <string>

#include "net/next_definition.hpp"

namespace {

using proofline::net::next_definition;

using load_fn = caf::error (*)(caf::message*, caf::deserializer&);
using make_value_fn = caf::type_erased_value_ptr (*)(const caf::uniform_type_info_map*,
                                                     const std::string&);

/// Messages being decoded on this thread, the outermost included.
thread_local int message_depth = 0;

struct depth_step {
  depth_step() { ++message_depth; }
  ~depth_step() { --message_depth; }
  depth_step(const depth_step&) = delete;
  depth_step& operator=(const depth_step&) = delete;
};

}  // namespace

namespace proofline::net {

bool refused_type_name(const std::string& name) {
  static const char* const refused[] = {"@config_value",   "@downstream_msg", "@upstream_msg",
                                        "@open_stream_msg", "@group",          "@group_down"};
  for (const char* r : refused)
    if (name == r) return true;
  return false;
}

}  // namespace proofline::net

caf::error caf::message::load(caf::deserializer& source) {
  static const auto real = next_definition<load_fn>("_ZN3caf7message4loadERNS_12deserializerE");
  depth_step step;
  if (message_depth > proofline::net::max_message_depth)
    throw proofline::net::decode_refused("messages nest deeper than " +
                                         std::to_string(proofline::net::max_message_depth) +
                                         " levels");
  return real(this, source);
}

caf::type_erased_value_ptr caf::uniform_type_info_map::make_value(const std::string& name) const {
  static const auto real = next_definition<make_value_fn>(
      "_ZNK3caf21uniform_type_info_map10make_valueERKNSt7__cxx1112basic_stringIcSt11char_"
      "traitsIcESaIcEEE");
  if (proofline::net::refused_type_name(name))
    throw proofline::net::decode_refused("a message element of type " + name +
                                         ", which proofline accepts from no peer");
  return real(this, name);
}
