// Number-theoretic transforms as data-parallel passes, written once over an
// executor (gpu/cuda/exec.hpp) like the MSM pipeline, with the roots snarkjs
// uses (zk/groth16/domain.hpp; the CPU backend uses the same roots).
//
// Design: radix-2 butterflies; a thread loads the 2^K (K <= 3) elements its
// stages touch (stride 2^lo_bit), runs the K stages in registers and stores
// them back. Three ways to group the stages (kernel, below):
//   registers  every group of K = 3 stages is a pass over global memory
//              (passes: 8 passes for 2^24);
//   tiled      a block keeps a tile of up to 1024 elements in shared memory
//              for up to 8 stages (tiled_passes: 3 passes for 2^24), then a
//              separate pass permutes (bit reversal) or scales (coset);
//   fused      tiles of 2^tile_log elements (up to 4096, opt-in shared
//              memory) for up to tile_log - cols stages, 2^radix elements
//              per thread (fewer registers than K = 3, so more warps per SM
//              hide the products' latency), and the last DIF pass stores
//              straight to the bit-reversed positions (times 1/n for the
//              inverse) or multiplies by the coset factors on its way out
//              (with 2048-element tiles and 2-element rows: 2^20 in 2
//              passes instead of 4, 2^24 in 3 instead of 4, the odd-coset
//              step in 6 instead of 7 at 2^24).
// Twiddles come from one table w^e, e < n/2, which serves every stage (stage
// s of a 2h-point butterfly uses w^(e * n / 2h)). The kinds do n/2 products
// per stage; what differs is the passes over global memory, the occupancy
// and the tail of the grid. With enough elements the products are the
// limit, so the fused kind has two options that make them fewer or cheaper
// (kernel, below; both off by default, radix 2 only):
//   unit  the register step whose lowest bit is the transform's bit 0 (the
//         last step of the last DIF pass, the first of the first DIT pass)
//         has w^0 = 1 as the twiddle of its first butterfly of every stage
//         and of every butterfly of the stage pairing adjacent elements:
//         those skip the product (3 of the step's 4; the DIF passes then
//         put their short step first so that this one is full), in kernels
//         compiled with the flag (Unit): per element, 12 products become 11.25
//         at 2^24 (radix 2), 26 become 24.5 in the odd-coset step.
//         Elsewhere the w^0 butterflies are one thread's in a warp, so
//         skipping them would only diverge.
//   lazy  butterflies on values in [0, 2p) for fields with two spare bits
//         (4p < 2^256: BN254's Fr), reduced once when a pass stores them
//         (ntt_lazy.hpp): the twiddle product skips its final conditional
//         subtraction (a Montgomery product of a < 4p by w < p is < 2p),
//         the DIF difference adds 2p without a selection. Same products,
//         fewer instructions each.
//
//   dif   natural in, bit-reversed out (Gentleman-Sande):
//         (x, y) -> (x + y, (x - y) w^e)
//   dit   bit-reversed in, natural out (Cooley-Tukey):
//         (x, y) -> (x + w^e y, x - w^e y)
//   to_odd_coset  dif with w^-1 (natural -> coefficients in bit-reversed
//         order), coefficient i (at position rev(i)) times g^i / n, dit with w
//         (-> values on the odd coset, natural order): no permutation pass.
//   ntt   dif, then one bit-reversal pass (out of place) for natural order.
//   h     h_i = a_i b_i - c_i, out of Montgomery form (MSM scalars).
//
// Powers g^e and w^e for large e are assembled from two small tables:
// x^e = lo[e mod 2^k] * hi[e >> k], built on the host (about 2 * 2^12
// multiplications) and expanded on the device.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

#include "gpu/cuda/env_setting.hpp"
#include "gpu/cuda/exec.hpp"
#include "gpu/cuda/ntt_lazy.hpp"
#include "zk/common/hd.hpp"

