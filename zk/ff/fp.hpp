// Prime fields in Montgomery form over N 64-bit limbs, one template for every
// modulus. A parameter set (zk/params/*.hpp) supplies the modulus, R mod p,
// R^2 mod p and -p^-1 mod 2^64; fp<P> supplies the arithmetic, compiled for
// host and device alike so the CPU and CUDA backends compute the same function.
//
// Representation: fp<P>::l holds x * R mod p (R = 2^(64 N)), fully reduced
// (< p), little-endian limbs. bigint<N> holds plain integers (standard form):
// witness values, MSM scalars, file contents before conversion.
#pragma once

#include <cstdint>

#include "zk/common/hd.hpp"
#include "zk/ff/arith.hpp"
#include "zk/ff/mont32.hpp"

// x86-64: mulx/adcx/adox product if the CPU has them (run-time check); not under nvcc or -O0
// (too few registers). Always inlined then: nvcc's host pass emits another operator* body.
#define PL_HOST_MUL_INLINE
#if !defined(__CUDACC__) && defined(__x86_64__) && defined(__OPTIMIZE__)
#include "zk/ff/mont_x86_64.hpp"
#define PL_HOST_MONT_X86 1
#else
#define PL_HOST_MONT_X86 0
#endif

namespace proofline::zk::ff {

/// A plain N-limb little-endian unsigned integer.
template <unsigned N>
struct bigint {
  static constexpr unsigned limbs = N;
  uint64_t l[N];

  PL_HD static bigint zero() {
    bigint r;
    PL_UNROLL for (unsigned i = 0; i < N; ++i) r.l[i] = 0;
    return r;
  }
  PL_HD static bigint from_u64(uint64_t v) {
    bigint r = zero();
    r.l[0] = v;
    return r;
  }
  PL_HD bool is_zero() const {
    uint64_t acc = 0;
    PL_UNROLL for (unsigned i = 0; i < N; ++i) acc |= l[i];
    return acc == 0;
  }
  PL_HD bool operator==(const bigint& o) const {
    uint64_t acc = 0;
    PL_UNROLL for (unsigned i = 0; i < N; ++i) acc |= l[i] ^ o.l[i];
    return acc == 0;
  }
  PL_HD bool operator!=(const bigint& o) const { return !(*this == o); }
  /// Unsigned comparison: true when *this < o.
  PL_HD bool operator<(const bigint& o) const {
    uint64_t borrow = 0;
    PL_UNROLL for (unsigned i = 0; i < N; ++i) sbb(l[i], o.l[i], borrow);
    return borrow != 0;
  }
  /// Bit i (0 = least significant).
  PL_HD unsigned bit(unsigned i) const { return (unsigned)(l[i / 64] >> (i % 64)) & 1u; }
  /// `width` bits starting at bit `pos` (width <= 32); bits past the top read as 0.
  PL_HD uint32_t bits(unsigned pos, unsigned width) const {
    unsigned limb = pos / 64, off = pos % 64;
    if (limb >= N) return 0;
    uint64_t v = l[limb] >> off;
    if (off + width > 64 && limb + 1 < N) v |= l[limb + 1] << (64 - off);
    return (uint32_t)(v & ((uint64_t(1) << width) - 1));
  }
  /// Number of significant bits (0 for zero).
  PL_HD unsigned bit_length() const {
    for (unsigned i = N; i-- > 0;)
      if (l[i]) {
        unsigned b = 64;
        while (!(l[i] >> (b - 1))) --b;
        return i * 64 + b;
      }
    return 0;
  }
};

template <class P>
struct fp {
  using params = P;
  static constexpr unsigned N = P::limbs;
  using repr = bigint<N>;
  static_assert(N >= 2 && N <= 8, "fields of 2..8 limbs are supported");

  uint64_t l[N];  ///< x * R mod p, little-endian

  // ---- constants -----------------------------------------------------------

  PL_HD static fp zero() {
    fp r;
    PL_UNROLL for (unsigned i = 0; i < N; ++i) r.l[i] = 0;
    return r;
  }
  /// 1 in Montgomery form (R mod p).
  PL_HD static fp one() {
    fp r;
    PL_UNROLL for (unsigned i = 0; i < N; ++i) r.l[i] = P::one(i);
    return r;
  }
  PL_HD static repr modulus() {
    repr r;
    PL_UNROLL for (unsigned i = 0; i < N; ++i) r.l[i] = P::modulus(i);
    return r;
  }

