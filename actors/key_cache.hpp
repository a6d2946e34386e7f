// key_cache: the only owner of loaded proving keys. The job registry asks it
// for the key of each job; it loads a key once (one detached key_loader per
// .zkey path), answers every job waiting for it, and shares the one key
// object (zk::groth16::key_ptr) with all of them.
//
// Identity: a key is its path plus the file's identity (size, mtime, inode,
// device) when it was asked for. A request whose file no longer matches loads
// the file again; the older key stays with the jobs that hold it and is
// dropped when the last of them lets go.
//
// Users: each key answered counts one user until the registry releases it
// (key_users_atom). A key without users is idle.
//
// Warm keys (keep_warm, `serve`): an idle key stays loaded, on the host and,
// because the CUDA backend keeps device state per key object, on the GPUs,
// so a later submission neither reads nor prepares it again. The memory
// manager is told what each key holds (key_memory_atom, summed per path) and
// which are idle (key_idle_atom); when the head of its queue needs room it
// asks here (evict_bytes_atom), and idle keys go, least recently used first, with
// their device state (key_evicted, which the runtime wires to the GPU
// workers). Without keep_warm (`run`) a key is dropped as soon as it is idle.
//
// Preload (`serve --preload`): loads a key and prepares it on the backends
// with no user, so it starts idle and warm.
//
// Adopted keys (the library): a key loaded by its owner (from bytes, or a
// file its handle keeps) is taken under a name no file has, with one user;
// jobs name it like a path, it is never read again, and it goes when its
// last user does, warm or not (nobody could name it again).
//
// Start-up record: each load's read span and, as GPU workers report them
// (prepared_atom), each device's preparation; run reports ask for it.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <caf/fwd.hpp>

#include "actors/detail/run_clock.hpp"
#include "messages/interfaces.hpp"

namespace proofline {

/// What tells one version of a file from another without reading it.
struct file_identity {
  uint64_t size = 0;
  int64_t mtime_ns = 0;
  uint64_t inode = 0;
  uint64_t device = 0;
  bool operator==(const file_identity& o) const {
    return size == o.size && mtime_ns == o.mtime_ns && inode == o.inode && device == o.device;
  }
  bool operator!=(const file_identity& o) const { return !(*this == o); }
};

/// stat() of `path`; nullopt when it cannot be read (the load then reports why).
std::optional<file_identity> identify_file(const std::string& path);

struct key_cache_config {
  memory_manager_actor memory;  ///< told each key's bytes and idleness
  std::function<zk::groth16::key_ptr(const std::string&)> load;  ///< prover_ops::load_key
  run_clock clock;
  bool detach_loaders = true;  ///< key loaders on their own threads
  bool keep_warm = false;      ///< idle keys stay until evicted (serve)
  /// The file identity of a path; identify_file unless replaced (tests).
  std::function<std::optional<file_identity>(const std::string&)> identify = identify_file;
  /// A key has loaded: the runtime sends the GPU workers a prepare message,
  /// so its device upload overlaps the synthesis of its first partitions.
  std::function<void(const zk::groth16::key_ptr&)> key_ready;
  /// A warm key was evicted: the runtime has the backends forget its device state.
  std::function<void(const zk::groth16::key_ptr&)> key_evicted;
};

/// Spawns the key cache.
key_cache_actor spawn_key_cache(caf::actor_system& sys, key_cache_config cfg);

/// Host bytes a loaded key holds (its points and coefficients); 0 for a key
/// object that holds none (test fakes are bare proving_key_base).
uint64_t key_host_bytes(const zk::groth16::proving_key_base& key);

}  // namespace proofline
