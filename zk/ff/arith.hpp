// 64-bit word primitives for multi-precision arithmetic: add with carry,
// subtract with borrow, multiply-accumulate. Host code uses the compiler's
// 128-bit integer; device code uses __umul64hi, which nvcc lowers to the
// 32-bit multiply-add chains the GPU executes.
#pragma once

#include <cstdint>

#include "zk/common/hd.hpp"

#if !defined(__CUDA_ARCH__) && (defined(__x86_64__) || defined(_M_X64))
#include <x86intrin.h>
#define PL_X86_CARRY 1
#else
#define PL_X86_CARRY 0
#endif

namespace proofline::zk::ff {

/// a + b + carry; carry (0 or 1) is updated with the carry out.
PL_HD uint64_t adc(uint64_t a, uint64_t b, uint64_t& carry) {
#if defined(__CUDA_ARCH__)
  uint64_t s = a + b;
  uint64_t c1 = s < a;
  uint64_t r = s + carry;
  carry = c1 | (r < s);
  return r;
#elif PL_X86_CARRY
  // The add-with-carry instruction, which the 128-bit form does not reliably
  // become on x86-64, where field additions are much faster with it.
  unsigned long long r;
  carry = _addcarry_u64((unsigned char)carry, a, b, &r);
  return r;
#else
  unsigned __int128 t = (unsigned __int128)a + b + carry;
  carry = (uint64_t)(t >> 64);
  return (uint64_t)t;
#endif
}

/// a - b - borrow; borrow (0 or 1) is updated with the borrow out.
PL_HD uint64_t sbb(uint64_t a, uint64_t b, uint64_t& borrow) {
#if defined(__CUDA_ARCH__)
  uint64_t d = a - b;
  uint64_t b1 = a < b;
  uint64_t r = d - borrow;
  borrow = b1 | (d < borrow);
  return r;
#elif PL_X86_CARRY
  unsigned long long r;
  borrow = _subborrow_u64((unsigned char)borrow, a, b, &r);
  return r;
#else
  unsigned __int128 t = (unsigned __int128)a - b - borrow;
  borrow = (uint64_t)(t >> 64) & 1;
  return (uint64_t)t;
#endif
}

/// acc + a * b + carry, returning the low word and leaving the high word in
/// carry. Cannot overflow: (2^64-1) + (2^64-1)^2 + (2^64-1) = 2^128 - 1.
PL_HD uint64_t mac(uint64_t acc, uint64_t a, uint64_t b, uint64_t& carry) {
#if defined(__CUDA_ARCH__)
  uint64_t lo = a * b;
  uint64_t hi = __umul64hi(a, b);
  lo += acc;
  hi += lo < acc;
  lo += carry;
  hi += lo < carry;
  carry = hi;
  return lo;
#else
  unsigned __int128 t = (unsigned __int128)a * b + acc + carry;
  carry = (uint64_t)(t >> 64);
  return (uint64_t)t;
#endif
}

}  // namespace proofline::zk::ff
