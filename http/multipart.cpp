#include "http/multipart.hpp"

#include "observe/http_server.hpp"

namespace proofline::http {

namespace {

using observe::equal_ignoring_case;

/// Header lines a part may have, and bytes in one: a part's head is small.
constexpr std::size_t max_part_fields = 8;
constexpr std::size_t max_part_field_bytes = 1024;

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

/// The parameter `name` of a header value ("form-data; name=\"a\"",
/// "multipart/form-data; boundary=x"), unquoted; false when absent or
/// malformed.
bool parameter(std::string_view value, std::string_view name, std::string& out) {
  std::size_t at = value.find(';');
  while (at != std::string_view::npos) {
    std::string_view rest = value.substr(at + 1);
    const std::size_t eq = rest.find('=');
    if (eq == std::string_view::npos) return false;
    const std::string_view key = trim(rest.substr(0, eq));
    rest = trim(rest.substr(eq + 1));
    std::string v;
    std::size_t used = 0;
    if (!rest.empty() && rest.front() == '"') {
      std::size_t i = 1;
      for (; i < rest.size() && rest[i] != '"'; ++i) {
        if (rest[i] == '\\' && i + 1 < rest.size()) ++i;
        v += rest[i];
      }
      if (i >= rest.size()) return false;  // no closing quote
      used = i + 1;
    } else {
      used = rest.find(';');
      if (used == std::string_view::npos) used = rest.size();
      v = std::string(trim(rest.substr(0, used)));
    }
    if (equal_ignoring_case(key, name)) {
      out = std::move(v);
      return true;
    }
    const std::size_t next = rest.find(';', used);
    if (next == std::string_view::npos) return false;
    at = static_cast<std::size_t>(rest.data() - value.data()) + next;
  }
  return false;
}

}  // namespace

bool is_form_data(std::string_view content_type) {
  const std::size_t semi = content_type.find(';');
  return equal_ignoring_case(trim(content_type.substr(0, semi)), "multipart/form-data");
}

std::string parse_form_data(std::string_view content_type, std::string_view body,
                            std::size_t max_parts, std::vector<form_part>& parts) {
  parts.clear();
  std::string boundary;
  if (!is_form_data(content_type) || !parameter(content_type, "boundary", boundary))
    return "Content-Type: not multipart/form-data with a boundary";
  if (boundary.empty() || boundary.size() > 70)
    return "Content-Type: the boundary is not 1 to 70 characters";
  const std::string first = "--" + boundary;
  const std::string delimiter = "\r\n--" + boundary;
  // The first delimiter opens the body or follows a preamble.
  std::size_t at;
  if (body.substr(0, first.size()) == first) {
    at = first.size();
  } else {
    at = body.find(delimiter);
    if (at == std::string_view::npos) return "body: no part opens with the boundary";
    at += delimiter.size();
  }
  for (;;) {
    // After a delimiter: "--" ends the form; else blanks and a line end.
    if (body.substr(at, 2) == "--") return {};
    while (at < body.size() && (body[at] == ' ' || body[at] == '\t')) ++at;
    if (body.substr(at, 2) != "\r\n") return "body: a boundary line does not end with CRLF";
    at += 2;
    if (parts.size() == max_parts)
      return "body: more than " + std::to_string(max_parts) + " parts";
    form_part part;
    bool named = false;
    for (std::size_t fields = 0;; ++fields) {
      const std::size_t end = body.find("\r\n", at);
      if (end == std::string_view::npos) return "body: a part's head does not end";
      const std::string_view line = body.substr(at, end - at);
      at = end + 2;
      if (line.empty()) break;
      if (fields == max_part_fields || line.size() > max_part_field_bytes)
        return "body: a part's head is larger than " + std::to_string(max_part_fields) +
               " fields of " + std::to_string(max_part_field_bytes) + " bytes";
      const std::size_t colon = line.find(':');
      if (colon == std::string_view::npos) return "body: a part's header has no ':'";
      if (!equal_ignoring_case(trim(line.substr(0, colon)), "content-disposition")) continue;
      const std::string_view value = trim(line.substr(colon + 1));
      if (!equal_ignoring_case(trim(value.substr(0, value.find(';'))), "form-data"))
        return "body: a part's Content-Disposition is not form-data";
      named = parameter(value, "name", part.name) && !part.name.empty();
      parameter(value, "filename", part.filename);
    }
    if (!named) return "body: part " + std::to_string(parts.size()) +
                       " has no Content-Disposition: form-data; name=\"...\"";
    const std::size_t end = body.find(delimiter, at);
    if (end == std::string_view::npos)
      return "body: part " + part.name + " does not end with the boundary (a body cut short?)";
    part.content = body.substr(at, end - at);
    parts.push_back(std::move(part));
    at = end + delimiter.size();
  }
}

}  // namespace proofline::http
