#include "net/tls_credentials.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <stdexcept>

#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

namespace proofline::net {

namespace {

namespace fs = std::filesystem;

constexpr long validity_days = 3650;

template <class T, void (*Free)(T*)>
struct deleter {
  void operator()(T* p) const { Free(p); }
};
using pkey_ptr = std::unique_ptr<EVP_PKEY, deleter<EVP_PKEY, EVP_PKEY_free>>;
using x509_ptr = std::unique_ptr<X509, deleter<X509, X509_free>>;

[[noreturn]] void fail(const std::string& what) {
  throw std::runtime_error(what + " (" + openssl_error_text() + ")");
}

pkey_ptr new_key() {
  pkey_ptr key(EVP_EC_gen("P-256"));
  if (!key) fail("cannot generate a P-256 key");
  return key;
}

void add_extension(X509* cert, X509* issuer, int nid, const char* value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
  X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value);
  if (!ext || X509_add_ext(cert, ext, -1) != 1) {
    X509_EXTENSION_free(ext);
    fail(std::string("cannot add the certificate extension ") + OBJ_nid2sn(nid));
  }
  X509_EXTENSION_free(ext);
}

/// A certificate for `key` named `name`, signed by `issuer_key`; self-signed
/// (a CA) when `issuer` is null.
x509_ptr make_certificate(EVP_PKEY* key, const std::string& name, X509* issuer,
                          EVP_PKEY* issuer_key) {
  x509_ptr cert(X509_new());
  if (!cert || X509_set_version(cert.get(), 2) != 1) fail("cannot create a certificate");
  unsigned char serial[16];
  if (RAND_bytes(serial, sizeof(serial)) != 1) fail("no randomness for a serial number");
  serial[0] &= 0x7f;  // positive
  std::unique_ptr<BIGNUM, deleter<BIGNUM, BN_free>> bn(BN_bin2bn(serial, sizeof(serial), nullptr));
  if (!bn || !BN_to_ASN1_INTEGER(bn.get(), X509_get_serialNumber(cert.get())))
    fail("cannot set a serial number");
  X509_gmtime_adj(X509_getm_notBefore(cert.get()), -3600);  // tolerate clock skew
  X509_gmtime_adj(X509_getm_notAfter(cert.get()), validity_days * 24 * 3600);
  X509_NAME* subject = X509_get_subject_name(cert.get());
  X509_NAME_add_entry_by_txt(subject, "O", MBSTRING_UTF8,
                             reinterpret_cast<const unsigned char*>("proofline"), -1, -1, 0);
  X509_NAME_add_entry_by_txt(subject, "CN", MBSTRING_UTF8,
                             reinterpret_cast<const unsigned char*>(name.c_str()), -1, -1, 0);
  X509* signer = issuer ? issuer : cert.get();
  if (X509_set_issuer_name(cert.get(), X509_get_subject_name(signer)) != 1 ||
      X509_set_pubkey(cert.get(), key) != 1)
    fail("cannot fill in a certificate");
  if (issuer) {
    add_extension(cert.get(), signer, NID_basic_constraints, "critical,CA:FALSE");
    add_extension(cert.get(), signer, NID_key_usage, "critical,digitalSignature,keyAgreement");
    add_extension(cert.get(), signer, NID_ext_key_usage, "serverAuth,clientAuth");
  } else {
    add_extension(cert.get(), signer, NID_basic_constraints, "critical,CA:TRUE,pathlen:0");
    add_extension(cert.get(), signer, NID_key_usage, "critical,keyCertSign,cRLSign");
  }
  add_extension(cert.get(), signer, NID_subject_key_identifier, "hash");
  if (X509_sign(cert.get(), issuer ? issuer_key : key, EVP_sha256()) == 0)
    fail("cannot sign the certificate for " + name);
  return cert;
}

/// Writes with `write` into `path`, created with `mode`.
template <class Write>
void write_pem(const fs::path& path, mode_t mode, Write write) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL, mode);
  if (fd < 0) throw std::runtime_error(path.string() + ": cannot create: " + std::strerror(errno));
  FILE* f = fdopen(fd, "w");
  if (!f) {
    ::close(fd);
    throw std::runtime_error(path.string() + ": cannot open: " + std::strerror(errno));
  }
  bool ok = write(f) == 1;
  ok = (std::fflush(f) == 0) && ok && fsync(fileno(f)) == 0;
  ok = (std::fclose(f) == 0) && ok;
  if (!ok) fail(path.string() + ": cannot write");
}

void write_key(const fs::path& path, EVP_PKEY* key) {
  write_pem(path, 0600, [&](FILE* f) {
    return PEM_write_PrivateKey(f, key, nullptr, nullptr, 0, nullptr, nullptr);
  });
}

void write_cert(const fs::path& path, X509* cert) {
  write_pem(path, 0644, [&](FILE* f) { return PEM_write_X509(f, cert); });
}

template <class T, class Read>
T read_pem(const fs::path& path, Read read) {
  FILE* f = std::fopen(path.c_str(), "r");
  if (!f) throw std::runtime_error(path.string() + ": cannot open: " + std::strerror(errno));
  T obj(read(f));
  std::fclose(f);
  if (!obj) fail(path.string() + ": not a PEM file of the expected kind");
  return obj;
}

