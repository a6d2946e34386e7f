// proof_checker: the cluster dispatcher's helper (actors/cluster_dispatcher.hpp)
// that checks a node's proof by pairing and, when it verifies, writes its
// proof and public files. It runs on a thread of its own in production, since
// the pairing check takes milliseconds, and is linked to the dispatcher that
// spawns it.
#pragma once

#include <caf/fwd.hpp>
#include <caf/typed_actor.hpp>

#include <functional>
#include <string>
#include <string_view>

#include "messages/interfaces.hpp"

namespace proofline {

/// A node's proof on its way to the coordinator's proof checker.
struct node_proof {
  job_ptr job;
  uint32_t index = 0;
  std::string proof_json;
  std::string public_json;
};

/// The checker's answer: the check's verdict and, when it verified, whether
/// the files were written.
struct node_proof_verdict {
  std::string problem;  ///< why the proof does not verify; empty when it does
  double verify_ms = 0;
  file_error write_error;  ///< set when writing the files failed
  bool written = false;    ///< false also when the job was cancelled meanwhile
  /// The proof's text, for a job whose outputs come back in its report
  /// (nothing is written then; `written` says it verified).
  std::string proof_json;
  std::string public_json;
};

}  // namespace proofline

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(proofline::node_proof)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(proofline::node_proof_verdict)

namespace proofline {

using proof_checker_actor =
    caf::typed_actor<caf::replies_to<check_atom, node_proof>::with<node_proof_verdict>>;

/// Why a node's proof.json and public.json text (named as the last two
/// arguments in messages) do not verify against the key; empty when they do.
using node_proof_check = std::function<std::string(
    const zk::groth16::key_ptr& key, const std::string& proof_json,
    const std::string& public_json, const std::string& proof_name,
    const std::string& public_name)>;
/// Writes a file atomically; throws std::runtime_error naming the path.
using file_writer = std::function<void(const std::string& path, std::string_view contents)>;

/// Spawns a proof checker linked to `parent`, detached when `detached`.
proof_checker_actor spawn_proof_checker(caf::local_actor& parent, node_proof_check check,
                                        file_writer write, bool detached);

}  // namespace proofline
