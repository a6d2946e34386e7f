// The stream every command writes its error lines to ("proofline serve:
// cannot listen on ..."). As text it is stderr as is. With --log-format json
// (setup_logging turns it on) each line becomes one JSON object of the log's
// shape, {"time": ..., "level": "error", "msg": ...}, so a supervisor that
// parses stderr as JSON lines also reads the line it most needs: why the
// process stopped.
#pragma once

#include <ostream>

namespace proofline::app {

/// stderr, as text or as JSON lines (set_json_errors).
std::ostream& error_stream();

/// From now on, each line written to error_stream() is a JSON object; a
/// line not yet ended is written when the process exits.
void set_json_errors(bool on);

/// Writes what error_stream() holds of a line not yet ended.
void flush_error_stream();

}  // namespace proofline::app
