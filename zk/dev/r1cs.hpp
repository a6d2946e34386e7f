// Synthetic rank-1 constraint systems for benchmarks: random sparse circuits
// of any size with the shape of real ones, and witnesses that satisfy them.
//
// Variables, in snarkjs's order: w0 = 1, w1..wP public inputs (random
// full-width values), then F = N/16 free private inputs (random full-width),
// then one variable per defining row, in row order. Every row reads only
// variables defined before it, so a witness is computed in one pass.
//
// Rows (a * b = c over sparse linear combinations of earlier variables):
//
//   kind       share    row                              new variable
//   boolean    22%      b * b = b                        b, a random bit
//   and_gate    8%      b1 * b2 = o                      o, 0/1
//   xor_gate    6%      (2 b1) * b2 = b1 + b2 - o        o, 0/1
//   select     12%      b * (x - y) = o - y              o = b ? x : y
//   product    36%      (sum a_i w_i) * (sum b_j w_j) = o    o, mostly full width
//   linear     16%      (sum a_i w_i) * 1 = o            o, full width
//   assertion  F rows   b * (b - 1) = 0                  none
//
// (shares of the defining rows; the first defining row is always boolean so
// later rows have a boolean to use.) Linear combinations take 1-6 terms,
// half from the 32 most recent variables and half from all earlier ones, with
// coefficients 1 (55%), -1 (15%), small (2..65535, 15%) or full width (15%);
// a product row adds the constant w0 to its left side one time in five.
// About half of a witness's values are 0 or 1; nVars = 1 + P + N.
//
// The generator depends only on (N, P, seed): tests rebuild the same circuit
// from the seed a setup printed.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "zk/curves.hpp"

namespace proofline::zk::dev {

/// What a row does; decides how the witness fills the variable it defines.
enum class row_kind : uint8_t {
  boolean,    ///< b * b = b: b is a fresh random bit
  and_gate,   ///< b1 * b2 = o
  xor_gate,   ///< (2 b1) * b2 = b1 + b2 - o
  select,     ///< b * (x - y) = o - y
  product,    ///< (sum a_i w_i) * (sum b_j w_j) = o
  linear,     ///< (sum a_i w_i) * 1 = o
  assertion,  ///< b * (b - 1) = 0 on an earlier boolean; defines nothing
};

/// Number of row kinds, for tallies.
inline constexpr unsigned row_kinds = 7;

/// One nonzero matrix entry of a row: the signal (variable) and coefficient.
template <class C>
struct term {
  uint32_t signal;
  typename C::fr coef;  ///< Montgomery form
};

/// The smallest k with 2^k >= rows: snarkjs's domain for rows = N + P + 1
/// (the constraints plus one public-input row per public signal and w0).
inline unsigned log_domain_for(uint64_t rows) {
  unsigned k = 0;
  while ((uint64_t(1) << k) < rows) ++k;
  return k;
}

/// A synthetic circuit. Rows are stored back to back: row r's A terms are
/// terms[offsets[3r] .. offsets[3r+1]), B terms up to offsets[3r+2], C terms
/// up to offsets[3r+3]. A defining row lists the variable it defines first
/// among its C terms, with coefficient 1 or -1.
template <class C>
struct r1cs {
  static constexpr uint32_t none = std::numeric_limits<uint32_t>::max();

  uint32_t n_public = 0;       ///< P
  uint32_t n_constraints = 0;  ///< N (snarkjs's public-input rows not included)
  uint32_t n_free = 0;         ///< F free private inputs: w[P+1 .. P+F]
  uint32_t n_vars = 0;         ///< 1 + P + N
  std::vector<uint64_t> offsets;
  std::vector<term<C>> terms;
  std::vector<row_kind> kinds;
  std::vector<uint32_t> defines;  ///< variable each row defines, or `none`

  /// Rows of the proving key's domain: N constraints + P + 1 public-input rows.
  uint64_t rows() const { return uint64_t(n_constraints) + n_public + 1; }
  unsigned log_domain() const { return log_domain_for(rows()); }
  uint32_t domain_size() const { return uint32_t(1) << log_domain(); }

  const term<C>* begin(uint32_t row, unsigned matrix) const {
    return terms.data() + offsets[3 * std::size_t(row) + matrix];
  }
  const term<C>* end(uint32_t row, unsigned matrix) const {
    return terms.data() + offsets[3 * std::size_t(row) + matrix + 1];
  }
};

/// A random circuit of `constraints` rows and `n_public` public inputs, a
/// pure function of its arguments. Throws std::invalid_argument when
/// constraints is 0 or nVars would not fit 32 bits. Cost: O(N) time, about
/// 200 bytes per row.
template <class C>
r1cs<C> random_r1cs(uint32_t constraints, uint32_t n_public, uint64_t seed);

/// The circuit of a circom .r1cs file (zk/formats/r1cs.hpp): its wires are
/// the variables (n_vars = nWires), its public outputs and inputs the public
/// signals; row kinds and defined variables stay empty (the circuit's own
/// witness generator computes witnesses). Throws formats::format_error
/// naming the file.
template <class C>
r1cs<C> circom_r1cs(const std::string& path);

/// A satisfying witness (standard form, n_vars values, w[0] = 1): public and
/// free inputs and boolean rows drawn from (seed, index), the rest computed
/// row by row. Cost: one pass over the terms.
template <class C>
std::vector<typename C::scalar> random_witness(const r1cs<C>& cs, uint64_t seed, uint32_t index);

/// The first row whose (A w) * (B w) != (C w), or n_constraints when every
/// row holds. A naive check, independent of the proving key.
template <class C>
uint32_t first_unsatisfied(const r1cs<C>& cs, const typename C::scalar* witness);

/// Sum over a row's entries of one matrix: sum coef * w[signal] (w standard form).
template <class C>
typename C::fr evaluate_row(const r1cs<C>& cs, uint32_t row, unsigned matrix,
                            const typename C::scalar* witness);

}  // namespace proofline::zk::dev
