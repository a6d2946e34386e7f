// The one OpenSSL context of a process's TLS links, loaded from the
// credential files once (and again on SIGHUP), never per connection.
//
// Why: CAF 0.17.6's OpenSSL module builds a new context for every
// connection it accepts or opens, reading the certificate, key and CA files
// each time, and throws out of its event loop when one cannot be read: a
// moment without peer.pem (a rotation that is not atomic) or a process out
// of file descriptors (a flood of idle connections) stopped `serve` with
// "cannot load certificate". net/net_tls_fix.cpp makes CAF's module take a
// reference to the context loaded here instead; a connection gets the
// context current when it starts and keeps it until it closes.
#pragma once

#include <string>

#include <openssl/ssl.h>

namespace proofline::net {

struct tls_options;

/// A new OpenSSL context with the certificate chain, key and CA of `tls`,
/// set up as CAF's module sets up its own (peers must present a certificate
/// that chains to the CA; ciphers "HIGH:!aNULL:!MD5"), never prompting for
/// a passphrase and without session resumption, so that every connection
/// verifies its peer's certificate. Null with the problem in `why` (naming
/// the file) when the files cannot work.
SSL_CTX* make_tls_context(const tls_options& tls, std::string& why);

/// Loads the files of `tls` (all three set) into the context every TLS
/// connection of this process starts with from now on. Returns the problem
/// (as make_tls_context) and changes nothing when they cannot work.
std::string install_tls_context(const tls_options& tls);

/// Loads the installed files again. On success new connections use the new
/// context and `loaded` names the files; otherwise the context in use stays
/// and the problem is returned. Connections already open keep theirs.
std::string reload_tls_context(std::string& loaded);

/// A new reference to the installed context (the caller frees it with
/// SSL_CTX_free), or null when none is installed.
SSL_CTX* acquire_tls_context();

/// Makes SIGHUP reload the installed credentials (reload_tls_context) on a
/// thread of its own, logging the outcome, instead of ending the process;
/// without installed credentials (--insecure) SIGHUP is logged and ignored.
/// Call once, in a daemon.
void reload_tls_on_sighup();

}  // namespace proofline::net
