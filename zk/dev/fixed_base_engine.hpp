// Who computes a development key's fixed-base products. The key writer
// (keygen.hpp) hands every batch of products k_i * G to an engine: the CPU
// engine runs batch_mul on a thread pool; `proofline setup` passes the CUDA
// engine (gpu/cuda/fixed_base.hpp) when a GPU is visible. zk/ does not know
// about gpu/: the engine is an interface, provided from above.
//
// An engine gets the base's window table (fixed_base.hpp), built on the
// host, and Montgomery-form scalars; it returns affine points, which are
// unique, so every engine must produce the same bytes.
#pragma once

#include <cstddef>
#include <string>

#include "base/thread_pool.hpp"
#include "zk/curves.hpp"
#include "zk/dev/fixed_base.hpp"

namespace proofline::zk::dev {

/// Batch fixed-base multiplication, one overload per curve and group:
/// out[i] = scalars[i] * base (affine, infinity for a zero scalar) for
/// i < n, where `table` is the base's window table and the scalars are
/// field elements in Montgomery form. Called from one thread at a time.
/// Throws on failure (the setup fails with the message).
class fixed_base_engine {
 public:
  virtual ~fixed_base_engine() = default;

  /// What runs the products, for the log ("CPU, 16 threads").
  virtual std::string describe() const = 0;

  virtual void mul(const fixed_base<bn254::g1_group>& table, const bn254::fr* scalars,
                   std::size_t n, bn254::g1_affine* out) = 0;
  virtual void mul(const fixed_base<bn254::g2_group>& table, const bn254::fr* scalars,
                   std::size_t n, bn254::g2_affine* out) = 0;
  virtual void mul(const fixed_base<bls12_381::g1_group>& table, const bls12_381::fr* scalars,
                   std::size_t n, bls12_381::g1_affine* out) = 0;
  virtual void mul(const fixed_base<bls12_381::g2_group>& table, const bls12_381::fr* scalars,
                   std::size_t n, bls12_381::g2_affine* out) = 0;
};

/// The default engine: batch_mul on the pool's threads.
class cpu_fixed_base_engine final : public fixed_base_engine {
 public:
  explicit cpu_fixed_base_engine(base::thread_pool& pool) : pool_(pool) {}

  std::string describe() const override;
  void mul(const fixed_base<bn254::g1_group>& table, const bn254::fr* scalars, std::size_t n,
           bn254::g1_affine* out) override;
  void mul(const fixed_base<bn254::g2_group>& table, const bn254::fr* scalars, std::size_t n,
           bn254::g2_affine* out) override;
  void mul(const fixed_base<bls12_381::g1_group>& table, const bls12_381::fr* scalars,
           std::size_t n, bls12_381::g1_affine* out) override;
  void mul(const fixed_base<bls12_381::g2_group>& table, const bls12_381::fr* scalars,
           std::size_t n, bls12_381::g2_affine* out) override;

 private:
  base::thread_pool& pool_;
};

}  // namespace proofline::zk::dev
