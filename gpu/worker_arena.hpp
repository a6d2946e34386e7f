// with_worker_arena: keeps a GPU worker's host allocations in an arena of
// its own, so no purge ever runs on the GPU worker's thread.
//
// Problem: whatever a backend allocates on the worker's thread (the CPU
// backend's working copies of a partition, the CUDA backend's small host
// bookkeeping) would land in one of jemalloc's shared automatic arenas, whose
// time-based decay purges dirty pages inside malloc()/free() on whichever
// thread happens to tick it: possibly this one, between two partitions.
//
// Design: a gpu::backend decorator. On its first prove() (on the worker's
// own thread: the worker is spawned detached) it names the thread
// ("pl.gpu<i>") and binds it to `arena`, created with decay off. The memory
// manager purges that arena, on its own thread, when the worker runs dry
// (actors/memory_manager.hpp, memory_manager_config::worker_arenas); the worker only ever sends
// messages. Everything else is forwarded unchanged.

#pragma once

#include <memory>
#include <string>

#include "gpu/backend.hpp"
#include "memory/arena.hpp"
#include "memory/thread_arena.hpp"

namespace proofline::gpu {

// Header-only: actors/ links no backend code (its tests run on fakes).

/// The decorator; make one with with_worker_arena.
class arena_backend final : public backend {
 public:
  arena_backend(std::shared_ptr<backend> inner, memory::arena_ptr arena, std::string thread_name)
      : inner_(std::move(inner)), thread_{std::move(arena), true, std::move(thread_name)} {}

  const char* kind() const override { return inner_->kind(); }
  std::string describe() const override { return inner_->describe(); }
  unsigned lanes() const override { return inner_->lanes(); }
  void prepare(const zk::groth16::key_ptr& key) override {
    bind();
    inner_->prepare(key);
  }
  key_prep_stats prepare_measured(const zk::groth16::key_ptr& key) override {
    bind();
    return inner_->prepare_measured(key);
  }
  void evict(const zk::groth16::proving_key_base* key) override { inner_->evict(key); }
  void expect_partitions(const zk::groth16::key_ptr& key, std::size_t partitions) override {
    inner_->expect_partitions(key, partitions);
  }
  key_prep_stats key_stats(const zk::groth16::proving_key_base* key) override {
    return inner_->key_stats(key);
  }

  /// Called by one GPU worker, always on its own thread.
  result_ptr prove(const zk::groth16::key_ptr& key, const partition_ptr& part,
                   const prove_hooks& hooks) override {
    bind();
    return inner_->prove(key, part, hooks);
  }

 private:
  /// On the worker's thread, once: name it and send its allocations to its arena.
  void bind() { thread_.bind(); }

  std::shared_ptr<backend> inner_;
  memory::thread_binding thread_;
};

/// `inner` with its calling thread bound to `arena` and named `thread_name`.
inline std::shared_ptr<backend> with_worker_arena(std::shared_ptr<backend> inner,
                                                  memory::arena_ptr arena,
                                                  std::string thread_name) {
  return std::make_shared<arena_backend>(std::move(inner), std::move(arena),
                                         std::move(thread_name));
}

}  // namespace proofline::gpu
