// Closes a connection whose BASP message CAF 0.17.6 would mishandle, instead
// of letting it end the process or make it allocate what a peer announced,
// and reads large payloads in bounded steps.
//
// Problems, all in how CAF's BASP broker reads what a peer sends:
//  1. CAF's decoder throws std::runtime_error ("invalid type found") on a
//     variant whose type tag is out of range, and nothing in CAF catches
//     it. Variants sit inside built-in types any peer may name: a message
//     element typed `@config_value`, CAF's stream messages, and every node
//     ID of the `uri` kind (its host is a variant), which the handshake,
//     routed headers and every actor handle carry. A 22-byte message
//     element was enough: the exception left the middleman's thread (or a
//     BASP worker's) and std::terminate stopped the process.
//  2. A header announcing an empty payload for an operation that reads one
//     (everything but a heartbeat) makes CAF dereference a null payload:
//     32 bytes stop a plain-text listener.
//  3. The broker allocates and zero-fills whatever payload length a header
//     announces, up to 4 GiB, before it reads a byte of it, whoever sent
//     it: two 32-byte headers announcing 10^9 bytes each, from peers that
//     never handshook, took an --insecure listener from 26 MB to 1.98 GB.
// With mutual TLS (the default) only a holder of a certificate of the
// cluster's CA reaches the decoder; that holder may still only lose its own
// connection (docs/CLUSTER.md, Security).
//
// Design: the executable defines caf::io::basp::instance::handle, the one
// entry through which the BASP broker hands every header and payload of a
// connection to the protocol's decoder, and
// caf::io::abstract_broker::configure_read, with which the broker asks a
// connection for its next bytes. libcaf_io.so calls both through its PLT
// and the executable comes first in the symbol lookup, so the calls land
// here. The wrapper checks a header's operation and payload length
// (2, 3): before the connection's BASP handshake is done (its peer is not in
// the routing table) a payload may hold at most handshake_payload_limit,
// what a handshake needs; after it, at most the limit set here (a server's:
// --max-inline + 65 MiB). It calls libcaf_io's own function
// (net/next_definition.hpp), and turns
// any exception into `malformed_basp_message` (1); on that state the broker
// closes the connection and forgets its routes. A payload longer than
// payload_step is read in steps (3): where the broker asks the connection
// for the whole payload, configure_read asks for one step; each step that
// arrives is added to a buffer that grows with what arrived, and the
// broker is told to wait for more, until the last step completes the
// payload and CAF decodes it whole. So the memory a payload takes follows
// the bytes its peer sent, not the length it announced; a connection that
// closes drops its steps (net/listener_guard.cpp). configure_network sets
// middleman.workers to 0, so that messages to actors are decoded inside
// this call too rather than on CAF's worker threads, where no wrapper could
// catch them. A connection whose peer the call adds to the routing table has
// finished its handshake, which the admission limits (net/admission.hpp)
// are told.
#include "net/basp_guard.hpp"

#include <caf/binary_deserializer.hpp>
#include <caf/io/abstract_broker.hpp>
#include <caf/io/basp/instance.hpp>
#include <caf/io/receive_policy.hpp>

#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "net/admission.hpp"
#include "net/next_definition.hpp"

