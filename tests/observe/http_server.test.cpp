// observe/http_server: the request parser under its limits, the response
// bytes, and the server's lanes (a slow answer in one never delays the
// other; a full lane answers 503) on a real socket on loopback.
#include "observe/http_server.hpp"

#include <arpa/inet.h>
#include <doctest/doctest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "memory/arena.hpp"

using namespace proofline::observe;
using state = http_parse::state;

namespace {

http_parse parse(const std::string& bytes, http_limits limits = {}) {
  return parse_http_request(bytes, limits);
}

/// Sends `request` to 127.0.0.1:port and returns what the server says
/// within 5 s.
std::string exchange(uint16_t port, const std::string& request) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  REQUIRE(fd >= 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0);
  timeval tv{5, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  ::send(fd, request.data(), request.size(), MSG_NOSIGNAL);
  std::string reply;
  char buf[4096];
  for (ssize_t n; (n = ::recv(fd, buf, sizeof(buf), 0)) > 0;) reply.append(buf, n);
  ::close(fd);
  return reply;
}

std::string status_line(const std::string& reply) { return reply.substr(0, reply.find("\r\n")); }

/// A server on a free loopback port.
std::unique_ptr<http_server> start(http_limits limits, http_server::routes routes) {
  std::string why;
  int fd = bind_tcp_socket("127.0.0.1", 0, why);
  REQUIRE(fd >= 0);
  return std::make_unique<http_server>(fd, limits, std::move(routes), "pl.http-test");
}

}  // namespace

TEST_CASE("a request is incomplete until its head ends, then complete with its parts") {
  CHECK(parse("").st == state::incomplete);
  CHECK(parse("GET /metrics HTTP/1.1\r\nHost: x\r\n").st == state::incomplete);
  http_parse p = parse("\r\nGET /metrics?a=1 HTTP/1.0\r\nHost: x\r\nAccept:  text/plain \r\n\r\n");
  REQUIRE(p.st == state::complete);
  CHECK(p.request.method == "GET");
  CHECK(p.request.target == "/metrics?a=1");
  CHECK(p.request.path == "/metrics");
  CHECK(p.request.query == "a=1");
  CHECK(p.request.minor_version == 0);
  REQUIRE(p.request.header("accept"));
  CHECK(*p.request.header("ACCEPT") == "text/plain");
  CHECK(p.request.header("cookie") == nullptr);
  CHECK(parse("GET / HTTP/1.1\n\n").st == state::complete);  // bare LF ends lines too
}

TEST_CASE("a body comes by Content-Length only, within max_body_bytes") {
  http_limits with_body;
  with_body.max_body_bytes = 5;
  CHECK(parse("POST /x HTTP/1.1\r\nContent-Length: 5\r\n\r\nhel", with_body).st ==
        state::incomplete);
  const std::string head = "POST /x HTTP/1.1\r\nContent-Length: 5\r\n\r\n";
  http_parse p = parse(head + "hello, more", with_body);
  REQUIRE(p.st == state::complete);
  CHECK(p.request.body == "hello");
  CHECK(p.consumed == head.size() + 5);
  CHECK(p.head_bytes == head.size());
  // Incomplete with its head whole: the size to wait for before parsing again.
  CHECK(parse(head + "he", with_body).expected == head.size() + 5);
  CHECK(parse("POST /x HTTP/1.1\r\nContent-Le", with_body).expected == 0);
  // Without copying: the body is left where it was received.
  http_parse moved = parse_http_request(head + "hello", with_body, /*copy_body=*/false);
  REQUIRE(moved.st == state::complete);
  CHECK(moved.request.body.empty());
  CHECK(moved.head_bytes == head.size());
  CHECK(parse("POST /x HTTP/1.1\r\nContent-Length: 6\r\n\r\n", with_body).status == 413);
  CHECK(parse("POST /x HTTP/1.1\r\nContent-Length: 1\r\n\r\n").status == 413);  // default: none
  CHECK(parse("POST /x HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n", with_body)
            .status == 400);
  CHECK(parse("POST /x HTTP/1.1\r\nContent-Length: -1\r\n\r\n", with_body).status == 400);
  CHECK(parse("POST /x HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n", with_body).status == 501);
}

