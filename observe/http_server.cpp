// The event loop and the workers of observe/http_server.hpp.
//
// Threads: the loop owns the listening socket and every connection (accept,
// read, parse, write, close, all non-blocking, one poll(2) over them); each
// worker takes complete requests of its lane from a queue, calls the route
// and hands the rendered response back to the loop through a queue and a
// pipe that wakes the loop. A deferred answer's reply goes the same way,
// from whatever thread completes it, through a sink that outlives the server
// (a reply after the server is gone is dropped). Workers never touch a
// socket, so a client can hold neither a worker nor the loop.
//
// TLS: each connection's SSL object works on its non-blocking socket; a
// read or write that wants the other direction polls for it. The handshake
// belongs to the reading phase, so its deadline is the request's.
#include "observe/http_server.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <exception>
#include <list>
#include <mutex>
#include <stdexcept>
#include <thread>

#include <openssl/err.h>
#include <openssl/ssl.h>

#include "memory/process.hpp"
#include "observe/http_server_parts.hpp"

namespace proofline::observe {

namespace {

using namespace http_parts;

/// Bytes asked of one recv() while a request's head is read.
constexpr size_t read_chunk = 4096;
/// Bytes asked of one recv() once the head gave the request's size: the
/// body is read straight into the request's buffer, sized once, and parsed
/// again only when it is whole (a 32 MiB witness is 32 reads, not 8,192
/// reads each followed by a parse of everything received).
constexpr size_t body_chunk = 1 << 20;
/// After its response, a connection is read (and the bytes dropped) this
/// long before it closes, so a client still sending gets the response
/// rather than a reset.
constexpr std::chrono::milliseconds linger_time{500};
/// Connections accepted per turn of the loop.
constexpr int accepts_per_turn = 64;
/// How long the listener rests after an accept failed for want of
/// descriptors (EMFILE, ENFILE), so the loop does not spin on it.
constexpr std::chrono::milliseconds descriptor_pause{100};
/// How long a stopping server still sends the answers being computed or sent.
constexpr std::chrono::milliseconds finish_time{2000};
/// Bytes of a streamed answer a client may leave unread before it is dropped.
constexpr size_t stream_backlog = 1 << 20;

/// Blocks the process-directed signals in the calling thread: SIGINT,
/// SIGTERM and SIGHUP go to the threads that handle them (app/interrupt,
/// serve's sigwait, the TLS reload), and a poll() here is never interrupted.
/// Writes use MSG_NOSIGNAL; SIGPIPE is blocked too.
void block_signals() {
  sigset_t set;
  sigemptyset(&set);
  for (int s : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE, SIGUSR1, SIGUSR2, SIGALRM, SIGCHLD})
    sigaddset(&set, s);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
}

}  // namespace

struct http_server::impl {
  http_limits limits;
  routes route;
  std::string name;
  int listener = -1;
  int wake_read = -1, wake_write = -1;
  std::atomic<bool> stopping{false};
  // Set by the destructor: accept nothing more, and end the loop once every
  // answer being computed or sent is sent, or at finish_by.
  std::atomic<bool> finishing{false};
  clock::time_point finish_by{};

  // The loop's own state.
  std::list<connection> open;  // oldest first
  uint64_t next_id = 1;
  clock::time_point listener_rests_until{};
  loop_arena arena;  // own_arena

  // Workers and their answers.
  worker_lane priority, normal;
  std::shared_ptr<answer_sink> sink = std::make_shared<answer_sink>();
  SSL_CTX* tls = nullptr;

  std::atomic<uint64_t> answered{0}, refused{0}, timed_out{0}, evicted{0}, busy{0},
      handshakes_failed{0};
  std::atomic<int> started{0};  // threads named and with their signals blocked
  std::thread loop_thread;

  /// Names the calling thread and blocks the signals it leaves to others.
  void begin_thread() {
    memory::set_thread_name(name);
    block_signals();
    ++started;
  }

  void wake() {
    const char byte = 1;
    [[maybe_unused]] auto n = ::write(wake_write, &byte, 1);  // a full pipe wakes the loop too
  }

  void close_connection(std::list<connection>::iterator c) {
    if (c->gone) *c->gone = true;
    if (c->ssl) {
      if (!c->handshaken) ++handshakes_failed;
      SSL_free(c->ssl);
    }
    ::close(c->fd);
    open.erase(c);
  }

