// Closes a connection whose BASP message CAF 0.17.6 would mishandle, instead
// of letting it end the process or make it allocate what a peer announced.
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
// connection to the protocol's decoder. libcaf_io.so calls it through its
// PLT and the executable comes first in the symbol lookup, so the call
// lands here. The wrapper checks a header's operation and payload length
// (2, 3): before the connection's BASP handshake is done (its peer is not in
// the routing table) a payload may hold at most handshake_payload_limit,
// what a handshake needs; after it, at most the limit set here (a server's:
// --max-inline + 65 MiB). It calls libcaf_io's own function
// (net/next_definition.hpp), and turns
// any exception into `malformed_basp_message` (1); on that state the broker
// closes the connection and forgets its routes. configure_network sets
// middleman.workers to 0, so that messages to actors are decoded inside
// this call too rather than on CAF's worker threads, where no wrapper could
// catch them. A connection whose peer the call adds to the routing table has
// finished its handshake, which the admission limits (net/admission.hpp)
// are told.
#include "net/basp_guard.hpp"

#include <caf/binary_deserializer.hpp>
#include <caf/io/basp/instance.hpp>

#include <spdlog/spdlog.h>

#include <atomic>
#include <exception>
#include <string>

#include "net/admission.hpp"
#include "net/next_definition.hpp"

namespace {

using handle_fn = caf::io::basp::connection_state (*)(caf::io::basp::instance*,
                                                       caf::execution_unit*,
                                                       caf::io::new_data_msg&,
                                                       caf::io::basp::header&, bool);

std::atomic<uint64_t> payload_limit{UINT32_MAX};

/// The largest payload a peer may announce before its handshake is done: a
/// server's handshake (node ID, application IDs, the published actor and its
/// interface) was 632 bytes for proofline's control actor, a client's is 32.
constexpr uint64_t handshake_payload_limit = 64 << 10;

/// Why a BASP header must not reach CAF, or "" when it may; `authenticated`
/// says whether the connection's handshake is done. Headers CAF cannot
/// decode or finds invalid are left to CAF, which refuses them itself.
std::string refused_header(caf::execution_unit* ctx, const caf::io::new_data_msg& dm,
                           bool authenticated) {
  caf::io::basp::header hdr;
  caf::binary_deserializer source{ctx, dm.buf};
  if (source(hdr)) return {};
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

namespace caf::io::basp {

connection_state instance::handle(execution_unit* ctx, new_data_msg& dm, header& hdr,
                                  bool is_payload) {
  try {
    // The handshake is done once the peer is in the routing table.
    const bool authenticated = static_cast<bool>(tbl().lookup_direct(dm.handle));
    if (!is_payload)
      if (auto why = refused_header(ctx, dm, authenticated); !why.empty()) {
        spdlog::warn("network: closed connection {}: {}", dm.handle.id(), why);
        return malformed_basp_message;
      }
    // libcaf_io's instance::handle(execution_unit*, new_data_msg&, header&, bool).
    static const auto caf_handle = proofline::net::next_definition<handle_fn>(
        "_ZN3caf2io4basp8instance6handleEPNS_14execution_unitERNS0_12new_data_msgERNS1_6headerEb");
    const connection_state next = caf_handle(this, ctx, dm, hdr, is_payload);
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