  // ---- conversions ---------------------------------------------------------

  /// Reinterprets limbs that already hold a Montgomery-form value (< p).
  PL_HD static fp from_montgomery_limbs(const repr& m) {
    fp r;
    PL_UNROLL for (unsigned i = 0; i < N; ++i) r.l[i] = m.l[i];
    return r;
  }
  /// The Montgomery-form limbs as stored.
  PL_HD repr montgomery_limbs() const {
    repr r;
    PL_UNROLL for (unsigned i = 0; i < N; ++i) r.l[i] = l[i];
    return r;
  }
  /// x (standard form, any value < 2^(64N)) to Montgomery form: x * R^2 * R^-1.
  PL_HD static fp from_standard(const repr& x) {
    fp r2, a;
    PL_UNROLL for (unsigned i = 0; i < N; ++i) {
      r2.l[i] = P::r2(i);
      a.l[i] = x.l[i];
    }
    // x may be up to 2^(64N) - 1. The portable product and the device's
    // paired chains told so (mont32::any_operand) take that when the other
    // operand (R^2 mod p) is < p, and their result is < p; the x86-64
    // assembly and the default device product need both operands < p.
#if defined(__CUDA_ARCH__) && PROOFLINE_FF_PTX
    fp r;
    mont32::mul_pairs<mont32::ptx_chain, P, mont32::any_operand>(r.l, a.l, r2.l);
    return r;
#else
    return a.mul_generic(r2);
#endif
  }
  PL_HD static fp from_u64(uint64_t v) { return from_standard(repr::from_u64(v)); }
  /// The standard-form value: x * R * R^-1.
  PL_HD repr to_standard() const {
    fp unit = zero();
    unit.l[0] = 1;
    fp s = *this * unit;
    return s.montgomery_limbs();
  }

  // ---- predicates ----------------------------------------------------------

  PL_HD bool is_zero() const {
    uint64_t acc = 0;
    PL_UNROLL for (unsigned i = 0; i < N; ++i) acc |= l[i];
    return acc == 0;
  }
  PL_HD bool is_one() const { return *this == one(); }
  PL_HD bool operator==(const fp& o) const {
    uint64_t acc = 0;
    PL_UNROLL for (unsigned i = 0; i < N; ++i) acc |= l[i] ^ o.l[i];
    return acc == 0;
  }
  PL_HD bool operator!=(const fp& o) const { return !(*this == o); }

  // ---- arithmetic ----------------------------------------------------------

  PL_HD fp operator+(const fp& b) const {
    fp r;
#if defined(__CUDA_ARCH__) && PROOFLINE_FF_PTX
    mont32::add<mont32::ptx_chain, P>(r.l, l, b.l);
    return r;
#else
    uint64_t carry = 0;
    PL_UNROLL for (unsigned i = 0; i < N; ++i) r.l[i] = adc(l[i], b.l[i], carry);
    return reduce_once(r, carry);
#endif
  }
  PL_HD fp operator-(const fp& b) const {
    fp r;
#if defined(__CUDA_ARCH__) && PROOFLINE_FF_PTX
    mont32::sub<mont32::ptx_chain, P>(r.l, l, b.l);
    return r;
#else
    uint64_t borrow = 0;
    PL_UNROLL for (unsigned i = 0; i < N; ++i) r.l[i] = sbb(l[i], b.l[i], borrow);
    // On borrow add p back; mask instead of branching so device threads agree.
    uint64_t mask = 0 - borrow, carry = 0;
    PL_UNROLL for (unsigned i = 0; i < N; ++i) r.l[i] = adc(r.l[i], P::modulus(i) & mask, carry);
    return r;
#endif
  }
  PL_HD fp operator-() const { return zero() - *this; }
  PL_HD fp dbl() const { return *this + *this; }

