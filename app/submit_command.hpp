// `proofline submit --connect HOST:PORT JOBFILE`: submits a job file (`-`:
// standard input) to a running `serve` as a remote control client, prints a
// line per partition done and a progress line with an ETA (redrawn in place
// on a terminal), waits and exits like `run`; --no-wait prints the job ids
// and returns; --json prints one JSON document instead. --inline sends the
// witness bytes with the jobs instead of paths on shared storage. SIGINT or
// SIGTERM ends it at once, the jobs going on at the server.
#pragma once

#include <iosfwd>
#include <string>

#include "app/cli.hpp"
#include "net/net_client.hpp"

namespace proofline::app {

struct submit_options {
  net::client_options client;
  std::string job_file;
  bool no_wait = false;
  bool inline_witnesses = false;
  bool quiet = false;
  bool json = false;  ///< one JSON document on stdout, no progress lines
};

/// Largest total of inline witness bytes one submission carries: BASP frames
/// a message with a 32-bit length, and the server holds it in memory.
inline constexpr uint64_t max_inline_bytes = 1ull << 30;

/// Registers `submit` on the cli; its options live as long as the cli.
void add_submit_command(cli& c);

/// 0 every job done (or --no-wait and accepted); 1 a job failed or was
/// cancelled, or the server could not be reached or was lost; 2 a bad
/// option, an invalid job file or a submission the server refused; 130 or
/// 143 interrupted by SIGINT or SIGTERM (the jobs go on). `in` is read when
/// the job file is `-`.
int submit_command(const submit_options& opts, std::istream& in, std::ostream& out,
                   std::ostream& err);

}  // namespace proofline::app
