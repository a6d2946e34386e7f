// The evaluation domains of the Groth16 quotient computation, with exactly the
// roots of unity snarkjs uses (ffjavascript's WasmField1 and wasmcurves'
// build_fft), so a proof computed here uses the same points as the zkey's H
// section was built for.
//
//   p - 1 = 2^s * t (t odd), nqr = the smallest quadratic non-residue (5);
//   w[s] = nqr^t, w[k] = w[k+1]^2, so w[k] generates the 2^k-th roots of unity
//   (w[0] = 1, w[1] = -1);
//   shift = nqr^2 (ffjavascript's Fr.shift);
//   odd-coset generator of an n = 2^k domain: w[k+1] when k < s, else shift
//   (snarkjs groth16_prove: `power == Fr.s ? Fr.shift : Fr.w[power+1]`).
//
// The forward transform of the n-domain maps coefficients x_i to values
// X_j = sum_i x_i w[k]^(ij) (natural order in and out); the inverse uses
// w[k]^-1 and scales by 1/n.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

#include "zk/ff/fp.hpp"

namespace proofline::zk::groth16 {

/// Roots of unity of the field F (an ff::fp<P> whose P names two_adicity and
/// nqr). The tables are computed once per field on first use (about 300
/// field multiplications) and are immutable afterwards; safe to share.
template <class F>
class roots {
 public:
  /// s: the largest k with 2^k | p - 1.
  static constexpr unsigned max_log = F::params::two_adicity;

  /// nqr (5 for BN254 and BLS12-381 Fr), Montgomery form.
  static F nqr() { return F::from_u64(F::params::nqr); }

  /// A generator of the 2^k-th roots of unity, k <= s; throws std::out_of_range beyond.
  static F root(unsigned log_n) { return table().w[check(log_n)]; }
  /// root(log_n)^-1.
  static F inverse_root(unsigned log_n) { return table().w_inv[check(log_n)]; }
  /// nqr^2: ffjavascript's Fr.shift, a coset generator of every 2^k-domain.
  static F shift() { return table().shift; }

  /// The factor snarkjs multiplies coefficient i by (as g^i) to move an
  /// n = 2^log_n domain onto its odd points: w[log_n + 1], a primitive
  /// 2n-th root, when log_n < s, and shift when log_n == s.
  static F odd_coset_generator(unsigned log_n) {
    check(log_n);
    return log_n == max_log ? table().shift : table().w[log_n + 1];
  }

  /// 1/n for n = 2^log_n.
  static F inverse_size(unsigned log_n) { return table().n_inv[check(log_n)]; }

 private:
  struct tables {
    F w[max_log + 1], w_inv[max_log + 1], n_inv[max_log + 1];
    F shift;
  };

  static unsigned check(unsigned log_n) {
    if (log_n > max_log)
      throw std::out_of_range("domain of 2^" + std::to_string(log_n) +
                              " points exceeds the field's 2-adicity " + std::to_string(max_log));
    return log_n;
  }

  static tables build() {
    tables t;
    // t_odd = (p - 1) >> s
    auto e = F::modulus();
    e.l[0] -= 1;  // p is odd, so no borrow
    for (unsigned k = 0; k < max_log; ++k) {
      for (unsigned i = 0; i + 1 < F::N; ++i) e.l[i] = (e.l[i] >> 1) | (e.l[i + 1] << 63);
      e.l[F::N - 1] >>= 1;
    }
    F g = nqr();
    t.w[max_log] = g.pow(e);
    for (unsigned k = max_log; k-- > 0;) t.w[k] = t.w[k + 1].sqr();
    if (!t.w[0].is_one()) throw std::logic_error("roots of unity: nqr^t does not have order 2^s");
    for (unsigned k = 0; k <= max_log; ++k) t.w_inv[k] = t.w[k].inverse();
    F half = F::from_u64(2).inverse();
    t.n_inv[0] = F::one();
    for (unsigned k = 1; k <= max_log; ++k) t.n_inv[k] = t.n_inv[k - 1] * half;
    t.shift = g.sqr();
    return t;
  }

  static const tables& table() {
    static const tables t = build();  // thread-safe one-time initialisation
    return t;
  }
};

}  // namespace proofline::zk::groth16
