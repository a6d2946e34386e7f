// Job files: the JSON list of proving jobs `proofline run` takes.
//
//   {"jobs": [
//     {"id": "a", "zkey": "circuit.zkey", "witness": "w.wtns", "out": "out/a"},
//     {"id": "b", "zkey": "circuit.zkey", "witnesses": ["w0.wtns", "w1.wtns"],
//      "out": "out/b", "priority": "high"}
//   ]}
//
// Schema: the top level has exactly the key "jobs", a non-empty array. Each
// job has exactly the keys id, zkey, out, one of witness (a string) or
// witnesses (a non-empty array of strings), and optionally priority (low,
// normal, high, critical; default normal). Strings are non-empty; ids are
// unique and so are out directories (after resolving); no string holds a NUL
// character. Relative zkey and
// witness paths resolve against the job file's directory; relative out paths
// against the out root (the job file's directory unless --out-root is given).
//
// The text is parsed within limits checked as it is read (zk/formats/
// json_limits.hpp): max_job_file_bytes, max_json_depth levels of nesting, and
// 12 JSON values per partition the caller allows; a file past one is refused
// naming the file and the limit, before the document is whole.
//
// Any violation rejects the whole file with a message naming the file, the
// job and the field: `jobs.json: job "b" (jobs[1]): field "priority": expected
// one of low, normal, high, critical, got "urgent"`.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "messages/catalogue.hpp"

namespace proofline::jobs {

/// A job file that cannot be read or breaks the schema; what() is the whole
/// message for the user.
class job_file_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// The largest job file read: room for hundreds of thousands of jobs, while
/// a file from untrusted hands (or /dev/zero) is refused, never read whole.
inline constexpr uint64_t max_job_file_bytes = uint64_t(64) << 20;

/// The most partitions (witnesses over all jobs) one job file may name,
/// unless the caller allows more: a file naming millions is refused before
/// any job is built, not read into memory whole.
inline constexpr std::size_t default_max_partitions = 100000;

/// Parses job-file text. `name` is the file as the user named it (for
/// messages); `base_dir` resolves zkey and witness paths, `out_root` resolves
/// out paths. Throws job_file_error.
std::vector<job_spec> parse_job_file(std::string_view text, const std::string& name,
                                     const std::string& base_dir, const std::string& out_root,
                                     std::size_t max_partitions = default_max_partitions);

/// Reads and parses the file at `path` (a regular file of at most
/// max_job_file_bytes): paths resolve against its directory, out paths
/// against `out_root` when given. Throws job_file_error.
std::vector<job_spec> read_job_file(const std::string& path,
                                    const std::optional<std::string>& out_root = std::nullopt,
                                    std::size_t max_partitions = default_max_partitions);

}  // namespace proofline::jobs
