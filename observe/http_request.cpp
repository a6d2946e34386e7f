// The pure half of observe/http_server.hpp: request parsing under limits and
// response rendering, with no sockets or threads (the fuzz target links it
// alone).
#include <cctype>
#include <string>

#include "observe/http_server.hpp"

namespace proofline::observe {

namespace {

/// RFC 9110 token characters (methods, field names).
bool is_tchar(unsigned char c) {
  if (std::isalnum(c)) return true;
  switch (c) {
    case '!': case '#': case '$': case '%': case '&': case '\'': case '*': case '+':
    case '-': case '.': case '^': case '_': case '`': case '|': case '~':
      return true;
    default:
      return false;
  }
}

bool is_token(std::string_view s) {
  if (s.empty()) return false;
  for (unsigned char c : s)
    if (!is_tchar(c)) return false;
  return true;
}

/// Reads lines of `bytes` from `pos`: a line ends with LF, and a CR before
/// it is dropped.
class line_reader {
 public:
  explicit line_reader(std::string_view bytes) : bytes_(bytes) {}
  /// The next line, or false when it has not ended yet.
  bool next(std::string_view& line) {
    size_t lf = bytes_.find('\n', pos_);
    if (lf == std::string_view::npos) return false;
    line = bytes_.substr(pos_, lf - pos_);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    pos_ = lf + 1;
    return true;
  }
  size_t pos() const { return pos_; }

 private:
  std::string_view bytes_;
  size_t pos_ = 0;
};

}  // namespace

bool equal_ignoring_case(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(a[i])) !=
        std::tolower(static_cast<unsigned char>(b[i])))
      return false;
  return true;
}

const std::string* http_request::header(std::string_view name) const {
  for (const auto& [n, v] : headers)
    if (equal_ignoring_case(n, name)) return &v;
  return nullptr;
}

