// The MSM's bucket kernels (gpu/cuda/msm/), steps 1-5 of docs/GPU.md's
// "MSM pipeline": signed digits, their counts, the chunked levels of run
// sums (level 1 over the points, later levels over partials) and the
// runsum into the dense bucket array. Functors over an executor
// (gpu/cuda/exec.hpp): a kernel on the device, a loop on the host.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "gpu/cuda/msm/load.hpp"
#include "gpu/cuda/msm/plan.hpp"
#include "zk/common/hd.hpp"
#include "zk/ec/point.hpp"
#include "zk/ff/fp.hpp"
#include "zk/ff/fp2.hpp"
#include "zk/ff/fp_redundant.hpp"

namespace proofline::gpu::cuda::msm {

// ---- helpers ---------------------------------------------------------------

/// The signed digit of window w (c bits) with the carry from below updated.
template <class Scalar>
PL_HD uint32_t signed_digit(const Scalar& s, unsigned w, unsigned c, uint32_t& carry, bool& negative) {
  uint32_t raw = s.bits(w * c, c) + carry;  // 0 .. 2^c
  uint32_t half = uint32_t(1) << (c - 1);
  if (raw > half) {
    carry = 1;
    negative = true;
    return (uint32_t(1) << c) - raw;  // 0 when raw == 2^c
  }
  carry = 0;
  negative = false;
  return raw;
}

// ---- step 1: digits ----------------------------------------------------------

/// Window w's digit of scalar i: key (window w's bucket set, or the one set
/// with a fixed base) and value (point i, or precomputed point w*n + i).
template <class Scalar>
struct digits_fn {
  const Scalar* scalars;
  uint32_t* keys;  ///< [window][i]
  uint32_t* vals;
  std::size_t n;
  unsigned c, windows;
  uint32_t half, sentinel;
  bool fixed_base;
  std::size_t offset, table_n;  ///< see shape

  PL_HD void operator()(std::size_t i) const {
    const Scalar s = scalars[i];
    uint32_t carry = 0;
    for (unsigned w = 0; w < windows; ++w) {
      bool neg = false;
      uint32_t mag = signed_digit(s, w, c, carry, neg);
      std::size_t at = std::size_t(w) * n + i;
      keys[at] = mag ? (fixed_base ? 0u : w * half) + (mag - 1) : sentinel;
      const std::size_t point = (fixed_base ? std::size_t(w) * table_n : 0) + offset + i;
      vals[at] = uint32_t(point) | (neg ? sign_bit : 0u);
    }
  }
};

/// count = number of keys below the sentinel (they are sorted; count starts at 0).
struct count_fn {
  const uint32_t* keys;
  std::size_t entries;
  uint32_t sentinel;
  uint32_t* count;

  PL_HD void operator()(std::size_t i) const {
    if (keys[i] != sentinel && (i + 1 == entries || keys[i + 1] == sentinel)) *count = uint32_t(i + 1);
  }
};

// ---- steps 3 and 4: chunked levels -----------------------------------------

/// Runs (groups of equal keys) in chunk t of the first *count keys.
struct chunk_runs_fn {
  const uint32_t* keys;
  const uint32_t* count;
  unsigned chunk;
  uint32_t* runs;

  PL_HD void operator()(std::size_t t) const {
    std::size_t total = *count, begin = t * chunk;
    if (begin >= total) {
      runs[t] = 0;
      return;
    }
    std::size_t end = begin + chunk < total ? begin + chunk : total;
    uint32_t r = 1;
    for (std::size_t i = begin + 1; i < end; ++i) r += keys[i] != keys[i - 1];
    runs[t] = r;
  }
};

/// *total = base[m-1] + runs[m-1]: the partials a level writes.
struct total_fn {
  const uint32_t* base;
  const uint32_t* runs;
  std::size_t m;
  uint32_t* total;
  PL_HD void operator()(std::size_t) const { *total = base[m - 1] + runs[m - 1]; }
};

/// One level: sums the runs of equal keys inside chunk t of the `count`
/// sorted entries and writes one partial per (chunk, key) at the chunk's
/// slots; `terms.at(i)` fetches what names entry i (an index load at most)
/// and `terms.add(acc, that)` adds the entry to a running sum of type
/// Terms::acc, which Terms::to_out<X> turns into a partial. The key and
/// name of entry i + 1 are loaded before entry i is added, so their loads
/// overlap the addition and only the term's own load waits.
template <class X, class Terms>
struct level_runs_fn {
  const uint32_t* keys;
  const uint32_t* count;
  const uint32_t* base;
  unsigned chunk;
  uint32_t* out_keys;
  X* out;
  Terms terms;

