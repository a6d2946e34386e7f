// Test-only fault injection: a backend decorator that corrupts or fails
// chosen proofs, so the runtime's pairing self-check and retries can be
// tested on any backend. Never active by default: the runtime builder
// (engine/runtime_builder.hpp) reads the environment variable
// PROOFLINE_FAULT_INJECT once, wraps the backends it hands to the runtime
// when the variable is set, and logs a warning when it does. Tests of the
// actors call with_faults() themselves.
//
//   PROOFLINE_FAULT_INJECT=corrupt:2        the 2nd prove() call returns a wrong result
//   PROOFLINE_FAULT_INJECT=throw:3,corrupt:5 the 3rd throws gpu::backend_error, the 5th is wrong
//   PROOFLINE_FAULT_INJECT=corrupt:all      every result is wrong (a permanently bad backend)
//
// Calls are counted from 1 over every backend of the process together, in
// the order prove() is entered. The builder wraps the primary backends only,
// never the fallback (runtime_config::fallback), so with CUDA a backend that
// corrupts every proof shows the CPU fallback proving the retries. A wrong
// result has pi_a's MSM moved by the G1 generator: a well-formed proof that
// fails verification.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "gpu/backend.hpp"

namespace proofline::engine {

struct fault {
  enum class kind { corrupt, fail } what = kind::corrupt;
  uint64_t call = 0;  ///< 1-based prove() call; 0 = every call
};

/// Parses "corrupt:K", "throw:K", "corrupt:all", "throw:all", comma-separated.
/// Throws std::invalid_argument naming the bad item.
std::vector<fault> parse_faults(const std::string& text);

/// The backends, each wrapped to apply `faults` (one call counter for all).
std::vector<std::shared_ptr<gpu::backend>> with_faults(std::vector<std::shared_ptr<gpu::backend>> backends,
                                                  const std::vector<fault>& faults);

/// The value of PROOFLINE_FAULT_INJECT, or "" when it is not set.
std::string fault_spec_from_env();

}  // namespace proofline::engine
