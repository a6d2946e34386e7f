// Groth16 proving keys from known toxic waste, written as snarkjs .zkey
// files (INSECURE: for benchmarks and tests only).
//
// With L_i the Lagrange basis of the n-domain (generator w = w[log n],
// snarkjs's root, zk/groth16/domain.hpp) and, for each variable s,
//   A_s = sum_rows A[row][s] L_row(tau), likewise B_s and C_s,
// where rows are the circuit's N constraints followed by snarkjs's P + 1
// public-input rows (row N + s has A = w_s, B = C = 0), the key holds:
//
//   section 2   alpha1 = alpha G1, beta1 = beta G1, beta2 = beta G2,
//               gamma2 = gamma G2, delta1 = delta G1, delta2 = delta G2
//   section 3   IC_s = (beta A_s + alpha B_s + C_s) / gamma  G1,  s <= P
//   section 4   A and B entries (matrix, row, signal, c R^2 mod r), in row
//               order, then the public-input rows
//   section 5   A_s G1;  6: B_s G1;  7: B_s G2            (every s)
//   section 8   (beta A_s + alpha B_s + C_s) / delta  G1,  s > P
//   section 9   H_j = L'_{2j+1}(tau) / delta  G1, j < n, where L' is the
//               Lagrange basis of the 2n-domain (generator w[log n + 1])
//   section 10  no real contribution: an "INSECURE" banner and one
//               contribution named as such (delta1, delta2 as its points)
//
// These are the points snarkjs's `zkey new` derives from a powers of tau
// file (whose section 12 holds L_i(tau) G1 for every domain size), after a
// contribution that multiplies delta by d and divides C and H by d; snarkjs
// keeps gamma = 1, here gamma is random (verifiers read gamma2). The
// prover evaluates h on the odd points w'^(2j+1) of the 2n-domain, where
// Z(x) = x^n - 1 = -2, and sum_j h_j L'_{2j+1}(tau) = A(tau)B(tau) - C(tau)
// because A B - C vanishes on the even points (the n-domain).
//
// Cost (2^k domain, nVars ~ n): about 4n G1 and n G2 fixed-base products,
// 26 mixed additions each (fixed_base.hpp), computed by a fixed-base engine
// (fixed_base_engine.hpp: the pool's threads, or a GPU); every point of the
// key, the header's included, comes from the engine.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "base/thread_pool.hpp"
#include "zk/dev/fixed_base_engine.hpp"
#include "zk/dev/r1cs.hpp"
#include "zk/dev/toxic_waste.hpp"
#include "zk/formats/proof_json.hpp"

namespace proofline::zk::dev {

/// Called after each step of a long computation with its name and seconds.
using step_report = std::function<void(const std::string& step, double seconds)>;

/// The banner in section 10 of every development key (the contribution
/// hash field, 64 bytes, zero padded); snarkjs prints it as the circuit hash.
inline constexpr const char* insecure_banner =
    "INSECURE proofline dev setup: toxic waste known, benchmarks only";
/// The name of the one contribution recorded in section 10.
inline constexpr const char* insecure_contribution_name = "INSECURE dev setup (known toxic waste)";

/// What writing a key produced.
template <class C>
struct dev_key {
  formats::verification_key<C> vk;
  uint32_t domain_size = 0;
  uint64_t n_coefs = 0;     ///< entries of section 4
  uint64_t file_bytes = 0;  ///< size of the .zkey
};

/// Computes the proving key of `cs` for toxic waste `tw` and writes it to
/// `path` atomically (temp file + rename). Throws std::invalid_argument when
/// the circuit's domain reaches the scalar field's 2-adicity (snarkjs then
/// needs a different H layout; 2^28 rows for BN254), std::runtime_error on
/// I/O errors (naming the file). `report` may be empty. The fixed-base
/// products go to `engine`, or with none to batch_mul on `pool` (which
/// computes everything else in either case).
template <class C>
dev_key<C> write_dev_zkey(const std::string& path, const r1cs<C>& cs, const toxic_waste<C>& tw,
                          base::thread_pool& pool, const step_report& report = {},
                          fixed_base_engine* engine = nullptr);

/// Lagrange basis polynomials of the m = 2^log_m domain at x:
/// out[j] = L_k(x) for k = first + stride j, j < count, where
/// L_k(x) = w^k (x^m - 1) / (m (x - w^k)) and w = roots<F>::root(log_m).
/// Batch inversion: about 6 multiplications per value. Throws
/// std::domain_error when x lies in the domain. Exposed for tests.
template <class F>
void lagrange_at(const F& x, unsigned log_m, uint64_t first, uint64_t stride, std::size_t count,
                 F* out, base::thread_pool& pool);

}  // namespace proofline::zk::dev
