// TLS credentials of a proofline installation: a directory holding a CA and
// one peer certificate signed by it, which every proofline process of the
// installation (server, nodes, clients) presents and checks.
//
// Why every listener uses TLS: CAF 0.17.6's BASP parser trusts the header of
// the first message a peer sends (a handshake header announcing an empty
// payload dereferences a null pointer; a large announced length is allocated
// up front). With mutual TLS the OpenSSL handshake runs first and a peer
// without a certificate from the CA is dropped before BASP reads a byte.
//
// Layout of a credential directory (mode 0700; keys 0600):
//   ca.pem     the CA certificate peers must chain to
//   ca.key     the CA's private key (only in the directory that created it;
//              `proofline tls issue` uses it to certify other machines)
//   peer.pem   this installation's certificate, signed by the CA
//   peer.key   its private key
#pragma once

#include <string>

namespace proofline::net {

/// OpenSSL's error queue of this thread as text (emptying it), or "unknown
/// OpenSSL error".
std::string openssl_error_text();

/// The credential directory used when no --tls-dir or TLS file is given:
/// $PROOFLINE_TLS_DIR, else $XDG_CONFIG_HOME/proofline/tls, else
/// $HOME/.config/proofline/tls. Empty when none of these variables is set.
std::string default_tls_dir();

/// The files of a credential directory.
struct tls_files {
  std::string ca, cert, key;
};
tls_files tls_files_in(const std::string& dir);

/// Whether `dir` holds ca.pem, peer.pem and peer.key.
bool tls_dir_complete(const std::string& dir);

/// Creates `dir` with a new CA (P-256, valid 10 years) and a peer
/// certificate named `name` signed by it. The files are written into a
/// temporary directory beside `dir` and renamed into place, so a process
/// never sees half a directory; when another process created `dir` first,
/// its credentials are kept and this returns false. Throws
/// std::runtime_error naming the path on failure; refuses a `dir` that exists
/// but is incomplete.
bool tls_init(const std::string& dir, const std::string& name);

/// Writes into `out_dir` (created, must not hold credentials yet) a peer
/// certificate named `name` signed by the CA in `ca_dir` (which must hold
/// ca.key), with ca.pem beside it and without the CA's key. Throws
/// std::runtime_error naming the path on failure.
void tls_issue(const std::string& ca_dir, const std::string& out_dir, const std::string& name);

}  // namespace proofline::net
