// The host's Montgomery product on x86-64 with BMI2 and ADX: mulx (a 64x64
// product that leaves the flags alone) and adcx / adox (two add-with-carry
// chains, one through CF and one through OF), so the low and the high halves
// of each row of products are summed in two independent chains instead of one
// serial chain, as the 128-bit-integer form compiles to.
//
// Algorithm: CIOS (Koc et al. 1996), one row per word b_i of b:
//   t += a * b_i          (N mulx, low halves on CF, high halves on OF)
//   m  = t_0 * (-p^-1)    mod 2^64
//   t  = (t + m * p) / 2^64  (N mulx; the low word becomes 0 and is dropped)
// t lives in N+1 registers that rotate by one each row: the register that
// the division drops is the next row's top word. No row carries out of N+1
// words when p < 2^(64N - 1) (t < 2p before a row, so
// t + a b_i + m p < 2p + 2^65 p < 2^(64(N+1))), and the result is < 2p, so
// one conditional subtraction of p (done by the caller) reduces it.
//
// Host only: the CUDA compiler never sees this file (zk/ff/fp.hpp includes it
// outside nvcc), and callers check host_adx before using it.
#pragma once

#include <cstdint>

#if !defined(__x86_64__) || defined(__CUDACC__)
#error "zk/ff/mont_x86_64.hpp is for x86-64 host code"
#endif

#include <cpuid.h>

#include <cstdlib>
#include <utility>

// fp<P>::operator* is inlined wherever this file is in use, so that g++'s
// translation units never call the out-of-line copy that nvcc's host pass
// (which uses the portable product) also emits under the same name.
#undef PL_HOST_MUL_INLINE
#define PL_HOST_MUL_INLINE __attribute__((always_inline))

