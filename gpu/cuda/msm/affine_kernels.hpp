// The MSM's batched-affine rounds (gpu/cuda/msm/), step 3a of docs/GPU.md's
// "MSM pipeline": before level 1, adjacent sorted entries of one bucket are
// added pairwise in affine coordinates, round after round; each thread
// shares one field inversion across its batch of additions (Montgomery's
// trick: prefix products, one inverse, back-substitution), and level 1 sums
// what is left in XYZZ. Functors over an executor (gpu/cuda/exec.hpp): a
// kernel on the device, a loop on the host.
//
// An entry is named by a 32-bit word. Without merged_bit the name is the
// entry's position in the sorted digits, whose value names its point. With
// it, the entry is a sum these rounds made and the low bits are the top
// position of the run of sorted digits it covers; the sum lives in slot
// top / 2 of the merged array. A sum covers at least two positions and the
// live entries cover disjoint runs in order, so no two live sums share a
// slot, and the pair that makes a sum is the only one that reads or writes
// its slot in a round: the rounds need no allocation and no atomics.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "gpu/cuda/exec.hpp"
#include "gpu/cuda/msm/bucket_kernels.hpp"
#include "gpu/cuda/msm/load.hpp"
#include "gpu/cuda/msm/plan.hpp"
#include "zk/common/hd.hpp"
#include "zk/ec/point.hpp"

namespace proofline::gpu::cuda::msm {

/// Bit 31 of an entry's name: the entry is a sum in the merged array.
constexpr uint32_t merged_bit = 0x80000000u;

/// The point an entry's name stands for: a sorted digit's point (index and
/// sign in vals), or a sum in `merged`.
template <class A>
struct affine_source {
  const uint32_t* vals;
  const A* points;
  A* merged;  ///< [top / 2]

  PL_HD A get(uint32_t name) const {
    if (name & merged_bit) return merged[(name & ~merged_bit) >> 1];  // written by the rounds: a plain load
    const uint32_t v = vals[name];
    const A p = load(points + (v & ~sign_bit));
    return (v & sign_bit) ? -p : p;
  }
};

/// names[i] = i: every sorted digit is an entry of its own.
struct first_names_fn {
  uint32_t* names;
  PL_HD void operator()(std::size_t i) const { names[i] = uint32_t(i); }
};

/// One pairwise round over the `*count` entries in `names` (sorted by key):
/// pair j is entries r - 1 and r, r = 2j + 1 - parity (the rounds alternate
/// the parity, so a run of a bucket that starts at an odd position pairs up
/// in the next round). A pair of one key becomes one entry:
///   P + Q, x_P != x_Q   chord:   lambda = (y_Q - y_P) / (x_Q - x_P)
///   P + P, y_P != 0     tangent: lambda = 3 x_P^2 / (2 y_P)
///   P + (-P)            the point at infinity: neither entry goes on
///   P + O, O + Q        the other point goes on as it is (a point at
///                       infinity is only ever an input point; sums never are)
/// x_3 = lambda^2 - x_P - x_Q, y_3 = lambda (x_P - x_3) - y_P. Thread t
/// takes pairs t, t + threads, ... (batch of them: neighbouring threads
/// touch neighbouring entries); a forward pass keeps the running product of
/// its denominators in prefix[j], one inversion inverts it, and a backward
/// pass peels off each denominator's inverse (inv * prefix of the pairs
/// before) while it adds. keep[i] = 1 for the entries that go on (the sum
/// takes the right entry's place and name); keep is zero before.
template <class A>
struct affine_pairs_fn {
  using F = typename A::field;
  const uint32_t* keys;  ///< the sorted digits' keys; a name's key is keys[name & ~merged_bit]
  uint32_t* names;
  const uint32_t* count;
  uint32_t* keep;
  affine_source<A> src;
  F* prefix;  ///< [pairs]
  std::size_t pairs, threads;
  unsigned batch, parity;

  struct pair {
    std::size_t l, r;
    bool keep_l = false, keep_r = false, add = false;
    A p, q;
    F num, den;
  };

  /// What pair j does (p, q, num, den set for an addition).
  PL_HD pair classify(std::size_t j, std::size_t total) const {
    pair e;
    e.r = 2 * j + 1 - parity;
    const bool has_l = e.r > 0 && e.r - 1 < total;
    e.l = has_l ? e.r - 1 : 0;
    if (e.r >= total) {
      e.keep_l = has_l;
      return e;
    }
    if (!has_l) {
      e.keep_r = true;
      return e;
    }
    const uint32_t nl = names[e.l], nr = names[e.r];
    if (keys[nl & ~merged_bit] != keys[nr & ~merged_bit]) {
      e.keep_l = e.keep_r = true;
      return e;
    }
    e.p = src.get(nl);
    e.q = src.get(nr);
    if (e.p.is_infinity() || e.q.is_infinity()) {
      e.keep_l = !e.p.is_infinity();
      e.keep_r = !e.q.is_infinity();
      return e;
    }
    if (e.p.x == e.q.x) {
      if (e.p.y != e.q.y || e.p.y.is_zero()) return e;  // P + (-P): dropped
      const F xx = e.p.x.sqr();
      e.num = xx.dbl() + xx;
      e.den = e.p.y.dbl();
    } else {
      e.num = e.q.y - e.p.y;
      e.den = e.q.x - e.p.x;
    }
    e.add = true;
    return e;
  }