  /// Montgomery product a * b * R^-1 mod p: N^2 + N word multiplications.
  /// Needs both inputs < p; returns a value < p. The device computes it on
  /// 32-bit words (zk/ff/mont32.hpp), an x86-64 host with ADX in assembly
  /// (zk/ff/mont_x86_64.hpp), both bit-identical to mul_generic.
  PL_HD PL_HOST_MUL_INLINE fp operator*(const fp& b) const {
#if defined(__CUDA_ARCH__) && PROOFLINE_FF_PTX && PROOFLINE_FF_DEVICE_MUL
    fp r;
    if constexpr (N >= 6) {
      mont32::limbs<N> x, y;
      PL_UNROLL for (unsigned i = 0; i < N; ++i) {
        x.l[i] = l[i];
        y.l[i] = b.l[i];
      }
      const auto z = mont32::mul_call<P>(x, y);
      PL_UNROLL for (unsigned i = 0; i < N; ++i) r.l[i] = z.l[i];
    } else {
      mont32::mul_device<P>(r.l, l, b.l);
    }
    return r;
#else
#if PL_HOST_MONT_X86
    if constexpr (x86::mont_fits<P, N>()) {
      if (x86::host_adx) {
        fp r;
        x86::mont_mul<P, N>(r.l, l, b.l);
        return reduce_once(r, 0);
      }
    }
#endif
    return mul_generic(b);
#endif
  }

  /// The product on 64-bit words (CIOS, Koc et al. 1996); the host's code.
  PL_HD fp mul_generic(const fp& b) const {
    uint64_t t[N + 2];
    PL_UNROLL for (unsigned i = 0; i < N + 2; ++i) t[i] = 0;
    PL_UNROLL for (unsigned i = 0; i < N; ++i) {
      uint64_t c = 0;
      PL_UNROLL for (unsigned j = 0; j < N; ++j) t[j] = mac(t[j], l[j], b.l[i], c);
      uint64_t c2 = 0;
      t[N] = adc(t[N], c, c2);
      t[N + 1] = c2;
      uint64_t m = t[0] * P::inv;
      c = 0;
      mac(t[0], m, P::modulus(0), c);  // low word is zero by choice of m
      PL_UNROLL for (unsigned j = 1; j < N; ++j) t[j - 1] = mac(t[j], m, P::modulus(j), c);
      c2 = 0;
      t[N - 1] = adc(t[N], c, c2);
      t[N] = t[N + 1] + c2;
    }
    fp r;
    PL_UNROLL for (unsigned i = 0; i < N; ++i) r.l[i] = t[i];
    return reduce_once(r, t[N]);
  }
  PL_HD fp sqr() const { return *this * *this; }

  PL_HD fp& operator+=(const fp& b) { return *this = *this + b; }
  PL_HD fp& operator-=(const fp& b) { return *this = *this - b; }
  PL_HD fp& operator*=(const fp& b) { return *this = *this * b; }

  /// x^e for a plain exponent (square-and-multiply, most significant bit first).
  template <unsigned M>
  PL_HD fp pow(const bigint<M>& e) const {
    fp r = one();
    for (unsigned i = e.bit_length(); i-- > 0;) {
      r = r.sqr();
      if (e.bit(i)) r = r * *this;
    }
    return r;
  }
  PL_HD fp pow(uint64_t e) const { return pow(bigint<1>{{e}}); }

  /// x^-1 by Fermat (x^(p-2)); the inverse of zero is reported as zero.
  PL_HD fp inverse() const {
    repr e = modulus();
    uint64_t borrow = 0;
    e.l[0] = sbb(e.l[0], 2, borrow);
    PL_UNROLL for (unsigned i = 1; i < N; ++i) e.l[i] = sbb(e.l[i], 0, borrow);
    return pow(e);
  }

 private:
  /// Subtracts p once when the (N+1)-word value hi:r is >= p. Inputs are < 2p.
  PL_HD static fp reduce_once(const fp& r, uint64_t hi) {
    fp d;
    uint64_t borrow = 0;
    PL_UNROLL for (unsigned i = 0; i < N; ++i) d.l[i] = sbb(r.l[i], P::modulus(i), borrow);
    // keep r when r < p, i.e. the subtraction borrowed and there was no top word
    bool keep = borrow && !hi;
    fp out;
    uint64_t mask = 0 - (uint64_t)keep;
    PL_UNROLL for (unsigned i = 0; i < N; ++i) out.l[i] = (r.l[i] & mask) | (d.l[i] & ~mask);
    return out;
  }
};

}  // namespace proofline::zk::ff
