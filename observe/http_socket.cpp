// Binding the listening socket of observe/http_server.hpp.
#include "observe/http_server.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace proofline::observe {

int bind_tcp_socket(const std::string& host, uint16_t port, std::string& why) {
  const bool v6 = host.find(':') != std::string::npos;
  int fd = ::socket(v6 ? AF_INET6 : AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    why = std::strerror(errno);
    return -1;
  }
  int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  sockaddr_storage addr{};
  socklen_t len = 0;
  int parsed = 0;
  if (v6) {
    auto* a = reinterpret_cast<sockaddr_in6*>(&addr);
    a->sin6_family = AF_INET6;
    a->sin6_port = htons(port);
    parsed = inet_pton(AF_INET6, host.c_str(), &a->sin6_addr);
    len = sizeof(sockaddr_in6);
  } else {
    auto* a = reinterpret_cast<sockaddr_in*>(&addr);
    a->sin_family = AF_INET;
    a->sin_port = htons(port);
    parsed = inet_pton(AF_INET, host.c_str(), &a->sin_addr);
    len = sizeof(sockaddr_in);
  }
  if (parsed != 1)
    why = v6 ? "not an IPv6 address" : "not an IPv4 address";
  else if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), len) != 0)
    why = std::strerror(errno);
  else
    return fd;
  ::close(fd);
  return -1;
}

}  // namespace proofline::observe