  PL_HD void operator()(std::size_t t) const {
    const std::size_t total = *count;
    F acc = F::one();
    unsigned used = 0;  // pairs of this thread that touch an entry
    bool any = false;
    for (unsigned k = 0; k < batch; ++k) {
      const std::size_t j = t + std::size_t(k) * threads;
      if (j >= pairs || 2 * j >= total + parity) break;  // no entry left for pair j or later ones
      const pair e = classify(j, total);
      if (e.add) {
        acc = acc * e.den;
        any = true;
      } else {
        if (e.keep_l) keep[e.l] = 1;
        if (e.keep_r) keep[e.r] = 1;
      }
      prefix[j] = acc;
      used = k + 1;
    }
    if (!any) return;
    F inv = acc.inverse();  // (product of this thread's denominators)^-1
    for (unsigned k = used; k-- > 0;) {
      const std::size_t j = t + std::size_t(k) * threads;
      const pair e = classify(j, total);
      if (!e.add) continue;
      const F inv_den = k ? inv * prefix[j - threads] : inv;
      inv = inv * e.den;
      const F lambda = e.num * inv_den;
      const F x3 = lambda.sqr() - e.p.x - e.q.x;
      const F y3 = lambda * (e.p.x - x3) - e.p.y;
      const uint32_t top = names[e.r] & ~merged_bit;
      src.merged[top >> 1] = A{x3, y3};
      names[e.r] = top | merged_bit;
      keep[e.r] = 1;
    }
  }
};

/// out[pos[i]] = names[i] for every kept entry i (pos: the exclusive sum of
/// keep), so the entries stay sorted by key.
struct compact_names_fn {
  const uint32_t* names;
  const uint32_t* keep;
  const uint32_t* pos;
  uint32_t* out;
  PL_HD void operator()(std::size_t i) const {
    if (keep[i]) out[pos[i]] = names[i];
  }
};

/// out[i] = the key of entry i, for the `*count` entries left.
struct name_keys_fn {
  const uint32_t* keys;
  const uint32_t* names;
  const uint32_t* count;
  uint32_t* out;
  PL_HD void operator()(std::size_t i) const {
    if (i < *count) out[i] = keys[names[i] & ~merged_bit];
  }
};

/// Level 1's terms after the rounds: entries by name, summed in XYZZ
/// coordinates of A's group (plain products).
template <class A>
struct affine_terms {
  using acc = zk::ec::xyzz<typename A::group>;
  const uint32_t* names;
  affine_source<A> src;
  PL_HD uint32_t at(std::size_t i) const { return names[i]; }
  PL_HD acc add(const acc& a, uint32_t name) const { return a.add_affine(src.get(name)); }
  template <class X>
  PL_HD static X to_out(const acc& a) {
    return a;
  }
};

/// What the rounds leave for level 1: `*count` entries, sorted by key.
template <class A>
struct affine_left {
  const uint32_t* keys = nullptr;
  const uint32_t* count = nullptr;
  affine_terms<A> terms{};
};

/// Step 3a: affine_rounds(s) pairwise rounds over the sorted digits
/// (keys, vals, *count of them; shape s) of points; scratch from `temp` (a
/// counting carver only measures it), which must stay carved while level 1
/// reads what is left.
template <class Exec, class A>
affine_left<A> affine_rounds_pass(const Exec& ex, const shape& s, const uint32_t* keys, const uint32_t* vals,
                                  const uint32_t* count, const A* points, carver& temp) {
  using F = typename A::field;
  const std::size_t bound = std::max<std::size_t>(s.entries, 1);
  const std::size_t pairs = bound / 2 + 1;
  const unsigned batch = 1u << (s.level1.batch_log ? s.level1.batch_log : affine_batch_log);
  const std::size_t threads = (pairs + batch - 1) / batch;
  const unsigned rounds = affine_rounds(s);
  uint32_t* names[2] = {temp.take<uint32_t>(bound), temp.take<uint32_t>(bound)};
  uint32_t* keep = temp.take<uint32_t>(bound);  // after the last round: the keys left
  uint32_t* pos = temp.take<uint32_t>(bound);
  uint32_t* counts = temp.take<uint32_t>(rounds);
  A* merged = temp.take<A>(pairs);
  F* prefix = temp.take<F>(pairs);
  const std::size_t scan_bytes = ex.scan_temp_bytes(bound);
  void* scan_temp = temp.take_bytes(scan_bytes);
  const affine_source<A> src{vals, points, merged};
  affine_left<A> left{keep, counts + rounds - 1, {names[rounds % 2], src}};
  if (temp.counting() || s.n == 0) return left;

  ex.for_each(bound, first_names_fn{names[0]});
  for (unsigned r = 0; r < rounds; ++r) {
    uint32_t* in = names[r % 2];
    ex.zero(keep, sizeof(uint32_t) * bound);
    ex.for_each(threads, affine_pairs_fn<A>{keys, in, count, keep, src, prefix, pairs, threads, batch, r & 1u});
    ex.exclusive_sum(scan_temp, scan_bytes, keep, pos, bound);
    ex.for_each(1, total_fn{pos, keep, bound, counts + r});
    ex.for_each(bound, compact_names_fn{in, keep, pos, names[(r + 1) % 2]});
    count = counts + r;
  }
  ex.for_each(bound, name_keys_fn{keys, names[rounds % 2], count, keep});
  return left;
}

}  // namespace proofline::gpu::cuda::msm