  void respond(connection& c, const http_response& r, bool head_only) {
    c.out = render_http_response(r, head_only);
    c.sent = 0;
    c.in.clear();
    c.in.shrink_to_fit();
    c.at = phase::writing;
    c.deadline = clock::now() + limits.write_timeout;
  }

  void refuse(connection& c, int status, const std::string& why) {
    if (route.refusal) {
      respond(c, route.refusal(status, why), false);
      return;
    }
    respond(c,
            {status, "text/plain",
             "refused: HTTP " + std::to_string(status) + ": " + why + "\n"},
            false);
  }

  /// A complete request: answered now, or queued for its lane's worker.
  void dispatch(connection& c, http_request req) {
    const http_lane lane = route.lane ? route.lane(req) : http_lane::immediate;
    if (lane == http_lane::immediate) {
      const bool head = req.method == "HEAD";
      respond(c, answer(req), head);
      return;
    }
    if (lane == http_lane::deferred && route.defer) {
      const bool head = req.method == "HEAD";
      c.at = phase::waiting;
      c.in.clear();
      c.in.shrink_to_fit();
      // Answered once: by the reply, or 500 here when defer throws first.
      auto once = std::make_shared<std::atomic<bool>>(false);
      http_reply reply = [sink = sink, id = c.id, head, once](http_response r) {
        if (once->exchange(true)) return;
        sink->post(id, render_http_response(r, head));
      };
      try {
        route.defer(std::move(req), reply);
      } catch (const std::exception& e) {
        reply({500, "text/plain", std::string("the answer failed: ") + e.what() + "\n"});
      } catch (...) {
        reply({500, "text/plain", "the answer failed\n"});
      }
      return;
    }
    if (lane == http_lane::streamed && route.stream) {
      const bool head = req.method == "HEAD";
      c.at = phase::waiting;
      c.in.clear();
      c.in.shrink_to_fit();
      c.gone = std::make_shared<std::atomic<bool>>(false);
      auto stream = std::make_shared<sink_stream>(sink, c.id, head, c.gone);
      try {
        route.stream(std::move(req), stream);
      } catch (const std::exception& e) {
        stream->reply({500, "text/plain", std::string("the answer failed: ") + e.what() + "\n"});
      } catch (...) {
        stream->reply({500, "text/plain", "the answer failed\n"});
      }
      return;
    }
    worker_lane& w = lane == http_lane::priority ? priority : normal;
    {
      std::lock_guard<std::mutex> lock(w.mutex);
      if (w.queue.size() < limits.max_queued) {
        w.queue.push_back({c.id, std::move(req)});
        c.at = phase::waiting;
        c.in.clear();
        c.in.shrink_to_fit();
        w.wake.notify_one();
        return;
      }
    }
    ++busy;
    if (route.refusal) {
      respond(c, route.refusal(503, "too many requests are waiting; try again"),
              req.method == "HEAD");
      return;
    }
    respond(c, {503, "text/plain", "busy: too many requests are waiting; try again\n"},
            req.method == "HEAD");
  }

  http_response answer(const http_request& req) {
    try {
      if (route.answer) return route.answer(req);
      return {404, "text/plain", "not found\n"};
    } catch (const std::exception& e) {
      return {500, "text/plain", std::string("the answer failed: ") + e.what() + "\n"};
    } catch (...) {
      return {500, "text/plain", "the answer failed\n"};
    }
  }

  void work(worker_lane& w) {
    begin_thread();
    for (;;) {
      job j;
      {
        std::unique_lock<std::mutex> lock(w.mutex);
        w.wake.wait(lock, [&] { return stopping || !w.queue.empty(); });
        if (stopping) return;
        j = std::move(w.queue.front());
        w.queue.pop_front();
        ++w.busy;
      }
      std::string bytes = render_http_response(answer(j.request), j.request.method == "HEAD");
      {
        std::lock_guard<std::mutex> lock(w.mutex);
        --w.busy;
      }
      sink->post(j.id, std::move(bytes));
    }
  }