/// A fresh private directory beside `dir` for writing credentials into.
fs::path staging_dir(const fs::path& dir) {
  fs::path parent = dir.parent_path().empty() ? fs::path(".") : dir.parent_path();
  std::error_code ec;
  fs::create_directories(parent, ec);
  if (ec) throw std::runtime_error(parent.string() + ": cannot create: " + ec.message());
  fs::path tmp = parent / (dir.filename().string() + ".tmp." + std::to_string(getpid()));
  fs::remove_all(tmp, ec);
  if (::mkdir(tmp.c_str(), 0700) != 0)
    throw std::runtime_error(tmp.string() + ": cannot create: " + std::strerror(errno));
  return tmp;
}

/// Renames the staged directory to `dir`; false when `dir` appeared first.
bool publish(const fs::path& tmp, const fs::path& dir) {
  if (::rename(tmp.c_str(), dir.c_str()) == 0) return true;
  int e = errno;
  std::error_code ec;
  fs::remove_all(tmp, ec);
  if ((e == ENOTEMPTY || e == EEXIST) && tls_dir_complete(dir.string())) return false;
  throw std::runtime_error(dir.string() + ": cannot create: " + std::strerror(e));
}

void write_peer(const fs::path& into, X509* ca, EVP_PKEY* ca_key, const std::string& name) {
  auto key = new_key();
  auto cert = make_certificate(key.get(), name, ca, ca_key);
  write_key(into / "peer.key", key.get());
  write_cert(into / "peer.pem", cert.get());
}

}  // namespace

std::string openssl_error_text() {
  std::string msg;
  while (auto code = ERR_get_error()) {
    char buf[256];
    ERR_error_string_n(code, buf, sizeof(buf));
    msg += (msg.empty() ? "" : "; ") + std::string(buf);
  }
  return msg.empty() ? std::string("unknown OpenSSL error") : msg;
}

std::string default_tls_dir() {
  if (const char* d = std::getenv("PROOFLINE_TLS_DIR"); d && *d) return d;
  if (const char* x = std::getenv("XDG_CONFIG_HOME"); x && *x)
    return (fs::path(x) / "proofline" / "tls").string();
  if (const char* h = std::getenv("HOME"); h && *h)
    return (fs::path(h) / ".config" / "proofline" / "tls").string();
  return {};
}

tls_files tls_files_in(const std::string& dir) {
  fs::path d(dir);
  return {(d / "ca.pem").string(), (d / "peer.pem").string(), (d / "peer.key").string()};
}

bool tls_dir_complete(const std::string& dir) {
  auto f = tls_files_in(dir);
  std::error_code ec;
  return fs::is_regular_file(f.ca, ec) && fs::is_regular_file(f.cert, ec) &&
         fs::is_regular_file(f.key, ec);
}

bool tls_init(const std::string& dir, const std::string& name) {
  std::error_code ec;
  if (fs::exists(dir, ec)) {
    if (tls_dir_complete(dir)) return false;
    throw std::runtime_error(dir + ": exists but does not hold ca.pem, peer.pem and peer.key; "
                                   "remove it or name another directory");
  }
  fs::path tmp = staging_dir(dir);
  try {
    auto ca_key = new_key();
    auto ca = make_certificate(ca_key.get(), "proofline CA " + name, nullptr, nullptr);
    write_key(tmp / "ca.key", ca_key.get());
    write_cert(tmp / "ca.pem", ca.get());
    write_peer(tmp, ca.get(), ca_key.get(), name);
  } catch (...) {
    fs::remove_all(tmp, ec);
    throw;
  }
  return publish(tmp, dir);
}

void tls_issue(const std::string& ca_dir, const std::string& out_dir, const std::string& name) {
  fs::path ca_path = fs::path(ca_dir) / "ca.pem", ca_key_path = fs::path(ca_dir) / "ca.key";
  auto ca = read_pem<x509_ptr>(ca_path, [](FILE* f) {
    return PEM_read_X509(f, nullptr, nullptr, nullptr);
  });
  auto ca_key = read_pem<pkey_ptr>(ca_key_path, [](FILE* f) {
    return PEM_read_PrivateKey(f, nullptr, nullptr, nullptr);
  });
  if (X509_check_private_key(ca.get(), ca_key.get()) != 1)
    fail(ca_key_path.string() + ": does not match " + ca_path.string());
  std::error_code ec;
  if (fs::exists(out_dir, ec))
    throw std::runtime_error(out_dir + ": exists already; name a new directory");
  fs::path tmp = staging_dir(out_dir);
  try {
    write_cert(tmp / "ca.pem", ca.get());
    write_peer(tmp, ca.get(), ca_key.get(), name);
  } catch (...) {
    fs::remove_all(tmp, ec);
    throw;
  }
  if (!publish(tmp, out_dir)) throw std::runtime_error(out_dir + ": created meanwhile by another process");
}

}  // namespace proofline::net
