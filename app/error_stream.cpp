#include "app/error_stream.hpp"

#include <atomic>
#include <chrono>
#include <ctime>
#include <iostream>
#include <streambuf>
#include <string>

#include <nlohmann/json.hpp>

namespace proofline::app {

namespace {

std::atomic<bool> json_errors{false};

/// "2026-12-01T12:04:44.123Z", as the JSON log lines write their time.
std::string utc_now() {
  using namespace std::chrono;
  const auto now = system_clock::now();
  const std::time_t t = system_clock::to_time_t(now);
  const auto ms = duration_cast<milliseconds>(now.time_since_epoch()).count() % 1000;
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[40];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  char out[48];
  std::snprintf(out, sizeof out, "%s.%03dZ", buf, static_cast<int>(ms));
  return out;
}

/// Passes bytes to stderr's buffer, or gathers them into lines and writes
/// each as a JSON object.
class error_buffer final : public std::streambuf {
 public:
  void flush_line() {
    if (line_.empty()) return;
    const std::string text = line_;
    line_.clear();
    std::string msg = nlohmann::json(text).dump(-1, ' ', false,
                                                nlohmann::json::error_handler_t::replace);
    std::string out = "{\"time\":\"" + utc_now() + "\",\"level\":\"error\",\"msg\":" + msg + "}\n";
    std::cerr.write(out.data(), static_cast<std::streamsize>(out.size()));
    std::cerr.flush();
  }

 protected:
  int_type overflow(int_type c) override {
    if (traits_type::eq_int_type(c, traits_type::eof())) return traits_type::not_eof(c);
    const char ch = traits_type::to_char_type(c);
    if (!json_errors.load(std::memory_order_relaxed)) {
      std::cerr.put(ch);
      return c;
    }
    if (ch == '\n')
      flush_line();
    else
      line_ += ch;
    return c;
  }
  std::streamsize xsputn(const char* s, std::streamsize n) override {
    if (!json_errors.load(std::memory_order_relaxed)) {
      std::cerr.write(s, n);
      return n;
    }
    for (std::streamsize i = 0; i < n; ++i) overflow(traits_type::to_int_type(s[i]));
    return n;
  }
  int sync() override {
    if (!json_errors.load(std::memory_order_relaxed)) std::cerr.flush();
    return 0;
  }

 private:
  std::string line_;
};

error_buffer& buffer() {
  static error_buffer b;
  return b;
}

}  // namespace

std::ostream& error_stream() {
  static std::ostream s(&buffer());
  return s;
}

void set_json_errors(bool on) {
  flush_error_stream();
  json_errors.store(on, std::memory_order_relaxed);
}

void flush_error_stream() { buffer().flush_line(); }

}  // namespace proofline::app