TEST_CASE("limits refuse as soon as the bytes pass them, before the head ends") {
  // A head that never ends is refused once it is longer than the limit.
  std::string bomb = "GET / HTTP/1.1\r\n";
  while (bomb.size() <= 8192) bomb += "X-Bomb: " + std::string(200, 'b') + "\r\n";  // 40 fields
  http_parse p = parse(bomb);
  CHECK(p.st == state::refused);
  CHECK(p.status == 431);
  CHECK(p.reason.find("8192") != std::string::npos);
  // ... and the 65th field is refused with no end in sight.
  std::string fields = "GET / HTTP/1.1\r\n";
  for (int i = 0; i < 65; ++i) fields += "A: b\r\n";
  CHECK(parse(fields).status == 431);
  // A request line that does not end within the limit: 414.
  CHECK(parse("GET /" + std::string(9000, 'a')).status == 414);
  CHECK(parse("GET /" + std::string(9000, 'a') + " HTTP/1.1\r\n\r\n").status == 414);
  http_limits small;
  small.max_head_bytes = 64;
  CHECK(parse("GET / HTTP/1.1\r\nHost: 0123456789012345678901234567890123456789\r\n\r\n", small)
            .status == 431);
}

TEST_CASE("bytes that are not HTTP/1.x are refused with the status that says why") {
  CHECK(parse("GARBAGE\r\n").status == 400);
  CHECK(parse("GET  / HTTP/1.1\r\n").status == 400);       // two spaces
  CHECK(parse("GET http://x/ HTTP/1.1\r\n").status == 400);  // not origin form
  CHECK(parse("G(T / HTTP/1.1\r\n").status == 400);          // not a token
  CHECK(parse("GET / HTTP/1.1\x01\r\n").status == 400);
  CHECK(parse("GET / HTTP/2.0\r\n").status == 505);
  CHECK(parse("GET / HTTQ/1.1\r\n").status == 400);
  CHECK(parse("GET / HTTP/1.1\r\nNo colon here\r\n\r\n").status == 400);
  CHECK(parse("GET / HTTP/1.1\r\nBad Name: x\r\n\r\n").status == 400);
  CHECK(parse("GET / HTTP/1.1\r\nA: b\r\n folded\r\n\r\n").status == 400);
  CHECK(parse("GET / HTTP/1.1\r\nA: b\x7f\r\n\r\n").status == 400);
}

TEST_CASE("a response has its status, type and length, and no body for HEAD") {
  http_response r{404, "text/plain", "not here\n"};
  CHECK(render_http_response(r, false) ==
        "HTTP/1.1 404 Not Found\r\nContent-Type: text/plain\r\nContent-Length: 9\r\n"
        "Connection: close\r\n\r\nnot here\n");
  CHECK(render_http_response(r, true) ==
        "HTTP/1.1 404 Not Found\r\nContent-Type: text/plain\r\nContent-Length: 9\r\n"
        "Connection: close\r\n\r\n");
  CHECK(http_reason_phrase(431) == "Request Header Fields Too Large");
}