http_parse parse_http_request(std::string_view bytes, const http_limits& limits, bool copy_body) {
  http_parse r;
  auto refuse = [&](int status, std::string why) {
    r.st = http_parse::state::refused;
    r.status = status;
    r.reason = std::move(why);
    r.request = {};
    return r;
  };
  const std::string head_limit = std::to_string(limits.max_head_bytes);
  // Incomplete, unless the bytes already exceed what a head may hold.
  auto more = [&](int status, const char* what) {
    if (bytes.size() > limits.max_head_bytes)
      return refuse(status, std::string(what) + " is longer than " + head_limit + " bytes");
    return r;
  };
  line_reader lines(bytes);
  std::string_view line;

  // The request line, after any empty lines.
  do {
    if (!lines.next(line)) return more(414, "the request line");
  } while (line.empty());
  if (lines.pos() > limits.max_head_bytes)
    return refuse(414, "the request line is longer than " + head_limit + " bytes");
  for (unsigned char c : line)
    if (c < 0x20 || c == 0x7f) return refuse(400, "a control character in the request line");
  const size_t sp1 = line.find(' ');
  const size_t sp2 = sp1 == std::string_view::npos ? sp1 : line.find(' ', sp1 + 1);
  if (sp2 == std::string_view::npos || line.find(' ', sp2 + 1) != std::string_view::npos)
    return refuse(400, "the request line is not METHOD TARGET HTTP-VERSION");
  std::string_view method = line.substr(0, sp1);
  std::string_view target = line.substr(sp1 + 1, sp2 - sp1 - 1);
  std::string_view version = line.substr(sp2 + 1);
  if (!is_token(method)) return refuse(400, "the method is not a token");
  if (target.empty() || target.front() != '/')
    return refuse(400, "the target is not a path (origin form, \"/...\")");
  auto digit = [](char c) { return c >= '0' && c <= '9'; };
  if (version.size() != 8 || version.substr(0, 5) != "HTTP/" || !digit(version[5]) ||
      version[6] != '.' || !digit(version[7]))
    return refuse(400, "the HTTP version is not HTTP/DIGIT.DIGIT");
  if (version[5] != '1' || (version[7] != '0' && version[7] != '1'))
    return refuse(505, "only HTTP/1.0 and HTTP/1.1 are served");
  http_request& req = r.request;
  req.method = method;
  req.target = target;
  const size_t q = target.find('?');
  req.path = target.substr(0, q);
  if (q != std::string_view::npos) req.query = target.substr(q + 1);
  req.minor_version = version[7] - '0';

  // Header fields, up to the empty line.
  for (;;) {
    if (!lines.next(line)) return more(431, "the request head");
    // The size first, so that a refusal does not depend on what follows.
    if (lines.pos() > limits.max_head_bytes)
      return refuse(431, "the request head is longer than " + head_limit + " bytes");
    if (line.empty()) break;
    if (req.headers.size() == limits.max_header_fields)
      return refuse(431, "more than " + std::to_string(limits.max_header_fields) +
                             " header fields");
    if (line.front() == ' ' || line.front() == '\t')
      return refuse(400, "a header field continues on another line (obsolete folding)");
    const size_t colon = line.find(':');
    if (colon == std::string_view::npos || !is_token(line.substr(0, colon)))
      return refuse(400, "a header field is not NAME: VALUE");
    std::string_view value = line.substr(colon + 1);
    while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) value.remove_prefix(1);
    while (!value.empty() && (value.back() == ' ' || value.back() == '\t')) value.remove_suffix(1);
    for (unsigned char c : value)
      if ((c < 0x20 && c != '\t') || c == 0x7f)
        return refuse(400, "a control character in a header field");
    req.headers.emplace_back(std::string(line.substr(0, colon)), std::string(value));
  }
  const size_t head = lines.pos();

  // The body, by Content-Length only.
  if (req.header("Transfer-Encoding"))
    return refuse(501, "Transfer-Encoding is not supported; send a Content-Length");
  std::string_view length;
  for (const auto& [n, v] : req.headers) {
    if (!equal_ignoring_case(n, "Content-Length")) continue;
    if (v.empty() || v.size() > 19 || v.find_first_not_of("0123456789") != std::string::npos)
      return refuse(400, "Content-Length is not a number");
    if (!length.empty() && length != v) return refuse(400, "two different Content-Lengths");
    length = v;
  }
  const uint64_t body = length.empty() ? 0 : std::stoull(std::string(length));
  if (body > limits.max_body_bytes)
    return refuse(413, "a body of " + std::string(length) + " bytes; at most " +
                           std::to_string(limits.max_body_bytes) + " are accepted");
  if (bytes.size() - head < body) {
    http_parse wait;
    wait.expected = head + body;
    return wait;
  }
  if (copy_body) req.body = bytes.substr(head, body);
  r.st = http_parse::state::complete;
  r.consumed = head + body;
  r.head_bytes = head;
  return r;
}

std::string_view http_reason_phrase(int status) {
  switch (status) {
    case 200: return "OK";
    case 201: return "Created";
    case 202: return "Accepted";
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 408: return "Request Timeout";
    case 409: return "Conflict";
    case 413: return "Content Too Large";
    case 414: return "URI Too Long";
    case 422: return "Unprocessable Content";
    case 429: return "Too Many Requests";
    case 431: return "Request Header Fields Too Large";
    case 500: return "Internal Server Error";
    case 501: return "Not Implemented";
    case 503: return "Service Unavailable";
    case 505: return "HTTP Version Not Supported";
    default: return "Unknown";
  }
}

std::string render_http_response(const http_response& r, bool head_only) {
  std::string out = "HTTP/1.1 " + std::to_string(r.status) + " ";
  out += http_reason_phrase(r.status);
  out += "\r\nContent-Type: " + r.content_type;
  out += "\r\nContent-Length: " + std::to_string(r.body.size());
  for (const auto& [name, value] : r.headers) out += "\r\n" + name + ": " + value;
  out += "\r\nConnection: close\r\n\r\n";
  if (!head_only) out += r.body;
  return out;
}

std::string render_http_stream_head(const http_response& r, bool head_only) {
  std::string out = "HTTP/1.1 " + std::to_string(r.status) + " ";
  out += http_reason_phrase(r.status);
  out += "\r\nContent-Type: " + r.content_type;
  for (const auto& [name, value] : r.headers) out += "\r\n" + name + ": " + value;
  out += "\r\nConnection: close\r\n\r\n";
  if (!head_only) out += r.body;
  return out;
}

}  // namespace proofline::observe
