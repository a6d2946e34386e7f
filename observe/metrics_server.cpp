// metrics_server on cpp-httplib: httplib reads and parses each request and
// writes the response; every request, whatever its path or method, goes to
// answer_metrics_request through the pre-routing handler, so the routes,
// the 404s and the 405s stay in observe/metrics_http.cpp.
#include <fcntl.h>
#include <httplib.h>
#include <pthread.h>
#include <sys/socket.h>

#include <chrono>
#include <csignal>
#include <mutex>
#include <stdexcept>
#include <thread>

#include "memory/process.hpp"
#include "observe/metrics_http.hpp"

namespace proofline::observe {

namespace {

/// Each read from or write to a client waits at most this long, so a
/// client that stops sending holds a worker no longer than that.
constexpr std::chrono::seconds client_timeout{2};
/// No endpoint takes a request body (none is read); a longer one declared
/// in Content-Length is refused should a handler ever read it.
constexpr size_t max_body_bytes = 1024;
/// Workers answering requests: one client that stalls leaves the other for
/// a scrape or a probe.
constexpr size_t workers = 2;

/// Blocks the process-directed signals in the calling thread, and so in the
/// workers it starts: SIGINT and SIGTERM go to the threads that handle them
/// (app/interrupt, serve's sigwait), and a blocking accept() or read() here
/// is never interrupted. httplib writes without MSG_NOSIGNAL; with SIGPIPE
/// blocked, a write to a client that went away fails with EPIPE instead of
/// ending the process.
void block_signals() {
  sigset_t set;
  sigemptyset(&set);
  for (int s : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE, SIGUSR1, SIGUSR2, SIGALRM, SIGCHLD})
    sigaddset(&set, s);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
}

/// A new httplib::Server, with the process's SIGPIPE disposition as it was:
/// httplib's constructor sets SIGPIPE to ignored for the whole process,
/// which would change how every other write to a closed pipe ends (and what
/// child processes inherit). The server's own threads block SIGPIPE instead.
template <class T>
std::unique_ptr<T> keeping_sigpipe() {
  struct sigaction before {};
  ::sigaction(SIGPIPE, nullptr, &before);
  auto made = std::make_unique<T>();
  ::sigaction(SIGPIPE, &before, nullptr);
  return made;
}

}  // namespace

struct metrics_server::impl {
  httplib::Server http;
  std::mutex one_scrape;  // the provider is called one scrape at a time
  std::atomic<bool> listen_returned{false};
  std::thread listener;
};

metrics_server::metrics_server(const metrics_endpoint& at, provider body, readiness ready)
    : at_(at), body_(std::move(body)), ready_(std::move(ready)), impl_(keeping_sigpipe<impl>()) {
  httplib::Server& http = impl_->http;
  // httplib's default options may include SO_REUSEPORT, which would let a
  // second server bind the same port; the listening socket also must not
  // leak into child processes.
  http.set_socket_options([](socket_t fd) {
    int one = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    ::fcntl(fd, F_SETFD, FD_CLOEXEC);
  });
  http.set_read_timeout(client_timeout);
  http.set_write_timeout(client_timeout);
  http.set_keep_alive_max_count(1);  // one request per connection, then close
  http.set_payload_max_length(max_body_bytes);
  http.new_task_queue = [] { return new httplib::ThreadPool(workers); };
  http.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
    metrics_provider serial = [this]() -> std::optional<std::string> {
      std::lock_guard<std::mutex> lock(impl_->one_scrape);
      if (!body_) return std::nullopt;
      return body_();
    };
    metrics_answer a = answer_metrics_request(req.method, req.path, serial, !ready_ || ready_());
    if (a.scraped) ++scrapes_;  // counted before the client can read the reply
    res.status = a.status;
    res.set_content(std::move(a.body), a.content_type.c_str());
    return httplib::Server::HandlerResponse::Handled;
  });
  // httplib's own refusals (a malformed request 400, a target too long 414)
  // come without a body; say what they are. httplib calls this for every
  // status of 400 and above, so the endpoint's own answers (404, 503
  // stopping) keep the body they have.
  http.set_error_handler(httplib::Server::HandlerWithResponse(
      [](const httplib::Request&, httplib::Response& res) {
        if (!res.body.empty()) return httplib::Server::HandlerResponse::Unhandled;
        res.set_content("refused: HTTP " + std::to_string(res.status) + "\n", "text/plain");
        return httplib::Server::HandlerResponse::Handled;
      }));

  bool bound = false;
  if (at_.port == 0) {
    int port = http.bind_to_any_port(at_.host);
    bound = port > 0;
    if (bound) at_.port = static_cast<uint16_t>(port);
  } else {
    bound = http.bind_to_port(at_.host, at_.port);
  }
  if (!bound) {
    std::string why = bind_problem(at_);
    throw std::runtime_error("metrics " + to_string(at_) + ": " +
                             (why.empty() ? "cannot listen" : why));
  }
  impl_->listener = std::thread([this] {
    memory::set_thread_name("pl.metrics");  // its workers inherit the name
    block_signals();
    impl_->http.listen_after_bind();
    impl_->listen_returned = true;
  });
  // stop() only stops a server that runs: wait until it does, so that the
  // destructor never misses it.
  while (!impl_->http.is_running() && !impl_->listen_returned)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

metrics_server::~metrics_server() {
  impl_->http.stop();
  if (impl_->listener.joinable()) impl_->listener.join();
}

std::string metrics_server::url() const { return "http://" + to_string(at_) + "/metrics"; }

}  // namespace proofline::observe