TEST_CASE("a slow answer in the normal lane never delays the priority lane or the loop") {
  std::atomic<bool> release{false};
  std::atomic<int> entered{0};
  http_server::routes routes;
  routes.lane = [](const http_request& req) {
    if (req.path == "/slow") return http_lane::normal;
    if (req.path == "/probe") return http_lane::priority;
    return http_lane::immediate;
  };
  routes.answer = [&](const http_request& req) {
    if (req.path == "/slow") {
      ++entered;
      while (!release) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return http_response{200, "text/plain", req.path + "\n"};
  };
  http_limits limits;
  limits.max_queued = 2;
  auto server = start(limits, routes);
  std::vector<std::thread> slow;
  std::vector<std::string> slow_replies(4);
  auto send_slow = [&](int i) {
    slow.emplace_back([&, i] {
      slow_replies[i] = exchange(server->port(), "GET /slow HTTP/1.1\r\n\r\n");
    });
  };
  send_slow(0);  // the worker takes it and stays with it
  while (entered == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  for (int i = 1; i < 4; ++i) send_slow(i);  // two wait in the queue, one is refused
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  auto start_time = std::chrono::steady_clock::now();
  CHECK(status_line(exchange(server->port(), "GET /probe HTTP/1.1\r\n\r\n")) == "HTTP/1.1 200 OK");
  CHECK(status_line(exchange(server->port(), "GET /now HTTP/1.1\r\n\r\n")) == "HTTP/1.1 200 OK");
  CHECK(std::chrono::steady_clock::now() - start_time < std::chrono::milliseconds(1000));
  release = true;
  for (auto& t : slow) t.join();
  // One slow request with the worker, two queued, the fourth refused.
  int ok = 0, busy = 0;
  for (const auto& r : slow_replies) {
    ok += status_line(r) == "HTTP/1.1 200 OK";
    busy += status_line(r) == "HTTP/1.1 503 Service Unavailable";
  }
  CHECK(ok == 3);
  CHECK(busy == 1);
  CHECK(server->stats().busy == 1);
}

TEST_CASE("an answer that throws is a 500, and the server goes on") {
  http_server::routes routes;
  routes.lane = [](const http_request&) { return http_lane::normal; };
  routes.answer = [](const http_request& req) -> http_response {
    if (req.path == "/throw") throw std::runtime_error("no figures");
    return {200, "text/plain", "ok\n"};
  };
  auto server = start({}, routes);
  std::string r = exchange(server->port(), "GET /throw HTTP/1.1\r\n\r\n");
  CHECK(status_line(r) == "HTTP/1.1 500 Internal Server Error");
  CHECK(r.find("no figures") != std::string::npos);
  CHECK(status_line(exchange(server->port(), "GET / HTTP/1.1\r\n\r\n")) == "HTTP/1.1 200 OK");
}

TEST_CASE("a large body sent in pieces arrives whole, and bytes after it are not part of it") {
  http_server::routes routes;
  routes.lane = [](const http_request&) { return http_lane::normal; };
  routes.answer = [](const http_request& req) {
    uint64_t sum = 0;
    for (unsigned char c : req.body) sum = sum * 31 + c;
    return http_response{200, "text/plain",
                         std::to_string(req.body.size()) + " " + std::to_string(sum) + "\n"};
  };
  http_limits limits;
  limits.max_body_bytes = 8 << 20;
  auto server = start(limits, routes);
  std::string body(5 << 20, '\0');
  for (size_t i = 0; i < body.size(); ++i) body[i] = static_cast<char>((i * 7919) >> 3);
  uint64_t sum = 0;
  for (unsigned char c : body) sum = sum * 31 + c;
  const std::string head =
      "POST /upload HTTP/1.1\r\nContent-Length: " + std::to_string(body.size()) + "\r\n\r\n";
  const std::string request = head + body + "GET /after HTTP/1.1\r\n\r\n";

  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  REQUIRE(fd >= 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(server->port());
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0);
  timeval tv{5, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  // The head split inside a field, then the body in uneven pieces with
  // pauses, so the server sees the head whole before the body and the body
  // in many reads.
  const size_t cuts[] = {10, head.size() - 3, head.size() + 1, head.size() + 100'000,
                         head.size() + (3 << 20), request.size()};
  size_t at = 0;
  for (size_t cut : cuts) {
    while (at < cut) {
      ssize_t n = ::send(fd, request.data() + at, cut - at, MSG_NOSIGNAL);
      REQUIRE(n > 0);
      at += static_cast<size_t>(n);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  std::string reply;
  char buf[4096];
  for (ssize_t n; (n = ::recv(fd, buf, sizeof(buf), 0)) > 0;) reply.append(buf, n);
  ::close(fd);
  CHECK(status_line(reply) == "HTTP/1.1 200 OK");
  CHECK(reply.substr(reply.find("\r\n\r\n") + 4) ==
        std::to_string(body.size()) + " " + std::to_string(sum) + "\n");
}

TEST_CASE("a streamed answer sends its head, then parts from another thread, and ends with the stream") {
  std::mutex mu;
  std::vector<http_stream_ptr> streams;
  http_server::routes routes;
  routes.lane = [](const http_request& req) {
    return req.path == "/events" ? http_lane::streamed : http_lane::immediate;
  };
  routes.stream = [&](http_request&&, http_stream_ptr s) {
    std::lock_guard<std::mutex> g(mu);
    streams.push_back(std::move(s));
  };
  auto server = start(http_limits{}, routes);
  auto take = [&]() -> http_stream_ptr {
    for (int i = 0; i < 500; ++i) {
      {
        std::lock_guard<std::mutex> g(mu);
        if (!streams.empty()) {
          auto s = streams.back();
          streams.pop_back();
          return s;
        }
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    return nullptr;
  };
  std::string reply;
  std::thread client([&] { reply = exchange(server->port(), "GET /events HTTP/1.1\r\n\r\n"); });
  auto s = take();
  REQUIRE(static_cast<bool>(s));
  CHECK(s->open({200, "text/event-stream", "first\n", {{"Cache-Control", "no-store"}}}));
  // The parts come while no thread of the server waits for them.
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  CHECK(status_line(exchange(server->port(), "GET /now HTTP/1.1\r\n\r\n")) ==
        "HTTP/1.1 404 Not Found");  // answered by the loop (no route) while the stream waits
  std::thread sender([s] {
    CHECK(s->send("second\n"));
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    CHECK(s->send("third\n"));
    s->end();
  });
  sender.join();
  client.join();
  CHECK(status_line(reply) == "HTTP/1.1 200 OK");
  CHECK(reply.find("Content-Length") == std::string::npos);
  CHECK(reply.find("Cache-Control: no-store\r\n") != std::string::npos);
  CHECK(reply.substr(reply.find("\r\n\r\n") + 4) == "first\nsecond\nthird\n");
  CHECK_FALSE(s->send("after the end"));

  // A client that closes: the stream's next send (soon after) answers false.
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(server->port());
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0);
  const std::string req = "GET /events HTTP/1.1\r\n\r\n";
  ::send(fd, req.data(), req.size(), MSG_NOSIGNAL);
  auto gone = take();
  REQUIRE(static_cast<bool>(gone));
  CHECK(gone->open({200, "text/event-stream", "x\n"}));
  ::close(fd);
  bool still = true;
  for (int i = 0; i < 200 && still; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    still = gone->send("ping\n");
  }
  CHECK_FALSE(still);

  // A stream answered whole is an ordinary response.
  std::thread whole_client([&] { reply = exchange(server->port(), "GET /events HTTP/1.1\r\n\r\n"); });
  auto whole = take();
  REQUIRE(static_cast<bool>(whole));
  whole->reply({404, "text/plain", "none\n"});
  CHECK_FALSE(whole->open({200, "text/event-stream", ""}));
  whole_client.join();
  CHECK(status_line(reply) == "HTTP/1.1 404 Not Found");
  CHECK(reply.find("Content-Length: 5") != std::string::npos);
}

TEST_CASE("with own_arena, bodies are read into the loop's arena, purged once the server is quiet") {
  if (!proofline::memory::jemalloc_available()) return;
  const std::size_t size = 4 << 20;
  const std::string post = "POST /b HTTP/1.1\r\nContent-Length: " + std::to_string(size) +
                           "\r\n\r\n" + std::string(size, 'w');
  std::atomic<int> arena{-1};  // where the last body lived
  auto server_with = [&](bool own) {
    http_limits limits;
    limits.max_body_bytes = size;
    limits.own_arena = own;
    http_server::routes routes;
    routes.answer = [&](const http_request& r) {
      if (auto a = proofline::memory::arena_of(r.body.data())) arena = static_cast<int>(*a);
      return http_response{200, "text/plain", "ok"};
    };
    return start(limits, routes);
  };
  // The loop thread of a server without it allocates from an automatic arena.
  {
    auto plain = server_with(false);
    CHECK(status_line(exchange(plain->port(), post)) == "HTTP/1.1 200 OK");
    REQUIRE(arena.load() >= 0);
    CHECK(static_cast<unsigned>(arena.load()) < proofline::memory::automatic_arenas());
  }
  auto server = server_with(true);
  CHECK(status_line(exchange(server->port(), post)) == "HTTP/1.1 200 OK");
  REQUIRE(arena.load() >= 0);
  const auto index = static_cast<unsigned>(arena.load());
  CHECK(index >= proofline::memory::automatic_arenas());
  // The freed body stays resident in the arena for the next one ...
  auto before = proofline::memory::read_arena_stats(index);
  REQUIRE(before);
  CHECK(before->dirty >= size);
  const uint64_t purged = before->purged;
  CHECK(status_line(exchange(server->port(), post)) == "HTTP/1.1 200 OK");
  CHECK(static_cast<unsigned>(arena.load()) == index);
  // ... and goes back to the kernel about a second after the last body.
  std::this_thread::sleep_for(std::chrono::milliseconds(1600));
  auto after = proofline::memory::read_arena_stats(index);
  REQUIRE(after);
  CHECK(after->dirty < size);
  CHECK(after->purged >= purged + size);
}
