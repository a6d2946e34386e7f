// Admission of the connections a process's CAF listener accepts (serve's
// --listen): what a peer that has not finished its handshake may hold.
//
// Problem: CAF 0.17.6 keeps every accepted connection for as long as the
// peer likes, with no handshake deadline and no limit, and an accept that
// fails for want of file descriptors is retried at once, forever. Idle
// connections cost about 65 KB and a descriptor each: 50 connections that
// never sent a byte stayed open for 150 s, and about 950 of them under
// `ulimit -n 1024` used up the descriptors.
//
// Design: a connection is unauthenticated from its accept until its BASP
// handshake is done (with TLS, the TLS handshake comes first). The accept
// (net/listener_guard.cpp wraps CAF's caf::policy::tcp::try_accept) admits
// it only while fewer than max_unauthenticated such connections are open,
// and fewer than max_unauthenticated_per_address from its address; others
// are closed at once. One that is still unauthenticated handshake_timeout
// after its accept is shut down (shutdown(2); CAF then closes it as a
// connection the peer closed), checked on every BASP heartbeat tick (every
// 500 ms). An accept that fails with EMFILE or ENFILE takes the waiting
// connection with a descriptor kept in reserve for that and closes it, so
// the listener neither spins nor stops. Refusals are logged as one warning
// every few seconds with their counts. The BASP guard (net/basp_guard.cpp)
// reports finished handshakes; CAF's close_socket, wrapped, reports closed
// connections, so a descriptor is never shut down after CAF reused it.
#pragma once

#include <sys/socket.h>

#include <chrono>
#include <cstddef>
#include <string>

namespace CLI {
class App;
}

namespace proofline::net {

/// What unauthenticated connections may hold (serve's flags).
struct admission_limits {
  /// A connection that has not finished its TLS and BASP handshakes this
  /// long after its accept is closed.
  unsigned handshake_timeout_s = 10;
  /// Unauthenticated connections open at once, from all addresses.
  unsigned max_unauthenticated = 256;
  /// Unauthenticated connections open at once from one address.
  unsigned max_unauthenticated_per_address = 32;
};

/// Adds --handshake-timeout, --max-unauthenticated and
/// --max-unauthenticated-per-address to a subcommand.
void add_admission_options(CLI::App& app, admission_limits& limits);

/// Sets the limits of this process's listeners (defaults without a call)
/// and sets aside the descriptor that refuses connections when the process
/// has none left.
void set_admission_limits(const admission_limits& limits);

/// The text form of a peer's address, as limits count it: IPv4 addresses
/// (IPv4-mapped IPv6 ones too) in dotted form, IPv6 as inet_ntop writes it.
std::string peer_address(const sockaddr* addr, socklen_t len);

/// The accept of `fd` from `address`: true when it is admitted (and now
/// counted as unauthenticated), false when it is over a limit (the caller
/// closes it).
bool admit_connection(int fd, const std::string& address);

/// The accept on `listener` failed with EMFILE or ENFILE: closes the
/// connection waiting there, with the reserved descriptor.
void refuse_for_lack_of_descriptors(int listener);

/// `fd` finished its handshake: it no longer counts as unauthenticated.
void handshake_finished(int fd);

/// `fd` is being closed.
void connection_closed(int fd);

/// Shuts down unauthenticated connections past their deadline and logs
/// the refusals counted since the last warning, at most one warning every
/// few seconds.
void sweep_unauthenticated();

/// Unauthenticated connections open now (tests, logs).
std::size_t unauthenticated_connections();

}  // namespace proofline::net
