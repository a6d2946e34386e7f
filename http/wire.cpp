// The HTTP API's wire format: error codes and their statuses, error
// answers, query strings, base64, job and key ids (declared in http/api.hpp).
#include "http/api.hpp"

#include <sys/stat.h>

#include <openssl/evp.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "http/api_detail.hpp"

namespace proofline::http {

using namespace detail;

namespace {

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

const char* code_name(error_code c) {
  switch (c) {
    case error_code::bad_request: return "bad_request";
    case error_code::unauthorized: return "unauthorized";
    case error_code::forbidden: return "forbidden";
    case error_code::not_found: return "not_found";
    case error_code::method_not_allowed: return "method_not_allowed";
    case error_code::conflict: return "conflict";
    case error_code::too_large: return "too_large";
    case error_code::witness_mismatch: return "witness_mismatch";
    case error_code::input_rejected: return "input_rejected";
    case error_code::too_many_pending: return "too_many_pending";
    case error_code::prove_failed: return "prove_failed";
    case error_code::draining: return "draining";
    case error_code::unavailable: return "unavailable";
  }
  return "unknown";
}

int code_status(error_code c) {
  switch (c) {
    case error_code::bad_request: return 400;
    case error_code::unauthorized: return 401;
    case error_code::forbidden: return 403;
    case error_code::not_found: return 404;
    case error_code::method_not_allowed: return 405;
    case error_code::conflict: return 409;
    case error_code::too_large: return 413;
    case error_code::witness_mismatch: return 422;
    case error_code::input_rejected: return 422;
    case error_code::too_many_pending: return 429;
    case error_code::prove_failed: return 500;
    case error_code::draining: return 503;
    case error_code::unavailable: return 503;
  }
  return 500;
}

http_response error_response(error_code c, const std::string& message, unsigned retry_after_s) {
  nlohmann::json j;
  j["error"] = {{"code", code_name(c)}, {"message", message}};
  auto r = json_response(code_status(c), j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  if (retry_after_s) r.headers.emplace_back("Retry-After", std::to_string(retry_after_s));
  if (c == error_code::unauthorized) r.headers.emplace_back("WWW-Authenticate", "Bearer");
  return r;
}

bool percent_decode(std::string_view text, std::string& out) {
  out.clear();
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '+') {
      out += ' ';
    } else if (c == '%') {
      if (i + 2 >= text.size()) return false;
      const int hi = hex_value(text[i + 1]), lo = hex_value(text[i + 2]);
      if (hi < 0 || lo < 0) return false;
      out += static_cast<char>(hi * 16 + lo);
      i += 2;
    } else {
      out += c;
    }
  }
  return true;
}

bool query_param(const std::string& query, std::string_view name, std::string& value) {
  std::string_view q = query;
  while (!q.empty()) {
    std::size_t amp = q.find('&');
    std::string_view pair = q.substr(0, amp);
    q = amp == std::string_view::npos ? std::string_view() : q.substr(amp + 1);
    std::size_t eq = pair.find('=');
    std::string key;
    if (!percent_decode(pair.substr(0, eq), key) || key != name) continue;
    return percent_decode(eq == std::string_view::npos ? std::string_view() : pair.substr(eq + 1),
                          value);
  }
  return false;
}

bool base64_decode(std::string_view text, std::string& out) {
  auto value = [](char c) -> int {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
  };
  std::size_t n = text.size();
  while (n > 0 && text[n - 1] == '=' && text.size() - n < 2) --n;
  if (n % 4 == 1) return false;
  if (text.size() != n && text.size() % 4 != 0) return false;  // padding only to a multiple of 4
  out.clear();
  out.reserve(n / 4 * 3 + 2);
  uint32_t acc = 0;
  int bits = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const int v = value(text[i]);
    if (v < 0) return false;
    acc = (acc << 6) | static_cast<uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += static_cast<char>((acc >> bits) & 0xff);
    }
  }
  // Leftover bits must be zero (a canonical encoding).
  return (acc & ((1u << bits) - 1)) == 0;
}

bool valid_job_id(std::string_view id) {
  if (id.empty() || id.size() > 64 || id[0] == '.') return false;
  for (char c : id)
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
          c == '.' || c == '_' || c == '-'))
      return false;
  return true;
}

std::string key_id_of(const std::string& canonical_path) {
  struct stat st {};
  if (::stat(canonical_path.c_str(), &st) != 0) return {};
  const std::string identity =
      fmt::format("{}\n{}:{}:{}:{}.{}", canonical_path, static_cast<uint64_t>(st.st_dev),
                  static_cast<uint64_t>(st.st_ino), static_cast<uint64_t>(st.st_size),
                  static_cast<int64_t>(st.st_mtim.tv_sec), static_cast<int64_t>(st.st_mtim.tv_nsec));
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  if (EVP_Digest(identity.data(), identity.size(), md, &len, EVP_sha256(), nullptr) != 1) return {};
  std::string id = "k";
  for (unsigned i = 0; i < 8 && i < len; ++i) id += fmt::format("{:02x}", md[i]);
  return id;
}

}  // namespace proofline::http
