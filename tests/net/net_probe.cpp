// net_probe: a misbehaving CAF peer for the net tests. It connects to a
// `proofline serve` the way any CAF 0.17 node can (BASP handshake through the
// middleman, no interface check) and sends the control actor messages a
// proofline client never would:
//
//   net_probe unexpected HOST PORT   a string, an integer and a submit with the
//                                    wrong argument type
//   net_probe bomb HOST PORT         messages whose types carry proofline's
//                                    registered names but whose bytes claim a
//                                    string of 2^40 bytes and one of 2^62 bytes
//   net_probe variant HOST PORT      a config value and a node ID of the uri
//                                    kind whose variant type tags are out of
//                                    range (CAF's decoder throws on them), each
//                                    on a connection of its own
//
// It exits 0 once the messages are sent and the connection answered or
// closed; the test then checks that the server still serves. With
// PROOFLINE_TLS_DIR set it connects through CAF's OpenSSL module with that
// directory's credentials (ca.pem, peer.pem, peer.key): a peer that holds a
// certificate and still misbehaves.
#include <caf/all.hpp>
#include <caf/io/all.hpp>
#include <caf/openssl/all.hpp>

#include <cstdlib>

#include <cstdint>
#include <iostream>
#include <string>
#include <type_traits>

namespace {

/// Serializes as a sequence header claiming `claimed` elements and nothing
/// after it: what a deserializer reads as an enormous string or byte vector.
struct length_bomb {
  uint64_t claimed = 0;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, length_bomb& x) {
  if constexpr (std::is_same<typename Inspector::result_type, caf::error>::value) {
    size_t n = static_cast<size_t>(x.claimed);  // (de)serializers: a bare sequence header
    if (auto err = f.begin_sequence(n)) return err;
    return f.end_sequence();
  } else {
    return f(x.claimed);  // printing
  }
}

/// Registered under the name of proofline's job_submission, whose first
/// field is a string.
struct fake_submission {
  length_bomb name;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, fake_submission& x) {
  return f(caf::meta::type_name("fake_submission"), x.name);
}

/// Registered under the name of proofline's inline_witness (string, bytes).
struct fake_witness {
  std::string path;
  length_bomb bytes;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, fake_witness& x) {
  return f(caf::meta::type_name("fake_witness"), x.path, x.bytes);
}

/// Registered under CAF's name of caf::config_value: a variant tag no
/// config value has.
struct fake_config_value {
  uint8_t tag = 0x7f;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, fake_config_value& x) {
  return f(caf::meta::type_name("fake_config_value"), x.tag);
}

/// Registered under CAF's name of caf::node_id: a node ID of the uri kind
/// whose URI's host (a variant of a name and an IP address) has a tag of
/// neither.
struct fake_uri_node {
  caf::atom_value kind = caf::atom("uri");
  std::string scheme = "tcp";
  std::string userinfo;
  uint8_t host_tag = 0x7f;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, fake_uri_node& x) {
  return f(caf::meta::type_name("fake_uri_node"), x.kind, x.scheme, x.userinfo, x.host_tag);
}

struct config : caf::actor_system_config {
  explicit config(const char* tls_dir) {
    load<caf::io::middleman>();
    if (tls_dir) {
      load<caf::openssl::manager>();
      std::string dir(tls_dir);
      openssl_cafile = dir + "/ca.pem";
      openssl_certificate = dir + "/peer.pem";
      openssl_key = dir + "/peer.key";
    }
    add_message_type<fake_submission>("proofline::job_submission");
    add_message_type<fake_witness>("proofline::inline_witness");
    add_message_type<fake_config_value>("@config_value");
    add_message_type<fake_uri_node>("@node");
    set("logger.console-verbosity", caf::atom("quiet"));
    set("middleman.heartbeat-interval", caf::timespan{std::chrono::milliseconds(500)});
  }
};

}  // namespace

using submit_atom = caf::atom_constant<caf::atom("submit")>;

int main(int argc, char** argv) {
  if (argc != 4) {
    std::cerr << "usage: net_probe unexpected|bomb|variant HOST PORT\n";
    return 2;
  }
  std::string mode = argv[1];
  const char* tls_dir = std::getenv("PROOFLINE_TLS_DIR");
  config cfg{tls_dir && *tls_dir ? tls_dir : nullptr};
  caf::actor_system sys{cfg};
  caf::scoped_actor self{sys};
  caf::actor target;
  auto connector = tls_dir && *tls_dir ? sys.openssl_manager().actor_handle()
                                       : sys.middleman().actor_handle();
  auto connect = [&] {
    target = nullptr;
    self->request(connector, std::chrono::seconds(5), caf::connect_atom::value,
                  std::string(argv[2]), static_cast<uint16_t>(std::stoi(argv[3])))
        .receive(
            [&](const caf::node_id&, caf::strong_actor_ptr& ptr, std::set<std::string>&) {
              target = caf::actor_cast<caf::actor>(ptr);
            },
            [&](caf::error& e) { std::cerr << "net_probe: " << sys.render(e) << "\n"; });
    return static_cast<bool>(target);
  };
  if (!connect()) return 1;
  auto ask = [&](auto... xs) {
    self->request(target, std::chrono::seconds(3), xs...)
        .receive([&](caf::message& m) { std::cout << "reply " << to_string(m) << "\n"; },
                 [&](caf::error& e) { std::cout << "error " << sys.render(e) << "\n"; });
  };
  if (mode == "unexpected") {
    ask(std::string("hello"));
    ask(42);
    ask(submit_atom::value, std::string("not a job_submission"));
  } else if (mode == "bomb") {
    ask(submit_atom::value, fake_submission{{uint64_t{1} << 40}});
    ask(submit_atom::value, fake_submission{{uint64_t{1} << 62}});
    ask(submit_atom::value, fake_witness{"w", {uint64_t{1} << 40}});
  } else if (mode == "variant") {
    // The server closes the connection that sent each; the next one needs
    // a connection of its own.
    ask(fake_config_value{});
    if (!connect()) return 1;
    ask(fake_uri_node{});
  } else {
    std::cerr << "net_probe: unknown mode " << mode << "\n";
    return 2;
  }
  return 0;
}