  PL_HD void operator()(std::size_t t) const {
    std::size_t total = *count, begin = t * chunk;
    if (begin >= total) return;
    std::size_t end = begin + chunk < total ? begin + chunk : total;
    uint32_t slot = base[t];
    uint32_t key = keys[begin];
    uint32_t k = key;
    auto name = terms.at(begin);
    using acc_t = typename Terms::acc;
    acc_t acc = acc_t::infinity();
    for (std::size_t i = begin; i < end; ++i) {
      const bool more = i + 1 < end;
      const uint32_t k_next = more ? keys[i + 1] : k;
      const auto name_next = more ? terms.at(i + 1) : name;
      if (k != key) {
        out_keys[slot] = key;
        out[slot] = Terms::template to_out<X>(acc);
        ++slot;
        key = k;
        acc = acc_t::infinity();
      }
      acc = terms.add(acc, name);
      k = k_next;
      name = name_next;
    }
    out_keys[slot] = key;
    out[slot] = Terms::template to_out<X>(acc);
  }
};

/// G's twin for level 1's lazy products (level1_kernel::lazy), whose points
/// hold the same values as G's (recast()): for Fq2 coordinates, products
/// with one reduction less (zk::ff::fp2_lazy); for Fq ones, coordinates
/// anywhere in [0, 2p), products without their final subtraction
/// (zk::ff::fp_redundant).
template <class G, class F = typename G::field>
struct lazy_group;
template <class G, class P>
struct lazy_group<G, zk::ff::fp<P>> {
  using field = zk::ff::fp_redundant<zk::ff::fp<P>>;
};
template <class G, class B>
struct lazy_group<G, zk::ff::fp2<B, false>> {
  using field = zk::ff::fp2<B, true>;
};

/// Whether a field is Fq (fp).
template <class F>
struct is_fp : std::false_type {};
template <class P>
struct is_fp<zk::ff::fp<P>> : std::true_type {};

/// A coordinate as field To holds it: Fq2 with or without lazy products
/// (the same words), Fq into [0, 2p) (as it is) and back (reduced).
template <class To, class From>
PL_HD To coord(const From& x) {
  if constexpr (std::is_same_v<To, From>)
    return x;
  else if constexpr (is_fp<From>::value)
    return To::from(x);
  else if constexpr (is_fp<To>::value)
    return x.exact();
  else
    return To{x.c0, x.c1};
}

/// The same point in group To (G, or its lazy twin).
template <class To, class From>
PL_HD zk::ec::affine<To> recast(const zk::ec::affine<From>& p) {
  using F = typename To::field;
  return {coord<F>(p.x), coord<F>(p.y)};
}
template <class To, class From>
PL_HD zk::ec::xyzz<To> recast(const zk::ec::xyzz<From>& p) {
  using F = typename To::field;
  return {coord<F>(p.X), coord<F>(p.Y), coord<F>(p.ZZ), coord<F>(p.ZZZ)};
}

/// Level 1's terms: affine points through the sorted values (index, sign),
/// summed in XYZZ coordinates of group AccG (A's group, or its lazy twin).
template <class A, class AccG = typename A::group>
struct signed_points {
  using acc = zk::ec::xyzz<AccG>;
  static constexpr bool same = std::is_same_v<AccG, typename A::group>;
  const uint32_t* vals;
  const A* points;
  PL_HD uint32_t at(std::size_t i) const { return vals[i]; }
  PL_HD acc add(const acc& a, uint32_t v) const {
    A p = load(points + (v & ~sign_bit));
    if (v & sign_bit) p = -p;
    if constexpr (same)
      return a.add_affine(p);
    else
      return a.add_affine(recast<AccG>(p));
  }
  template <class X>
  PL_HD static X to_out(const acc& a) {
    if constexpr (same)
      return a;
    else
      return recast<typename X::group>(a);
  }
};

/// Later levels' terms: the previous level's partials.
template <class X>
struct partial_sums {
  using acc = X;
  const X* in;
  PL_HD std::size_t at(std::size_t i) const { return i; }
  PL_HD X add(const X& a, std::size_t i) const { return a + load(in + i); }
  template <class Y>
  PL_HD static Y to_out(const X& a) {
    return a;
  }
};

// ---- step 5: runsum --------------------------------------------------------

/// The first partial of each key adds the key's remaining partials (at most
/// run_limit) and stores the bucket, or adds it to the bucket when `add`
/// (a later chunk: earlier chunks filled the buckets; one full addition).
template <class X>
struct runsum_fn {
  const uint32_t* keys;
  const X* in;
  const uint32_t* count;
  X* buckets;
  bool add;

  PL_HD void operator()(std::size_t i) const {
    std::size_t total = *count;
    if (i >= total) return;
    uint32_t key = keys[i];
    if (i > 0 && keys[i - 1] == key) return;
    X acc = load(in + i);
    for (std::size_t j = i + 1; j < total && keys[j] == key; ++j) acc = acc + load(in + j);
    buckets[key] = add ? buckets[key] + acc : acc;  // plain load: written in this kernel
  }
};

}  // namespace proofline::gpu::cuda::msm