namespace proofline::zk::ff::x86 {

/// True when the CPU has BMI2 (mulx) and ADX (adcx, adox): CPUID leaf 7,
/// EBX bits 8 and 19. Read once at start-up.
inline bool detect_adx() {
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (__get_cpuid_max(0, nullptr) < 7) return false;
  __cpuid_count(7, 0, a, b, c, d);
  return (b & (1u << 8)) && (b & (1u << 19));
}

/// Whether mont_mul may run here: the CPU has it and PROOFLINE_NO_ADX=1 is not
/// in the environment (that selects the portable product, to test and measure
/// it on the same machine).
inline bool adx_wanted() {
  const char* off = std::getenv("PROOFLINE_NO_ADX");
  return detect_adx() && !(off && off[0] == '1');
}

/// adx_wanted(), evaluated once during static initialisation, so that every
/// product tests a plain bool (a function-local static would test its guard
/// first, on the hottest host path). A product that runs during another
/// file's static initialisation, before this one is set, reads false and runs
/// the portable product, which computes the same value.
inline const bool host_adx = adx_wanted();

/// The N words of p, then -p^-1 mod 2^64, so that one memory operand reaches
/// both from inside the asm.
template <class P, unsigned N, class = std::make_integer_sequence<unsigned, N>>
struct mont_constants;
template <class P, unsigned N, unsigned... I>
struct mont_constants<P, N, std::integer_sequence<unsigned, I...>> {
  static constexpr uint64_t words[N + 1] = {P::modulus(I)..., P::inv};
};

/// True when the modulus leaves the headroom the rows above need.
template <class P, unsigned N>
constexpr bool mont_fits() {
  return (N == 4 || N == 6) && P::modulus(N - 1) < (uint64_t(1) << 63) - 1;
}

// One product a_j * rdx added into the accumulator: low half into `lo_acc`
// on the CF chain, high half into `hi_acc` on the OF chain. `src` is the
// pointer operand (a or the constants) and `off` the byte offset of word j.
// The pointed-to words are also passed as memory inputs so the compiler
// stores them before the asm reads them.
#define PL_X86_MAC(src, off, lo_acc, hi_acc)               \
  "mulxq " #off "(%[" #src "]), %[lo], %[hi]\n\t"          \
  "adcxq %[lo], %[" #lo_acc "]\n\t"                        \
  "adoxq %[hi], %[" #hi_acc "]\n\t"

// Ends both chains in the top word: OF has no carry left (the sum fits),
// CF is added; mov leaves the flags alone.
#define PL_X86_CLOSE(top) \
  "movl $0, %k[lo]\n\t"   \
  "adcxq %[lo], %[" #top "]\n\t"

// Starts a row: the top word is zero (fresh at row 0, the dropped word after
// that); xor also clears CF and OF. Loads b_i into rdx.
#define PL_X86_OPEN(boff, top)                     \
  "xorl %k[" #top "], %k[" #top "]\n\t"            \
  "movq " #boff "(%[b]), %%rdx\n\t"

// m = t_0 * inv into rdx, then clears the flags.
#define PL_X86_M(t0, invoff)                   \
  "movq %[" #t0 "], %%rdx\n\t"                 \
  "imulq " #invoff "(%[c]), %%rdx\n\t"          \
  "xorl %k[lo], %k[lo]\n\t"

// The N products of one half-row (a * b_i, or m * p): word j's low half
// into T_j on the CF chain, its high half into T_j+1 on the OF chain.
#define PL_X86_MACS4(src, T0, T1, T2, T3, T4)                                               \
  PL_X86_MAC(src, 0, T0, T1) PL_X86_MAC(src, 8, T1, T2) PL_X86_MAC(src, 16, T2, T3)         \
  PL_X86_MAC(src, 24, T3, T4)
#define PL_X86_MACS6(src, T0, T1, T2, T3, T4, T5, T6)                                       \
  PL_X86_MACS4(src, T0, T1, T2, T3, T4) PL_X86_MAC(src, 32, T4, T5) PL_X86_MAC(src, 40, T5, T6)

// One row: b_i at byte `boff` of b, -p^-1 at byte 8N of the constants; t's
// registers low word first in this row's rotation, the top one last.
#define PL_X86_ROW4(boff, A0, A1, A2, A3, A4)                                               \
  PL_X86_OPEN(boff, A4) PL_X86_MACS4(a, A0, A1, A2, A3, A4) PL_X86_CLOSE(A4)                \
  PL_X86_M(A0, 32) PL_X86_MACS4(c, A0, A1, A2, A3, A4) PL_X86_CLOSE(A4)
#define PL_X86_ROW6(boff, A0, A1, A2, A3, A4, A5, A6)                                       \
  PL_X86_OPEN(boff, A6) PL_X86_MACS6(a, A0, A1, A2, A3, A4, A5, A6) PL_X86_CLOSE(A6)        \
  PL_X86_M(A0, 48) PL_X86_MACS6(c, A0, A1, A2, A3, A4, A5, A6) PL_X86_CLOSE(A6)

// All N rows. Each drops t's low word, which is the next row's top word.
#define PL_X86_ROWS4                                                                        \
  PL_X86_ROW4(0, t0, t1, t2, t3, t4)   /* then t = t1 .. t4 */                              \
  PL_X86_ROW4(8, t1, t2, t3, t4, t0)   /* then t = t2, t3, t4, t0 */                        \
  PL_X86_ROW4(16, t2, t3, t4, t0, t1)  /* then t = t3, t4, t0, t1 */                        \
  PL_X86_ROW4(24, t3, t4, t0, t1, t2)  /* then t = t4, t0, t1, t2 */
#define PL_X86_ROWS6                                                                        \
  PL_X86_ROW6(0, t0, t1, t2, t3, t4, t5, t6)                                                \
  PL_X86_ROW6(8, t1, t2, t3, t4, t5, t6, t0)                                                \
  PL_X86_ROW6(16, t2, t3, t4, t5, t6, t0, t1)                                               \
  PL_X86_ROW6(24, t3, t4, t5, t6, t0, t1, t2)                                               \
  PL_X86_ROW6(32, t4, t5, t6, t0, t1, t2, t3)                                               \
  PL_X86_ROW6(40, t5, t6, t0, t1, t2, t3, t4)  /* then t = t6, t0 .. t4 */

// t's registers as asm operands, read and written.
#define PL_X86_T4 [t0] "+&r"(t0), [t1] "+&r"(t1), [t2] "+&r"(t2), [t3] "+&r"(t3), [t4] "+&r"(t4)
#define PL_X86_T6 PL_X86_T4, [t5] "+&r"(t5), [t6] "+&r"(t6)

// The product's asm for N = 4 or 6: t in N + 1 registers, hi and lo for
// mulx, rdx for b_i and m; a, b and the constants through pointers (their
// words also as memory inputs, so the compiler stores them first).
#define PL_X86_MONT_ASM(N)                                                                  \
  asm(PL_X86_ROWS##N                                                                        \
      : PL_X86_T##N, [hi] "=&r"(hi), [lo] "=&r"(lo)                                         \
      : [a] "r"(a), [b] "r"(b), [c] "r"(K::words), "m"(*(const uint64_t(*)[N])a),           \
        "m"(*(const uint64_t(*)[N])b)                                                       \
      : "rdx", "cc")

/// r = a * b * 2^(-64N) mod p, < 2p (not yet fully reduced). a, b < p.
template <class P, unsigned N>
inline void mont_mul(uint64_t r[N], const uint64_t a[N], const uint64_t b[N]) {
  static_assert(N == 4 || N == 6, "rows are written out for 4 and 6 words");
  using K = mont_constants<P, N>;
  uint64_t t0 = 0, t1 = 0, t2 = 0, t3 = 0, t4 = 0, t5 = 0, t6 = 0, hi, lo;
  if constexpr (N == 4)
    PL_X86_MONT_ASM(4);
  else
    PL_X86_MONT_ASM(6);
  // t is now t_N, t0, t1, ... (the last row dropped t_(N-1)).
  r[0] = N == 4 ? t4 : t6;
  r[1] = t0;
  r[2] = t1;
  r[3] = t2;
  if constexpr (N == 6) {
    r[4] = t3;
    r[5] = t4;
  }
}

#undef PL_X86_MAC
#undef PL_X86_CLOSE
#undef PL_X86_OPEN
#undef PL_X86_M
#undef PL_X86_MACS4
#undef PL_X86_MACS6
#undef PL_X86_ROW4
#undef PL_X86_ROW6
#undef PL_X86_ROWS4
#undef PL_X86_ROWS6
#undef PL_X86_T4
#undef PL_X86_T6
#undef PL_X86_MONT_ASM

}  // namespace proofline::zk::ff::x86