namespace {

using handle_fn = caf::io::basp::connection_state (*)(caf::io::basp::instance*,
                                                       caf::execution_unit*,
                                                       caf::io::new_data_msg&,
                                                       caf::io::basp::header&, bool);
using configure_read_fn = void (*)(caf::io::abstract_broker*, caf::io::connection_handle,
                                   caf::io::receive_policy::config);

/// A payload longer than this is read in steps of this size.
constexpr size_t payload_step = size_t(1) << 20;

/// A payload being read in steps.
struct stepped_payload {
  uint64_t expected = 0;                       ///< the length its header announced
  caf::io::abstract_broker* broker = nullptr;  ///< set once the broker asked for it
  std::vector<char> bytes;                     ///< the steps received so far
};

/// Payloads read in steps, by connection handle. Never destroyed: CAF's
/// threads read and close connections until the process ends.
struct stepped_payloads {
  std::mutex mutex;
  std::unordered_map<int64_t, stepped_payload> by_connection;
};

stepped_payloads& stepped() {
  static auto* s = new stepped_payloads;
  return *s;
}

/// libcaf_io's abstract_broker::configure_read(connection_handle, receive_policy::config).
configure_read_fn caf_configure_read() {
  static const auto real = proofline::net::next_definition<configure_read_fn>(
      "_ZN3caf2io15abstract_broker14configure_readENS0_17connection_handleESt4pairINS0_19receive_"
      "policy_flagEmE");
  return real;
}

/// A header on `hdl` announced `announced` bytes: the payload is read in
/// steps when it is longer than one; any earlier payload of `hdl` is over.
void expect_payload(caf::io::connection_handle hdl, uint64_t announced) {
  auto& s = stepped();
  std::lock_guard<std::mutex> lock(s.mutex);
  s.by_connection.erase(hdl.id());
  if (announced > payload_step) s.by_connection[hdl.id()].expected = announced;
}

/// Whether the broker's read of `bytes` on `hdl` is a payload read in
/// steps (it then asks for a step instead).
bool read_in_steps(caf::io::abstract_broker* broker, caf::io::connection_handle hdl,
                   uint64_t bytes) {
  auto& s = stepped();
  std::lock_guard<std::mutex> lock(s.mutex);
  auto i = s.by_connection.find(hdl.id());
  if (i == s.by_connection.end() || i->second.expected != bytes || i->second.broker) return false;
  i->second.broker = broker;
  return true;
}

enum class step { not_stepped, more, whole };

/// For a payload read in steps: adds the step in `dm.buf`; once the payload
/// is complete, swaps it into `dm.buf` and the step's buffer into `spare`.
step take_step(caf::io::new_data_msg& dm, std::vector<char>& spare) {
  caf::io::abstract_broker* broker = nullptr;
  uint64_t last = 0;
  {
    auto& s = stepped();
    std::lock_guard<std::mutex> lock(s.mutex);
    auto i = s.by_connection.find(dm.handle.id());
    if (i == s.by_connection.end() || !i->second.broker) return step::not_stepped;
    stepped_payload& p = i->second;
    const size_t want = p.bytes.size() + dm.buf.size();
    if (p.bytes.capacity() < want)  // doubling, never past the announced length
      p.bytes.reserve(static_cast<size_t>(
          std::min<uint64_t>(p.expected, std::max(want, 2 * p.bytes.capacity()))));
    p.bytes.insert(p.bytes.end(), dm.buf.begin(), dm.buf.end());
    if (p.bytes.size() >= p.expected) {
      spare.swap(dm.buf);
      dm.buf.swap(p.bytes);
      s.by_connection.erase(i);
      return step::whole;
    }
    const uint64_t left = p.expected - p.bytes.size();
    if (left < payload_step) {  // the last step is shorter
      broker = p.broker;
      last = left;
    }
  }
  if (broker)
    caf_configure_read()(broker, dm.handle,
                         caf::io::receive_policy::exactly(static_cast<size_t>(last)));
  return step::more;
}

std::atomic<uint64_t> payload_limit{UINT32_MAX};

/// The largest payload a peer may announce before its handshake is done: a
/// server's handshake (node ID, application IDs, the published actor and its
/// interface) was 632 bytes for proofline's control actor, a client's is 32.
constexpr uint64_t handshake_payload_limit = 64 << 10;

/// Why a BASP header must not reach CAF, or "" when it may; `authenticated`
/// says whether the connection's handshake is done. Headers CAF cannot
/// decode or finds invalid are left to CAF, which refuses them itself.
std::string refused_header(caf::execution_unit* ctx, const caf::io::new_data_msg& dm,
                           bool authenticated, uint64_t& announced) {
  caf::io::basp::header hdr;
  caf::binary_deserializer source{ctx, dm.buf};
  announced = 0;
  if (source(hdr)) return {};
  announced = hdr.payload_len;
  if (hdr.payload_len == 0 && hdr.operation != caf::io::basp::message_type::heartbeat)
    return "its header announces no payload for an operation that needs one";
  if (!authenticated && hdr.payload_len > handshake_payload_limit)
    return "its header announces a payload of " + std::to_string(hdr.payload_len) +
           " bytes before its handshake, over the " + std::to_string(handshake_payload_limit) +
           " a handshake may hold";
  const uint64_t limit = payload_limit.load(std::memory_order_relaxed);
  if (hdr.payload_len > limit)
    return "its header announces a payload of " + std::to_string(hdr.payload_len) +
           " bytes, over the limit of " + std::to_string(limit);
  return {};
}

}  // namespace

void proofline::net::set_basp_payload_limit(uint64_t bytes) {
  payload_limit.store(bytes, std::memory_order_relaxed);
}

void proofline::net::forget_payload_steps(int64_t connection) {
  auto& s = stepped();
  std::lock_guard<std::mutex> lock(s.mutex);
  s.by_connection.erase(connection);
}

void caf::io::abstract_broker::configure_read(connection_handle hdl, receive_policy::config cfg) {
  if (cfg.first == receive_policy_flag::exactly && cfg.second > payload_step &&
      read_in_steps(this, hdl, cfg.second))
    cfg.second = payload_step;
  caf_configure_read()(this, hdl, cfg);
}

namespace caf::io::basp {

connection_state instance::handle(execution_unit* ctx, new_data_msg& dm, header& hdr,
                                  bool is_payload) {
  try {
    // The handshake is done once the peer is in the routing table.
    const bool authenticated = static_cast<bool>(tbl().lookup_direct(dm.handle));
    std::vector<char> spare;  // the step's buffer while dm.buf holds a whole payload
    bool whole = false;
    if (!is_payload) {
      uint64_t announced = 0;
      if (auto why = refused_header(ctx, dm, authenticated, announced); !why.empty()) {
        spdlog::warn("network: closed connection {}: {}", dm.handle.id(), why);
        return malformed_basp_message;
      }
      expect_payload(dm.handle, announced);
    } else {
      const step taken = take_step(dm, spare);
      if (taken == step::more) return await_payload;  // the broker waits for the next step
      whole = taken == step::whole;
    }
    // libcaf_io's instance::handle(execution_unit*, new_data_msg&, header&, bool).
    static const auto caf_handle = proofline::net::next_definition<handle_fn>(
        "_ZN3caf2io4basp8instance6handleEPNS_14execution_unitERNS0_12new_data_msgERNS1_6headerEb");
    const connection_state next = caf_handle(this, ctx, dm, hdr, is_payload);
    if (whole) dm.buf.swap(spare);  // the connection's own buffer back; the payload goes
    if (!authenticated && tbl().lookup_direct(dm.handle))
      proofline::net::handshake_finished(static_cast<int>(dm.handle.id()));
    return next;
  } catch (const std::exception& e) {
    spdlog::warn("network: closed connection {}: its message could not be decoded ({})",
                 dm.handle.id(), e.what());
  } catch (...) {
    spdlog::warn("network: closed connection {}: its message could not be decoded",
                 dm.handle.id());
  }
  return malformed_basp_message;
}

}  // namespace caf::io::basp
