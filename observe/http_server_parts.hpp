// The pieces observe/http_server.cpp's loop works with: a connection and its
// phase, a lane's queue of requests, and the sink through which deferred
// replies and streamed parts reach the loop from any thread. Internal to
// the server.
#pragma once

#include <unistd.h>

#include <openssl/ssl.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "memory/arena.hpp"
#include "observe/http_server.hpp"

namespace proofline::observe::http_parts {

using clock = std::chrono::steady_clock;

enum class phase {
  reading,    // the request is arriving
  waiting,    // complete, queued for or with a worker
  writing,    // the response is being sent
  streaming,  // a streamed answer: its head is sent, parts follow until its end
  lingering,  // sent; dropping what the client still sends, then closing
};

struct connection {
  int fd = -1;
  SSL* ssl = nullptr;        // TLS: the session on fd
  bool handshaken = false;   // TLS: the handshake is over
  bool want_write = false;   // TLS: the last read needs the socket writable
  uint64_t id = 0;  // matches a worker's answer to its connection
  phase at = phase::reading;
  clock::time_point accepted, deadline;
  std::string in, out;
  size_t expected = 0;  // reading: the request's whole size once its head was parsed
  size_t sent = 0;
  // streaming: set when the client is gone (read by the stream's sender),
  // and whether the stream's end arrived.
  std::shared_ptr<std::atomic<bool>> gone;
  bool stream_end = false;
  bool overrun = false;  // streaming: more than stream_backlog unread; closed by expire()
};

struct job {
  uint64_t id;
  http_request request;
};

/// A lane's worker: its queue and its thread.
struct worker_lane {
  std::mutex mutex;
  std::condition_variable wake;
  std::deque<job> queue;  // jobs not yet taken
  size_t busy = 0;        // jobs taken, not yet answered
  std::thread thread;
};

/// What a reply or a stream hands the loop for connection `id`.
enum class part {
  whole,  // a complete response
  head,   // a streamed answer's head and first bytes
  more,   // its further bytes
  end,    // its end
};

struct posted {
  uint64_t id;
  std::string bytes;
  part kind;
};

/// Where deferred replies and streamed parts go: the loop's answer queue and
/// its wake pipe, shared with every reply still out, closed by the server's
/// destructor.
struct answer_sink {
  std::mutex mutex;
  bool open = true;
  int wake_write = -1;
  std::vector<posted> answers;

  /// False once the server is gone (nothing is queued then).
  bool post(uint64_t id, std::string bytes, part kind = part::whole) {
    std::lock_guard<std::mutex> lock(mutex);
    if (!open) return false;
    answers.push_back({id, std::move(bytes), kind});
    const char byte = 1;
    [[maybe_unused]] auto n = ::write(wake_write, &byte, 1);  // a full pipe wakes the loop too
    return true;
  }
};

/// The http_stream of one connection: its parts go through the sink; the
/// loop sets `gone` when the connection closes.
class sink_stream final : public http_stream {
 public:
  sink_stream(std::shared_ptr<answer_sink> sink, uint64_t id, bool head_only,
              std::shared_ptr<std::atomic<bool>> gone)
      : sink_(std::move(sink)), id_(id), head_only_(head_only), gone_(std::move(gone)) {}
  ~sink_stream() override {
    if (stage_ == 0)
      reply({500, "text/plain", "the answer was dropped\n"});
    else
      end();
  }
  void reply(http_response r) override {
    int s = 0;
    if (stage_.compare_exchange_strong(s, 2)) sink_->post(id_, render_http_response(r, head_only_));
  }
  bool open(http_response r) override {
    int s = 0;
    if (!stage_.compare_exchange_strong(s, 1)) return false;
    return sink_->post(id_, render_http_stream_head(r, head_only_), part::head) && !*gone_;
  }
  bool send(std::string bytes) override {
    if (stage_ != 1 || *gone_) return false;
    if (head_only_) return true;
    return sink_->post(id_, std::move(bytes), part::more);
  }
  void end() override {
    int s = 1;
    if (stage_.compare_exchange_strong(s, 2)) sink_->post(id_, {}, part::end);
  }

 private:
  std::shared_ptr<answer_sink> sink_;
  uint64_t id_;
  bool head_only_;
  std::shared_ptr<std::atomic<bool>> gone_;
  std::atomic<int> stage_{0};  // 0 unanswered, 1 open, 2 answered or ended
};

/// http_limits::own_arena: the loop thread's arena, and when to purge it.
/// The loop purges it itself once no body has arrived for `quiet` and none
/// is arriving, so a burst's pages go back to the kernel on the loop, off
/// every other thread's path, and only when the loop has nothing to read.
class loop_arena {
 public:
  static constexpr std::chrono::milliseconds quiet{1000};

  /// Creates the arena and makes the calling thread (the loop) allocate
  /// from it; without jemalloc it stays empty and nothing is purged.
  void bind() {
    arena_ = memory::arena::create();
    if (arena_.valid() && !arena_.bind_current_thread()) arena_ = memory::arena();
  }
  /// A body was read: its pages will be freed into the arena.
  void saw_body(clock::time_point now) {
    due_ = arena_.valid();
    last_ = now;
  }
  /// When purge_if_quiet may next purge; time_point::max() when nothing is due.
  clock::time_point next_purge() const { return due_ ? last_ + quiet : clock::time_point::max(); }
  /// Purges when due, `quiet` after the last body, and no body arriving on
  /// any of the `open` connections.
  void purge_if_quiet(clock::time_point now, const std::list<connection>& open) {
    if (!due_ || now < last_ + quiet) return;
    for (const connection& c : open)
      if (c.expected > 0) return;
    arena_.purge();
    due_ = false;
  }

 private:
  memory::arena arena_;
  bool due_ = false;
  clock::time_point last_{};
};

/// Whether a connection has bytes to send, or its end to act on.
inline bool has_output(const connection& c) {
  return c.at == phase::writing ||
         (c.at == phase::streaming && (c.sent < c.out.size() || c.stream_end));
}


}  // namespace proofline::observe::http_parts
