// key_loader: a one-shot actor that reads one .zkey and answers with the key
// or the error naming the file, then quits. Loading takes seconds for large
// keys, so the key cache spawns it detached (its own thread), keeping the
// scheduler threads free; tests spawn it undetached for determinism.
#pragma once

#include <caf/fwd.hpp>

#include <functional>
#include <string>

#include "messages/interfaces.hpp"

namespace proofline {

/// Reads the key at a path (prover_ops::load_key).
using key_load_fn = std::function<zk::groth16::key_ptr(const std::string&)>;

/// Spawns a key loader that answers one load request with `load`, then quits.
key_loader_actor spawn_key_loader(caf::actor_system& sys, key_load_fn load, bool detached);

/// Runs `load(path)`, turning exceptions into a file_error.
key_load_result load_key_checked(const key_load_fn& load, const std::string& path);

}  // namespace proofline
