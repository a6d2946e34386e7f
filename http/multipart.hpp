// multipart/form-data request bodies (RFC 7578), as curl -F and browsers
// send them: POST /v1/jobs takes its witnesses this way, as files, without
// the third more that base64 in JSON costs. Pure and bounded: the parts are
// views into the body, nothing is copied; the API's fuzz target
// (tests/fuzz/http_api.fuzz.cpp) runs it for a POST /v1/jobs sent as a form.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace proofline::http {

/// One part of a form: its field name, the file name it came with (empty
/// for a plain field) and its bytes, a view into the body parsed.
struct form_part {
  std::string name;
  std::string filename;
  std::string_view content;
};

/// Whether `content_type` is multipart/form-data (parameters aside).
bool is_form_data(std::string_view content_type);

/// Splits `body`, sent with `content_type` (multipart/form-data with its
/// boundary), into `parts`, at most `max_parts` of them. Returns empty, or
/// the problem in words (no boundary, a part without a name, no closing
/// delimiter, more than max_parts parts, ...).
std::string parse_form_data(std::string_view content_type, std::string_view body,
                            std::size_t max_parts, std::vector<form_part>& parts);

}  // namespace proofline::http
