// Synthetic BN254 proving keys and partitions of a chosen shape, with no
// circuit behind them: for tests and benchmarks of what moves keys and
// partitions (the memory system, the actors) rather than what proves them.
// Header-only: the actor tests and `proofline bench memory`
// (bench/memory_bench.cpp) build theirs from it.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "gpu/backend.hpp"
#include "memory/buffer.hpp"
#include "zk/curves.hpp"
#include "zk/groth16/proving_key.hpp"

namespace proofline::gpu {

/// A key named `path` of `n_vars` variables (2 of them public) over a domain
/// of 2^log_domain points. Key is proving_key_base (no points: the sizes are
/// all there is) or zk::groth16::proving_key<zk::bn254>, whose points a test
/// may then resize to give the key real host bytes.
template <class Key = zk::groth16::proving_key_base>
std::shared_ptr<Key> synthetic_key(const std::string& path, uint32_t n_vars, uint32_t log_domain) {
  auto key = std::make_shared<Key>();
  key->path = path;
  key->info.curve = zk::curve_id::bn254;
  key->info.n8q = key->info.n8r = 32;
  key->info.n_vars = n_vars;
  key->info.n_public = 2;
  key->info.log_domain = log_domain;
  key->info.domain_size = uint32_t(1) << log_domain;
  return key;
}

/// A partition of `key`'s shape: its witness (n_vars scalars) and a, b, c
/// (domain_size each) allocated from `src`, their contents left to the caller.
inline std::shared_ptr<partition<zk::bn254>> synthetic_partition(const zk::groth16::key_ptr& key,
                                                                      const memory::source& src) {
  using curve = zk::bn254;
  auto p = std::make_shared<gpu::partition<curve>>();
  p->witness = memory::buffer<curve::scalar>(key->info.n_vars, src);
  p->a = memory::buffer<curve::fr>(key->info.domain_size, src);
  p->b = memory::buffer<curve::fr>(key->info.domain_size, src);
  p->c = memory::buffer<curve::fr>(key->info.domain_size, src);
  return p;
}

}  // namespace proofline::gpu
