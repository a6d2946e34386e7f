// Number-theoretic transforms over a scalar field on the CPU, with snarkjs's
// roots of unity (zk/groth16/domain.hpp). The reference the CUDA NTT is
// tested against, and the NTTs of the CPU backend.
//
//   ntt(data, log_n, forward):  X_j = sum_i x_i w^(ij),        w = roots<F>::root(log_n)
//   ntt(data, log_n, inverse):  x_i = (1/n) sum_j X_j w^(-ij)
//   to_odd_coset(data, log_n):  values on the n-domain -> values at g * w^j,
//                               g = roots<F>::odd_coset_generator(log_n)
//
// Data is in natural order on input and output, field elements in Montgomery
// form (ff::fp). Instantiated for zk::bn254::fr and zk::bls12_381::fr.
//
// Design: radix-2 butterflies; decimation in frequency (natural in,
// bit-reversed out) followed by decimation in time (bit-reversed in, natural
// out), so to_odd_coset needs no bit-reversal pass at all and ntt() one.
// Stages whose butterflies span more than a cache block run as parallel
// passes over the whole array; the remaining stages run block by block, one
// block per task, while the block stays in cache. Twiddles: one table of
// w^j, j < n/2 (n/2 field elements of scratch per call).
#pragma once

#include "base/thread_pool.hpp"

namespace proofline::gpu::cpu {

enum class direction { forward, inverse };

/// In-place transform of data[0 .. 2^log_n), natural order in and out.
/// Cost: (n/2) log2 n field multiplications plus n/2 for the twiddles and n
/// for the inverse's scaling, spread over pool.size() threads.
/// Throws std::out_of_range when log_n exceeds the field's 2-adicity.
template <class F>
void ntt(F* data, unsigned log_n, direction dir, base::thread_pool& pool);

/// In place: interprets data[0 .. 2^log_n) as a polynomial's values on the
/// n-domain and replaces them with its values on the odd coset, i.e. inverse
/// NTT, coefficient i times g^i, forward NTT (zk/groth16/prover.hpp, step 2).
/// Cost: about two NTTs.
template <class F>
void to_odd_coset(F* data, unsigned log_n, base::thread_pool& pool);

}  // namespace proofline::gpu::cpu
