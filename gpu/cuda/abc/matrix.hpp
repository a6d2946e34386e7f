// A key's A or B matrix laid out for computing a = A·w (b = B·w) on the
// device: its terms in row (constraint) order, cut into segments of at most
// `segment_terms` terms, so that one thread sums one segment whatever a
// row's length (most rows of a circom circuit have one to three terms, a few
// have thousands), and a second pass adds each row's segments.
//
//   host_matrix<F>     the layout, built once per key on the host
//   build_matrix       from the key's coefficient list (any order; checked as
//                      zk::groth16::synthesize_abc checks it)
//   matrix_view<F>     the same arrays as pointers (host or device memory)
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "zk/groth16/proving_key.hpp"

namespace proofline::gpu::cuda::abc {

/// Terms one thread sums in the first pass.
constexpr uint32_t segment_terms = 16;

/// The arrays a pass reads, wherever they live.
template <class F>
struct matrix_view {
  const uint32_t* col = nullptr;        ///< terms' signals (witness indices), row order
  const F* val = nullptr;               ///< terms' coefficients (the zkey's c·R² limbs)
  const uint32_t* seg_begin = nullptr;  ///< segments + 1 offsets into the terms
  const uint32_t* row_seg = nullptr;    ///< rows + 1 offsets into the segments
  std::size_t segments = 0;
  std::size_t rows = 0;
};

template <class F>
struct host_matrix {
  std::vector<uint32_t> col;
  std::vector<F> val;
  std::vector<uint32_t> seg_begin;
  std::vector<uint32_t> row_seg;

  std::size_t terms() const { return col.size(); }
  std::size_t segments() const { return seg_begin.empty() ? 0 : seg_begin.size() - 1; }
  std::size_t rows() const { return row_seg.empty() ? 0 : row_seg.size() - 1; }
  /// What the four arrays take (on the device as here).
  std::size_t bytes() const {
    return sizeof(uint32_t) * (col.size() + seg_begin.size() + row_seg.size()) + sizeof(F) * val.size();
  }
  matrix_view<F> view() const {
    return {col.data(), val.data(), seg_begin.data(), row_seg.data(), segments(), rows()};
  }
};

/// Device bytes of a matrix of `terms` terms over `rows` rows, before it is
/// built (an upper bound on the segments: every row's last one may be short).
template <class F>
std::size_t matrix_bytes(std::size_t terms, std::size_t rows) {
  const std::size_t segments = terms / segment_terms + rows;
  return sizeof(uint32_t) * (terms + segments + 1 + rows + 1) + sizeof(F) * terms;
}

/// `coefs` (in any order) of a key with `info`'s domain and witness,
/// laid out by row. A coefficient outside the domain or the witness throws
/// std::out_of_range naming the matrix, as synthesize_abc does.
template <class C>
host_matrix<typename C::fr> build_matrix(const zk::groth16::key_vector<zk::groth16::coef<C>>& coefs,
                                         const zk::groth16::key_info& info, const char* matrix) {
  using F = typename C::fr;
  const std::size_t rows = info.domain_size;
  if (coefs.size() >= UINT32_MAX)
    throw std::length_error(std::string("matrix ") + matrix + " has too many terms for 32-bit offsets");
  std::vector<uint32_t> count(rows + 1, 0);
  for (const auto& k : coefs) {
    if (k.constraint >= rows || k.signal >= info.n_vars)
      throw std::out_of_range(std::string("coefficient of ") + matrix + " at constraint " +
                              std::to_string(k.constraint) + ", signal " + std::to_string(k.signal) +
                              " lies outside the key's domain (" + std::to_string(rows) +
                              ") or witness (" + std::to_string(info.n_vars) + ")");
    ++count[k.constraint + 1];
  }
  host_matrix<F> m;
  std::vector<uint32_t> start(rows + 1, 0);  // rows' first terms
  for (std::size_t r = 0; r < rows; ++r) start[r + 1] = start[r] + count[r + 1];
  m.col.resize(coefs.size());
  m.val.resize(coefs.size());
  {
    std::vector<uint32_t> at(start.begin(), start.end() - 1);
    for (const auto& k : coefs) {  // stable: a row keeps its terms' order
      const uint32_t t = at[k.constraint]++;
      m.col[t] = k.signal;
      m.val[t] = k.value;
    }
  }
  m.row_seg.resize(rows + 1);
  m.seg_begin.reserve(coefs.size() / segment_terms + rows + 1);
  for (std::size_t r = 0; r < rows; ++r) {
    m.row_seg[r] = static_cast<uint32_t>(m.seg_begin.size());
    for (uint32_t t = start[r]; t < start[r + 1]; t += segment_terms) m.seg_begin.push_back(t);
  }
  m.row_seg[rows] = static_cast<uint32_t>(m.seg_begin.size());
  m.seg_begin.push_back(static_cast<uint32_t>(coefs.size()));
  return m;
}

}  // namespace proofline::gpu::cuda::abc
