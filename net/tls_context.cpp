#include "net/tls_context.hpp"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <memory>
#include <mutex>
#include <thread>

#include <openssl/err.h>
#include <spdlog/spdlog.h>

#include "memory/process.hpp"
#include "net/net_common.hpp"
#include "net/tls_credentials.hpp"

namespace proofline::net {

namespace {

/// Refuses to prompt for a passphrase: OpenSSL would prompt on the
/// terminal of a daemon.
int no_passphrase(char*, int, int, void*) { return 0; }

std::string readable(const std::string& path) {
  std::ifstream in(path);
  if (!in) return path + ": cannot open: " + std::strerror(errno);
  return {};
}

using ctx_ptr = std::unique_ptr<SSL_CTX, decltype(&SSL_CTX_free)>;

/// The installed context and the files it came from. Never destroyed: CAF's
/// threads may start connections until the process ends.
struct installed_context {
  std::mutex mutex;
  SSL_CTX* ctx = nullptr;  // one reference owned here
  std::string cert, key, ca;
};

installed_context& installed() {
  static auto* state = new installed_context;
  return *state;
}

/// Replaces the installed context by `ctx` (taking its reference).
void install(SSL_CTX* ctx, const tls_options& tls) {
  auto& s = installed();
  SSL_CTX* old = nullptr;
  {
    std::lock_guard<std::mutex> lock(s.mutex);
    old = s.ctx;
    s.ctx = ctx;
    s.cert = tls.cert;
    s.key = tls.key;
    s.ca = tls.ca;
  }
  SSL_CTX_free(old);  // connections that hold it keep it alive
}

/// The write end of the self-pipe SIGHUP's handler writes to.
int sighup_pipe = -1;

void on_sighup(int) {
  const int saved = errno;
  const char byte = 1;
  [[maybe_unused]] auto n = ::write(sighup_pipe, &byte, 1);  // full pipe: a reload is due anyway
  errno = saved;
}

void reload_loop(int read_end) {
  memory::set_thread_name("pl.tls-reload");
  sigset_t all;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, nullptr);  // the signals go to the threads that handle them
  for (;;) {
    char buf[64];
    ssize_t n = ::read(read_end, buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    std::string loaded;
    {
      auto& s = installed();
      std::lock_guard<std::mutex> lock(s.mutex);
      if (!s.ctx) {
        spdlog::info("serve: SIGHUP: no TLS credentials to reload (--insecure); ignored");
        continue;
      }
    }
    if (auto problem = reload_tls_context(loaded); !problem.empty())
      spdlog::warn("serve: SIGHUP: kept the TLS credentials in use: {}", problem);
    else
      spdlog::info("serve: SIGHUP: reloaded the TLS credentials ({}); new connections use them",
                   loaded);
  }
}

}  // namespace

SSL_CTX* make_tls_context(const tls_options& tls, std::string& why) {
  if (tls.cert.empty() || tls.key.empty() || tls.ca.empty()) {
    why = "TLS needs all of --tls-cert, --tls-key and --tls-ca (mutual authentication)";
    return nullptr;
  }
  for (const auto* f : {&tls.cert, &tls.key, &tls.ca})
    if (auto problem = readable(*f); !problem.empty()) {
      why = problem;
      return nullptr;
    }
  ctx_ptr ctx(SSL_CTX_new(TLS_method()), SSL_CTX_free);
  if (!ctx) {
    why = "cannot create an OpenSSL context: " + openssl_error_text();
    return nullptr;
  }
  SSL_CTX_set_default_passwd_cb(ctx.get(), no_passphrase);
  ERR_clear_error();
  if (SSL_CTX_use_certificate_chain_file(ctx.get(), tls.cert.c_str()) != 1) {
    why = tls.cert + ": not a PEM certificate chain (" + openssl_error_text() + ")";
    return nullptr;
  }
  {  // the key alone first, so a key of another certificate is named as such
    ctx_ptr alone(SSL_CTX_new(TLS_method()), SSL_CTX_free);
    if (alone) SSL_CTX_set_default_passwd_cb(alone.get(), no_passphrase);
    if (!alone ||
        SSL_CTX_use_PrivateKey_file(alone.get(), tls.key.c_str(), SSL_FILETYPE_PEM) != 1) {
      why = tls.key + ": not an unencrypted PEM private key (" + openssl_error_text() + ")";
      return nullptr;
    }
  }
  if (SSL_CTX_use_PrivateKey_file(ctx.get(), tls.key.c_str(), SSL_FILETYPE_PEM) != 1 ||
      SSL_CTX_check_private_key(ctx.get()) != 1) {
    ERR_clear_error();
    why = tls.key + ": does not match the certificate " + tls.cert;
    return nullptr;
  }
  if (SSL_CTX_load_verify_locations(ctx.get(), tls.ca.c_str(), nullptr) != 1) {
    why = tls.ca + ": not a PEM CA certificate (" + openssl_error_text() + ")";
    return nullptr;
  }
  // As CAF's module (libcaf_openssl session::create_ssl_context) with
  // authentication: both sides present certificates.
  SSL_CTX_set_verify(ctx.get(), SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, nullptr);
  if (SSL_CTX_set_cipher_list(ctx.get(), "HIGH:!aNULL:!MD5") != 1) {
    why = "cannot set the TLS cipher list (" + openssl_error_text() + ")";
    return nullptr;
  }
  // One context serves every connection: no session cache and no tickets,
  // so a peer is verified by its certificate on every connection, as when
  // each connection had a context of its own.
  SSL_CTX_set_session_cache_mode(ctx.get(), SSL_SESS_CACHE_OFF);
  SSL_CTX_set_options(ctx.get(), SSL_OP_NO_TICKET);
  return ctx.release();
}

std::string install_tls_context(const tls_options& tls) {
  std::string why;
  SSL_CTX* ctx = make_tls_context(tls, why);
  if (!ctx) return why;
  install(ctx, tls);
  return {};
}

std::string reload_tls_context(std::string& loaded) {
  tls_options files;
  {
    auto& s = installed();
    std::lock_guard<std::mutex> lock(s.mutex);
    if (!s.ctx) return "no TLS credentials are installed";
    files.cert = s.cert;
    files.key = s.key;
    files.ca = s.ca;
  }
  std::string why;
  SSL_CTX* ctx = make_tls_context(files, why);
  if (!ctx) return why;
  install(ctx, files);
  loaded = files.cert + ", " + files.key + ", " + files.ca;
  return {};
}

SSL_CTX* acquire_tls_context() {
  auto& s = installed();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (s.ctx) SSL_CTX_up_ref(s.ctx);
  return s.ctx;
}

void reload_tls_on_sighup() {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    spdlog::warn("serve: no SIGHUP reload of the TLS credentials: pipe: {}", std::strerror(errno));
    return;
  }
  ::fcntl(fds[1], F_SETFL, O_NONBLOCK);  // the handler never blocks
  sighup_pipe = fds[1];
  std::thread(reload_loop, fds[0]).detach();
  struct sigaction sa {};
  sa.sa_handler = on_sighup;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  ::sigaction(SIGHUP, &sa, nullptr);
}

}  // namespace proofline::net
