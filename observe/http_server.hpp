// A small HTTP/1.1 server for proofline's own endpoints (the metrics
// endpoint; any later HTTP endpoint of the daemon is meant to use it too),
// built so that no client can make it allocate without bound or keep it from
// answering others.
//
//   http_limits             what one client may cost: connections, head and
//                           body size, header fields, time to send a request
//   parse_http_request      one request from the bytes received so far: pure,
//                           limits enforced while the bytes arrive (fuzzed)
//   render_http_response    the response bytes (Connection: close)
//   http_server             RAII: one event loop thread that accepts, reads
//                           and writes every connection without blocking
//                           (TLS too: non-blocking OpenSSL, the handshake
//                           within request_timeout of the accept), two
//                           workers (lanes) for answers that take time,
//                           deferred answers that another thread completes,
//                           and streamed answers (Server-Sent Events) whose
//                           parts another thread sends as they come
//
// Why not cpp-httplib 0.11 (Debian's): its server reads a request's header
// lines without a limit on their count (300 MiB of header lines were
// answered 200 and took 590 MB), its read timeout applies to each read
// rather than to the request (a client sending a byte a second keeps a
// worker for as long as it likes), and a pool of a few workers each blocked
// on one such client answers no one else (two of them made /healthz and
// /readyz time out). Here the event loop never waits on a client: a request
// is read as it arrives, into a buffer no larger than the limits, and must be
// complete within request_timeout of its accept (408 otherwise); a head over
// max_head_bytes (431, or 414 when the request line alone is), more than
// max_header_fields fields (431) or a body over max_body_bytes (413) is
// refused as soon as it shows. At max_connections the oldest connection still
// sending its request is closed to make room, so a new client, a probe say,
// always gets in. Complete requests go to a lane the routes choose: answered
// at once on the loop (nothing to wait for), or queued for the priority or
// the normal worker (at most max_queued each; 503 beyond), so a slow answer
// in one lane never delays the other; a deferred answer holds no thread.
// One request per connection.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

using SSL_CTX = struct ssl_ctx_st;

namespace proofline::observe {

/// What one client may cost an http_server. The defaults suit endpoints that
/// take no request body (the metrics endpoint).
struct http_limits {
  /// Connections open at once; at the limit the oldest one still sending its
  /// request is closed for a new one (none: the new one is closed).
  std::size_t max_connections = 64;
  /// The request line and header fields with their line ends (431; 414 when
  /// the request line alone is longer).
  std::size_t max_head_bytes = 8 * 1024;
  /// Header fields in one request (431).
  std::size_t max_header_fields = 64;
  /// Content-Length accepted (413); chunked bodies are refused (501).
  std::size_t max_body_bytes = 0;
  /// From a connection's accept to the last byte of its request (408).
  std::chrono::milliseconds request_timeout{2000};
  /// To send the response; a client that reads slower is dropped.
  std::chrono::milliseconds write_timeout{5000};
  /// Requests waiting for each worker; more are answered 503 at once.
  std::size_t max_queued = 8;
  /// For servers that take large bodies (the API's witnesses): the loop
  /// thread allocates from a jemalloc arena of its own with automatic decay
  /// off, so the pages of a body, freed by whichever thread drops it last,
  /// are still resident when the next body is read into them. Without it
  /// each body lands on pages the kernel must first fault in and zero,
  /// which on the GPU host costs more than the transfer itself
  /// (docs/BENCHMARKS.md, "The HTTP door"). The loop purges that arena
  /// once no body has arrived for a second, so an idle server holds none
  /// of it; a busy one holds at most about as much as its bodies at their
  /// peak. Without jemalloc it does nothing.
  bool own_arena = false;
};

/// One request.
struct http_request {
  std::string method;  ///< as sent ("GET")
  std::string target;  ///< the origin-form target as sent ("/metrics?x=1")
  std::string path;    ///< the target before '?', not percent-decoded
  std::string query;   ///< after '?'
  int minor_version = 1;  ///< HTTP/1.0 or HTTP/1.1
  std::vector<std::pair<std::string, std::string>> headers;  ///< in order, names as sent
  std::string body;

