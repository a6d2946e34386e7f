// Clears OpenSSL's per-thread error queue before each TLS I/O call that CAF
// 0.17.6's OpenSSL module makes.
//
// Problem: OpenSSL's SSL_get_error() reads the calling thread's error queue
// and is only reliable when the queue was empty before the I/O call (see
// SSL_get_error(3)). CAF's module never clears it, and with CAF's logging
// compiled out (Debian's build) nothing else drains it. One peer failing its
// TLS handshake therefore leaves an error in the queue of the middleman's
// thread, and from then on every SSL_read that merely has nothing to read on
// a healthy connection is taken for a fatal error and that connection is
// closed. Measured here: a node joined to a TLS coordinator lost its link at
// every heartbeat (500 ms) after one client with a wrong certificate tried
// to connect.
//
// Design: the executable defines SSL_read, SSL_write, SSL_accept and
// SSL_connect. libcaf_openssl.so looks its OpenSSL symbols up at run time and
// the executable comes first in that lookup, so its calls land here; each
// wrapper clears the queue and calls OpenSSL's own function
// (net/next_definition.hpp). Errors of the call itself stay in the queue for
// SSL_get_error. Only the executable is affected; OpenSSL's internal calls
// are untouched.
#include <openssl/err.h>
#include <openssl/ssl.h>

#include "net/next_definition.hpp"

namespace {

using proofline::net::next_definition;

using io_fn = int (*)(SSL*, void*, int);
using write_fn = int (*)(SSL*, const void*, int);
using handshake_fn = int (*)(SSL*);

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
