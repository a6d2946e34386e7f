#include "net/net_common.hpp"

#include <caf/actor_cast.hpp>
#include <caf/io/middleman.hpp>
#include <caf/openssl/manager.hpp>
#include <caf/scoped_actor.hpp>
#include <caf/sec.hpp>

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <limits>
#include <memory>
#include <thread>

#include <CLI/CLI.hpp>
#include <openssl/ssl.h>

#include "actors/detail/system_setup.hpp"
#include "net/tls_context.hpp"
#include "net/tls_credentials.hpp"
#include "zk/formats/whole_file.hpp"

namespace proofline::net {

namespace {

/// Pause between connection attempts.
constexpr std::chrono::milliseconds retry_pause{200};

}  // namespace

std::string endpoint::text() const {
  bool v6 = host.find(':') != std::string::npos;
  return (v6 ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

std::optional<endpoint> parse_endpoint(const std::string& s, std::string& why) {
  auto colon = s.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == s.size()) {
    why = "expected HOST:PORT, got \"" + s + "\"";
    return std::nullopt;
  }
  endpoint ep;
  ep.host = s.substr(0, colon);
  if (ep.host.size() >= 2 && ep.host.front() == '[' && ep.host.back() == ']')
    ep.host = ep.host.substr(1, ep.host.size() - 2);
  std::string port = s.substr(colon + 1);
  if (port.size() > 5 || port.find_first_not_of("0123456789") != std::string::npos ||
      std::stoul(port) > 65535) {
    why = "expected a port 0..65535 in \"" + s + "\"";
    return std::nullopt;
  }
  ep.port = static_cast<uint16_t>(std::stoul(port));
  return ep;
}

std::string check_tls(const tls_options& tls) {
  if (!tls.any()) return {};
  std::string why;
  SSL_CTX* ctx = make_tls_context(tls, why);
  SSL_CTX_free(ctx);
  return ctx ? std::string() : why;
}

std::string resolve_tls(tls_options& tls, bool create_missing, std::string& created,
                        std::chrono::milliseconds wait_for_dir) {
  bool files = tls.any();
  if (tls.insecure && (files || !tls.dir.empty()))
    return "--insecure turns TLS off: it cannot go with --tls-dir or --tls-cert/--tls-key/--tls-ca";
  if (tls.insecure) return {};
  if (files) {
    if (!tls.dir.empty())
      return "--tls-dir and --tls-cert/--tls-key/--tls-ca exclude each other";
    return install_tls_context(tls);
  }
  std::string dir = tls.dir.empty() ? default_tls_dir() : tls.dir;
  if (dir.empty())
    return "no TLS credential directory: HOME is not set; give --tls-dir DIR (or set "
           "PROOFLINE_TLS_DIR)";
  // A client started beside its server may look before the server made them.
  auto deadline = std::chrono::steady_clock::now() + wait_for_dir;
  while (!create_missing && !tls_dir_complete(dir) && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(retry_pause);
  if (!tls_dir_complete(dir)) {
    if (!create_missing)
      return "no TLS credentials in " + dir +
             " (ca.pem, peer.pem, peer.key): `proofline serve` creates them at its first "
             "start; for another machine run `proofline tls issue` where they are and copy "
             "the result here (see `proofline tls --help`)";
    try {
      if (tls_init(dir, host_name())) created = dir;
    } catch (const std::exception& e) {
      return std::string("cannot create TLS credentials: ") + e.what();
    }
  }
  auto f = tls_files_in(dir);
  tls.ca = f.ca;
  tls.cert = f.cert;
  tls.key = f.key;
  return install_tls_context(tls);
}

void add_tls_options(CLI::App& app, tls_options& tls, const std::string& insecure_help) {
  app.add_option("--tls-dir", tls.dir,
                 "TLS credentials (ca.pem, peer.pem, peer.key) for mutual authentication on "
                 "every link; default $PROOFLINE_TLS_DIR, else ~/.config/proofline/tls")
      ->type_name("DIR");
  app.add_option("--tls-cert", tls.cert,
                 "TLS: this process's certificate chain (PEM), instead of --tls-dir; needs "
                 "--tls-key and --tls-ca")
      ->type_name("FILE");
  app.add_option("--tls-key", tls.key, "TLS: the certificate's private key (PEM, unencrypted)")
      ->type_name("FILE");
  app.add_option("--tls-ca", tls.ca, "TLS: the CA certificate peers' certificates must chain to")
      ->type_name("FILE");
  app.add_flag("--insecure", tls.insecure, insecure_help);
}

void configure_network(caf::actor_system_config& cfg, const tls_options& tls,
                       std::chrono::milliseconds peer_timeout) {
  cfg.load<caf::io::middleman>();
  if (tls.any()) {
    cfg.load<caf::openssl::manager>();
    cfg.openssl_certificate = tls.cert;
    cfg.openssl_key = tls.key;
    cfg.openssl_cafile = tls.ca;
  }
  cfg.set("middleman.heartbeat-interval", caf::timespan{heartbeat_interval});
  cfg.set("middleman.connection-timeout", caf::timespan{peer_timeout});
  // Decode every message from a peer inside basp::instance::handle, which
  // net/basp_guard.cpp wraps, and none on CAF's BASP worker threads.
  cfg.set("middleman.workers", size_t{0});
  configure_actor_system(cfg);
}

caf::io::middleman_actor connector(caf::actor_system& sys, bool tls) {
  return tls ? sys.openssl_manager().actor_handle() : sys.middleman().actor_handle();
}

control_actor connect_control(caf::actor_system& sys, const endpoint& ep, bool tls,
                              std::chrono::milliseconds patience, std::string& why) {
  using clock = std::chrono::steady_clock;
  auto deadline = clock::now() + patience;
  caf::scoped_actor self{sys};
  auto conn = connector(sys, tls);
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - clock::now());
    auto attempt = std::max(left, std::chrono::milliseconds(1000));
    control_actor found;
    self->request(conn, attempt, caf::connect_atom::value, ep.host, ep.port)
        .receive(
            [&](const caf::node_id&, caf::strong_actor_ptr& ptr, std::set<std::string>& ifs) {
              if (!ptr)
                why = "no actor is published at " + ep.text();
              else if (!sys.assignable<control_actor>(ifs))
                why = ep.text() + " is not a proofline server of this version (its interface "
                                  "differs)";
              else
                found = caf::actor_cast<control_actor>(ptr);
            },
            [&](caf::error& e) { why = network_error_text(sys, e, ep, tls); });
    if (found) return found;
    if (clock::now() + retry_pause >= deadline) return {};
    std::this_thread::sleep_for(retry_pause);
  }
}

std::string network_error_text(caf::actor_system& sys, const caf::error& e, const endpoint& ep,
                               bool tls) {
  std::string raw = sys.render(e);
  if (e.category() != caf::atom("system")) return raw;
  switch (static_cast<caf::sec>(e.code())) {
    case caf::sec::cannot_connect_to_node:
      return "nothing answers at " + ep.text() + ": is `proofline serve` running there? (" + raw +
             ")";
    case caf::sec::cannot_open_port:
      return "cannot listen on " + ep.text() +
             ": the port is in use (another `proofline serve`?) or the address is not this "
             "machine's (" + raw + ")";
    case caf::sec::disconnect_during_handshake:
      return std::string("the server closed the connection during the handshake: ") +
             (tls ? "its TLS credentials come from another CA than this side's, or it runs "
                    "--insecure"
                  : "it expects TLS (this side runs --insecure)") +
             " (" + raw + ")";
    default:
      return raw;
  }
}

std::string host_name() {
  char host[256] = {};
  if (gethostname(host, sizeof(host) - 1) != 0) std::strcpy(host, "localhost");
  return host;
}

std::string process_name() { return host_name() + ":" + std::to_string(getpid()); }

std::vector<uint8_t> read_bytes(const std::string& path) {
  return zk::formats::read_whole_file_bytes(path, std::numeric_limits<uint64_t>::max());
}

std::string read_text(const std::string& path) {
  return zk::formats::read_whole_file(path, max_text_file_bytes);
}

}  // namespace proofline::net
