// control: the API a `proofline serve` publishes with CAF's io::middleman
// (control_actor in messages/interfaces.hpp). Clients submit job files,
// watch progress, cancel and read metrics; nodes join and return results,
// which control hands to the cluster dispatcher with the sender kept.
//
// Problem: remote requests carry paths the server reads and writes, and a
// server must accept connections before its slow start-up (backends, pinned
// memory) is over.
//
// Design:
//  * `serve` spawns control before anything slow and publishes it at once;
//    until the runtime is wired in (attach) every request is refused with
//    server_starting_message, which clients retry.
//  * A submission is the job file's text plus the client's absolute path of
//    it. Control parses it with jobs/job_file's rules (parse_jobs, injected
//    by the app, so actors/ does not depend on jobs/), resolving relative
//    paths against that path's directory, then requires every zkey, witness
//    and out path (and witness generator) to lie under an allowed root
//    (serve --allow-root; symlinks resolved) and replaces each by its
//    resolved name. The files are opened later by that name, beneath the
//    root and without following links (base/confined.hpp), so a link put on
//    the path while the job waits fails the open.
//    Inline witnesses are written to the spool directory, removed when the
//    job completes. Then the registry accepts all the jobs or none.
//  * Client job ids map to the newest job with that id.
//  * Watches are control's long polls (its watches section): the
//    registry answers what a job finished past a cursor and tells control
//    (news) whenever a job has finished partitions; a watch without news
//    is parked here until news of its jobs or the end of its wait.
//  * Once serve drains (drain_atom), submissions are refused with
//    server_stopping_message; status, watch and cancel still answer.
//  * flush_atom orders serve's stop after the last answers: control asks the
//    registry for its status and answers when that reply comes back. The
//    registry answers control's requests in the order they came, so the
//    watch requests that earlier news made are
//    answered, and their clients' promises delivered, first.
//  * Unexpected messages (a foreign or malformed client) are logged and
//    answered with an error; they never stop the actor.
#pragma once

#include <caf/fwd.hpp>

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "messages/interfaces.hpp"

namespace proofline {

/// The text of the error every request gets before the runtime is attached.
inline constexpr const char* server_starting_message = "the server is starting; try again";
/// The text of the error a submission gets once the server drains (stopping).
inline constexpr const char* server_stopping_message =
    "the server is stopping: it finishes the partitions in flight and accepts no new jobs; "
    "submit to it again once it has restarted";

struct control_config {
  /// Parses job-file text (jobs/job_file rules); throws std::exception whose
  /// what() names the file, job and field.
  std::function<std::vector<job_spec>(const std::string& text, const std::string& name,
                                      const std::string& base_dir)>
      parse_jobs;
  std::vector<std::string> allowed_roots;  ///< canonical directories (canonical_root)
  std::string spool_dir;                   ///< inline witnesses go here (created on demand)
  /// Most inline witness bytes one submission may carry (serve --max-inline).
  uint64_t max_inline_bytes = uint64_t(1) << 30;
  std::string name;                        ///< host:pid, for metrics
  /// Writes a file atomically; throws std::runtime_error naming the path.
  std::function<void(const std::string& path, std::string_view contents)> write_file;
};

/// Spawns the control actor; `serve` publishes it as control_actor.
control_admin_actor spawn_control(caf::actor_system& sys, control_config cfg);

// ---- path policy (also used by the node agent)

/// `dir` made absolute with symlinks resolved; throws std::runtime_error
/// naming the directory when it does not exist.
std::string canonical_root(const std::string& dir);

/// Whether `path` (absolute or relative to the working directory) lies
/// under one of `roots` once resolved (weakly_canonical: symlinks of the
/// part that exists are followed, `..` cannot escape).
bool under_roots(const std::string& path, const std::vector<std::string>& roots);

/// "PATH: outside the allowed roots (/a, /b); see serve --allow-root".
std::string outside_roots_message(const std::string& path, const std::vector<std::string>& roots);

/// The text of an error as a user should read it: the string a handler put
/// in its context, else CAF's rendering.
std::string error_text(caf::actor_system& sys, const caf::error& e);

}  // namespace proofline
