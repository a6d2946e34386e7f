// A Groth16 proving key in host memory, as read from a snarkjs .zkey.
//
// key_info is what the header alone tells (cheap to read; the memory manager
// sizes partitions from it). proving_key<C> holds everything the prover needs;
// it is immutable once loaded and shared by every actor that needs it through
// key_ptr (a shared_ptr<const proving_key_base>), never copied.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "zk/curves.hpp"

namespace proofline::zk::groth16 {

/// What a .zkey header says about a circuit.
struct key_info {
  curve_id curve = curve_id::bn254;
  uint32_t n8q = 0;          ///< bytes per base-field element
  uint32_t n8r = 0;          ///< bytes per scalar-field element
  uint32_t n_vars = 0;       ///< witness length, including w[0] = 1
  uint32_t n_public = 0;     ///< public signals: w[1 ..= n_public]
  uint32_t domain_size = 0;  ///< n, a power of two
  uint32_t log_domain = 0;   ///< log2 n
  uint64_t n_coefs = 0;      ///< nonzero entries of A and B together

  /// Private inputs: the C section covers w[n_public + 1 ..].
  uint32_t n_private() const { return n_vars - n_public - 1; }
};

/// The allocator of a key's large arrays: like std::allocator, except that
/// an element made without arguments is default-initialised, so resize(n) of
/// a trivial type (points, coefficients) writes nothing. A loader sizes the
/// arrays at once and fills them from the file on many threads; the first
/// write to each page then happens in those threads, in parallel, instead of
/// one thread zeroing the whole array before it is overwritten.
template <class T>
struct uninit_allocator : std::allocator<T> {
  template <class U>
  struct rebind {
    using other = uninit_allocator<U>;
  };
  uninit_allocator() = default;
  template <class U>
  uninit_allocator(const uninit_allocator<U>&) noexcept {}

  template <class U>
  void construct(U* p) noexcept(std::is_nothrow_default_constructible_v<U>) {
    ::new (static_cast<void*>(p)) U;
  }
  template <class U, class... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
};

/// A key's large array: a std::vector whose resize leaves new points and
/// coefficients uninitialised (see uninit_allocator).
template <class T>
using key_vector = std::vector<T, uninit_allocator<T>>;

/// One nonzero entry of A or B: row (constraint), column (signal), value.
/// `value` holds the zkey's raw limbs c * R^2 mod r; one Montgomery product
/// with a standard-form witness value w yields the Montgomery form of c * w.
template <class C>
struct coef {
  uint32_t constraint;
  uint32_t signal;
  typename C::fr value;
};

struct proving_key_base {
  key_info info;
  std::string path;  ///< the .zkey it was read from (for messages)
  /// The key's own verification key, prepared for checking proofs
  /// (groth16::prepared_key<C>, zk/groth16/verifier.hpp), when whoever loaded
  /// the key asked for it; null otherwise. Set before the key is shared.
  std::shared_ptr<const void> verifier;
  virtual ~proving_key_base() = default;
};

template <class C>
struct proving_key final : proving_key_base {
  using g1 = typename C::g1_affine;
  using g2 = typename C::g2_affine;

  g1 alpha1, beta1, delta1;
  g2 beta2, gamma2, delta2;
  key_vector<g1> ic;         ///< n_public + 1 (verification key; kept for completeness)
  key_vector<coef<C>> coefs_a, coefs_b;
  key_vector<g1> points_a;   ///< n_vars
  key_vector<g1> points_b1;  ///< n_vars
  key_vector<g2> points_b2;  ///< n_vars
  key_vector<g1> points_c;   ///< n_private
  key_vector<g1> points_h;   ///< domain_size

  /// Host bytes the key occupies (points and coefficients).
  uint64_t bytes() const {
    return sizeof(g1) * (ic.size() + points_a.size() + points_b1.size() + points_c.size() +
                         points_h.size()) +
           sizeof(g2) * points_b2.size() + sizeof(coef<C>) * (coefs_a.size() + coefs_b.size());
  }
};

using key_ptr = std::shared_ptr<const proving_key_base>;

/// The typed key behind a key_ptr; the caller has checked info.curve == C::id.
template <class C>
const proving_key<C>& typed(const proving_key_base& k) {
  return static_cast<const proving_key<C>&>(k);
}

}  // namespace proofline::zk::groth16
