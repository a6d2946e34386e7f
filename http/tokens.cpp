#include "http/tokens.hpp"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <set>
#include <sstream>
#include <stdexcept>

#include "observe/http_server.hpp"

namespace proofline::http {

namespace {

constexpr std::size_t min_token_length = 16;

bool name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
         c == '_' || c == '-';
}

/// Whether a == b, in time that depends only on their lengths.
bool same_bytes(std::string_view a, std::string_view b) {
  unsigned char diff = a.size() == b.size() ? 0 : 1;
  const std::size_t n = std::max(a.size(), b.size());
  for (std::size_t i = 0; i < n; ++i) {
    const unsigned char x = i < a.size() ? static_cast<unsigned char>(a[i]) : 0;
    const unsigned char y = i < b.size() ? static_cast<unsigned char>(b[i]) : 0;
    diff |= static_cast<unsigned char>(x ^ y);
  }
  return diff == 0;
}

}  // namespace

std::vector<token_entry> parse_tokens(std::string_view text, const std::string& file) {
  std::vector<token_entry> out;
  std::set<std::string> names, secrets;
  std::size_t line_no = 0, at = 0;
  while (at <= text.size()) {
    std::size_t end = text.find('\n', at);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(at, end - at);
    at = end + 1;
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    std::istringstream words{std::string(line)};
    std::string name, token, extra;
    words >> name >> token >> extra;
    if (name.empty() || name[0] == '#') continue;
    auto where = file + ":" + std::to_string(line_no) + ": ";
    if (token.empty() || !extra.empty())
      throw std::invalid_argument(where + "expected NAME TOKEN (two words)");
    for (char c : name)
      if (!name_char(c))
        throw std::invalid_argument(where + "the name \"" + name +
                                    "\" may hold only letters, digits, '.', '_' and '-'");
    if (token.size() < min_token_length)
      throw std::invalid_argument(where + "the token of " + name + " is shorter than " +
                                  std::to_string(min_token_length) + " characters");
    if (!names.insert(name).second)
      throw std::invalid_argument(where + "the name " + name + " is given twice");
    if (!secrets.insert(token).second)
      throw std::invalid_argument(where + "the token of " + name + " is given twice");
    out.push_back({name, token});
    if (end == text.size()) break;
  }
  if (out.empty()) throw std::invalid_argument(file + ": no token (expected NAME TOKEN lines)");
  return out;
}

std::vector<token_entry> read_token_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::invalid_argument(path + ": cannot be read");
  std::ostringstream text;
  text << in.rdbuf();
  return parse_tokens(text.str(), path);
}

const token_entry* match_bearer(const std::vector<token_entry>& tokens, std::string_view field) {
  constexpr std::string_view scheme = "Bearer ";
  if (field.size() <= scheme.size()) return nullptr;
  // The scheme's name is case-insensitive (RFC 9110, 11.1); the space is not.
  if (!observe::equal_ignoring_case(field.substr(0, scheme.size() - 1), scheme.substr(0, scheme.size() - 1)) ||
      field[scheme.size() - 1] != ' ')
    return nullptr;
  std::string_view presented = field.substr(scheme.size());
  while (!presented.empty() && (presented.back() == ' ' || presented.back() == '\t'))
    presented.remove_suffix(1);
  const token_entry* found = nullptr;
  for (const auto& t : tokens)  // no early exit: every entry costs the same
    if (same_bytes(presented, t.token) && !found) found = &t;
  return found;
}

}  // namespace proofline::http