  /// The first field named `name` (case-insensitive), or nullptr.
  const std::string* header(std::string_view name) const;
};

/// Whether `a` and `b` are the same ASCII text but for case (header field
/// names, media types, parameter names).
bool equal_ignoring_case(std::string_view a, std::string_view b);

/// What parse_http_request made of the bytes received so far.
struct http_parse {
  enum class state {
    incomplete,  ///< more bytes may still make a request within the limits
    complete,    ///< `request` holds one
    refused,     ///< the bytes break HTTP/1.1 or a limit, whatever follows
  };
  state st = state::incomplete;
  int status = 0;            ///< refused: 400, 413, 414, 431, 501 or 505
  std::string reason;        ///< refused: why, in words
  std::size_t consumed = 0;  ///< complete: bytes of the request, head and body
  std::size_t head_bytes = 0;  ///< complete: bytes of its head (the body follows them)
  /// incomplete: the request's whole size once its head is complete (its
  /// Content-Length known), so a reader can wait for that many bytes before
  /// parsing again; 0 while the head is incomplete.
  std::size_t expected = 0;
  http_request request;      ///< complete
};

/// Parses the request at the start of `bytes` under `limits`: refused as
/// soon as the bytes break the request syntax of RFC 9112 (request line,
/// header fields, Content-Length) or a limit, so that a client's bytes never
/// need more room than the limits; incomplete while they may still become a
/// request. Lines end with LF or CRLF; empty lines before the request line
/// are skipped (and count as head bytes). Pure: the fuzz target
/// tests/fuzz/metrics_http.fuzz.cpp drives it. Without `copy_body`, a
/// complete request's body is left empty: it is the `consumed - head_bytes`
/// bytes after `head_bytes`, for a caller that moves rather than copies it.
http_parse parse_http_request(std::string_view bytes, const http_limits& limits,
                              bool copy_body = true);

/// What a route answers.
struct http_response {
  int status = 200;
  std::string content_type = "text/plain";
  std::string body;
  /// Further header fields ("Retry-After", "Location"), sent in order.
  std::vector<std::pair<std::string, std::string>> headers = {};
};

/// "OK", "Not Found", ... for the statuses this server sends; "Unknown".
std::string_view http_reason_phrase(int status);

/// The bytes of `r` as an HTTP/1.1 response with Content-Length and
/// Connection: close; without the body when `head_only` (a HEAD request).
std::string render_http_response(const http_response& r, bool head_only);

/// Which thread answers a complete request.
enum class http_lane {
  immediate,  ///< the loop, at once: answers that wait for nothing
  priority,   ///< the priority worker (probes that ask the runtime)
  normal,     ///< the normal worker (everything slow)
  deferred,   ///< routes::defer, on the loop; its reply completes the answer later
  streamed,   ///< routes::stream, on the loop; its http_stream answers whole or in parts
};

/// Completes a deferred answer: callable once, from any thread, also after
/// the server is gone (then it does nothing).
using http_reply = std::function<void(http_response)>;

/// Renders the head of a streamed answer: status, Content-Type, `r`'s
/// headers and Connection: close, without Content-Length (the body ends
/// when the connection closes), then `r.body` unless `head_only`.
std::string render_http_stream_head(const http_response& r, bool head_only);

/// A streamed answer (http_lane::streamed): either one whole answer
/// (reply), or a head (open) followed by body bytes as they come (send)
/// and the end (end), after which the connection closes. Callable from any
/// thread, also after the server is gone (then nothing is sent). Holds no
/// thread while it waits. Dropped unanswered, it answers 500; dropped open,
/// it ends.
class http_stream {
 public:
  virtual ~http_stream() = default;
  /// A whole answer instead of a stream (an error, say); only before open.
  virtual void reply(http_response r) = 0;
  /// Sends the head of `r` and `r.body` as the first bytes; once. False
  /// when the client is gone already or the stream was answered.
  virtual bool open(http_response r) = 0;
  /// More body bytes after open; false once the client is gone (it closed,
  /// read too slowly, or the server stopped): the sender stops then.
  virtual bool send(std::string bytes) = 0;
  /// Ends the answer after open: what was sent goes out, then the
  /// connection closes.
  virtual void end() = 0;
};
using http_stream_ptr = std::shared_ptr<http_stream>;

/// A TCP socket bound to `host` (a numeric IPv4 or IPv6 address) and `port`
/// (SO_REUSEADDR, close-on-exec), or -1 with the reason in `why`.
int bind_tcp_socket(const std::string& host, uint16_t port, std::string& why);

class http_server {
 public:
  struct routes {
    /// Where a request goes (empty: immediate).
    std::function<http_lane(const http_request&)> lane;
    /// The answer; an exception is answered 500.
    std::function<http_response(const http_request&)> answer;
    /// For http_lane::deferred: starts the answer without waiting (it runs
    /// on the loop) and hands `reply` to whatever finishes it. An exception
    /// is answered 500.
    std::function<void(http_request&&, http_reply reply)> defer;
    /// For http_lane::streamed: starts the answer without waiting (it runs
    /// on the loop) and hands the stream to whatever sends its parts. A
    /// connection streams until the stream ends, the client closes, or the
    /// client leaves more than 1 MiB unread (or reads nothing for
    /// write_timeout while bytes wait); then send answers false.
    std::function<void(http_request&&, http_stream_ptr stream)> stream;
    /// The answer to a request the server refuses itself (the parser's
    /// 4xx, 408, 503 for a full lane) from its status and reason; empty:
    /// plain text.
    std::function<http_response(int status, const std::string& reason)> refusal;
  };

  /// What the server did so far.
  struct counts {
    uint64_t answered = 0;   ///< responses sent whole
    uint64_t refused = 0;    ///< requests refused by the parser (4xx, 5xx)
    uint64_t timed_out = 0;  ///< requests not complete within request_timeout (408)
    uint64_t evicted = 0;    ///< connections closed at max_connections for a new one
    uint64_t busy = 0;       ///< requests answered 503 for a full lane
    uint64_t handshakes_failed = 0;  ///< TLS connections closed in or for want of a handshake
  };

  /// Listens on `bound_fd` (from bind_tcp_socket; the server owns it) and
  /// starts the loop and the workers, threads named `thread_name` that block
  /// the process-directed signals (SIGINT, SIGTERM, SIGHUP, SIGPIPE, ...),
  /// leaving them to the threads that handle them. With `tls` (the server
  /// takes a reference) every connection is TLS with that context's
  /// settings (a client certificate when it asks for one): the handshake
  /// must end within request_timeout of the accept, like the request after
  /// it, and a failed one closes the connection without an answer. Throws
  /// std::runtime_error when it cannot listen.
  http_server(int bound_fd, const http_limits& limits, routes r, const std::string& thread_name,
              SSL_CTX* tls = nullptr);
  /// Stops accepting, sends the answers being computed or sent (a worker's,
  /// a deferred reply) for at most 2 s, closes every connection, and waits
  /// for the workers.
  ~http_server();
  http_server(const http_server&) = delete;
  http_server& operator=(const http_server&) = delete;

  /// The port listened on.
  uint16_t port() const { return port_; }
  counts stats() const;

 private:
  struct impl;
  uint16_t port_ = 0;
  std::unique_ptr<impl> impl_;
};

}  // namespace proofline::observe