  void take_answers() {
    std::vector<posted> done;
    {
      std::lock_guard<std::mutex> lock(sink->mutex);
      done.swap(sink->answers);
    }
    for (auto& a : done)
      for (auto c = open.begin(); c != open.end(); ++c) {
        if (c->id != a.id) continue;
        if (c->at == phase::waiting && (a.kind == part::whole || a.kind == part::head)) {
          c->out = std::move(a.bytes);
          c->sent = 0;
          c->at = a.kind == part::whole ? phase::writing : phase::streaming;
          c->deadline = clock::now() + limits.write_timeout;
        } else if (c->at == phase::streaming && a.kind == part::more) {
          if (c->sent == c->out.size()) {  // idle until now: the write clock starts
            c->out.clear();
            c->sent = 0;
            c->deadline = clock::now() + limits.write_timeout;
          }
          c->out += a.bytes;
          if (c->out.size() - c->sent > stream_backlog) {  // the client does not read
            c->overrun = true;
            if (c->gone) *c->gone = true;
          }
        } else if (c->at == phase::streaming && a.kind == part::end) {
          c->stream_end = true;
          if (c->sent == c->out.size()) c->deadline = clock::now() + limits.write_timeout;
        }
        break;
      }
  }

  void accept_new() {
    for (int i = 0; i < accepts_per_turn; ++i) {
      int fd = ::accept4(listener, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (fd < 0) {
        if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM)
          listener_rests_until = clock::now() + descriptor_pause;
        return;
      }
      if (open.size() >= limits.max_connections) {
        auto oldest = std::find_if(open.begin(), open.end(),
                                   [](const connection& c) { return c.at == phase::reading; });
        if (oldest == open.end()) {
          ::close(fd);  // every slot holds a request being answered
          ++busy;
          continue;
        }
        ++evicted;
        close_connection(oldest);
      }
      connection c;
      c.fd = fd;
      if (tls) {
        c.ssl = SSL_new(tls);
        if (!c.ssl || SSL_set_fd(c.ssl, fd) != 1) {
          if (c.ssl) SSL_free(c.ssl);
          ERR_clear_error();
          ::close(fd);
          ++handshakes_failed;
          continue;
        }
        SSL_set_mode(c.ssl, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
        SSL_set_accept_state(c.ssl);
      }
      c.id = next_id++;
      c.accepted = clock::now();
      c.deadline = c.accepted + limits.request_timeout;
      open.push_back(std::move(c));
    }
  }

  /// TLS: -1 when the SSL call's failure ends the connection, 0 when it
  /// waits for the socket (want_write set for the direction it needs).
  static int ssl_wait(connection& c, int rc) {
    const int e = SSL_get_error(c.ssl, rc);
    c.want_write = e == SSL_ERROR_WANT_WRITE;
    if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) return 0;
    ERR_clear_error();
    return -1;
  }

