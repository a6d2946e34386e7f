#include "net/admission.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <mutex>
#include <unordered_map>

#include <CLI/CLI.hpp>
#include <spdlog/spdlog.h>

namespace proofline::net {

namespace {

using clock = std::chrono::steady_clock;

/// At most one warning about refused or timed-out connections this often.
constexpr std::chrono::seconds warning_interval{5};

struct unauthenticated {
  std::string address;
  clock::time_point deadline;
  bool shut = false;  // shut down, waiting for CAF to close it
};

/// What was refused since the last warning.
struct refusals {
  uint64_t over_total = 0, over_address = 0, no_descriptors = 0, timed_out = 0;
  std::string last_address;
  bool any() const { return over_total + over_address + no_descriptors + timed_out > 0; }
};

/// The process's admission state. Never destroyed: CAF's threads accept
/// and close connections until the process ends.
struct admission_state {
  std::mutex mutex;
  admission_limits limits;
  std::unordered_map<int, unauthenticated> open;
  std::unordered_map<std::string, unsigned> per_address;
  refusals counted;
  clock::time_point last_warning{};
  bool warned = false;
  int reserve = -1;  // a descriptor given up to refuse a connection when none is left
};

admission_state& state() {
  static auto* s = new admission_state;
  return *s;
}

int open_reserve() { return ::open("/dev/null", O_RDONLY | O_CLOEXEC); }

/// Forgets `fd` (the caller holds the mutex).
void forget(admission_state& s, int fd) {
  auto i = s.open.find(fd);
  if (i == s.open.end()) return;
  auto a = s.per_address.find(i->second.address);
  if (a != s.per_address.end() && --a->second == 0) s.per_address.erase(a);
  s.open.erase(i);
}

/// The counts to warn about now, emptied, or none yet (the caller holds the
/// mutex).
refusals take_due(admission_state& s, clock::time_point now) {
  if (!s.counted.any() || (s.warned && now - s.last_warning < warning_interval)) return {};
  s.warned = true;
  s.last_warning = now;
  refusals due = s.counted;
  s.counted = {};
  return due;
}

void warn(const refusals& r, const admission_limits& l, std::size_t open) {
  if (!r.any()) return;
  std::string what;
  auto add = [&](uint64_t n, const std::string& why) {
    if (n == 0) return;
    what += (what.empty() ? "" : "; ") + std::to_string(n) + " " + why;
  };
  add(r.over_address, "over the limit of " + std::to_string(l.max_unauthenticated_per_address) +
                          " unauthenticated connections from one address "
                          "(--max-unauthenticated-per-address)");
  add(r.over_total, "over the limit of " + std::to_string(l.max_unauthenticated) +
                        " unauthenticated connections (--max-unauthenticated)");
  add(r.no_descriptors, "for want of file descriptors (EMFILE/ENFILE; see ulimit -n)");
  add(r.timed_out, "without a finished handshake within " + std::to_string(l.handshake_timeout_s) +
                       " s (--handshake-timeout)");
  spdlog::warn("network: refused or closed connections: {} (last from {}); {} unauthenticated "
               "connection(s) open",
               what, r.last_address.empty() ? std::string("?") : r.last_address, open);
}

}  // namespace

void add_admission_options(CLI::App& app, admission_limits& limits) {
  app.add_option("--handshake-timeout", limits.handshake_timeout_s,
                 "Close a connection that has not finished its TLS and BASP handshakes this "
                 "many seconds after it was accepted")
      ->type_name("SECONDS")
      ->check(CLI::Range(1u, 3600u))
      ->capture_default_str();
  app.add_option("--max-unauthenticated", limits.max_unauthenticated,
                 "Refuse a connection while this many others have not finished their "
                 "handshakes")
      ->type_name("N")
      ->check(CLI::Range(1u, 1000000u))
      ->capture_default_str();
  app.add_option("--max-unauthenticated-per-address", limits.max_unauthenticated_per_address,
                 "Refuse a connection while this many others from its address have not "
                 "finished their handshakes")
      ->type_name("N")
      ->check(CLI::Range(1u, 1000000u))
      ->capture_default_str();
}

void set_admission_limits(const admission_limits& limits) {
  auto& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  s.limits = limits;
  if (s.reserve < 0) s.reserve = open_reserve();
}

std::string peer_address(const sockaddr* addr, socklen_t len) {
  char text[INET6_ADDRSTRLEN] = {};
  if (addr->sa_family == AF_INET && len >= static_cast<socklen_t>(sizeof(sockaddr_in))) {
    auto* a = reinterpret_cast<const sockaddr_in*>(addr);
    if (inet_ntop(AF_INET, &a->sin_addr, text, sizeof(text))) return text;
  } else if (addr->sa_family == AF_INET6 && len >= static_cast<socklen_t>(sizeof(sockaddr_in6))) {
    auto* a = reinterpret_cast<const sockaddr_in6*>(addr);
    if (IN6_IS_ADDR_V4MAPPED(&a->sin6_addr)) {
      if (inet_ntop(AF_INET, &a->sin6_addr.s6_addr[12], text, sizeof(text))) return text;
    } else if (inet_ntop(AF_INET6, &a->sin6_addr, text, sizeof(text))) {
      return text;
    }
  }
  return "unknown";
}

bool admit_connection(int fd, const std::string& address) {
  auto& s = state();
  refusals due;
  admission_limits limits;
  std::size_t open = 0;
  bool admitted = false;
  {
    std::lock_guard<std::mutex> lock(s.mutex);
    forget(s, fd);  // a descriptor CAF closed without telling (cannot happen; cheap)
    const unsigned from_here = s.per_address.count(address) ? s.per_address[address] : 0;
    if (s.open.size() >= s.limits.max_unauthenticated) {
      ++s.counted.over_total;
      s.counted.last_address = address;
    } else if (from_here >= s.limits.max_unauthenticated_per_address) {
      ++s.counted.over_address;
      s.counted.last_address = address;
    } else {
      s.open[fd] = {address, clock::now() + std::chrono::seconds(s.limits.handshake_timeout_s)};
      ++s.per_address[address];
      admitted = true;
    }
    if (s.reserve < 0) s.reserve = open_reserve();
    due = take_due(s, clock::now());
    limits = s.limits;
    open = s.open.size();
  }
  warn(due, limits, open);
  return admitted;
}

void refuse_for_lack_of_descriptors(int listener) {
  auto& s = state();
  refusals due;
  admission_limits limits;
  std::size_t open = 0;
  {
    std::lock_guard<std::mutex> lock(s.mutex);
    ++s.counted.no_descriptors;
    // The reserved descriptor makes room to accept the waiting connection
    // and close it; the listener is readable again only for the next one.
    if (s.reserve >= 0) {
      ::close(s.reserve);
      s.reserve = -1;
    }
    sockaddr_storage addr{};
    socklen_t len = sizeof(addr);
    int c = ::accept4(listener, reinterpret_cast<sockaddr*>(&addr), &len, SOCK_CLOEXEC);
    if (c >= 0) {
      s.counted.last_address = peer_address(reinterpret_cast<sockaddr*>(&addr), len);
      ::close(c);
    }
    s.reserve = open_reserve();
    due = take_due(s, clock::now());
    limits = s.limits;
    open = s.open.size();
  }
  warn(due, limits, open);
}

void handshake_finished(int fd) {
  auto& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  forget(s, fd);
}

void connection_closed(int fd) {
  auto& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  forget(s, fd);
}

void sweep_unauthenticated() {
  auto& s = state();
  refusals due;
  admission_limits limits;
  std::size_t open = 0;
  {
    std::lock_guard<std::mutex> lock(s.mutex);
    const auto now = clock::now();
    for (auto& [fd, c] : s.open)
      if (!c.shut && now >= c.deadline) {
        // CAF sees the end of the stream and closes the connection itself;
        // holding the mutex, the descriptor cannot be closed and reused
        // meanwhile (connection_closed waits for it).
        ::shutdown(fd, SHUT_RDWR);
        c.shut = true;
        ++s.counted.timed_out;
        s.counted.last_address = c.address;
      }
    due = take_due(s, now);
    limits = s.limits;
    open = s.open.size();
  }
  warn(due, limits, open);
}

std::size_t unauthenticated_connections() {
  auto& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  return s.open.size();
}

}  // namespace proofline::net
