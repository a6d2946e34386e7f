// The parts of the CUDA fixed-base engine (gpu/cuda/fixed_base.hpp) that are
// plain C++, so the host tests check them without a GPU: the per-product
// step each device thread runs, and how n products are cut into chunks.
#pragma once

#include <algorithm>
#include <cstddef>
#include <vector>

#include "zk/common/hd.hpp"
#include "zk/dev/fixed_base_view.hpp"

namespace proofline::gpu::cuda {

/// out[i] = scalars[i] * base, affine: the signed-window sum of the table
/// (at most `windows` mixed additions in jacobian coordinates), then one
/// field inversion. scalars are Montgomery-form field elements.
template <class G, class F>
struct fixed_base_fn {
  zk::dev::fixed_base_view<G> table;
  const F* scalars;
  zk::ec::affine<G>* out;
  PL_HD void operator()(std::size_t i) const { out[i] = table.mul(scalars[i].to_standard()).to_affine(); }
};

/// One chunk of products: [lo, lo + len), computed in buffer slot `slot`.
struct fixed_base_chunk {
  std::size_t lo = 0, len = 0;
  unsigned slot = 0;
};

/// n products in chunks of `chunk` (the last one shorter), in order; chunk
/// j uses slot j % 2, so two slots of buffers serve any n. Empty for n = 0.
inline std::vector<fixed_base_chunk> fixed_base_chunks(std::size_t n, std::size_t chunk) {
  std::vector<fixed_base_chunk> out;
  if (chunk == 0) chunk = 1;
  for (std::size_t lo = 0, j = 0; lo < n; lo += chunk, ++j)
    out.push_back({lo, std::min(chunk, n - lo), unsigned(j % 2)});
  return out;
}

}  // namespace proofline::gpu::cuda
