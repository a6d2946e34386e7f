// The check of a job's witness generator against its proving key, made by
// the job registry before any memory is reserved for the job.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "messages/values.hpp"
#include "zk/groth16/proving_key.hpp"

namespace proofline {
namespace witness {
class generator;
}

/// Opens the witness generator at `path` and checks it against `key`; sets
/// `bytes` to what one witness computation takes and `opened` to the
/// generator. Empty message: it fits (otherwise `opened` is left as it is).
file_error check_generator(const std::string& path, const zk::groth16::proving_key_base& key,
                           uint64_t& bytes, std::shared_ptr<const witness::generator>& opened);

}  // namespace proofline