namespace proofline::gpu::cuda::ntt {

/// Stages per pass (2^K elements per thread, in registers).
constexpr unsigned pass_stages = 3;

/// The low `bits` bits of x, reversed.
PL_HD uint32_t bit_reverse(uint32_t x, unsigned bits) {
  if (bits == 0) return 0;
#if defined(__CUDA_ARCH__)
  return __brev(x) >> (32 - bits);
#else
  uint32_t r = 0;
  for (unsigned i = 0; i < bits; ++i) r |= ((x >> i) & 1u) << (bits - 1 - i);
  return r;
#endif
}

/// Thread t's first element index: t with K zero bits inserted at lo_bit.
PL_HD std::size_t group_base(std::size_t t, unsigned lo_bit, unsigned k) {
  std::size_t low = t & ((std::size_t(1) << lo_bit) - 1);
  return ((t >> lo_bit) << (lo_bit + k)) | low;
}

/// K stages of a transform of 2^log_n elements, stages s0 .. s0+K-1, on the
/// 2^K elements v[m] = x[base + m 2^lo_bit] held in registers.
/// DIF stage s pairs indices 2^(log_n-1-s) apart; DIT stage s pairs 2^s apart.
/// With pair bit lb inside the group (half = 2^(lo_bit+lb)), the twiddle of
/// the butterfly at local index u is w^e, e = ((base mod half) + (u mod 2^lb)
/// 2^lo_bit) * 2^shift: 2^lb distinct twiddles per stage, 1 + 2 + 4 = 7
/// loads for K = 3 instead of 12.
/// A is the butterfly arithmetic (exact_arith or lazy_arith, ntt_lazy.hpp).
/// Unit: the caller knows lo_bit = 0, so base's low K bits are 0 and the
/// twiddle of r = 0 is w^0 = 1 in every stage: those butterflies (all of the
/// stage with pair bit 0, half of pair bit 1, a quarter of pair bit 2) skip
/// the load and the product (A::dif1 / A::dit1).
template <class F, unsigned K, bool Dif, class A = exact_arith<F>, bool Unit = false>
PL_HD void butterflies(F* v, const F* tw, std::size_t base, unsigned lo_bit, unsigned s0, unsigned log_n) {
  PL_UNROLL for (unsigned ls = 0; ls < K; ++ls) {
    const unsigned s = s0 + ls;
    const unsigned lb = Dif ? K - 1 - ls : ls;  // pair bit within the group
    const std::size_t half = std::size_t(1) << (lo_bit + lb);
    const unsigned shift = Dif ? s : log_n - 1 - s;
    F w[1u << (K - 1)];
    PL_UNROLL for (unsigned r = Unit ? 1 : 0; r < (1u << lb); ++r)
      w[r] = tw[((base & (half - 1)) + (std::size_t(r) << lo_bit)) << shift];  // tw[0] = 1
    PL_UNROLL for (unsigned m = 0; m < (1u << K); ++m) {
      if (m & (1u << lb)) continue;
      const unsigned u = m, h = m | (1u << lb);
      const unsigned r = u & ((1u << lb) - 1);
      if (Unit && r == 0) {
        if (Dif)
          A::dif1(v[u], v[h]);
        else
          A::dit1(v[u], v[h]);
      } else if (Dif) {
        A::dif(v[u], v[h], w[r]);
      } else {
        A::dit(v[u], v[h], w[r]);
      }
    }
  }
}

/// One pass of K stages through global memory: thread t's group starts at
/// group_base(t) and its elements are 2^lo_bit apart.
template <class F, unsigned K, bool Dif>
struct pass_fn {
  F* x;
  const F* tw;  ///< w^e, e < n/2
  unsigned log_n, s0;

