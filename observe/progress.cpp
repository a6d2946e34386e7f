#include "observe/progress.hpp"
#include "base/text.hpp"

#include <sys/ioctl.h>
#include <unistd.h>


#include <fmt/format.h>

namespace proofline::observe {

using base::fixed;

std::optional<double> eta_ms(const progress_state& s) {
  uint64_t finished = s.done + s.failed;
  if (finished == 0 || s.elapsed_ms <= 0) return std::nullopt;
  if (finished >= s.total) return 0.0;
  if (s.eta_at_rate_ms) return s.eta_at_rate_ms;
  return s.elapsed_ms / static_cast<double>(finished) * static_cast<double>(s.total - finished);
}

std::string progress_line(const progress_state& s) {
  std::string line = std::to_string(s.done) + "/" + std::to_string(s.total) + " partitions";
  if (s.failed) line += " (" + std::to_string(s.failed) + " failed)";
  line += std::string(s.gpu ? "  GPU" : "  CPU") + " busy " + (s.busy_fraction ? fixed(*s.busy_fraction * 100.0, 1) + "%" : "-");
  line += "  queue: " + std::to_string(s.ready) + " ready, " + std::to_string(s.waiting_memory) +
          " waiting to start";
  auto eta = eta_ms(s);
  line += "  ETA " + (eta ? base::duration_text(*eta) : "-");
  return line;
}

progress_display::progress_display(std::FILE* stream, bool enabled)
    : stream_(stream), active_(enabled && stream && isatty(fileno(stream))) {}

progress_display::~progress_display() { clear(); }

void progress_display::update(const progress_state& s) {
  if (!active_) return;
  std::string line = progress_line(s);
  winsize ws{};
  if (ioctl(fileno(stream_), TIOCGWINSZ, &ws) == 0 && ws.ws_col > 1 && line.size() >= ws.ws_col)
    line.resize(ws.ws_col - 1);
  std::lock_guard<std::mutex> lock(mutex_);
  // Carriage return, the line, then erase whatever a longer line left behind.
  fmt::print(stream_, "\r{}\033[K", line);
  std::fflush(stream_);
  shown_ = true;
}

void progress_display::clear() {
  if (!active_) return;
  std::lock_guard<std::mutex> lock(mutex_);
  erase();
}

void progress_display::erase() {
  if (!shown_) return;
  fmt::print(stream_, "\r\033[K");
  std::fflush(stream_);
  shown_ = false;
}

namespace {

class progress_sink final : public spdlog::sinks::sink {
 public:
  progress_sink(std::shared_ptr<spdlog::sinks::sink> inner,
                std::shared_ptr<progress_display> display)
      : inner_(std::move(inner)), display_(std::move(display)) {}
  void log(const spdlog::details::log_msg& msg) override {
    display_->clear();
    inner_->log(msg);
  }
  void flush() override { inner_->flush(); }
  void set_pattern(const std::string& pattern) override { inner_->set_pattern(pattern); }
  void set_formatter(std::unique_ptr<spdlog::formatter> f) override {
    inner_->set_formatter(std::move(f));
  }

 private:
  std::shared_ptr<spdlog::sinks::sink> inner_;
  std::shared_ptr<progress_display> display_;
};

}  // namespace

std::shared_ptr<spdlog::sinks::sink> progress_aware_sink(
    std::shared_ptr<spdlog::sinks::sink> inner, std::shared_ptr<progress_display> display) {
  return std::make_shared<progress_sink>(std::move(inner), std::move(display));
}

}  // namespace proofline::observe
