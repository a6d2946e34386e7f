// What `serve` and the client commands (submit, status, cancel, await,
// metrics) share: HOST:PORT endpoints, TLS options and their checks, the
// actor system configuration for CAF's network layer (middleman, optional
// OpenSSL module, heartbeats on every peer, message types), connecting to a
// control actor with retries and timeouts, and small file helpers.
//
// Every proofline process sends BASP heartbeats every heartbeat_interval
// and drops a peer silent for longer than its connection timeout; both
// sides must send heartbeats or a healthy peer is declared dead.
#pragma once

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/io/middleman_actor.hpp>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "messages/interfaces.hpp"

namespace CLI {
class App;
}

namespace proofline::net {

/// Default address of `serve --listen` and of the clients' --connect.
inline constexpr const char* default_endpoint = "127.0.0.1:7470";

/// BASP heartbeats: every process sends one per interval on every link.
inline constexpr std::chrono::milliseconds heartbeat_interval{500};
/// A peer silent this long is dropped (20 missed heartbeats; a 64 MiB
/// message takes about a second over loopback, so this leaves room).
inline constexpr std::chrono::seconds default_peer_timeout{10};

/// HOST:PORT; HOST may be a name, an IPv4 address or [IPv6].
struct endpoint {
  std::string host;
  uint16_t port = 0;
  std::string text() const;
};

/// Parses HOST:PORT (port 0..65535; 0 lets `serve` pick one). Returns
/// nullopt with the reason in `why`.
std::optional<endpoint> parse_endpoint(const std::string& s, std::string& why);

/// How a process secures its links. By default every link uses mutual TLS
/// through CAF's OpenSSL module with the credentials of a directory
/// (net/tls_credentials.hpp): --tls-dir, else default_tls_dir(). Explicit
/// --tls-cert/--tls-key/--tls-ca replace the directory; --insecure turns
/// TLS off. resolve_tls() turns these choices into the three files.
struct tls_options {
  std::string cert, key, ca;  ///< the files in use; empty: plain text
  std::string dir;            ///< --tls-dir
  bool insecure = false;      ///< --insecure: plain text, no authentication
  /// Whether TLS is on (after resolve_tls: files in use).
  bool any() const { return !cert.empty() || !key.empty() || !ca.empty(); }
};

/// Why the TLS files cannot work (all three are needed, each file must
/// load, the key must match the certificate); empty when they can.
std::string check_tls(const tls_options& tls);

/// Settles which credentials `tls` uses: the explicit files, or those of its
/// credential directory, or none with --insecure; then loads them, once, into
/// the context every TLS link of the process uses (net/tls_context.hpp). A
/// missing directory is created (a new CA and peer certificate) when
/// `create_missing` (a server or node), and `created` then names it;
/// otherwise (a client) it is awaited for `wait_for_dir`, as a server
/// starting beside the client creates it. Returns the problem, empty when
/// the links can be set up.
std::string resolve_tls(tls_options& tls, bool create_missing, std::string& created,
                        std::chrono::milliseconds wait_for_dir = {});

/// Adds --tls-dir, --tls-cert, --tls-key, --tls-ca and --insecure (whose
/// help text is `insecure_help`) to a subcommand.
void add_tls_options(CLI::App& app, tls_options& tls, const std::string& insecure_help);

/// Loads the middleman (and the OpenSSL module when TLS is on), sets the
/// heartbeat and `peer_timeout`, no BASP worker threads (messages from peers
/// are decoded on the middleman's thread, where net/basp_guard.cpp closes the
/// connection of one CAF cannot decode), two scheduler threads, CAF's own
/// logging off, and registers proofline's message types.
void configure_network(caf::actor_system_config& cfg, const tls_options& tls,
                       std::chrono::milliseconds peer_timeout);

/// The actor that opens connections: the middleman's, or the OpenSSL
/// manager's when TLS is on.
caf::io::middleman_actor connector(caf::actor_system& sys, bool tls);

/// Connects to the control actor at `ep`, retrying until `patience` has
/// passed; every attempt has a timeout, so a peer that accepts but never
/// answers cannot hold it forever. On failure returns null and the last
/// reason in `why`.
control_actor connect_control(caf::actor_system& sys, const endpoint& ep, bool tls,
                              std::chrono::milliseconds patience, std::string& why);

/// This machine's host name ("localhost" if it has none).
std::string host_name();

/// CAF's network errors in the user's terms, with what to try: nothing
/// listening ("is `proofline serve` running there?"), a port in use, a TLS
/// handshake refused (certificates of another CA, or TLS on one side only);
/// other errors as CAF renders them. `tls` says whether this side uses TLS.
std::string network_error_text(caf::actor_system& sys, const caf::error& e, const endpoint& ep,
                               bool tls);

/// "host:pid", naming this process in logs and metrics.
std::string process_name();

/// The largest text file a client or node reads whole (a job file, a proof).
inline constexpr uint64_t max_text_file_bytes = uint64_t(64) << 20;

/// Whole-file reads of regular files (a FIFO or device is refused at once);
/// read_text refuses files over max_text_file_bytes. Throw
/// std::runtime_error naming the path.
std::vector<uint8_t> read_bytes(const std::string& path);
std::string read_text(const std::string& path);

}  // namespace proofline::net
