// Limits on what CAF's decoder accepts from a peer (net/decode_limits.cpp):
// how deeply messages nest, and the built-in types no peer may name.
#pragma once

#include <stdexcept>
#include <string>

namespace proofline::net {

/// The deepest nesting of messages (a message in a message, or in an
/// error's context) a decoder accepts; proofline's own messages nest two.
inline constexpr int max_message_depth = 16;

/// What the decoder throws when a message meets a limit; the BASP guard
/// closes the connection it came from.
class decode_refused : public std::runtime_error {
 public:
  explicit decode_refused(const std::string& what) : std::runtime_error(what) {}
};

/// Whether `name` is a CAF built-in type proofline accepts from no peer:
/// config values, stream messages and groups.
bool refused_type_name(const std::string& name);

}  // namespace proofline::net
