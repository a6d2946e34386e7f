// The NTT's tuning (gpu/cuda/ntt/): which passes a transform runs, as a
// typed policy (kernel) with its spelling (parse_kernel, describe: the
// grammar PROOFLINE_NTT_KERNEL and proofline-bench --ntt-kernel take) and
// its default (default_kernel). Why the default is what it is:
// docs/GPU.md, "NTT tuning".
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

#include "gpu/cuda/env_setting.hpp"

namespace proofline::gpu::cuda::ntt {

/// Which passes a transform runs (all give the same result, bit for bit):
///   registers  K = 3 register passes through global memory
///   tiled      shared-memory tiles of 1024 elements, up to 8 stages a pass,
///              a separate bit-reversal / coset pass
///              (both for tests and benchmarks only: bench/cuda/ntt_families.hpp)
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
  // The fields' defaults spell fused:t10:c1:r2:b128; default_kernel()
  // adds l1, u1 and s9 to it (docs/GPU.md, "NTT tuning").
  kind_t kind = fused;
  unsigned tile_log = 10;  ///< fused: log2 elements a tile holds
  unsigned cols = 1;       ///< fused: log2 adjacent elements per tile row (coalesced loads)
  unsigned radix = 2;      ///< fused: stages per register step, 1..3
  unsigned threads = 128;  ///< fused: threads per block (0: 128 for radix 3, else 256)
  bool lazy = false;       ///< fused: butterflies in [0, 2p) where the field allows
  bool unit = false;       ///< fused: no products by w^0 in the step at bit 0
  unsigned small_tile_log = 0;  ///< fused: tile_log for transforms up to 2^small_tile_max_log (0: tile_log)
};

/// The largest transform that small_tile_log applies to (docs/GPU.md,
/// "NTT tuning").
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
/// (docs/GPU.md, "NTT tuning"). Read once; a bad value
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

}  // namespace proofline::gpu::cuda::ntt
