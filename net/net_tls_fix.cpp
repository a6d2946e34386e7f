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
#include <caf/openssl/session.hpp>

#include <openssl/err.h>
#include <openssl/ssl.h>

#include <spdlog/spdlog.h>

#include <exception>

#include "net/next_definition.hpp"
#include "net/tls_context.hpp"

namespace {

using proofline::net::next_definition;

using io_fn = int (*)(SSL*, void*, int);
using write_fn = int (*)(SSL*, const void*, int);
using handshake_fn = int (*)(SSL*);
using context_fn = SSL_CTX* (*)(caf::openssl::session*);

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
  return real(ssl);
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
