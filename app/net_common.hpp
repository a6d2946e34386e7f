// What `serve` and the client commands (submit, status, cancel, await,
// metrics) share: HOST:PORT endpoints, TLS options and their checks, the
// actor system configuration for CAF's network layer (middleman, optional
// OpenSSL module, heartbeats on every peer, message types), connecting to a
// control actor with retries and timeouts, and small file helpers.
//
// Every proofline process sends BASP heartbeats every heartbeat_interval
// and drops a peer silent for longer than its connection timeout; both
// sides must send heartbeats or a healthy peer is declared dead (see
// COOKBOOK.md, section 4).
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

namespace proofline::app {

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

/// Whether `host` names the loopback interface (localhost, 127.0.0.0/8, ::1).
bool is_loopback(const std::string& host);

/// Mutual TLS through CAF's OpenSSL module: this process's certificate
/// chain and key, and the CA that peers' certificates must chain to.
struct tls_options {
  std::string cert, key, ca;
  bool any() const { return !cert.empty() || !key.empty() || !ca.empty(); }
};

/// Why the TLS options cannot work (all three are needed, each file must
/// load, the key must match the certificate); empty when they can. CAF's
/// OpenSSL module would abort the process on a file it cannot load, so
/// this runs before any connection.
std::string check_tls(const tls_options& tls);

/// Adds --tls-cert, --tls-key and --tls-ca to a subcommand.
void add_tls_options(CLI::App& app, tls_options& tls);

/// Loads the middleman (and the OpenSSL module when TLS is on), sets the
/// heartbeat and `peer_timeout`, two scheduler threads, CAF's own logging off,
/// and registers proofline's message types.
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

/// "host:pid", naming this process in logs and metrics.
std::string process_name();

/// Whole-file reads; throw std::runtime_error naming the path.
std::vector<uint8_t> read_bytes(const std::string& path);
std::string read_text(const std::string& path);

}  // namespace proofline::app