  PL_HD void operator()(std::size_t t) const {
    const unsigned lo_bit = Dif ? log_n - s0 - K : s0;
    const std::size_t base = group_base(t, lo_bit, K);
    F v[1u << K];
    PL_UNROLL for (unsigned m = 0; m < (1u << K); ++m) v[m] = x[base + (std::size_t(m) << lo_bit)];
    butterflies<F, K, Dif>(v, tw, base, lo_bit, s0, log_n);
    PL_UNROLL for (unsigned m = 0; m < (1u << K); ++m) x[base + (std::size_t(m) << lo_bit)] = v[m];
  }
};

/// Stages a tiled pass does at most: a tile is 2^k rows (the butterfly
/// coordinate, 2^lo_bit apart) by 2^mc adjacent columns, at most 1024
/// elements (32 KiB of shared memory for 32-byte elements).
constexpr unsigned tile_stages = 8;
constexpr unsigned tile_log_elems = 10;
constexpr unsigned tile_threads = 128;

/// S stages of a tile held in shared memory, done in registers: the tile is
/// 2^p.k rows (the butterfly coordinate) by 2^p.mc columns, and each thread
/// takes the 2^S rows of one butterfly group in one column. `lo` is the
/// transform's bit of row 0, ls0 the tile's first stage not yet done.
/// `p` is the pass (tw, log_n, s0, k, mc, global(block, e), and, when
/// Pass::unit_steps (a compile-time flag, so passes without it compile as
/// before): skip the products by w^0 when
/// the step's lowest bit is the transform's bit 0). A: butterflies()'s.
template <class F, bool Dif, unsigned S, class A, class Pass, class Ctx>
PL_HD void tile_step(const Pass& p, std::size_t block, const Ctx& ctx, F* tile, unsigned lo,
                     unsigned ls0) {
  const unsigned sb = Dif ? p.k - ls0 - S : ls0;  // lowest row bit of the groups
  const unsigned mc = p.mc, cols = 1u << mc;
  ctx.threads((1u << (p.k + mc)) >> S, [&](unsigned q) {
    const unsigned col = q & (cols - 1);
    const std::size_t rq = q >> mc;
    const std::size_t r0 = ((rq >> sb) << (sb + S)) | (rq & ((std::size_t(1) << sb) - 1));
    F v[1u << S];
    PL_UNROLL for (unsigned m = 0; m < (1u << S); ++m) v[m] = tile[((r0 + (std::size_t(m) << sb)) << mc) + col];
    const std::size_t base = p.global(block, (r0 << mc) + col);
    if constexpr (Pass::unit_steps) {
      if (lo + sb == 0)  // the same in every thread
        butterflies<F, S, Dif, A, true>(v, p.tw, base, 0, p.s0 + ls0, p.log_n);
      else
        butterflies<F, S, Dif, A>(v, p.tw, base, lo + sb, p.s0 + ls0, p.log_n);
    } else {
      butterflies<F, S, Dif, A>(v, p.tw, base, lo + sb, p.s0 + ls0, p.log_n);
    }
    PL_UNROLL for (unsigned m = 0; m < (1u << S); ++m) tile[((r0 + (std::size_t(m) << sb)) << mc) + col] = v[m];
  });
  ctx.sync();
}

/// All p.k stages of a tile in shared memory, at most Smax (1..3) at a time
/// in registers, a barrier after each step. The short step (k mod Smax
/// stages) comes last, except in a DIF pass with Pass::unit_steps, where it comes
/// first, so that the step at the transform's bit 0 (the last) is a full
/// Smax stages and skips as many w^0 products as it can.
template <class F, bool Dif, unsigned Smax, class A, class Pass, class Ctx>
PL_HD void run_tile_stages(const Pass& p, std::size_t block, const Ctx& ctx, F* tile, unsigned lo) {
  unsigned ls = 0, first = 0;  // first: the short step's size when it goes first
  if constexpr (Dif && Pass::unit_steps) first = p.k % Smax;
  while (ls < p.k) {
    const unsigned left = ls == 0 && first ? first : p.k - ls;
    if (Smax >= 3 && left >= 3) {
      tile_step<F, Dif, (Smax >= 3 ? 3 : 1), A>(p, block, ctx, tile, lo, ls);
      ls += 3;
    } else if (Smax >= 2 && left >= 2) {
      tile_step<F, Dif, (Smax >= 2 ? 2 : 1), A>(p, block, ctx, tile, lo, ls);
      ls += 2;
    } else {
      tile_step<F, Dif, 1, A>(p, block, ctx, tile, lo, ls);
      ls += 1;
    }
  }
}

/// One pass of k <= tile_stages stages through shared memory: a block loads
/// its tile (rows of 2^mc adjacent elements, so loads are coalesced), runs
/// the stages 3 at a time in registers (a barrier between), stores the tile.
/// Three passes do a 2^24 transform, instead of eight K = 3 passes.
template <class F, bool Dif>
struct tile_pass_fn {
  static constexpr bool unit_steps = false;
  F* x;
  const F* tw;
  unsigned log_n, s0, k, mc;

  PL_HD std::size_t global(std::size_t block, std::size_t e) const {
    const unsigned lo_bit = Dif ? log_n - s0 - k : s0;
    const std::size_t rest_bits = lo_bit - mc;  // low bits above the columns
    const std::size_t low_rest = block & ((std::size_t(1) << rest_bits) - 1);
    const std::size_t high = block >> rest_bits;
    const std::size_t row = e >> mc, col = e & ((std::size_t(1) << mc) - 1);
    return (high << (lo_bit + k)) | (row << lo_bit) | (low_rest << mc) | col;
  }

