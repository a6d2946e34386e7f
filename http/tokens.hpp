// Bearer tokens of the HTTP API (serve --http-tokens FILE): a name and a
// token a line. A request names itself with "Authorization: Bearer TOKEN";
// the name of the matching line is what logs and job records show, never
// the token.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace proofline::http {

/// One line of a token file.
struct token_entry {
  std::string name;   ///< who holds it (letters, digits, '.', '_', '-')
  std::string token;  ///< the secret, at least 16 characters
};

/// The entries of a token file's text (`file` names it in errors): "NAME
/// TOKEN" a line, blank lines and lines starting with '#' skipped. Throws
/// std::invalid_argument naming the file and line of a malformed line, a
/// short token, or a name or token given twice, and for a file without any.
std::vector<token_entry> parse_tokens(std::string_view text, const std::string& file);

/// parse_tokens over the file at `path`; throws std::invalid_argument when it cannot be read.
std::vector<token_entry> read_token_file(const std::string& path);

/// The entry whose token an Authorization field's value ("Bearer TOKEN")
/// presents, or nullptr. Every entry is compared, each in time that depends
/// only on the lengths, so the time taken tells nothing of a token's bytes.
const token_entry* match_bearer(const std::vector<token_entry>& tokens, std::string_view field);

}  // namespace proofline::http
