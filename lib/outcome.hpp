// What the library hands back: its status codes (those of
// include/proofline/proofline.h), the error that carries one, and a
// submission's outcome, made from the job report the runtime answers with.
#pragma once

#include <stdexcept>
#include <string>

#include "messages/values.hpp"

namespace proofline::lib {

enum class status : int {
  ok = 0,
  argument = 1,
  input = 2,
  prove = 3,
  cancelled = 4,
  backend = 5,
  state = 6,
};

/// A failure with the status it maps to and a message naming the problem.
struct error : std::runtime_error {
  error(status c, const std::string& message, bool length = false)
      : std::runtime_error(message), code(c), witness_length(length) {}
  status code;
  bool witness_length;  ///< an input error: the witness has the wrong number of values
};

/// What one submission comes to.
struct proof_outcome {
  status code = status::ok;
  bool witness_length = false;  ///< see error::witness_length
  std::string proof_json;       ///< proof.json as snarkjs writes it (code ok)
  std::string public_json;      ///< public.json likewise
  std::string message;          ///< the error (code not ok)
  std::string backend;          ///< "cuda:0", "cpu:0", "cpu:fallback"
  bool verified = false;        ///< checked by pairing before it was returned
  double ms = 0;                ///< from the submission to the outcome
};

/// The outcome of a one-partition job from its report: its proof when done;
/// an input error when the failure names the witness (`witness`, as the job
/// spec names it) or the job's witness generator (`generator`, when it has
/// one), else a proving error; cancelled when cancelled.
proof_outcome outcome_of(const job_report& report, const std::string& witness,
                         const std::string& generator = {});

/// An outcome that never reached the runtime.
proof_outcome failed_outcome(status code, std::string message);

}  // namespace proofline::lib