  template <class Ctx>
  PL_HD void operator()(std::size_t block, const Ctx& ctx) const {
    F* tile = ctx.template shared<F>();
    const unsigned elems = 1u << (k + mc);
    ctx.threads(elems, [&](unsigned e) { tile[e] = x[global(block, e)]; });
    ctx.sync();
    run_tile_stages<F, Dif, 3, exact_arith<F>>(*this, block, ctx, tile, Dif ? log_n - s0 - k : s0);
    ctx.threads(elems, [&](unsigned e) { x[global(block, e)] = tile[e]; });
  }
};

/// tw[e] = lo[e mod 2^k] * hi[e >> k] for e < count.
template <class F>
struct powers_fn {
  const F* lo;
  const F* hi;
  unsigned k;
  F* out;
  PL_HD void operator()(std::size_t e) const {
    out[e] = lo[e & ((std::size_t(1) << k) - 1)] * hi[e >> k];
  }
};

/// out[rev(i)] = in[i] * scale (scale may be null: a plain permutation).
template <class F>
struct bitrev_fn {
  const F* in;
  F* out;
  unsigned log_n;
  const F* scale;
  PL_HD void operator()(std::size_t i) const {
    F v = in[i];
    if (scale) v = v * *scale;
    out[bit_reverse(uint32_t(i), log_n)] = v;
  }
};

/// x[j] *= g^rev(j) / n (lo already holds the 1/n factor).
template <class F>
struct coset_fn {
  F* x;
  const F* lo;
  const F* hi;
  unsigned k, log_n;
  PL_HD void operator()(std::size_t j) const {
    uint32_t e = bit_reverse(uint32_t(j), log_n);
    x[j] = x[j] * lo[e & ((uint32_t(1) << k) - 1)] * hi[e >> k];
  }
};

/// h[i] = (a[i] b[i] - c[i]) in standard form; h may alias a.
template <class F>
struct h_fn {
  const F* a;
  const F* b;
  const F* c;
  typename F::repr* h;
  PL_HD void operator()(std::size_t i) const { h[i] = (a[i] * b[i] - c[i]).to_standard(); }
};

/// Host-built tables for one domain of 2^log_n points.
template <class F>
struct host_tables {
  unsigned log_n = 0;
  unsigned tw_k = 0;          ///< lo-table bits for twiddles (e < n/2)
  std::vector<F> fwd_lo, fwd_hi, inv_lo, inv_hi;
  unsigned coset_k = 0;       ///< lo-table bits for g^e / n (e < n)
  std::vector<F> coset_lo, coset_hi;
};

/// lo[i] = x^i * first (i < 2^k), hi[j] = x^(j 2^k) (j < 2^(bits-k)).
template <class F>
void split_powers(const F& x, const F& first, unsigned bits, unsigned k, std::vector<F>& lo,
                  std::vector<F>& hi) {
  lo.resize(std::size_t(1) << k);
  hi.resize(std::size_t(1) << (bits - k));
  F p = first;
  for (auto& v : lo) {
    v = p;
    p = p * x;
  }
  F step = x;
  for (unsigned i = 0; i < k; ++i) step = step.sqr();  // x^(2^k)
  F q = F::one();
  for (auto& v : hi) {
    v = q;
    q = q * step;
  }
}

/// Tables for 2^log_n points: w (forward), w^-1 (inverse), odd-coset
/// generator g and 1/n, as zk::groth16::roots<F> gives them.
template <class F>
host_tables<F> make_host_tables(unsigned log_n, const F& w, const F& w_inv, const F& g,
                                const F& n_inv) {
  host_tables<F> t;
  t.log_n = log_n;
  unsigned tw_bits = log_n ? log_n - 1 : 0;  // e < n/2
  t.tw_k = (tw_bits + 1) / 2;
  split_powers(w, F::one(), tw_bits, t.tw_k, t.fwd_lo, t.fwd_hi);
  split_powers(w_inv, F::one(), tw_bits, t.tw_k, t.inv_lo, t.inv_hi);
  t.coset_k = (log_n + 1) / 2;
  split_powers(g, n_inv, log_n, t.coset_k, t.coset_lo, t.coset_hi);
  return t;
}

/// A domain's tables where the executor reads them.
template <class F>
struct tables {
  unsigned log_n = 0;
  const F* fwd = nullptr;  ///< w^e, e < n/2
  const F* inv = nullptr;  ///< w^-e, e < n/2
  const F* coset_lo = nullptr;
  const F* coset_hi = nullptr;
  unsigned coset_k = 0;
  const F* n_inv = nullptr;  ///< one element: 1/n
};

/// The K-stage passes of one transform, in order.
template <bool Dif, class Exec, class F>
void passes(const Exec& ex, F* x, const F* tw, unsigned log_n) {
  unsigned s0 = 0;
  const std::size_t n = std::size_t(1) << log_n;
  while (s0 < log_n) {
    unsigned k = log_n - s0 < pass_stages ? log_n - s0 : pass_stages;
    switch (k) {
      case 1: ex.for_each(n >> 1, pass_fn<F, 1, Dif>{x, tw, log_n, s0}); break;
      case 2: ex.for_each(n >> 2, pass_fn<F, 2, Dif>{x, tw, log_n, s0}); break;
      default: ex.for_each(n >> 3, pass_fn<F, 3, Dif>{x, tw, log_n, s0}); break;
    }
    s0 += k;
  }
}

/// The same stages in ceil(log_n / tile_stages) tiled passes of about equal
/// size (shared memory; 3 passes for 2^24).
template <bool Dif, class Exec, class F>
void tiled_passes(const Exec& ex, F* x, const F* tw, unsigned log_n) {
  if (log_n == 0) return;
  const unsigned count = (log_n + tile_stages - 1) / tile_stages;
  unsigned s0 = 0;
  for (unsigned p = 0; p < count; ++p) {
    const unsigned k = (log_n - s0) / (count - p);  // the remaining stages, spread evenly
    const unsigned lo_bit = Dif ? log_n - s0 - k : s0;
    const unsigned mc = lo_bit < tile_log_elems - k ? lo_bit : tile_log_elems - k;
    const unsigned elems = 1u << (k + mc);
    const unsigned threads = elems / 8 < tile_threads ? (elems / 8 ? elems / 8 : 1) : tile_threads;
    ex.for_each_block(std::size_t(1) << (log_n - k - mc), threads, sizeof(F) * elems,
                      tile_pass_fn<F, Dif>{x, tw, log_n, s0, k, mc});
    s0 += k;
  }
}

/// Which passes a transform runs (all give the same result, bit for bit):
///   registers  K = 3 register passes through global memory (passes())
///   tiled      shared-memory tiles of 1024 elements, up to 8 stages a pass,
///              a separate bit-reversal / coset pass (tiled_passes())
///   fused      shared-memory tiles of 2^tile_log elements (fused_passes()):
///              up to tile_log - cols stages a pass, the bit reversal (with
///              the inverse's 1/n) or the odd-coset shift done by the last
///              DIF pass on its way out, so no separate permutation or
///              scaling pass; radix: stages per register step (2^radix
///              elements a thread holds), threads: per block; two
///              options that change the arithmetic, not the passes:
///              lazy (l1): butterflies on values in [0, 2p), reduced once
///              per pass (lazy_arith, ntt_lazy.hpp; fields with two spare
///              bits, e.g. BN254's Fr; others use exact_arith anyway);
///              unit (u1): the register step that holds the transform's
///              bit 0 skips its products by w^0 = 1 (3 of its 4); both
///              with radix 2 only (the default's: fewer kernels to compile);
///              small tiles (sS): tiles of 2^S elements instead for
///              transforms up to 2^small_tile_max_log (more, smaller
///              resident blocks and a shorter tail there)
/// Spelled "registers", "tiled" or "fused[:tT][:cC][:rR][:bB][:lL][:uU][:sS]"
/// (e.g. "fused:t11:c1:r2:b256", "fused:t10:c1:r2:b128:l1:u1:s9";
/// parse_kernel, describe; l and u are 0 or 1, 0 by default; s is 0, off,
/// by default).
struct kernel {
  enum kind_t : uint8_t { registers, tiled, fused };
  // fused:t10:c1:r2:b128 was the fastest shape of the sweep in
  // docs/BENCHMARKS.md ("NTT kernels, fused passes") at every size;
  // default_kernel() adds l1 and u1 to it.
  kind_t kind = fused;
  unsigned tile_log = 10;  ///< fused: log2 elements a tile holds
  unsigned cols = 1;       ///< fused: log2 adjacent elements per tile row (coalesced loads)
  unsigned radix = 2;      ///< fused: stages per register step, 1..3
  unsigned threads = 128;  ///< fused: threads per block (0: 128 for radix 3, else 256)
  bool lazy = false;       ///< fused: butterflies in [0, 2p) where the field allows
  bool unit = false;       ///< fused: no products by w^0 in the step at bit 0
  unsigned small_tile_log = 0;  ///< fused: tile_log for transforms up to 2^small_tile_max_log (0: tile_log)
};

/// The largest transform that small_tile_log applies to: 2^9 tiles were
/// faster than 2^10 at 2^20 and 2^22 on the H200 and slower at 2^24
/// (docs/BENCHMARKS.md).
constexpr unsigned small_tile_max_log = 22;

/// The tile bits kernel k's fused passes use for a transform of 2^log_n.
inline unsigned tile_log_for(const kernel& k, unsigned log_n) {
  return k.small_tile_log && log_n <= small_tile_max_log ? k.small_tile_log : k.tile_log;
}

/// The largest tile the fused passes take (2^12 elements, 128 KiB for
/// 32-byte elements: within the 227 KiB a block may opt in to).
constexpr unsigned fused_max_tile_log = 12;

inline std::string describe(const kernel& k) {
  if (k.kind == kernel::registers) return "registers";
  if (k.kind == kernel::tiled) return "tiled";
  return "fused:t" + std::to_string(k.tile_log) + ":c" + std::to_string(k.cols) + ":r" +
         std::to_string(k.radix) + ":b" + std::to_string(k.threads) + (k.lazy ? ":l1" : "") +
         (k.unit ? ":u1" : "") + (k.small_tile_log ? ":s" + std::to_string(k.small_tile_log) : "");
}

/// Parses describe()'s spelling; throws std::invalid_argument naming the
/// problem.
inline kernel parse_kernel(const std::string& spec) {
  kernel k;
  auto bad = [&](const std::string& why) {
    return std::invalid_argument("NTT kernel '" + spec + "': " + why +
                                 " (registers | tiled | fused[:tT][:cC][:rR][:bB][:lL][:uU][:sS])");
  };
  std::size_t colon = spec.find(':');
  const std::string head = spec.substr(0, colon);
  if (head == "registers" || head == "tiled") {
    if (colon != std::string::npos) throw bad("only fused takes parameters");
    k.kind = head == "registers" ? kernel::registers : kernel::tiled;
    return k;
  }
  if (head != "fused") throw bad("unknown kind");
  k.kind = kernel::fused;
  while (colon != std::string::npos) {
    const std::size_t next = spec.find(':', colon + 1);
    const std::string part = spec.substr(colon + 1, next == std::string::npos ? std::string::npos : next - colon - 1);
    if (part.size() < 2 || part.size() > 5 || part.find_first_not_of("0123456789", 1) != std::string::npos)
      throw bad("bad parameter '" + part + "'");
    const unsigned v = unsigned(std::stoul(part.substr(1)));
    switch (part[0]) {
      case 't': k.tile_log = v; break;
      case 'c': k.cols = v; break;
      case 'r': k.radix = v; break;
      case 'b': k.threads = v; break;
      case 's': k.small_tile_log = v; break;
      case 'l':
      case 'u':
        if (v > 1) throw bad("'" + part + "': l and u take 0 or 1");
        (part[0] == 'l' ? k.lazy : k.unit) = v == 1;
        break;
      default: throw bad("unknown parameter '" + part + "'");
    }
    colon = next;
  }
  if (k.tile_log < 2 || k.tile_log > fused_max_tile_log) throw bad("tile bits must be 2 .. 12");
  if (k.cols >= k.tile_log) throw bad("column bits must be below the tile bits");
  if (k.small_tile_log != 0 && (k.small_tile_log < 2 || k.small_tile_log > fused_max_tile_log))
    throw bad("small tile bits must be 0 (off) or 2 .. 12");
  if (k.small_tile_log != 0 && k.cols >= k.small_tile_log) throw bad("column bits must be below the small tile bits");
  if (k.radix < 1 || k.radix > 3) throw bad("radix must be 1 .. 3");
  if (k.threads != 0 && (k.threads > 1024 || (k.threads & (k.threads - 1)) != 0))
    throw bad("threads must be a power of two up to 1024");
  if ((k.lazy || k.unit) && k.radix != 2) throw bad("l1 and u1 take radix 2");
  if (k.threads == 0) k.threads = k.radix == 3 ? 128 : 256;
  return k;
}

/// The kernel transforms use unless told otherwise: PROOFLINE_NTT_KERNEL
/// when set (parse_kernel's spelling), else fused:t10:c1:r2:b128:l1:u1:s9
/// (the fastest measured: docs/BENCHMARKS.md). Read once; a bad value
/// throws std::invalid_argument at every use, naming the variable.
inline const kernel& default_kernel() {
  static const env_setting<kernel> choice("PROOFLINE_NTT_KERNEL", [] {
    kernel k;
    k.lazy = true;
    k.unit = true;
    k.small_tile_log = 9;
    return k;
  }(), parse_kernel);
  return choice.get();
}

/// One fused pass of k stages through shared memory. The tile is 2^k rows
/// (the butterfly coordinate) by 2^mc columns. Rows are 2^lo_bit apart; the
/// columns are either 2^mc adjacent elements below lo_bit (loads of 2^mc
/// adjacent elements), or, when lo_bit = 0 (rows adjacent), the top mc index
/// bits (`top`), which the bit reversal turns into the low bits, so the
/// reversed stores are 2^mc adjacent elements too. Reads `in`, writes `out`
/// (may be the same array: a block reads its whole tile before it stores),
/// at rev(i) when `reverse`, times *scale when set, times g^rev(i) / n from
/// the coset tables when coset_lo is set. A: the butterfly arithmetic; its
/// out() gives each element's reduced value before the store. Unit: the
/// step at the transform's bit 0 skips its products by w^0.
template <class F, bool Dif, unsigned K, class A, bool Unit>
struct fused_pass_fn {
  static constexpr bool unit_steps = Unit;
  const F* in;
  F* out;
  const F* tw;
  unsigned log_n, s0, k, mc;
  bool top, reverse;
  const F* scale;
  const F* coset_lo;
  const F* coset_hi;
  unsigned coset_k;

