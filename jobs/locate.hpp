// Finding the bundled example that `proofline run` proves without a job file:
// examples/jobs.json next to the binary (installed or in the build tree), or
// in the source tree the binary was built from.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace proofline::jobs {

/// Directories searched, in order: <exe dir>/examples, <exe dir>/../examples,
/// <exe dir>/../share/proofline/examples, then the source tree's examples/
/// (PROOFLINE_SOURCE_EXAMPLES, a compile definition). <exe dir> comes from
/// /proc/self/exe.
std::vector<std::string> example_dirs();

/// The first <dir>/jobs.json that exists, normalized; nullopt if none.
std::optional<std::string> find_bundled_jobs();

}  // namespace proofline::jobs
