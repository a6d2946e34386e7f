// result.json: the job registry's record of a finished job, in the shape the
// `proofline run` contract fixes (issue 2, item 6):
//
//   {"id": "b", "status": "done", "error": null,
//    "partitions": [{"index": 0, "status": "done", "proof": "proof_0.json",
//                    "public": "public_0.json",
//                    "spans_ms": {"synthesize": [s, e], "prove": [s, e], "finalize": [s, e]}}],
//    "spans_ms": {"total": [s, e]}}
//
// A failed job has "status": "failed" and "error": {"file", "message"}; a
// failed partition has "proof"/"public" null, the spans it got through and
// its own "error". Spans are ms since the run started, rounded to 1 µs.
// It lives beside the registry (which writes it) rather than in app/, since
// the registry writes it the moment a job completes.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

#include "messages/catalogue.hpp"

namespace proofline {

/// The result.json text for `report` (pretty-printed, trailing newline).
std::string result_json(const job_report& report);

/// Writes <report.out>/result.json with `write_file` (atomic: temp file and
/// rename); a failure is logged naming the file, never thrown.
void write_result_file(
    const std::function<void(const std::string& path, std::string_view contents)>& write_file,
    const job_report& report);

/// Removes what an earlier job left in `out`: result.json, proof.json,
/// public.json, proof_<i>.json and public_<i>.json (only these names), so a
/// new job's directory never shows proofs its result.json does not list.
/// Returns how many files went; errors are ignored (the job's own writes
/// report them).
std::size_t clear_previous_outputs(const std::string& out);

}  // namespace proofline
