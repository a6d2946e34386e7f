// Reading JSON from untrusted hands within limits. nlohmann::json builds a
// value of 16 bytes or more for every byte of "[[[[" or "1,1,1,", so a file
// of 50 MB can ask for gigabytes before its parse ends; the limits here are
// checked before (size) and while (nesting, count of values) the document is
// parsed, so a bomb costs what its limits allow, never what it asks for.
//
// Header-only: jobs/, app/ and zk/formats use it with their own limits.
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>

namespace proofline::zk::formats {

/// Nesting every JSON format proofline reads stays within: a verification
/// key's vk_alphabeta_12 is four arrays deep inside its object, a job file's
/// witnesses four, the rest less.
inline constexpr unsigned max_json_depth = 6;

/// What one JSON document may hold.
struct json_limits {
  uint64_t max_bytes = 0;               ///< the text's length
  unsigned max_depth = max_json_depth;  ///< arrays and objects inside each other
  uint64_t max_values = 0;              ///< values of every kind, object keys included
};

/// A document past one of its limits; what() says which, without the file's
/// name (callers add it, as they do to parse errors).
class json_limit_error : public std::runtime_error {
 public:
  enum class limit { bytes, depth, values };
  json_limit_error(limit which, const std::string& what)
      : std::runtime_error(what), which_(which) {}
  /// The limit the document passed.
  limit which() const noexcept { return which_; }

 private:
  limit which_;
};

/// "N bytes, more than the M a FILE_KIND may hold".
inline std::string json_size_problem(uint64_t bytes, uint64_t max_bytes, const char* kind) {
  return std::to_string(bytes) + " bytes, more than the " + std::to_string(max_bytes) + " " +
         kind + " may hold";
}

/// Parses `text` as a `Json` (nlohmann::json or ordered_json) within
/// `limits`: text longer than max_bytes is refused unread, and the parse
/// stops at the first array or object nested deeper than max_depth or the
/// first value past max_values. `on_event(depth, event, value)`, when given,
/// sees every event as a parser callback of nlohmann's would (to track the
/// last key, say); it returns nothing and keeps every value. Throws
/// json_limit_error for a limit, Json's parse_error or out_of_range for text
/// that is not JSON or a number no type can hold.
template <class Json, class OnEvent = std::nullptr_t>
Json parse_json_limited(std::string_view text, const json_limits& limits,
                        OnEvent on_event = nullptr) {
  using event_t = typename Json::parse_event_t;
  if (text.size() > limits.max_bytes)
    throw json_limit_error(json_limit_error::limit::bytes,
                           json_size_problem(text.size(), limits.max_bytes, "this document"));
  uint64_t values = 0;
  // Throwing from the callback ends the parse at once: returning false would
  // only drop the value while the parser kept a stack entry per level.
  auto check = [&](int depth, event_t event, Json& value) -> bool {
    if (event == event_t::object_start || event == event_t::array_start) {
      if (static_cast<unsigned>(depth) >= limits.max_depth)
        throw json_limit_error(json_limit_error::limit::depth,
                               "nested deeper than " + std::to_string(limits.max_depth) +
                                   " arrays and objects");
    }
    if (event != event_t::object_end && event != event_t::array_end &&
        ++values > limits.max_values)
      throw json_limit_error(json_limit_error::limit::values,
                             "more than " + std::to_string(limits.max_values) +
                                 " JSON values (keys, containers and scalars)");
    if constexpr (!std::is_same_v<OnEvent, std::nullptr_t>) on_event(depth, event, value);
    return true;
  };
  return Json::parse(text.begin(), text.end(), check);
}

}  // namespace proofline::zk::formats
