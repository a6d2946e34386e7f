// key_loader: a one-shot actor that reads one .zkey and answers with the key
// or the error naming the file, then quits. Loading takes seconds for large
// keys, so the job registry spawns it detached (its own thread), keeping the
// scheduler threads free; tests spawn it undetached for determinism.
#pragma once

#include <functional>
#include <string>

#include "messages/interfaces.hpp"

namespace proofline {

struct key_loader_state {
  static inline const char* name = "key_loader";
  std::function<zk::groth16::key_ptr(const std::string&)> load;
};

/// Answers one load request, then quits.
key_loader_actor::behavior_type key_loader(
    key_loader_actor::stateful_pointer<key_loader_state> self,
    std::function<zk::groth16::key_ptr(const std::string&)> load);

/// Runs `load(path)`, turning exceptions into a file_error.
key_load_result load_key_checked(
    const std::function<zk::groth16::key_ptr(const std::string&)>& load, const std::string& path);

}  // namespace proofline