  /// One read of up to `size` bytes: > 0 bytes read, 0 the peer closed (or
  /// TLS failed), -1 nothing now (EAGAIN or a TLS record not yet whole).
  ssize_t receive(connection& c, char* buf, size_t size) {
    if (!c.ssl || c.at == phase::lingering) {
      ssize_t n = ::recv(c.fd, buf, size, 0);
      if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) return 0;
      return n;
    }
    ERR_clear_error();
    int n = SSL_read(c.ssl, buf, static_cast<int>(size));
    if (n > 0) return n;
    return ssl_wait(c, n) == 0 ? -1 : 0;
  }

  /// Reads what `c` sent; false when it is to be closed.
  bool read_from(connection& c) {
    if (c.ssl && !c.handshaken && c.at == phase::reading) {
      ERR_clear_error();
      const int rc = SSL_do_handshake(c.ssl);
      if (rc != 1) return ssl_wait(c, rc) == 0;
      c.handshaken = true;
      c.want_write = false;
    }
    // What the parser may hold before it decides, and the last read's bytes.
    const size_t cap = limits.max_head_bytes + limits.max_body_bytes + read_chunk;
    char buf[read_chunk];
    for (;;) {
      if (c.at == phase::reading && c.expected > c.in.size()) {
        // The head is parsed and the body's size known: receive into the
        // request's own buffer, and parse once all of it is there.
        const size_t had = c.in.size();
        const size_t want = std::min(c.expected - had, body_chunk);
        c.in.resize(had + want);
        ssize_t n = receive(c, c.in.data() + had, want);
        c.in.resize(had + static_cast<size_t>(std::max<ssize_t>(n, 0)));
        if (n == 0) return false;
        if (n < 0) return true;
        if (c.in.size() < c.expected) continue;
      } else {
        ssize_t n = receive(c, buf, sizeof(buf));
        if (n == 0) return false;  // the client closed
        if (n < 0) return true;
        if (c.at == phase::lingering || c.at == phase::streaming) continue;  // dropped
        if (c.at != phase::reading) return true;  // a second request is not read
        c.in.append(buf, static_cast<size_t>(n));
      }
      http_parse p = parse_http_request(c.in, limits, /*copy_body=*/false);
      if (p.st == http_parse::state::refused) {
        ++refused;
        refuse(c, p.status, p.reason);
        return true;
      }
      if (p.st == http_parse::state::complete) {
        // The body moves out of the buffer it was received into (bytes a
        // client sent after its request are dropped: one request a
        // connection).
        if (p.consumed > p.head_bytes) arena.saw_body(clock::now());
        c.in.resize(p.consumed);
        c.in.erase(0, p.head_bytes);
        p.request.body = std::move(c.in);
        c.in = std::string();
        c.expected = 0;
        dispatch(c, std::move(p.request));
        return true;
      }
      // The buffer still grows only as bytes arrive: a Content-Length
      // alone, which anyone may send, reserves nothing.
      c.expected = p.expected;
      if (c.in.size() > cap) {  // cannot happen: the parser refuses before
        ++refused;
        refuse(c, 431, "the request is larger than the limits");
        return true;
      }
    }
  }

  /// Sends what is left of the response; false when `c` is to be closed.
  bool write_to(connection& c) {
    if (c.ssl && !c.handshaken) return false;  // a 408 before the handshake ended: just close
    while (c.sent < c.out.size()) {
      if (c.ssl) {
        ERR_clear_error();
        const size_t left = std::min<size_t>(c.out.size() - c.sent, 1 << 20);
        int n = SSL_write(c.ssl, c.out.data() + c.sent, static_cast<int>(left));
        if (n <= 0) return ssl_wait(c, n) == 0;
        c.sent += static_cast<size_t>(n);
        if (c.at == phase::streaming) c.deadline = clock::now() + limits.write_timeout;
        continue;
      }
      ssize_t n = ::send(c.fd, c.out.data() + c.sent, c.out.size() - c.sent, MSG_NOSIGNAL);
      if (n < 0) return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;
      c.sent += static_cast<size_t>(n);
      // A stream's clock runs while its bytes wait, not from its head on.
      if (c.at == phase::streaming) c.deadline = clock::now() + limits.write_timeout;
    }
    if (c.at == phase::streaming) {
      c.out.clear();
      c.sent = 0;
      if (!c.stream_end) return true;  // idle until its next part
    }
    ++answered;
    c.out.clear();
    c.out.shrink_to_fit();
    if (c.ssl) {
      ERR_clear_error();
      SSL_shutdown(c.ssl);  // close_notify; the client's reply is not awaited
      ERR_clear_error();
    }
    ::shutdown(c.fd, SHUT_WR);
    c.at = phase::lingering;
    c.deadline = clock::now() + linger_time;
    return true;
  }

  void expire(clock::time_point now) {
    for (auto c = open.begin(); c != open.end();) {
      auto here = c++;
      if (here->overrun) {
        close_connection(here);
        continue;
      }
      if (here->at == phase::waiting || now < here->deadline) continue;
      if (here->at == phase::streaming && !has_output(*here)) continue;  // idle
      if (here->at == phase::reading) {
        ++timed_out;
        refuse(*here, 408,
               "the request was not complete within " +
                   std::to_string(limits.request_timeout.count()) + " ms");
        if (!write_to(*here)) close_connection(here);
      } else {
        close_connection(here);  // a slow reader, or the linger is over
      }
    }
  }

  void run() {
    begin_thread();
    if (limits.own_arena) arena.bind();
    std::vector<pollfd> fds;
    std::vector<std::list<connection>::iterator> polled;
    while (!stopping) {
      const auto now = clock::now();
      auto next = now + std::chrono::seconds(1);
      fds.clear();
      polled.clear();
      fds.push_back({wake_read, POLLIN, 0});
      const bool listening = now >= listener_rests_until && !finishing;
      fds.push_back({listening ? listener : -1, POLLIN, 0});
      if (!listening) next = std::min(next, listener_rests_until);
      next = std::min(next, arena.next_purge());
      for (auto c = open.begin(); c != open.end(); ++c) {
        const bool output = has_output(*c);
        if (c->at != phase::waiting && (c->at != phase::streaming || output))
          next = std::min(next, c->deadline);
        short events = output ? POLLOUT : c->at == phase::waiting ? 0 : POLLIN;
        if (c->at == phase::streaming) events |= POLLIN;  // a client that closes ends its stream
        if (c->want_write && c->at == phase::reading) events |= POLLOUT;
        fds.push_back({c->fd, events, 0});
        polled.push_back(c);
      }
      const auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(next - now);
      int timeout_ms = static_cast<int>(std::max<long>(wait.count(), 0)) + 1;
      if (finishing) timeout_ms = std::min(timeout_ms, 20);
      int ready = ::poll(fds.data(), fds.size(), timeout_ms);
      if (stopping) break;
      if (ready < 0 && errno != EINTR)  // out of kernel memory, say: try again
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      if (fds[0].revents & POLLIN) {
        char buf[256];
        while (::read(wake_read, buf, sizeof(buf)) > 0) {
        }
      }
      take_answers();
      for (size_t i = 0; i < polled.size(); ++i) {
        const short ev = fds[i + 2].revents;
        if (ev == 0) continue;
        auto c = polled[i];
        bool keep = true;
        if ((ev & (POLLIN | POLLHUP | POLLERR)) || (c->want_write && (ev & POLLOUT)))
          keep = read_from(*c);
        if (keep && has_output(*c))
          keep = write_to(*c);  // ready to write, or answered at once: try to send now
        if (!keep) close_connection(c);
      }
      expire(clock::now());
      arena.purge_if_quiet(clock::now(), open);
      if (fds[1].revents & POLLIN) accept_new();
      if (finishing) {
        const bool answering = std::any_of(open.begin(), open.end(), [](const connection& c) {
          return c.at == phase::waiting || c.at == phase::writing;
        });
        if (!answering || clock::now() >= finish_by) break;
      }
    }
    while (!open.empty()) close_connection(open.begin());
  }
};

