// Two fixes to CAF 0.17.6's OpenSSL module, by defining in the executable
// functions that libcaf_openssl.so looks up at run time: the executable
// comes first in that lookup, so its calls land here, and each wrapper calls
// the library's own function where it needs one (net/next_definition.hpp).
// Only the executable is affected; OpenSSL's internal calls are untouched.
//
// 1. OpenSSL's error queue is cleared before each TLS I/O call the module
//    makes (SSL_read, SSL_write, SSL_accept, SSL_connect).
//    Problem: OpenSSL's SSL_get_error() reads the calling thread's error
//    queue and is only reliable when the queue was empty before the I/O call
//    (see SSL_get_error(3)). CAF's module never clears it, and with CAF's
//    logging compiled out (Debian's build) nothing else drains it. One peer
//    failing its TLS handshake therefore leaves an error in the queue of the
//    middleman's thread, and from then on every SSL_read that merely has
//    nothing to read on a healthy connection is taken for a fatal error and
//    that connection is closed. Measured here: a node joined to a TLS
//    coordinator lost its link at every heartbeat (500 ms) after one client
//    with a wrong certificate tried to connect. Errors of the call itself
//    stay in the queue for SSL_get_error.
//
// 2. Every connection starts with the process's one context
//    (net/tls_context.hpp), loaded from the files once, in place of
//    caf::openssl::session::create_ssl_context.
//    Problem: the module's version reads the certificate, key and CA files
//    for every connection it accepts or opens and throws when one cannot be
//    read; nothing catches it, so the process ended (exit 134, "cannot load
//    certificate") whenever a connection arrived while peer.pem was being
//    replaced or while the process was out of file descriptors. Here the
//    session takes a reference to the installed context (its destructor
//    frees that reference). A process that installed none gets the module's
//    own context; should that throw, the connection fails instead of the
//    process (the session then has no context, and CAF refuses it).
//
// 3. A handshake this process refuses as a server is logged, naming the
//    peer's address and OpenSSL's reason, at most once a minute per
//    address (refusal_log below): CAF's module closes such a connection
//    without a word, so a client with credentials of another CA saw its
//    connection fail while the server's log said nothing. The limit keeps a
//    flood of bad handshakes from flooding the log too.
#include <caf/openssl/session.hpp>

#include <openssl/err.h>
#include <openssl/ssl.h>

#include <sys/socket.h>

#include <spdlog/spdlog.h>

#include <chrono>
#include <exception>
#include <mutex>
#include <string>
#include <unordered_map>

#include "net/admission.hpp"
#include "net/next_definition.hpp"
#include "net/tls_context.hpp"

namespace {

using proofline::net::next_definition;

using io_fn = int (*)(SSL*, void*, int);
using write_fn = int (*)(SSL*, const void*, int);
using handshake_fn = int (*)(SSL*);
using context_fn = SSL_CTX* (*)(caf::openssl::session*);

/// The address of the socket's peer in the admission limits' form
/// (net/admission.hpp), or "an unknown address".
std::string peer_of(int fd) {
  sockaddr_storage sa{};
  socklen_t len = sizeof sa;
  if (fd < 0 || getpeername(fd, reinterpret_cast<sockaddr*>(&sa), &len) != 0)
    return "an unknown address";
  return proofline::net::peer_address(reinterpret_cast<const sockaddr*>(&sa), len);
}

/// Which peer addresses had a refusal logged, and when: one line per
/// address a minute. Bounded: past max_addresses, entries older than the
/// window go, and if all are recent the table starts over (a flood from
/// many addresses then logs one line per address at most once more).
class refusal_log {
 public:
  static constexpr auto window = std::chrono::seconds(60);
  static constexpr std::size_t max_addresses = 4096;

  /// Whether a refusal from `address` at `now` is to be logged.
  bool admit(const std::string& address, std::chrono::steady_clock::time_point now) {
    // Accepts run on the middleman's one thread; the lock keeps the table
    // whole should another thread ever accept.
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = last_.find(address);
    if (it != last_.end() && now - it->second < window) return false;
    if (it == last_.end() && last_.size() >= max_addresses) {
      for (auto e = last_.begin(); e != last_.end();)
        e = now - e->second >= window ? last_.erase(e) : std::next(e);
      if (last_.size() >= max_addresses) last_.clear();
    }
    last_[address] = now;
    return true;
  }

 private:
  std::mutex mutex_;
  std::unordered_map<std::string, std::chrono::steady_clock::time_point> last_;
};

/// Logs a handshake `ssl` failed with `rc` as a refusal when it is one (not
/// a handshake still waiting for bytes), rate-limited per address. Leaves
/// OpenSSL's error queue as it is, for the caller's SSL_get_error.
void note_refused_handshake(SSL* ssl, int rc) {
  const int kind = SSL_get_error(ssl, rc);
  if (kind == SSL_ERROR_WANT_READ || kind == SSL_ERROR_WANT_WRITE) return;
  static refusal_log log;
  const std::string address = peer_of(SSL_get_fd(ssl));
  if (!log.admit(address, std::chrono::steady_clock::now())) return;
  std::string reason = "the connection ended during the handshake";
  if (const unsigned long e = ERR_peek_last_error()) {
    if (const char* r = ERR_reason_error_string(e)) reason = r;
  } else if (kind == SSL_ERROR_SSL) {
    reason = "a TLS protocol error";
  }
  const long verify = SSL_get_verify_result(ssl);
  if (verify != X509_V_OK) reason += std::string(" (") + X509_verify_cert_error_string(verify) + ")";
  spdlog::warn(
      "network: refused a TLS handshake from {}: {}; a client needs a certificate from this "
      "server's CA (`proofline tls issue`); further refusals from {} are not logged for {} s",
      address, reason, address, std::chrono::seconds(refusal_log::window).count());
}

}  // namespace

extern "C" {

int SSL_read(SSL* ssl, void* buf, int num) {
  static const auto real = next_definition<io_fn>("SSL_read");
  ERR_clear_error();
  return real(ssl, buf, num);
}

int SSL_write(SSL* ssl, const void* buf, int num) {
  static const auto real = next_definition<write_fn>("SSL_write");
  ERR_clear_error();
  return real(ssl, buf, num);
}

int SSL_accept(SSL* ssl) {
  static const auto real = next_definition<handshake_fn>("SSL_accept");
  ERR_clear_error();
  const int rc = real(ssl);
  if (rc <= 0) note_refused_handshake(ssl, rc);
  return rc;
}

int SSL_connect(SSL* ssl) {
  static const auto real = next_definition<handshake_fn>("SSL_connect");
  ERR_clear_error();
  return real(ssl);
}

}  // extern "C"

SSL_CTX* caf::openssl::session::create_ssl_context() {
  if (SSL_CTX* ctx = proofline::net::acquire_tls_context()) return ctx;
  // libcaf_openssl's session::create_ssl_context().
  static const auto real =
      next_definition<context_fn>("_ZN3caf7openssl7session18create_ssl_contextEv");
  try {
    return real(this);
  } catch (const std::exception& e) {
    spdlog::warn("network: a TLS connection failed: {}", e.what());
  }
  return nullptr;
}