  PL_HD unsigned lo_bit() const { return Dif ? log_n - s0 - k : s0; }

  PL_HD std::size_t global(std::size_t block, std::size_t e) const {
    const std::size_t row = e >> mc, col = e & ((std::size_t(1) << mc) - 1);
    if (top) return (col << (log_n - mc)) | (block << k) | row;
    const unsigned lo = lo_bit();
    const unsigned rest_bits = lo - mc;  // low bits above the columns
    const std::size_t low_rest = block & ((std::size_t(1) << rest_bits) - 1);
    const std::size_t high = block >> rest_bits;
    return (high << (lo + k)) | (row << lo) | (low_rest << mc) | col;
  }

  /// The q-th tile element a thread moves: columns fastest, or rows fastest
  /// (top tiles read from memory: rows are the adjacent elements there).
  PL_HD unsigned element(unsigned q, bool rows_fast) const {
    if (!rows_fast) return q;
    const unsigned row = q & ((1u << k) - 1), col = q >> k;
    return (row << mc) | col;
  }

  template <class Ctx>
  PL_HD void operator()(std::size_t block, const Ctx& ctx) const {
    F* tile = ctx.template shared<F>();
    const unsigned elems = 1u << (k + mc);
    ctx.threads(elems, [&](unsigned q) {
      const unsigned e = element(q, top);
      tile[e] = in[global(block, e)];
    });
    ctx.sync();
    run_tile_stages<F, Dif, K, A>(*this, block, ctx, tile, lo_bit());
    ctx.threads(elems, [&](unsigned q) {
      const unsigned e = element(q, top && !reverse);
      const std::size_t i = global(block, e);
      F v = A::out(tile[e]);
      if (coset_lo) {
        const uint32_t r = bit_reverse(uint32_t(i), log_n);
        v = v * coset_lo[r & ((uint32_t(1) << coset_k) - 1)] * coset_hi[r >> coset_k];
      }
      if (scale) v = v * *scale;
      out[reverse ? bit_reverse(uint32_t(i), log_n) : i] = v;
    });
  }
};

/// How the last DIF pass of fused_passes() stores its tile.
template <class F>
struct fused_epilogue {
  F* out = nullptr;         ///< null: in place
  bool reverse = false;     ///< at bit-reversed positions (out must differ from x)
  const F* scale = nullptr;
  const F* coset_lo = nullptr;
  const F* coset_hi = nullptr;
  unsigned coset_k = 0;
};

template <bool Dif, unsigned K, class A, bool Unit, class Exec, class F>
void fused_passes_k(const Exec& ex, F* x, const F* tw, unsigned log_n, const kernel& kc,
                    const fused_epilogue<F>& ep) {
  const unsigned tile_log = tile_log_for(kc, log_n);
  const unsigned max_k = tile_log - kc.cols;
  const unsigned count = (log_n + max_k - 1) / max_k;
  unsigned s0 = 0;
  for (unsigned p = 0; p < count; ++p) {
    const unsigned k = (log_n - s0) / (count - p);  // the remaining stages, spread evenly
    const unsigned lo = Dif ? log_n - s0 - k : s0;
    const bool top = lo == 0;
    const unsigned room = tile_log - k;  // column bits the tile has space for
    const unsigned avail = top ? log_n - k : lo;
    const unsigned mc = avail < room ? avail : room;
    const unsigned elems = 1u << (k + mc);
    const unsigned want = elems >> (K < k ? K : k);
    const unsigned cap = kc.threads ? kc.threads : (K == 3 ? 128 : 256);
    const unsigned threads = want < cap ? (want ? want : 1) : cap;
    const bool last = p + 1 == count;
    fused_pass_fn<F, Dif, K, A, Unit> f{x, x, tw, log_n, s0, k, mc, top, false, nullptr, nullptr, nullptr, 0};
    if (Dif && last) {
      if (ep.out) f.out = ep.out;
      f.reverse = ep.reverse;
      f.scale = ep.scale;
      f.coset_lo = ep.coset_lo;
      f.coset_hi = ep.coset_hi;
      f.coset_k = ep.coset_k;
    }
    ex.for_each_block(std::size_t(1) << (log_n - k - mc), threads, sizeof(F) * elems, f);
    s0 += k;
  }
}

/// The stages of one transform in fused passes (kernel kc); the last DIF
/// pass stores as ep says. log_n >= 1. kc.lazy picks lazy_arith where the
/// field allows it (lazy_supported), exact_arith otherwise; kc.unit the
/// passes that skip the products by w^0. Both only at radix 2.
template <bool Dif, class Exec, class F>
void fused_passes(const Exec& ex, F* x, const F* tw, unsigned log_n, const kernel& kc,
                  const fused_epilogue<F>& ep = {}) {
  if (kc.lazy || kc.unit) {
    if (kc.radix != 2)
      throw std::invalid_argument("NTT kernel " + describe(kc) + ": l1 and u1 take radix 2");
    if constexpr (lazy_supported<F>) {
      if (kc.lazy) {
        if (kc.unit)
          fused_passes_k<Dif, 2, lazy_arith<F>, true>(ex, x, tw, log_n, kc, ep);
        else
          fused_passes_k<Dif, 2, lazy_arith<F>, false>(ex, x, tw, log_n, kc, ep);
        return;
      }
    }
    if (kc.unit) {
      fused_passes_k<Dif, 2, exact_arith<F>, true>(ex, x, tw, log_n, kc, ep);
      return;
    }
  }
  switch (kc.radix) {
    case 1: fused_passes_k<Dif, 1, exact_arith<F>, false>(ex, x, tw, log_n, kc, ep); break;
    case 2: fused_passes_k<Dif, 2, exact_arith<F>, false>(ex, x, tw, log_n, kc, ep); break;
    default: fused_passes_k<Dif, 3, exact_arith<F>, false>(ex, x, tw, log_n, kc, ep); break;
  }
}

template <bool Dif, class Exec, class F>
void run_passes(const Exec& ex, F* x, const F* tw, unsigned log_n, const kernel& kc) {
  if (kc.kind == kernel::registers)
    passes<Dif>(ex, x, tw, log_n);
  else
    tiled_passes<Dif>(ex, x, tw, log_n);
}

/// Natural-order transform of x into out (distinct arrays; x is clobbered).
template <class Exec, class F>
void transform(const Exec& ex, const tables<F>& t, F* x, F* out, bool inverse,
               const kernel& kc = default_kernel()) {
  const F* scale = inverse ? t.n_inv : nullptr;
  if (kc.kind == kernel::fused && t.log_n > 0) {
    fused_epilogue<F> ep;
    ep.out = out;
    ep.reverse = true;
    ep.scale = scale;
    fused_passes<true>(ex, x, inverse ? t.inv : t.fwd, t.log_n, kc, ep);
    return;
  }
  run_passes<true>(ex, x, inverse ? t.inv : t.fwd, t.log_n, kc);
  ex.for_each(std::size_t(1) << t.log_n, bitrev_fn<F>{x, out, t.log_n, scale});
}

/// Values on the n-domain -> values on its odd coset, in place.
template <class Exec, class F>
void to_odd_coset(const Exec& ex, const tables<F>& t, F* x, const kernel& kc = default_kernel()) {
  const std::size_t n = std::size_t(1) << t.log_n;
  if (kc.kind == kernel::fused && t.log_n > 0) {
    fused_epilogue<F> ep;
    ep.coset_lo = t.coset_lo;
    ep.coset_hi = t.coset_hi;
    ep.coset_k = t.coset_k;
    fused_passes<true>(ex, x, t.inv, t.log_n, kc, ep);
    fused_passes<false>(ex, x, t.fwd, t.log_n, kc);
    return;
  }
  run_passes<true>(ex, x, t.inv, t.log_n, kc);
  ex.for_each(n, coset_fn<F>{x, t.coset_lo, t.coset_hi, t.coset_k, t.log_n});
  run_passes<false>(ex, x, t.fwd, t.log_n, kc);
}

/// h = a*b - c out of Montgomery form, into h (may alias a).
template <class Exec, class F>
void compute_h(const Exec& ex, std::size_t n, const F* a, const F* b, const F* c,
               typename F::repr* h) {
  ex.for_each(n, h_fn<F>{a, b, c, h});
}

}  // namespace proofline::gpu::cuda::ntt
