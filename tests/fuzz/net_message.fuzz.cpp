// Fuzz target: the messages a `serve` control actor accepts from the network
// (messages/catalogue.hpp), decoded by CAF 0.17's binary deserializer with
// proofline's registered types, as the middleman decodes a BASP payload
// once the TLS handshake has admitted the peer. Any input must decode or be
// refused with an error, never crash, leak or allocate more than its own
// size allows. The decoder works under the limits every proofline
// executable sets (net/decode_limits.cpp, linked in here too: message
// nesting, refused built-in types), which throw; CAF 0.17.6's decoder itself
// throws on a variant's out-of-range type tag (node IDs of the uri kind).
// The server closes that peer's connection (net/basp_guard.cpp), so a
// std::exception thrown while decoding counts as a refusal here too. What decodes must encode and decode again to the same bytes;
// a decoded submission's job file goes through the server's parser.
#include <caf/binary_deserializer.hpp>
#include <caf/binary_serializer.hpp>
#include <caf/message.hpp>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <string>
#include <type_traits>
#include <vector>

#include "jobs/job_file.hpp"
#include "tests/fuzz/net_message.hpp"

using namespace proofline;
using fuzz::net_kind;

namespace {

template <class T>
std::vector<char> encode(T& x) {
  std::vector<char> out;
  caf::binary_serializer sink{fuzz::net_system(), out};
  if (sink(x)) std::abort();  // what decoded must encode
  return out;
}

/// Whether every float, double and long double element of `msg` is finite.
/// CAF 0.17's encoder loops forever on a non-finite one (proofline's own
/// types guard their doubles on the wire; a generic message cannot), so the
/// round trip is checked only for messages without such elements; decoding
/// them is still fuzzed.
bool finite_elements(const caf::message& msg) {
  for (size_t i = 0; i < msg.size(); ++i) {
    if (msg.match_element<float>(i) && !std::isfinite(msg.get_as<float>(i))) return false;
    if (msg.match_element<double>(i) && !std::isfinite(msg.get_as<double>(i))) return false;
    if (msg.match_element<long double>(i) && !std::isfinite(msg.get_as<long double>(i)))
      return false;
  }
  return true;
}

/// Decodes `T` from the input; on success checks the round trip.
template <class T>
bool decode(const char* data, size_t size, T& x) {
  caf::binary_deserializer source{fuzz::net_system(), data, size};
  try {
    if (source(x)) return false;
  } catch (const std::exception&) {
    return false;  // what the server's BASP guard turns into a closed connection
  }
  if constexpr (std::is_same<T, caf::message>::value)
    if (!finite_elements(x)) return true;
  auto once = encode(x);
  T again{};
  caf::binary_deserializer reread{fuzz::net_system(), once.data(), once.size()};
  if (reread(again) || reread.remaining() != 0) std::abort();
  if (encode(again) != once) std::abort();
  return true;
}

/// The server side of a submission that needs no runtime: its job file.
void parse_submission(const job_submission& s) {
  try {
    jobs::parse_job_file(s.text, s.name, "/base", "/out");
  } catch (const jobs::job_file_error&) {
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* bytes, size_t size) {
  if (size == 0) return 0;
  const auto kind = static_cast<net_kind>(bytes[0] % static_cast<uint8_t>(net_kind::count));
  const char* data = reinterpret_cast<const char*>(bytes + 1);
  --size;
  switch (kind) {
    case net_kind::message: {
      caf::message msg;
      if (decode(data, size, msg) && msg.match_elements<submit_atom, job_submission>())
        parse_submission(msg.get_as<job_submission>(1));
      break;
    }
    case net_kind::job_submission: {
      job_submission s;
      if (decode(data, size, s)) parse_submission(s);
      break;
    }
    case net_kind::watch_cursors: {
      std::vector<watch_cursor> w;
      decode(data, size, w);
      break;
    }
    case net_kind::node_info: {
      node_info n;
      decode(data, size, n);
      break;
    }
    case net_kind::partition_result: {
      partition_result r;
      decode(data, size, r);
      break;
    }
    case net_kind::count:
      break;
  }
  return 0;
}
