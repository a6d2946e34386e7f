// The check of a job's witness generator against its proving key, made by
// the job registry before any memory is reserved for the job.
#pragma once

#include <cstdint>
#include <string>

#include "messages/values.hpp"
#include "zk/groth16/proving_key.hpp"

namespace proofline {

/// Opens the witness generator at `path` and checks it against `key`; sets
/// `bytes` to what one witness computation takes. Empty message: it fits.
file_error check_generator(const std::string& path, const zk::groth16::proving_key_base& key,
                           uint64_t& bytes);

}  // namespace proofline
