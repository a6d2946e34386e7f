// Puts the admission limits of net/admission.hpp on CAF 0.17.6's listeners,
// by defining in the executable three functions that libcaf_io.so (and
// libcaf_openssl.so) call through their PLT: the executable comes first in
// the symbol lookup, so those calls land here, and each wrapper calls the
// library's own function (net/next_definition.hpp).
//
//  * caf::policy::tcp::try_accept, which every CAF listener (plain and TLS)
//    accepts with: an accepted connection over a limit is closed before CAF
//    sees it (CAF is told nothing was waiting); an accept that failed with
//    EMFILE or ENFILE closes the waiting connection instead of leaving it
//    to be retried at once, forever.
//  * caf::io::network::close_socket, with which CAF closes every socket:
//    the connection stops counting, before its descriptor can be reused,
//    and a payload it was sending in steps (net/basp_guard.cpp) is dropped.
//  * caf::io::basp::instance::send_heartbeats, which the BASP broker calls
//    on every heartbeat tick (500 ms): unauthenticated connections past
//    their deadline are shut down there.
#include <caf/io/basp/instance.hpp>
#include <caf/io/network/native_socket.hpp>
#include <caf/policy/tcp.hpp>

#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <string>

#include "net/admission.hpp"
#include "net/basp_guard.hpp"
#include "net/next_definition.hpp"

namespace {

using proofline::net::next_definition;

using try_accept_fn = bool (*)(caf::io::network::native_socket&,
                               caf::io::network::native_socket);
using close_socket_fn = void (*)(caf::io::network::native_socket);
using heartbeats_fn = void (*)(caf::io::basp::instance*, caf::execution_unit*);

}  // namespace

bool caf::policy::tcp::try_accept(io::network::native_socket& result,
                                  io::network::native_socket fd) {
  // libcaf_io's caf::policy::tcp::try_accept(int&, int).
  static const auto real = next_definition<try_accept_fn>("_ZN3caf6policy3tcp10try_acceptERii");
  if (!real(result, fd)) {
    const int error = errno;
    if (error == EMFILE || error == ENFILE) proofline::net::refuse_for_lack_of_descriptors(fd);
    return false;
  }
  if (result == io::network::invalid_native_socket) return true;  // nothing was waiting
  sockaddr_storage addr{};
  socklen_t len = sizeof(addr);
  std::string address = ::getpeername(result, reinterpret_cast<sockaddr*>(&addr), &len) == 0
                            ? proofline::net::peer_address(reinterpret_cast<sockaddr*>(&addr), len)
                            : std::string("unknown");
  if (proofline::net::admit_connection(result, address)) return true;
  ::close(result);
  result = io::network::invalid_native_socket;
  return true;
}

void caf::io::network::close_socket(native_socket fd) {
  // libcaf_io's caf::io::network::close_socket(int).
  static const auto real = next_definition<close_socket_fn>("_ZN3caf2io7network12close_socketEi");
  proofline::net::connection_closed(fd);
  proofline::net::forget_payload_steps(fd);
  real(fd);
}

void caf::io::basp::instance::send_heartbeats(execution_unit* ctx) {
  // libcaf_io's caf::io::basp::instance::send_heartbeats(execution_unit*).
  static const auto real = next_definition<heartbeats_fn>(
      "_ZN3caf2io4basp8instance15send_heartbeatsEPNS_14execution_unitE");
  proofline::net::sweep_unauthenticated();
  real(this, ctx);
}