http_server::http_server(int bound_fd, const http_limits& limits, routes r,
                         const std::string& thread_name, SSL_CTX* tls)
    : impl_(std::make_unique<impl>()) {
  if (tls && SSL_CTX_up_ref(tls) == 1) impl_->tls = tls;
  impl_->limits = limits;
  impl_->route = std::move(r);
  impl_->name = thread_name;
  impl_->listener = bound_fd;
  if (::listen(bound_fd, 64) != 0) {
    std::string why = std::strerror(errno);
    ::close(bound_fd);
    throw std::runtime_error("cannot listen: " + why);
  }
  ::fcntl(bound_fd, F_SETFL, ::fcntl(bound_fd, F_GETFL) | O_NONBLOCK);
  sockaddr_storage addr{};
  socklen_t len = sizeof(addr);
  if (::getsockname(bound_fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0)
    port_ = ntohs(addr.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&addr)->sin6_port
                                             : reinterpret_cast<sockaddr_in*>(&addr)->sin_port);
  int pipe[2];
  if (::pipe2(pipe, O_CLOEXEC | O_NONBLOCK) != 0) {
    std::string why = std::strerror(errno);
    ::close(bound_fd);
    throw std::runtime_error("cannot make a pipe: " + why);
  }
  impl_->wake_read = pipe[0];
  impl_->wake_write = pipe[1];
  impl_->sink->wake_write = pipe[1];
  impl* self = impl_.get();
  impl_->priority.thread = std::thread([self] { self->work(self->priority); });
  impl_->normal.thread = std::thread([self] { self->work(self->normal); });
  impl_->loop_thread = std::thread([self] { self->run(); });
  // Returns once every thread has its name and its signal mask, so that
  // callers (and tests) never see one without.
  while (impl_->started < 3) std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

http_server::~http_server() {
  // Answers already on their way (a worker's, a deferred reply) are sent
  // first, for at most finish_time.
  impl_->finish_by = clock::now() + finish_time;
  impl_->finishing = true;
  impl_->wake();
  impl_->loop_thread.join();
  impl_->stopping = true;
  for (worker_lane* w : {&impl_->priority, &impl_->normal}) {
    std::lock_guard<std::mutex> lock(w->mutex);
    w->wake.notify_all();
  }
  impl_->priority.thread.join();
  impl_->normal.thread.join();
  {
    std::lock_guard<std::mutex> lock(impl_->sink->mutex);
    impl_->sink->open = false;  // replies still out are dropped from now on
  }
  if (impl_->tls) SSL_CTX_free(impl_->tls);
  ::close(impl_->listener);
  ::close(impl_->wake_read);
  ::close(impl_->wake_write);
}

http_server::counts http_server::stats() const {
  return {impl_->answered.load(), impl_->refused.load(), impl_->timed_out.load(),
          impl_->evicted.load(), impl_->busy.load(), impl_->handshakes_failed.load()};
}

}  // namespace proofline::observe
