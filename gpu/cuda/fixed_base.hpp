// The CUDA fixed-base engine for development setups, from plain C++ (no
// CUDA headers): zk::dev::fixed_base_engine on one GPU, so `proofline setup
// --dev` computes a key's millions of products k_i * G on the device.
//
// Per call (gpu/cuda/fixed_base.cu): the base's window table, built on the
// host by zk::dev::fixed_base, is copied to the device (under 3 MiB with
// 10-bit windows); the scalars go up in chunks of a bounded size, one
// thread computes one product (fixed_base_view::mul, the CPU's code) and
// normalises it to affine with its own field inversion, and the points come
// back chunk by chunk. Two chunks are in flight: the download of chunk j - 1
// runs while chunk j computes. Device memory stays at two chunks of scalars
// and points whatever n is.
//
// Normalising per thread costs one Fermat inversion per point, about as
// many field products as the 26 additions before it; a batched inversion
// would save most of that but needs the points of many threads in one place.
// The products are a small part of a setup's wall time once on the GPU, so
// the simpler form is kept.
#pragma once

#include <cstddef>
#include <memory>

#include "zk/dev/fixed_base_engine.hpp"

namespace proofline::gpu::cuda {

/// Products per chunk by default: 2^22 (two chunks of BLS12-381 G2 points
/// and scalars take 1.75 GiB of device memory).
inline constexpr std::size_t fixed_base_chunk_default = std::size_t(1) << 22;

struct fixed_base_options {
  int device = 0;
  /// Products per chunk (device memory: 2 chunks of scalars and points); 0 = the default.
  std::size_t chunk = 0;
};

/// The engine on options.device; throws backend_error when that device
/// cannot be used (naming it and why).
std::unique_ptr<zk::dev::fixed_base_engine> make_fixed_base_engine(const fixed_base_options& options);

}  // namespace proofline::gpu::cuda
